#!/bin/bash
# The first ~720 cycles of a TMA CTA, before its loads leave (perf_notes item 55): DIAG=3 now also stamps the
# ring's barriers initialised (20) and Q requested (21). No prediction (a measurement).
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 STAGES=2 Q_IN=regs EXP2=f32"
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async $W" \
  --config "WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=tma $W" \
  --config "WARPS=8 WARPS_N=2 WN_KEYS=range WG_PINGPONG=0 Q_LOAD=tma $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/prologue_split.txt"
