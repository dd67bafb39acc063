#!/bin/bash
# PIPE_QK with KV_LOAD=tma (perf_notes item 26): FA3's intra-warpgroup overlap (the next tile's Q K^T in
# flight during this tile's softmax) was +2% on the cp.async path at 248-254 registers (item 16). TMA frees
# ~30 registers (no per-thread load addresses: 141-160 plain, 211-232 with PIPE_QK, no spills). Predicted:
# mission S512 -8 to -12% against the best TMA config (5.65 us), S256 -4 to -6%; D64 sweep -3 to -8%.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 KV_SPLITS=1 KV_MERGE=gmem MMA=wgmma WARPS_N=1 WN_KEYS=tile LAZY_RESCALE=0 KV_LOAD=tma KV_MCAST=1"
T="--baselines --reps 20 --target-us 2000"
ab_run tpq mission "${T_MISSION:-240}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=3,4 Q_IN=regs,smem LOAD_ORDER=first PIPE_QK=0,1 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs,smem LOAD_ORDER=after_qk PIPE_QK=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64 STAGES=3,4 Q_IN=regs LOAD_ORDER=first PIPE_QK=0,1 $W"
ab_run tpq d64 "${T_D64:-200}" $T --suite sweep --filter D=64 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=3 Q_IN=regs,smem LOAD_ORDER=first PIPE_QK=0,1 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs LOAD_ORDER=after_qk PIPE_QK=0 $W"
ab_summary tpq "flash|PIPE_QK=|pairs"
