#!/bin/bash
# PIPE_QK on the wgmma path (Q K^T of the next tile in flight during this tile's softmax, perf_notes
# item 16) against the plain wgmma loop, gated and timed side by side with torch's backends.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
B=tools/sdpa_bench/bench.py
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32 P_EARLY=1 PIPE_QK=0,1"
run() {  # name timeout args...
  local name=$1 t=$2; shift 2
  timeout "$t" python3 $B --baselines --reps 10 --target-us 1500 "$@" --out "$OUT/wgp_$name.json" \
    > "$OUT/wgp_$name.log" 2>&1 || echo "wgp_$name: exit $?"
}
run d64 ${T_D64:-120} --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=3,4 Q_IN=regs,smem LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=3 Q_IN=smem LAZY_RESCALE=0 $W"
run d128 ${T_D128:-120} --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=3 Q_IN=smem,regs LAZY_RESCALE=1 $W"
grep -hE "wrong_result|FAULT|ERROR|Traceback" "$OUT"/wgp_*.log | head -8
python3 tools/sdpa_bench/summarize_ab.py "$OUT"/wgp_*.json > "$OUT/wgp_ab.txt" 2>&1
grep -E "flash|PIPE_QK=|pairs" "$OUT/wgp_ab.txt" | head -120
