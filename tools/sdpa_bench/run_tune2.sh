#!/bin/bash
# Tuning call 2: WARPS_N (intra-CTA key split) on the mission grid, and sweep f16 grid; compare_torch smoke test.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
python3 $B --suite mission --baselines --reps 30 \
  --grid "BLOCK_M=16,32,64,128 BLOCK_N=32,64,128 WARPS=1,2,4,8 STAGES=2,4 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs KV_WAIT=joint WARPS_N=1,2,4" \
  --out $OUT/tune2_mission.json 2>&1 > $OUT/tune2_mission.log; tail -7 $OUT/tune2_mission.log
timeout 60 python3 tools/compare_torch.py --suite mission --kforge tools/sdpa_bench/fake_export.py --baselines-out $OUT/base_mission.json 2>&1 | tee $OUT/compare.log
python3 $B --suite sweep --filter dtype=f16 --baselines --reps 12 --target-us 1500 \
  --grid "BLOCK_M=64,128 BLOCK_N=32,64,128 WARPS=4,8 STAGES=2,3 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs,smem KV_WAIT=joint WARPS_N=1,2" \
  --out $OUT/tune2_sweep.json 2>&1 > $OUT/tune2_sweep.log; tail -13 $OUT/tune2_sweep.log
