#!/bin/bash
# O by TMA box stores and the reworked key-group merge (perf_notes items 45-46; O_STORE_LSU is an extra define
# from variants/o_tma_store.patch, apply it first). Item 45's probes: after the
# key-range groups, the merge's arithmetic took ~1150 cycles (loads behind per-block branches) and the
# 16-byte global stores of O ~500; one warpgroup's epilogue is ~7% of its samples (item 36). Now: one TMA box
# store per warp (O_STORE_LSU=1, a diagnostic define, is every thread's 16-byte stores), and the merge with the
# group as a template argument and every smem load issued first. Predicted: one warpgroup S512 -2 to -4%,
# S256 -3 to -6%; key-range groups S512 -8 to -12% against their old merge (item 41: 5.74 us).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma Q_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 EXP2=f32"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
RANGE="WARPS=8 WARPS_N=2 WN_KEYS=range WG_PINGPONG=0 $W"
KPP="WARPS=8 WARPS_N=2 WN_KEYS=tile WG_PINGPONG=1 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run ot mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem O_STORE_LSU=0,1 $ONE" --grid "STAGES=2,3 Q_IN=regs,smem O_STORE_LSU=0,1 $RANGE" \
  --grid "STAGES=3 Q_IN=regs O_STORE_LSU=0 $KPP"
ab_run ot d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs O_STORE_LSU=0,1 $ONE" --grid "STAGES=2 Q_IN=regs O_STORE_LSU=0 $RANGE"
python3 tools/sdpa_bench/list_times.py "$OUT"/ot_mission.json "$OUT"/ot_d64.json > "$OUT/ot_times.txt"
grep -E "wrong|FAULT|Traceback" "$OUT"/ot_*.log | head -5
[ "${TIMELINE:-1}" = 1 ] && timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs O_STORE_LSU=0 $RANGE" --config "STAGES=2 Q_IN=regs O_STORE_LSU=1 $RANGE" \
  --config "STAGES=3 Q_IN=regs O_STORE_LSU=0 $KPP" \
  2>&1 | grep -v "^compiled" | tee "$OUT/ot_timeline.txt"
exit 0
