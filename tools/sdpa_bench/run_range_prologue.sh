#!/bin/bash
# Where the key-range groups' first ~2100 cycles go (a measurement): DIAG=3 timelines with the set-up split
# (stamp 22: indices computed, parameters read) and, for the key-range loop, stamps 18 / 19 (the group's first
# tiles requested, Q resident), against one warpgroup and an 8-warp CTA over one ring, at S512 (128 CTAs) and
# S256 (64 CTAs: half the start-up burst over the GPU).
# Its experiment defines (RANGE_STAGGER, RANGE_ISSUE, RANGE_ORDER, FAST_RCP) were folded into the template at
# commit f9561f6 (the kept variant is now its only path; the template ignores unknown defines), so reruns
# time the kept path on both sides of each A/B.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 Q_IN=regs $W"
for S in 512 256; do
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=$S,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 Q_LOAD=cp_async $ONE" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 Q_LOAD=tma $ONE" \
  --config "STAGES=2 EXP2=f32 Q_LOAD=tma WN_KEYS=tile $KEYS" \
  --config "STAGES=2 EXP2=poly Q_LOAD=tma WN_KEYS=range RANGE_STAGGER=1 $KEYS" \
  --config "STAGES=3 EXP2=f32 Q_LOAD=cp_async WN_KEYS=range RANGE_STAGGER=1 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/rp_timeline_s$S.txt"
done
exit 0
