#!/bin/bash
# DIAG=3 timelines at S512 with the stamps in shared memory (perf_notes item 44; before, each thread's local
# stamp array was zero-filled inside the measured prologue) and Q by TMA: one warpgroup, the key-range
# groups (with and without turns) and the key-group ping-pong.
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint EXP2=f32 BLOCK_N=128 Q_IN=regs BLOCK_M=64"
timeout 200 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "WARPS=4 WARPS_N=1 WN_KEYS=tile STAGES=2 WG_PINGPONG=0 Q_LOAD=tma $W" \
  --config "WARPS=4 WARPS_N=1 WN_KEYS=tile STAGES=2 WG_PINGPONG=0 Q_LOAD=cp_async $W" \
  --config "WARPS=8 WARPS_N=2 WN_KEYS=range STAGES=2 WG_PINGPONG=0 Q_LOAD=tma $W" \
  --config "WARPS=8 WARPS_N=2 WN_KEYS=pingpong STAGES=2 WG_PINGPONG=0 Q_LOAD=tma $W" \
  --config "WARPS=8 WARPS_N=2 WN_KEYS=tile STAGES=3 WG_PINGPONG=1 Q_LOAD=tma $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/timeline_q_tma.txt"
