#!/bin/bash
# WN_KEYS=pingpong (perf_notes item 21): WN_KEYS=range plus FA3's warpgroup ping-pong (the two key
# groups take turns issuing their MMAs through named barriers), against range and the one-warpgroup
# winners, mission shapes and the D64 sweep.
# Reasoning: range (item 20) gained nothing: both groups start together and do the same work, so they
# stay in phase and contend for the tensor cores, then for MUFU. Two CTAs on one SM start apart and
# overlap (item 20's occupancy run: 2x the work for +20% time). Taking turns forces that offset.
# Predicted: mission S512 -15 to -25% against WN_KEYS=tile W4 (6.4 -> ~5.0-5.4 us), S256 -10 to -15%.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 KV_SPLITS=1 KV_MERGE=gmem MMA=wgmma"
T="--baselines --reps 20 --target-us 2000"
ab_run wgp mission "${T_MISSION:-200}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=pingpong,range BLOCK_N=64,128 STAGES=2,3 Q_IN=regs,smem $W" \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2,3 Q_IN=regs $W"
ab_run wgp d64 "${T_D64:-200}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=pingpong BLOCK_N=64,128 STAGES=2 Q_IN=regs,smem $W" \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2,3 Q_IN=regs $W" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 WN_KEYS=tile BLOCK_N=64 STAGES=3 Q_IN=smem $W"
ab_summary wgp "flash|WN_KEYS="
