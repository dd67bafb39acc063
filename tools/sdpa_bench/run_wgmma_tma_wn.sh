#!/bin/bash
# KV_LOAD=tma with two key groups (perf_notes item 28): WARPS 8, WARPS_N 2, WN_KEYS=tile, so each warpgroup
# takes 64 of every BLOCK_N 128 tile's keys and the SM runs two warpgroup chains per query block; on cp.async
# every thread issued loads and the merge ate the overlap (items 6, 21). Predicted: S512 -5 to -10% against
# the one-warpgroup TMA config, S256 no gain. Also the DIAG=3 timelines of the TMA and cp.async winners.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_M=64 KV_SPLITS=1 KV_MERGE=gmem WN_KEYS=tile"
T="--baselines --reps 20 --target-us 2000"
ab_run twn mission "${T_MISSION:-240}" $T --suite mission \
  --grid "WARPS=4 WARPS_N=1 BLOCK_N=128 STAGES=2 Q_IN=regs,smem KV_LOAD=tma $W" \
  --grid "WARPS=8 WARPS_N=2 BLOCK_N=128 STAGES=2,3 Q_IN=regs,smem KV_LOAD=tma,cp_async $W"
ab_summary twn "flash|WARPS_N=|KV_LOAD="
for shape in B=2,H=8,S=512,D=64,causal=0,dtype=f16 B=2,H=8,S=256,D=64,causal=0,dtype=f16; do
  timeout 120 python3 tools/sdpa_bench/timeline.py --shape $shape \
    --config "WARPS=4 WARPS_N=1 BLOCK_N=128 STAGES=2 Q_IN=regs KV_LOAD=tma $W" \
    --config "WARPS=4 WARPS_N=1 BLOCK_N=128 STAGES=3 Q_IN=regs KV_LOAD=cp_async $W" \
    --config "WARPS=8 WARPS_N=2 BLOCK_N=128 STAGES=2 Q_IN=regs KV_LOAD=tma $W" 2>&1 | grep -v "^compiled" | tee -a "$OUT/tma_timeline.txt"
done
