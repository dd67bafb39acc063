#!/bin/bash
# Where the O store's ~600 cycles go (a measurement; DIAG_STORE is timing-only, wrong output): DIAG=3
# timelines of one warpgroup and of the key-range groups with the store whole, without its global stores (1)
# and without its normalisation (2). Stamp 15 follows one group's store, so "merge" is that store.
# Its experiment defines (RANGE_STAGGER, RANGE_ISSUE, RANGE_ORDER, FAST_RCP) were folded into the template at
# commit f9561f6 (the kept variant is now its only path; the template ignores unknown defines), so reruns
# time the kept path on both sides of each A/B.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_N=128 BLOCK_M=64 Q_IN=regs Q_LOAD=cp_async EXP2=f32"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 STAGES=2 KV_WAIT=joint $W"
KEYS="WARPS=8 WARPS_N=2 WG_PINGPONG=0 WN_KEYS=range STAGES=3 KV_WAIT=joint RANGE_ORDER=1 $W"
timeout 200 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "DIAG_STORE=0 $ONE" --config "DIAG_STORE=1 $ONE" --config "DIAG_STORE=2 $ONE" \
  --config "DIAG_STORE=0 $KEYS" --config "DIAG_STORE=1 $KEYS" --config "DIAG_STORE=2 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/sd_timeline.txt"
exit 0
