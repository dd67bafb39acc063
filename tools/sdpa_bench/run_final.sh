#!/bin/bash
# Final validation: the best configs on all 24 shapes (gate + timing), torch baselines, compare_torch baselines.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
python3 $B --suite mission --suite sweep --baselines --reps 25 --configs tools/sdpa_bench/configs/best.json \
  --out $OUT/final.json 2>&1 > $OUT/final.log; tail -28 $OUT/final.log
python3 tools/compare_torch.py --suite sweep --baselines-only --baselines-out $OUT/baselines_sweep.json > $OUT/compare_sweep.log 2>&1
python3 tools/compare_torch.py --suite mission --baselines-only --baselines-out $OUT/baselines_mission.json > $OUT/compare_mission.log 2>&1
tail -3 $OUT/compare_sweep.log
