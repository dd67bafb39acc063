#!/bin/bash
# The key-range groups' merge, one-directional (perf_notes item 57). Item 41 / 45: two groups over their own
# tile ranges overlap the loop (~28% shorter) but merge in ~840-1400 cycles: three CTA barriers, each group
# parking the other's columns and merging its own, then all storing through sQ. PAIR_MERGE: group 1 parks its
# (m, l) and unnormalised O in its own K ring, arrives on a named barrier and leaves; group 0 merges into its
# registers and stores as one warpgroup does. Predicted: the merge ~840 -> ~400 cycles, key-range S512 -4 to
# -6% (to ~5.4-5.5 us, below one warpgroup's ~5.7).
# PAIR_MERGE was this experiment's define; the one-way merge is now the template's only path for two key-range
# groups, so PAIR_MERGE=0 reproduces the old merge only on commit 72d9723.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run pm mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly $ONE" \
  --grid "STAGES=2,3 Q_IN=regs,smem Q_LOAD=tma,cp_async EXP2=f32,poly WN_KEYS=range PAIR_MERGE=0,1 $KEYS" \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32,poly WN_KEYS=pingpong PAIR_MERGE=0,1 $KEYS"
ab_run pm d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32 $ONE" --grid "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32 WN_KEYS=range PAIR_MERGE=0,1 $KEYS"
ab_report pm
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32 WN_KEYS=range PAIR_MERGE=0 $KEYS" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32 WN_KEYS=range PAIR_MERGE=1 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/pm_timeline.txt"
exit 0
