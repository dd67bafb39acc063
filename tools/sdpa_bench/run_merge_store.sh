#!/bin/bash
# The key groups' merge split by columns, first version (perf_notes item 45; the template now has the second,
# run_o_tma.sh): every group parks its (m, l) and the other
# groups' columns of its partial O in smem, each merges and normalises its own columns, all warps store.
# Item 44 (stamps in smem, Q by TMA): the old merge, group 0 alone, took ~840 cycles after two key-range
# groups (~1340 after the key ping-pong) against ~40 for one warpgroup's store. Predicted: ~250-350 cycles,
# so S512 key-range groups -6 to -9% (5.74 -> ~5.3 us, below one warpgroup's 5.74), the key ping-pong -5 to -8%.
# With the groups' in-phase MUFU contention (item 41's "mio" stalls), EXP2=poly -0 to -3% on top.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma Q_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
RANGE="WARPS=8 WARPS_N=2 WG_PINGPONG=0 $W"
KPP="WARPS=8 WARPS_N=2 WN_KEYS=tile WG_PINGPONG=1 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run ms mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem EXP2=f32 $ONE" --grid "WN_KEYS=range,pingpong STAGES=2,3 Q_IN=regs,smem EXP2=f32,poly $RANGE" \
  --grid "STAGES=3,4 Q_IN=regs,smem EXP2=f32,poly $KPP"
ab_run ms d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32 $ONE" --grid "WN_KEYS=range STAGES=2 Q_IN=regs EXP2=f32 $RANGE" \
  --grid "STAGES=3 Q_IN=regs EXP2=f32 $KPP"
python3 tools/sdpa_bench/list_times.py "$OUT"/ms_mission.json "$OUT"/ms_d64.json > "$OUT/ms_times.txt"
grep -E "wrong|FAULT|Traceback" "$OUT"/ms_*.log | head -5
[ "${TIMELINE:-1}" = 1 ] && timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 $ONE" --config "WN_KEYS=range STAGES=2 Q_IN=regs EXP2=f32 $RANGE" \
  --config "WN_KEYS=range STAGES=2 Q_IN=regs EXP2=poly $RANGE" --config "STAGES=3 Q_IN=regs EXP2=f32 $KPP" \
  2>&1 | grep -v "^compiled" | tee "$OUT/ms_timeline.txt"
exit 0
