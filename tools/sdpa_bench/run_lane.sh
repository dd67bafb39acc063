#!/bin/bash
# LANE_ADDR (fragment addresses recomputed per tile, perf_notes item 14) and FRAG_PREFETCH (next
# step's ldmatrix before this step's MMAs, item 13) against the plain loops, same configs otherwise,
# gated and timed side by side with torch's backends in one process per shape group.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
B=tools/sdpa_bench/bench.py
C="MMA=mma VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 EXP2=f32"
run() {  # name timeout args...
  local name=$1 t=$2; shift 2
  timeout "$t" python3 $B --baselines --reps 10 --target-us 1500 "$@" --out "$OUT/lane_$name.json" \
    > "$OUT/lane_$name.log" 2>&1 || echo "lane_$name: exit $?"
}
run d128 ${T_D128:-220} --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=128 BLOCK_N=32,64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0" \
  --grid "BLOCK_M=128 BLOCK_N=32,64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 P_EARLY=1 $C LANE_ADDR=0 FRAG_PREFETCH=1" \
  --grid "BLOCK_M=128 BLOCK_N=128 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=1 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0,1"
run d64 ${T_D64:-120} --suite sweep --suite mission --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=regs LAZY_RESCALE=0 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0,1" \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 P_EARLY=1 $C LANE_ADDR=0,1 FRAG_PREFETCH=0,1"
grep -hE "wrong_result|FAULT|ERROR|Traceback" "$OUT"/lane_*.log | head -5
python3 tools/sdpa_bench/summarize_ab.py "$OUT"/lane_*.json > "$OUT/lane_ab.txt" 2>&1
grep -E "flash|LANE_ADDR|FRAG_PREFETCH" "$OUT/lane_ab.txt" | head -80
