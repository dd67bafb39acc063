#!/bin/bash
# LANE_ADDR (fragment addresses recomputed per tile, perf_notes item 14) and FRAG_PREFETCH (next
# step's ldmatrix before this step's MMAs, item 13) against the plain loops, same configs otherwise,
# gated and timed side by side with torch's backends in one process per shape group.
source "$(dirname "$0")/ab_lib.sh"
C="MMA=mma VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 EXP2=f32"
T="--baselines --reps 10 --target-us 1500"
ab_run lane d128 "${T_D128:-220}" $T --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=128 BLOCK_N=32,64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0" \
  --grid "BLOCK_M=128 BLOCK_N=32,64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 P_EARLY=1 $C LANE_ADDR=0 FRAG_PREFETCH=1" \
  --grid "BLOCK_M=128 BLOCK_N=128 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=1 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0,1"
ab_run lane d64 "${T_D64:-120}" $T --suite sweep --suite mission --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=regs LAZY_RESCALE=0 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0,1" \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0,1"
ab_summary lane "flash|LANE_ADDR|FRAG_PREFETCH|pairs"
