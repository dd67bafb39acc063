#!/bin/bash
# Split-KV merge cost on the wgmma path, mission shapes. merge_partials now issues every load of a slot
# before using any (it was one load + FMA chain per value), and the cluster's closing barrier is relaxed
# (the release form waited, through a GPU-scope MEMBAR, for the O stores). DIAG=1 (fixed so that P V
# stays live): the key loop alone, no merge, no store; wrong output, timed anyway.
# Predicted: KS2 cluster configs 1-2 us faster than in run_wgmma_bm128_split.sh (S512 BM128 KS2: 8.1 ->
# ~6.5 us); DIAG=1 shows whether the key loop of BM128 KS2 is shorter than KS1's.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0"
ab_run wgm mission "${T_MISSION:-240}" --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 KV_SPLITS=2,4 KV_MERGE=cluster,gmem Q_IN=regs $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=2 KV_SPLITS=2,4 KV_MERGE=cluster,gmem Q_IN=regs,smem $W"
ab_run wgm diag "${T_DIAG:-120}" --shape B=2,H=8,S=256,D=64,causal=0,dtype=f16 --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --reps 20 --target-us 2000 --time-anyway --skip-gate \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs DIAG=0,1 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2 KV_SPLITS=2 KV_MERGE=cluster,gmem Q_IN=regs DIAG=0,1 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=2 KV_SPLITS=2,4 KV_MERGE=cluster Q_IN=smem DIAG=0,1 $W"
ab_summary wgm "flash|KV_SPLITS=|BLOCK_M="
python3 tools/sdpa_bench/list_times.py "$OUT/wgm_diag.json"
