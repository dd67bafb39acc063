#!/bin/bash
# Per-warpgroup timelines (DIAG=3, timeline.py) of the one-warpgroup winner and the two-group
# WN_KEYS=range / pingpong configs on the mission S512 and S256 shapes, and of the winner at B4
# (two CTAs per SM).
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 KV_SPLITS=1 KV_MERGE=gmem BLOCK_M=64 BLOCK_N=128 STAGES=2 Q_IN=regs"
for shape in B=2,H=8,S=512,D=64,causal=0,dtype=f16 B=2,H=8,S=256,D=64,causal=0,dtype=f16 B=4,H=8,S=512,D=64,causal=0,dtype=f16; do
  timeout 120 python3 tools/sdpa_bench/timeline.py --shape $shape \
    --config "WARPS=4 WARPS_N=1 WN_KEYS=tile $W" \
    --config "WARPS=8 WARPS_N=2 WN_KEYS=range $W" \
    --config "WARPS=8 WARPS_N=2 WN_KEYS=pingpong $W" 2>&1 | grep -v "^compiled" | tee -a "$OUT/timeline.txt"
done
