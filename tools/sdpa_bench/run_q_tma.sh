#!/bin/bash
# Q by TMA (perf_notes item 43): with KV_LOAD=tma, Q is one box load by thread 0 on its own mbarrier, requested
# before any K/V tile, instead of every thread's cp.async (Q_LOAD=cp_async is the old way; when this ran it was a diagnostic define).
# Item 42: the K/V producer's requests left the SM only at cycle ~1060 (BM64 W4) to ~2300 (BM64 W8), after
# the 512 cp.async of Q; the first tile started at ~2400 / ~3900. Predicted: tile 0 -300 to -700 cycles at
# W4 (S512 -3 to -8%), -1000 or more at W8, where the key-range groups (item 41) could then win.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint EXP2=f32 BLOCK_N=128"
ONE="BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
RANGE="BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=range WG_PINGPONG=0 $W"
KPP="BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=tile WG_PINGPONG=1 $W"
RPP="BLOCK_M=128 WARPS=8 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=1 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run qt mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem Q_LOAD=tma,cp_async $ONE" --grid "STAGES=2 Q_IN=regs,smem Q_LOAD=tma,cp_async $RANGE" \
  --grid "STAGES=3 Q_IN=regs Q_LOAD=tma,cp_async $KPP" --grid "STAGES=3 Q_IN=regs Q_LOAD=tma,cp_async $RPP"
ab_run qt d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=tma,cp_async $ONE" --grid "STAGES=2 Q_IN=regs Q_LOAD=tma $RANGE"
python3 tools/sdpa_bench/list_times.py "$OUT"/qt_mission.json "$OUT"/qt_d64.json > "$OUT/qt_times.txt"
grep -E "wrong|FAULT|Traceback" "$OUT"/qt_*.log | head -5
[ "${TIMELINE:-1}" = 1 ] && timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async $ONE" --config "STAGES=2 Q_IN=regs Q_LOAD=tma $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async $RANGE" --config "STAGES=2 Q_IN=regs Q_LOAD=tma $RANGE" \
  --config "STAGES=3 Q_IN=regs Q_LOAD=tma $KPP" \
  2>&1 | grep -v "^compiled" | tee "$OUT/qt_timeline.txt"
exit 0
