#!/bin/bash
# MMA=wgmma (warpgroup MMA for Q K^T and P V, perf_notes item 15) against the best mma.sync configs,
# gated and timed side by side with torch's backends, one process per shape group.
source "$(dirname "$0")/ab_lib.sh"
C="VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 EXP2=f32 P_EARLY=1"
W="MMA=wgmma LANE_ADDR=0 $C"
M="MMA=mma LANE_ADDR=1 $C"
T="--baselines --reps 10 --target-us 1500"
ab_run wg d64 "${T_D64:-150}" $T --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=2,4 Q_IN=smem,regs LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=2,3 Q_IN=smem LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=64 BLOCK_N=128 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 $M" \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=regs LAZY_RESCALE=0 $M"
ab_run wg d128 "${T_D128:-150}" $T --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=2,3 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 BLOCK_N=32,64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 $M" \
  --grid "BLOCK_M=128 BLOCK_N=128 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=1 $M"
ab_summary wg "flash|MMA="
