#!/bin/bash
# KV_LOAD=tma (perf_notes item 25): K/V tiles by TMA box loads from tensor maps, one thread per CTA,
# completed on mbarriers; KV_MCAST 2 / 4 multicasts each tile to a cluster of neighbouring query blocks
# of one head (each CTA loads 1 / KV_MCAST of it), so each K/V byte crosses L2 -> SM once per cluster.
# Predicted (item 20's timelines): TMA alone (KV_MCAST 1) removes the ~390 cycles of cp.async issue per
# tile, S512 -5 to -8%; KV_MCAST 2 halves the 16.8 MB K/V stream and the prologue burst, S512 a further
# -8 to -12%, S256 -5 to -8%; KV_MCAST 4 a little more on S512, less on S256 (fewer, larger clusters).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem MMA=wgmma WARPS_N=1 WN_KEYS=tile LAZY_RESCALE=0"
L="KV_LOAD=cp_async,tma KV_MCAST=1,2,4"
T="--baselines --reps 20 --target-us 2000"
ab_run tma mission "${T_MISSION:-240}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 Q_IN=regs,smem LOAD_ORDER=first,after_qk $L $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64 STAGES=3,4 Q_IN=regs LOAD_ORDER=after_qk $L $W"
ab_run tma d64 "${T_D64:-200}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 Q_IN=regs LOAD_ORDER=first,after_qk $L $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=2,3 Q_IN=smem LOAD_ORDER=after_qk $L $W"
ab_summary tma "flash|KV_LOAD=|KV_MCAST=|pairs"
