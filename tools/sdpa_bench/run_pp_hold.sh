#!/bin/bash
# PP_HOLD: the key-pingpong groups (WN_KEYS=pingpong) keep their turn from tile j's P V through tile j + 1's
# Q K^T. Reading of item 41 / 57's timelines: two key-range groups run in phase, so a tile pair costs about
# the tensor work plus the MUFU work of both (~2090 cycles against ~1440 for one warpgroup's tile alone);
# the per-MMA turns of WN_KEYS=pingpong only offset them by one MMA (~250 cycles). Holding the turn over a
# group's whole MMA block (P V_j, Q K^T_j+1) puts the other group's softmax under it: the offset becomes
# about one block and each group runs at its own chain's pace. Predicted: S512 tiles ~1450 cycles per pair
# instead of ~2090, the key loop ~4390 -> ~3300 cycles, S512 -10 to -15% against key-range; S256 (one tile per
# group) unchanged.
# PP_HOLD was this experiment's define (not kept): apply variants/pp_hold.patch on commit 2842e44 to rerun it.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 Q_IN=regs Q_LOAD=tma $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
G="MMA=wgmma KV_LOAD=tma BLOCK_M=64 WARPS=8 WARPS_N=2 WG_PINGPONG=0 WN_KEYS=pingpong PP_HOLD=1 Q_IN=regs,smem LOAD_ORDER=after_qk LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 LAZY_RESCALE=0 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 KV_WAIT=joint"
ab_gate ph 200 \
  --grid "BLOCK_N=64,128 STAGES=2,3 Q_LOAD=tma,cp_async EXP2=f32,poly $G"
ab_run ph mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly $ONE" \
  --grid "STAGES=2,3 EXP2=poly WN_KEYS=range $KEYS" \
  --grid "STAGES=2,3 EXP2=f32,poly WN_KEYS=pingpong PP_HOLD=0,1 $KEYS"
ab_run ph d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32 $ONE" --grid "STAGES=3 EXP2=poly WN_KEYS=range $KEYS" \
  --grid "STAGES=3 EXP2=poly WN_KEYS=pingpong PP_HOLD=0,1 $KEYS"
ab_report ph
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 $ONE" \
  --config "STAGES=3 EXP2=poly WN_KEYS=range $KEYS" \
  --config "STAGES=3 EXP2=poly WN_KEYS=pingpong PP_HOLD=0 $KEYS" \
  --config "STAGES=3 EXP2=poly WN_KEYS=pingpong PP_HOLD=1 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/ph_timeline.txt"
exit 0
