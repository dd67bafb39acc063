#!/bin/bash
# One device call: ceilings + mission + sweep with the spec defaults and torch baselines.
# usage: tools/sdpa_bench/run_gpu.sh [extra bench.py args for the sweep]
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem,temperature.gpu,power.draw --format=csv | tee $OUT/gpu.txt
python3 $B --ceilings --suite mission --defaults --baselines --out $OUT/mission.json 2>&1 | tee $OUT/mission.log
python3 $B --suite sweep --baselines --configs tools/sdpa_bench/configs/sweep_first.json --out $OUT/sweep.json "$@" 2>&1 | tee $OUT/sweep.log
