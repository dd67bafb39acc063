#!/bin/bash
# Key groups over their own ranges of tiles on the TMA ring (perf_notes item 41): WARPS_N 2 with WN_KEYS=range
# or pingpong, each group streaming half of the query block's key tiles through its own TMA ring. Item 21
# (cp.async): two range groups ran the S512 key loop in 5124 cycles against 7192 for one warpgroup (two chains
# per SM overlap), but each group's threads loading its first tiles doubled the prologue and the merge cost
# ~900 cycles. With TMA the loads are one thread's; the first-wave bytes still double (each group's first tile).
# Predicted: S512 loop ~4000-4500 cycles against ~6300, prologue +300-600, merge ~900: S512 -5 to -15%;
# S256 (two tiles, one per group) -5 to -10%; D64 sweep slower (its CTAs already share SMs).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint EXP2=f32 WG_PINGPONG=0 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 $W"
RANGE="WARPS=8 WARPS_N=2 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run tr mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs,smem $ONE" \
  --grid "WN_KEYS=range,pingpong BLOCK_N=64,128 STAGES=2,3 Q_IN=regs,smem $RANGE"
ab_run tr d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs $ONE" --grid "WN_KEYS=range,pingpong BLOCK_N=128 STAGES=2 Q_IN=regs $RANGE"
ab_summary tr "flash|WN_KEYS="
python3 tools/sdpa_bench/list_times.py "$OUT"/tr_mission.json "$OUT"/tr_d64.json > "$OUT/tr_times.txt"
grep -E "S512 D64 causal0" "$OUT/tr_times.txt" | sort -k2 -t'k' | head -40
[ "${TIMELINE:-1}" = 1 ] && timeout 100 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs $ONE" --config "WN_KEYS=range BLOCK_N=128 STAGES=2 Q_IN=regs $RANGE" \
  --config "WN_KEYS=pingpong BLOCK_N=128 STAGES=2 Q_IN=regs $RANGE" \
  2>&1 | grep -v "^compiled" | tee "$OUT/tr_timeline.txt"
exit 0
