#!/bin/bash
# FAST_RCP: the O store's normalisation by rcp.approx instead of IEEE division (perf_notes item 62).
# run_store_diag.sh: one warpgroup's store takes ~590 cycles, ~290 of them the normalisation (quad sum, 1 / l,
# the scaling) and ~140 the global stores. Predicted: the store -150 to -250 cycles, S512 and S256 -2 to -3%
# for one warpgroup and the key-range groups alike.
# Its experiment defines (RANGE_STAGGER, RANGE_ISSUE, RANGE_ORDER, FAST_RCP) were folded into the template at
# commit f9561f6 (the kept variant is now its only path; the template ignores unknown defines), so reruns
# time the kept path on both sides of each A/B.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_N=128 BLOCK_M=64 Q_IN=regs Q_LOAD=cp_async"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 STAGES=2 KV_WAIT=joint $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 RANGE_ORDER=1 $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run fr mission "${T_MISSION:-200}" $T --suite mission \
  --grid "EXP2=f32,poly FAST_RCP=0,1 $ONE" \
  --grid "EXP2=f32,poly FAST_RCP=0,1 WN_KEYS=range STAGES=2,3 KV_WAIT=joint $KEYS" \
  --grid "EXP2=f32,poly FAST_RCP=0,1 WN_KEYS=range STAGES=2 KV_WAIT=split $KEYS" \
  --grid "EXP2=f32 FAST_RCP=0,1 WN_KEYS=pingpong STAGES=2 KV_WAIT=joint $KEYS"
ab_run fr d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --grid "EXP2=f32 FAST_RCP=0,1 $ONE"
ab_report fr
python3 tools/sdpa_bench/list_times.py "$OUT"/fr_mission.json | grep -v "torch.flash\|torch.eff"
grep -E "FAST_RCP" "$OUT/fr_ab.txt" | head -30
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "FAST_RCP=0 EXP2=f32 $ONE" --config "FAST_RCP=1 EXP2=f32 $ONE" \
  --config "FAST_RCP=0 EXP2=f32 WN_KEYS=range STAGES=3 KV_WAIT=joint $KEYS" \
  --config "FAST_RCP=1 EXP2=f32 WN_KEYS=range STAGES=3 KV_WAIT=joint $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/fr_timeline.txt"
exit 0
