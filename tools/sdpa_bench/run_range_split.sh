#!/bin/bash
# KV_WAIT=split for the key-range groups on TMA, and the prologue's K tiles requested before their V
# (perf_notes item 61). run_one_fence.sh's timelines: an SM's first bytes arrive at ~64 B per cycle (group 0's
# Q + K0 + V0, 40 KB, by ~1770 cycles; group 1's tile, after 72 KB, by ~2330), so group 1 starts ~550 cycles
# after group 0 and the CTA ends with it. With Q, K0, K2 (40 KB) first, group 1's Q K^T can start where
# group 0's does now, and each V lands under its group's first softmax. Predicted: group 1's tile 0 ~400-550
# cycles earlier, key-range S512 -5 to -8% (5.07 -> ~4.75 us); one warpgroup unchanged (K0 was already first).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 Q_IN=regs $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
C="MMA=wgmma KV_LOAD=tma LOAD_ORDER=after_qk LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 LAZY_RESCALE=0 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs KV_MCAST=1"
ab_gate rw 240 \
  --grid "BLOCK_M=64 WARPS=8 WARPS_N=2 WG_PINGPONG=0 WN_KEYS=range,pingpong KV_WAIT=split,joint BLOCK_N=64,128 STAGES=2,3 Q_LOAD=tma,cp_async EXP2=f32,poly $C" \
  --grid "BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 KV_WAIT=split,joint BLOCK_N=64,128 STAGES=2,3 Q_LOAD=tma,cp_async EXP2=f32 $C"
ab_run rw mission "${T_MISSION:-240}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly Q_LOAD=cp_async KV_WAIT=joint,split $ONE" \
  --grid "STAGES=2,3 EXP2=f32,poly Q_LOAD=tma,cp_async WN_KEYS=range KV_WAIT=joint,split $KEYS" \
  --grid "STAGES=2,3 EXP2=f32 Q_LOAD=tma,cp_async WN_KEYS=pingpong KV_WAIT=joint,split $KEYS"
ab_report rw
python3 tools/sdpa_bench/list_times.py "$OUT"/rw_mission.json | grep -v "torch.flash\|torch.eff"
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 Q_LOAD=cp_async KV_WAIT=joint $ONE" \
  --config "STAGES=3 EXP2=f32 Q_LOAD=cp_async WN_KEYS=range KV_WAIT=joint $KEYS" \
  --config "STAGES=3 EXP2=f32 Q_LOAD=cp_async WN_KEYS=range KV_WAIT=split $KEYS" \
  --config "STAGES=2 EXP2=f32 Q_LOAD=cp_async WN_KEYS=range KV_WAIT=split $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/rw_timeline.txt"
exit 0
