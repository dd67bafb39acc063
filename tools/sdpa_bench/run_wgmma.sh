#!/bin/bash
# MMA=wgmma (warpgroup MMA for Q K^T and P V, perf_notes item 15) against the best mma.sync configs,
# gated and timed side by side with torch's backends, one process per shape group.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
B=tools/sdpa_bench/bench.py
C="VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 EXP2=f32 P_EARLY=1"
W="MMA=wgmma LANE_ADDR=0 $C"
M="MMA=mma LANE_ADDR=1 $C"
run() {  # name timeout args...
  local name=$1 t=$2; shift 2
  timeout "$t" python3 $B --baselines --reps 10 --target-us 1500 "$@" --out "$OUT/wg_$name.json" \
    > "$OUT/wg_$name.log" 2>&1 || echo "wg_$name: exit $?"
}
run d64 ${T_D64:-150} --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=2,4 Q_IN=smem,regs LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=2,3 Q_IN=smem LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=64 BLOCK_N=128 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 $M" \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=regs LAZY_RESCALE=0 $M"
run d128 ${T_D128:-150} --suite sweep --filter D=128 --filter dtype=f16 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 BLOCK_N=64,128 WARPS=8 STAGES=2,3 Q_IN=smem LAZY_RESCALE=1 $W" \
  --grid "BLOCK_M=128 BLOCK_N=32,64 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 $M" \
  --grid "BLOCK_M=128 BLOCK_N=128 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=1 $M"
grep -hE "wrong_result|FAULT|ERROR|Traceback|error" "$OUT"/wg_*.log | head -8
python3 tools/sdpa_bench/summarize_ab.py "$OUT"/wg_*.json > "$OUT/wg_ab.txt" 2>&1
grep -E "flash|MMA=" "$OUT/wg_ab.txt" | head -90
