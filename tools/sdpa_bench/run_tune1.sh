#!/bin/bash
# Tuning call 1: mission grid (small tiles) + sweep f16 grid (large tiles), baselines included.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
python3 $B --ceilings --suite mission --baselines --reps 30 \
  --grid "BLOCK_M=16,32,64 BLOCK_N=32,64,128 WARPS=1,2,4 STAGES=2,4 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs KV_WAIT=joint,split" \
  --out $OUT/tune_mission.json 2>&1 > $OUT/tune_mission.log; tail -8 $OUT/tune_mission.log
python3 $B --suite sweep --filter dtype=f16 --baselines --reps 15 --target-us 2000 \
  --grid "BLOCK_M=64,128 BLOCK_N=32,64,128 WARPS=2,4,8 STAGES=2,3 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs,smem KV_WAIT=joint,split" \
  --out $OUT/tune_sweep.json 2>&1 > $OUT/tune_sweep.log; tail -14 $OUT/tune_sweep.log
