#!/bin/bash
# One thread initialises every mbarrier of the CTA behind one fence, and the key-range groups' first tiles are
# requested by thread 0, group 0's first (perf_notes items 59-60). run_range_prologue.sh's timelines: the
# key-range CTA took ~560 cycles from its parameters to its ring barriers (each group's first thread
# initialising and fencing its own ring) against ~170 for one warpgroup; fence.mbarrier_init alone ~150.
# Predicted: key-range tile 0 ~400 cycles earlier, S512 -5 to -8% against run_range_stagger.sh's 5.39 us
# (one warpgroup, unchanged, is the anchor: 5.64-5.76 there); one warpgroup with Q_LOAD=tma (one fence
# fewer) -2 to -3%.
# Its experiment defines (RANGE_STAGGER, RANGE_ISSUE, RANGE_ORDER, FAST_RCP) were folded into the template at
# commit f9561f6 (the kept variant is now its only path; the template ignores unknown defines), so reruns
# time the kept path on both sides of each A/B.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 Q_IN=regs $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
C="MMA=wgmma KV_LOAD=tma LOAD_ORDER=after_qk LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 LAZY_RESCALE=0 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem KV_WAIT=joint Q_IN=regs"
ab_gate of 240 \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WG_PINGPONG=0 WN_KEYS=range,pingpong RANGE_ISSUE=0,2 BLOCK_N=64,128 STAGES=2,3 Q_LOAD=tma,cp_async EXP2=f32,poly KV_MCAST=1 $C" \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 BLOCK_N=64,128 STAGES=2,3 Q_LOAD=tma,cp_async EXP2=f32 KV_MCAST=1,2 $C" \
  --grid "BLOCK_M=128 WARPS=8 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=1 BLOCK_N=128 STAGES=3 Q_LOAD=tma,cp_async EXP2=f32 KV_MCAST=1 $C" \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=tile WG_PINGPONG=1 BLOCK_N=128 STAGES=3 Q_LOAD=tma,cp_async EXP2=f32 KV_MCAST=1 $C" \
  --grid "MMA=mma KV_LOAD=cp_async BLOCK_M=64,128 BLOCK_N=64 WARPS=8 WARPS_N=2 WN_KEYS=range STAGES=2 Q_IN=regs EXP2=f32 LOAD_ORDER=first LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 LAZY_RESCALE=0 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 WG_PINGPONG=0 KV_WAIT=joint"
ab_run of mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly Q_LOAD=cp_async,tma $ONE" \
  --grid "STAGES=2,3 EXP2=f32,poly Q_LOAD=tma,cp_async WN_KEYS=range RANGE_ISSUE=0,2 $KEYS" \
  --grid "STAGES=2 EXP2=f32,poly Q_LOAD=tma,cp_async WN_KEYS=pingpong RANGE_ISSUE=0,2 $KEYS"
ab_report of
python3 tools/sdpa_bench/list_times.py "$OUT"/of_mission.json | grep -v torch
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 Q_LOAD=cp_async $ONE" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 Q_LOAD=tma $ONE" \
  --config "STAGES=2 EXP2=poly Q_LOAD=tma WN_KEYS=range RANGE_ISSUE=0 $KEYS" \
  --config "STAGES=3 EXP2=f32 Q_LOAD=cp_async WN_KEYS=range RANGE_ISSUE=0 $KEYS" \
  --config "STAGES=3 EXP2=f32 Q_LOAD=cp_async WN_KEYS=range RANGE_ISSUE=2 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/of_timeline.txt"
exit 0
