#!/bin/bash
# EXP2=pair against f32 exps on the wgmma path, mission shapes (perf_notes item 12 measured it on
# mma.sync, where the softmax phase was issue-bound), gated and timed side by side in one process.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 WARPS=4 BLOCK_M=64"
ab_run wge mission "${T_EXP2:-150}" --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_N=64,128 STAGES=2,3,4 Q_IN=regs,smem EXP2=f32,pair $W"
ab_summary wge "flash|EXP2=|pairs"
