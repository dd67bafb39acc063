#!/bin/bash
# Split-KV on the wgmma path for the mission shapes (KV_SPLITS x KV_MERGE, perf_notes item 17), and
# BLOCK_N 32, gated and timed side by side with torch's backends in one process.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 Q_IN=regs WARPS=4 BLOCK_M=64"
ab_run wgs mission "${T_SPLIT:-150}" --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_N=64,128 STAGES=3 KV_SPLITS=1,2,4 KV_MERGE=gmem,cluster $W" \
  --grid "BLOCK_N=32 STAGES=4 KV_SPLITS=1 KV_MERGE=gmem $W"
ab_summary wgs "flash|KV_SPLITS=|KV_MERGE="
