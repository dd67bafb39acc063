#!/bin/bash
# Split-KV (KV_SPLITS) grid on the mission shapes + LAZY_RESCALE on the D128 f16 sweep configs. One device call.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
timeout 250 python3 $B --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_M=32,64 BLOCK_N=64,128 WARPS=2,4 STAGES=2,4 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1,2,4 LAZY_RESCALE=0" \
  --out $OUT/split_mission.json 2>&1 > $OUT/split_mission.log; tail -6 $OUT/split_mission.log
grep -c " ok " $OUT/split_mission.log; grep -E "wrong_result|FAULT|ERROR" $OUT/split_mission.log | head -5
timeout 150 python3 $B --shape B=2,H=16,S=4096,D=128,causal=0,dtype=f16 --shape B=2,H=16,S=4096,D=128,causal=1,dtype=f16 \
  --shape B=16,H=16,S=1024,D=128,causal=0,dtype=f16 --baselines --reps 10 --target-us 1500 \
  --configs tools/sdpa_bench/configs/d128_lazy.json \
  --out $OUT/lazy_d128.json 2>&1 > $OUT/lazy_d128.log; tail -5 $OUT/lazy_d128.log
python3 tools/sdpa_bench/summarize_ab.py $OUT/split_mission.json $OUT/lazy_d128.json 2>&1 | tee $OUT/ab.txt
