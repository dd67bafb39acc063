#!/bin/bash
# The key-range groups' first requests with KV_WAIT=split: every group's K, then every V (order 0), or each
# group's K and V in turn (order 1: Q, K0, V0, K2, V2). run_range_split.sh's timelines: order 0 starts group 1
# ~210 cycles after group 0, and the two then run in phase (two tiles in ~4990 cycles against ~4030-4280 with
# group 1 ~600 cycles behind); order 1 should start group 0 at Q + K0 (24 KB) and group 1 at 56 KB, ~500 cycles
# later: both ~250 cycles earlier than with KV_WAIT=joint, still out of phase. Predicted: key-range S512 -2 to
# -4% against joint. Also times one group's store (stamp 15 now follows it) against the groups' merge + store.
# Its experiment defines (RANGE_STAGGER, RANGE_ISSUE, RANGE_ORDER, FAST_RCP) were folded into the template at
# commit f9561f6 (the kept variant is now its only path; the template ignores unknown defines), so reruns
# time the kept path on both sides of each A/B.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 Q_IN=regs Q_LOAD=cp_async $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
C="MMA=wgmma KV_LOAD=tma LOAD_ORDER=after_qk LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 LAZY_RESCALE=0 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs KV_MCAST=1"
ab_gate ro 200 \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WG_PINGPONG=0 WN_KEYS=range,pingpong RANGE_ORDER=1 KV_WAIT=split,joint BLOCK_N=64,128 STAGES=2,3 Q_LOAD=tma,cp_async EXP2=f32 $C"
ab_run ro mission "${T_MISSION:-240}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly Q_LOAD=cp_async KV_WAIT=joint $ONE" \
  --grid "STAGES=2,3 EXP2=f32,poly WN_KEYS=range KV_WAIT=joint RANGE_ORDER=1 $KEYS" \
  --grid "STAGES=2,3 EXP2=f32,poly WN_KEYS=range KV_WAIT=split RANGE_ORDER=0,1 $KEYS" \
  --grid "STAGES=2 EXP2=f32 WN_KEYS=pingpong KV_WAIT=joint,split RANGE_ORDER=0,1 $KEYS"
ab_report ro
python3 tools/sdpa_bench/list_times.py "$OUT"/ro_mission.json | grep -v "torch.flash\|torch.eff"
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 Q_LOAD=cp_async KV_WAIT=joint $ONE" \
  --config "STAGES=3 EXP2=f32 WN_KEYS=range KV_WAIT=joint RANGE_ORDER=1 $KEYS" \
  --config "STAGES=3 EXP2=f32 WN_KEYS=range KV_WAIT=split RANGE_ORDER=1 $KEYS" \
  --config "STAGES=2 EXP2=f32 WN_KEYS=range KV_WAIT=split RANGE_ORDER=1 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/ro_timeline.txt"
exit 0
