#!/bin/bash
# Key-group ping-pong and the polynomial exp2 (perf_notes items 35-36), mission + D64 f16 sweep, one process each.
# Item 28: a BM64 warpgroup's BN128 tile (~1445 cycles) is the serial sum of its tensor work (~512 at peak), its
# exp2 on the MUFU (~512) and the rest of the softmax; two key groups in phase overlap nothing, and the row
# ping-pong (item 33) needs 128 rows per CTA. Here two key groups of one BM64 query block, each half of every
# tile's keys, take turns issuing their MMAs (WG_PINGPONG=1 with WARPS_N 2): one group's exp2 runs under the
# other's tensor work. Predicted: a tile ~900-1100 cycles for both groups, minus the end merge (~300-900):
# S512 -8 to -15%, S256 -3 to -8%. EXP2=poly (one exp2 in four on the FMA pipe): the softmax phase -15 to -25%,
# S512 -3 to -6% on BM64 W4, more where the MUFU is the shared bound (key ping-pong).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 WN_KEYS=tile KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_M=64 BLOCK_N=128"
ONE="WARPS=4 WARPS_N=1 WG_PINGPONG=0 $W"
KEYS="WARPS=8 WARPS_N=2 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run kpp mission "${T_MISSION:-300}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem EXP2=f32,poly $ONE" \
  --grid "STAGES=3,4 Q_IN=regs,smem EXP2=f32,poly WG_PINGPONG=0,1 $KEYS"
# BLOCK_N 256 (outside the spec's values; a copy of the spec with absolute paths): each key group takes 128 keys
# of a 256-key tile, so S512 is two tiles and half the per-tile barriers and turns.
python3 tools/sdpa_bench/spec_bn256.py "$OUT/spec_bn256.json"
ab_run kpp bn256 "${T_BN256:-200}" $T --spec "$OUT/spec_bn256.json" --suite mission \
  --grid "STAGES=3 Q_IN=regs,smem EXP2=f32,poly WG_PINGPONG=1 ${KEYS/BLOCK_N=128/BLOCK_N=256}"
ab_run kpp d64 "${T_D64:-240}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly $ONE" \
  --grid "STAGES=3 Q_IN=regs,smem EXP2=f32,poly WG_PINGPONG=1 $KEYS"
ab_summary kpp "flash|WARPS=|EXP2="
[ "${TIMELINE:-1}" = 1 ] && timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=3 Q_IN=regs EXP2=f32 $ONE" --config "STAGES=3 Q_IN=regs EXP2=poly $ONE" \
  --config "STAGES=3 Q_IN=regs EXP2=f32 WG_PINGPONG=1 $KEYS" --config "STAGES=3 Q_IN=regs EXP2=poly WG_PINGPONG=1 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/kpp_timeline.txt"
exit 0
