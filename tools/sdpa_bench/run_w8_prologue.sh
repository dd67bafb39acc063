#!/bin/bash
# Why a BM64 CTA of 8 warps starts its first tile ~1200 cycles later than one of 4 (perf_notes item 42): DIAG=3
# timelines at S512 of one-ring (WN_KEYS=tile) configs that differ in one thing each: the warps (4 / 8), the
# key groups (1 / 2), the ping-pong (its producer is thread 128, else thread 0), STAGES, and BLOCK_M 128.
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint EXP2=f32 WN_KEYS=tile BLOCK_N=128 Q_IN=regs"
timeout 200 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "BLOCK_M=64 WARPS=4 WARPS_N=1 STAGES=3 WG_PINGPONG=0 $W" \
  --config "BLOCK_M=64 WARPS=8 WARPS_N=2 STAGES=3 WG_PINGPONG=0 $W" \
  --config "BLOCK_M=64 WARPS=8 WARPS_N=2 STAGES=3 WG_PINGPONG=1 $W" \
  --config "BLOCK_M=64 WARPS=8 WARPS_N=2 STAGES=2 WG_PINGPONG=0 $W" \
  --config "BLOCK_M=128 WARPS=8 WARPS_N=1 STAGES=3 WG_PINGPONG=1 $W" \
  --config "BLOCK_M=128 WARPS=8 WARPS_N=1 STAGES=3 WG_PINGPONG=0 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/w8_prologue_timeline.txt"
