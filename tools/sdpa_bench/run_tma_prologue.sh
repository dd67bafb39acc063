#!/bin/bash
# Where the first ~2000 cycles of a mission CTA go (perf_notes item 34): DIAG=3 timelines with the prologue
# split at stamp 18 (Q and the first K/V tiles requested) and 19 (Q resident), plus when the CTAs of the
# launch enter and leave (globaltimer), for the TMA winner at S512 / S256 and the cp.async one at S512.
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 WN_KEYS=tile WARPS_N=1 KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_M=64 WARPS=4 BLOCK_N=128 Q_IN=regs KV_WAIT=joint"
for shape in B=2,H=8,S=512,D=64,causal=0,dtype=f16 B=2,H=8,S=256,D=64,causal=0,dtype=f16; do
  timeout 120 python3 tools/sdpa_bench/timeline.py --shape $shape \
    --config "STAGES=2 KV_LOAD=tma $W" --config "STAGES=3 KV_LOAD=cp_async $W" 2>&1 | grep -v "^compiled" | tee -a "$OUT/prologue_timeline.txt"
done
