#!/bin/bash
# Split-KV on the wgmma path for the mission shapes (KV_SPLITS x KV_MERGE, perf_notes item 17), and
# BLOCK_N 32, gated and timed side by side with torch's backends in one process.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 Q_IN=regs WARPS=4 BLOCK_M=64"
timeout "${T_SPLIT:-150}" python3 tools/sdpa_bench/bench.py --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_N=64,128 STAGES=3 KV_SPLITS=1,2,4 KV_MERGE=gmem,cluster $W" \
  --grid "BLOCK_N=32 STAGES=4 KV_SPLITS=1 KV_MERGE=gmem $W" \
  --out "$OUT/wgs_mission.json" > "$OUT/wgs_mission.log" 2>&1 || echo "wgs: exit $?"
grep -hE "wrong_result|FAULT|ERROR|Traceback" "$OUT"/wgs_mission.log | head -5
python3 tools/sdpa_bench/summarize_ab.py "$OUT"/wgs_mission.json > "$OUT/wgs_ab.txt" 2>&1
grep -E "flash|KV_SPLITS=|KV_MERGE=" "$OUT/wgs_ab.txt"
