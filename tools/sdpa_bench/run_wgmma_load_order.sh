#!/bin/bash
# LOAD_ORDER=after_qk (perf_notes item 22): each key-loop iteration issues the next tile's cp.async loads
# right after its Q K^T wgmma instead of before it. The DIAG=3 timelines (timeline.py) show ~390 cycles
# between tiles whenever loads are issued and ~180 when none are: issuing 16 x 16-byte cp.async per
# thread is LSU-bound, and nothing overlaps it. Predicted: mission S512 -8 to -10% (3 tiles x ~390
# cycles, ~0.65 us), S256 -4%, D64 / D128 sweep -3 to -8%.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem MMA=wgmma LOAD_ORDER=first,after_qk"
T="--baselines --reps 20 --target-us 2000"
ab_run wgl mission "${T_MISSION:-200}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2,3 Q_IN=regs LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=64 STAGES=3,4 Q_IN=regs LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=range,pingpong BLOCK_N=128 STAGES=2 Q_IN=regs,smem LAZY_RESCALE=0 $W"
ab_run wgl d64 "${T_D64:-200}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2,3 Q_IN=regs LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 WN_KEYS=tile BLOCK_N=64 STAGES=3 Q_IN=smem LAZY_RESCALE=0 $W"
ab_run wgl d128 "${T_D128:-200}" $T --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2 Q_IN=smem LAZY_RESCALE=1 $W"
ab_summary wgl "flash|LOAD_ORDER=|pairs"
