#!/bin/bash
# KV_LOAD=tma: is the key loop bound by the K/V bytes each SM takes in? (perf_notes item 29)
# The TMA timelines (item 28) show a BN128 tile takes ~1440 cycles whether one warpgroup does all of it
# (WARPS_N 1) or two share it (WARPS_N 2): not the warpgroup's compute, so the loads. DIAG=2 (no K/V loads
# after the prologue; wrong output, timed anyway) tells how much of the loop they are. If they bound it,
# the lever is fewer K/V bytes per SM for the same work: BLOCK_M 128 (two warpgroups over 128 query rows)
# with KV_SPLITS 2 keeps 128 CTAs at S512, each taking half the keys (64 KB instead of 128 KB).
# Predicted: S512 -10 to -20% against BM64 KV_SPLITS 1 (5.65 us) if the merge stays under ~0.4 us.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_MCAST=1 LOAD_ORDER=after_qk WN_KEYS=tile KV_LOAD=tma"
T="--baselines --reps 20 --target-us 2000"
ab_run tbm mission "${T_MISSION:-240}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 BLOCK_N=128 STAGES=2 Q_IN=regs,smem KV_SPLITS=1 KV_MERGE=gmem $W" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 BLOCK_N=64,128 STAGES=2,3 Q_IN=regs,smem KV_SPLITS=1,2 KV_MERGE=gmem,push,cluster $W"
ab_run tbm diag "${T_DIAG:-120}" --shape B=2,H=8,S=256,D=64,causal=0,dtype=f16 --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --reps 20 --target-us 2000 --skip-gate --time-anyway \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 BLOCK_N=128 STAGES=2,3 Q_IN=regs KV_SPLITS=1 KV_MERGE=gmem DIAG=0,2 $W" \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 BLOCK_N=128 STAGES=2 Q_IN=regs KV_SPLITS=1 KV_MERGE=gmem DIAG=0,2 $W" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 BLOCK_N=128 STAGES=2 Q_IN=smem KV_SPLITS=2 KV_MERGE=push DIAG=0,2 $W"
ab_summary tbm "flash|BLOCK_M=|KV_SPLITS=|KV_MERGE="
python3 tools/sdpa_bench/list_times.py "$OUT/tbm_diag.json" 2>&1 | tee "$OUT/tbm_diag.txt"
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "BLOCK_M=128 WARPS=8 WARPS_N=1 BLOCK_N=128 STAGES=2 Q_IN=smem KV_SPLITS=2 KV_MERGE=push $W" 2>&1 \
  | grep -v "^compiled" | tee "$OUT/tbm_timeline.txt"
