#!/bin/bash
# PIPE_QK on the wgmma path (Q K^T of the next tile in flight during this tile's softmax, perf_notes
# item 16) against the plain wgmma loop, gated and timed side by side with torch's backends.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32 P_EARLY=1 PIPE_QK=0,1"
T="--baselines --reps 10 --target-us 1500"
ab_run wgp d64 "${T_D64:-120}" $T --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=3,4 Q_IN=regs,smem LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=3 Q_IN=smem LAZY_RESCALE=0 $W"
ab_run wgp d128 "${T_D128:-120}" $T --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=3 Q_IN=smem,regs LAZY_RESCALE=1 $W"
ab_summary wgp "flash|PIPE_QK=|pairs"
