#!/bin/bash
# FRAG_PREFETCH (ldmatrix of the next step's fragments before this step's MMAs) against the plain
# loops, same configs otherwise, gated and timed side by side with torch's backends.
# The variant is not in the template yet: `git apply tools/sdpa_bench/variants/frag_prefetch.patch`
# first (perf_notes.md, item 13).
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
B=tools/sdpa_bench/bench.py
C="MMA=mma VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 EXP2=f32 FRAG_PREFETCH=0,1"
timeout 200 python3 $B --suite sweep --filter D=128 --baselines --reps 10 --target-us 1500 \
  --grid "BLOCK_M=128 BLOCK_N=32 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 P_EARLY=1 $C" \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 P_EARLY=1 $C" \
  --grid "BLOCK_M=128 BLOCK_N=128 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=1 P_EARLY=1 $C" \
  --out "$OUT/prefetch_d128.json" > "$OUT/prefetch_d128.log" 2>&1
timeout 100 python3 $B --suite sweep --filter D=64 --filter dtype=f16 --baselines --reps 10 --target-us 1500 \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=regs LAZY_RESCALE=0 P_EARLY=1 $C" \
  --grid "BLOCK_M=64 BLOCK_N=64 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 P_EARLY=1 $C" \
  --out "$OUT/prefetch_d64.json" > "$OUT/prefetch_d64.log" 2>&1
grep -hE "wrong_result|FAULT|ERROR" "$OUT"/prefetch_*.log | head -5
python3 tools/sdpa_bench/summarize_ab.py "$OUT"/prefetch_*.json > "$OUT/prefetch_ab.txt" 2>&1
grep -E "flash|FRAG_PREFETCH" "$OUT/prefetch_ab.txt"
