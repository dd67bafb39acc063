#!/bin/bash
# WARPS_N=2 on the wgmma path (two warpgroups per 64 query rows, each over half of every key tile,
# merged through smem at the end; perf_notes item 19) against the one-warpgroup winners, gated and
# timed side by side with torch's backends in one process per shape group.
# Predicted: mission S256 -10%, S512 -15% (half the serial key loop per warpgroup, ~0.3 us merge).
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32 P_EARLY=1 PIPE_QK=0"
T="--baselines --reps 20 --target-us 2000"
ab_run wgw d64 "${T_D64:-150}" $T --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 BLOCK_N=64,128 STAGES=2,3,4 Q_IN=regs,smem LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 BLOCK_N=64,128 STAGES=2,3 Q_IN=regs LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 BLOCK_N=64 STAGES=2,3 Q_IN=smem LAZY_RESCALE=0 $W"
ab_run wgw d128 "${T_D128:-120}" $T --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 BLOCK_N=128 STAGES=2,3 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 BLOCK_N=128 STAGES=2,3 Q_IN=smem LAZY_RESCALE=1 $W"
ab_summary wgw "flash|WARPS_N="
