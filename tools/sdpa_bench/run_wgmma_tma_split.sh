#!/bin/bash
# KV_SPLITS 2 with KV_LOAD=tma (perf_notes item 27): 256 CTAs for the mission's 128 query blocks, so two
# warpgroup chains share each SM and hide each other's latency; on cp.async the doubled prologue load issue
# and the merge (~0.7 us) ate the gain (items 8, 17, 23). TMA makes the prologue one thread's work.
# Predicted: S512 -5 to -10% against KV_SPLITS 1 with TMA (5.65 us), S256 no gain (the merge dominates).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma WARPS_N=1 WN_KEYS=tile LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_M=64 WARPS=4"
T="--baselines --reps 20 --target-us 2000"
ab_run tsp mission "${T_MISSION:-240}" $T --suite mission \
  --grid "BLOCK_N=128 STAGES=2 Q_IN=regs,smem KV_SPLITS=1 KV_MERGE=gmem $W" \
  --grid "BLOCK_N=64,128 STAGES=2 Q_IN=regs,smem KV_SPLITS=2 KV_MERGE=gmem,cluster,push $W" \
  --grid "BLOCK_N=64 STAGES=2,3 Q_IN=regs KV_SPLITS=4 KV_MERGE=push $W"
ab_summary tsp "flash|KV_SPLITS=|KV_MERGE="
