#!/bin/bash
# PV_DEFER (perf_notes item 37; an extra define from variants/pv_defer_softmax_chains.patch, apply it first): one MMA phase per tile, P V of tile j - 1 issued with Q K^T of tile j, one wait;
# slots released per warp on the ring's empty mbarriers instead of a CTA barrier per tile. Item 35's timeline:
# the key-group ping-pong with a turn per MMA keeps the two groups within one MMA of each other (~1280-cycle
# tiles); with one turn per phase each group alternates MMA phase and softmax phase, half a period apart.
# Predicted: BM64 W4 S512 tiles 1441 -> ~1250-1300 (one wgmma round trip and the CTA barrier fewer per tile),
# S512 -5 to -8%; key ping-pong tiles ~850-1000, S512 -10 to -20% against the W4 winner if the prologue and
# merge (item 35: +1200 and +1300 cycles) do not eat it.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 WN_KEYS=tile KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint"
ONE="BLOCK_M=64 BLOCK_N=128 WARPS=4 WARPS_N=1 WG_PINGPONG=0 $W"
KEYS="BLOCK_M=64 BLOCK_N=128 WARPS=8 WARPS_N=2 WG_PINGPONG=1 $W"
ROWS="BLOCK_M=128 BLOCK_N=128 WARPS=8 WARPS_N=1 WG_PINGPONG=1 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run pvd mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem PV_DEFER=0,1 $ONE" \
  --grid "STAGES=3,4 Q_IN=regs,smem EXP2=f32,poly PV_DEFER=1 $KEYS" --grid "STAGES=3 Q_IN=regs PV_DEFER=0 $KEYS" \
  --grid "STAGES=3 Q_IN=regs PV_DEFER=0,1 $ROWS"
python3 tools/sdpa_bench/spec_bn256.py "$OUT/spec_bn256.json"
ab_run pvd bn256 "${T_BN256:-100}" $T --spec "$OUT/spec_bn256.json" --suite mission \
  --grid "STAGES=3 Q_IN=regs,smem PV_DEFER=0,1 ${KEYS/BLOCK_N=128/BLOCK_N=256}"
ab_run pvd d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs PV_DEFER=0,1 $ONE" --grid "STAGES=3 Q_IN=regs,smem PV_DEFER=1 $KEYS" \
  --grid "STAGES=3 Q_IN=regs PV_DEFER=1 $ROWS"
ab_summary pvd "flash|WARPS=|PV_DEFER="
[ "${TIMELINE:-1}" = 1 ] && timeout 100 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=3 Q_IN=regs PV_DEFER=0 $ONE" --config "STAGES=3 Q_IN=regs PV_DEFER=1 $ONE" \
  --config "STAGES=3 Q_IN=regs PV_DEFER=1 $KEYS" --config "STAGES=4 Q_IN=smem PV_DEFER=1 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/pvd_timeline.txt"
exit 0
