#!/bin/bash
# Split-KV with the cluster (DSMEM) merge + P_EARLY on the mission shapes; P_EARLY on D128 f16. One device call.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
nvidia-smi --query-gpu=name,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
C="MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 LAZY_RESCALE=0"
timeout 200 python3 $B --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=2,4 $C KV_SPLITS=1,2,4 KV_MERGE=cluster P_EARLY=0,1" \
  --grid "BLOCK_M=32 BLOCK_N=64 WARPS=2 STAGES=2 $C KV_SPLITS=2,4 KV_MERGE=cluster P_EARLY=0" \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=8 STAGES=2 $C KV_SPLITS=1,2,4 KV_MERGE=cluster P_EARLY=0" \
  --out $OUT/cluster_mission.json 2>&1 > $OUT/cluster_mission.log; tail -6 $OUT/cluster_mission.log
grep -E "wrong_result|FAULT|ERROR" $OUT/cluster_mission.log | head -5
timeout 120 python3 $B --shape B=2,H=16,S=4096,D=128,causal=0,dtype=f16 --shape B=2,H=16,S=4096,D=128,causal=1,dtype=f16 \
  --shape B=16,H=16,S=1024,D=128,causal=0,dtype=f16 --baselines --reps 10 --target-us 1500 \
  --configs tools/sdpa_bench/configs/d128_pearly.json --out $OUT/pearly_d128.json 2>&1 > $OUT/pearly_d128.log; tail -5 $OUT/pearly_d128.log
grep -E "wrong_result|FAULT|ERROR" $OUT/pearly_d128.log | head -5
python3 tools/sdpa_bench/summarize_ab.py $OUT/cluster_mission.json $OUT/pearly_d128.json 2>&1 | tee $OUT/ab.txt
