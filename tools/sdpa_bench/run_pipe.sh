#!/bin/bash
# PIPE_QK (Q K^T of the next tile issued before this tile's softmax) on mission + D64 sweep + one D128 config.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
C="MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem LAZY_RESCALE=0"
timeout 150 python3 $B --suite mission --baselines --reps 25 --target-us 2000 \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=3,4 $C P_EARLY=0,1 PIPE_QK=0,1" \
  --grid "BLOCK_M=32 BLOCK_N=64 WARPS=2 STAGES=3 $C P_EARLY=1 PIPE_QK=0,1" \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=8 STAGES=3 $C P_EARLY=1 PIPE_QK=0,1" \
  --out $OUT/pipe_mission.json 2>&1 > $OUT/pipe_mission.log; tail -6 $OUT/pipe_mission.log
grep -E "wrong_result|FAULT|ERROR" $OUT/pipe_mission.log | head -5
timeout 150 python3 $B --suite sweep --filter D=64 --filter dtype=f16 --baselines --reps 12 --target-us 2000 \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 $C P_EARLY=0,1 PIPE_QK=0,1" \
  --grid "BLOCK_M=64 BLOCK_N=64 WARPS=4 STAGES=3,4 $C P_EARLY=1 PIPE_QK=0,1" \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=8 STAGES=3 $C P_EARLY=1 PIPE_QK=0,1" \
  --out $OUT/pipe_d64.json 2>&1 > $OUT/pipe_d64.log; tail -6 $OUT/pipe_d64.log
grep -E "wrong_result|FAULT|ERROR" $OUT/pipe_d64.log | head -5
timeout 100 python3 $B --shape B=2,H=16,S=4096,D=128,causal=1,dtype=f16 --shape B=2,H=16,S=4096,D=128,causal=0,dtype=f16 \
  --baselines --reps 10 --target-us 1500 \
  --grid "BLOCK_M=128 BLOCK_N=64 WARPS=8 STAGES=3 $C LAZY_RESCALE=1 P_EARLY=1 PIPE_QK=0,1" \
  --grid "BLOCK_M=128 BLOCK_N=32 WARPS=4 STAGES=3 MMA=mma VEC=8 LAYOUT=swizzled Q_IN=smem KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem LAZY_RESCALE=1 P_EARLY=1 PIPE_QK=0,1" \
  --out $OUT/pipe_d128.json 2>&1 > $OUT/pipe_d128.log; tail -4 $OUT/pipe_d128.log
grep -E "wrong_result|FAULT|ERROR" $OUT/pipe_d128.log | head -5
python3 tools/sdpa_bench/summarize_ab.py $OUT/pipe_mission.json $OUT/pipe_d64.json $OUT/pipe_d128.json > $OUT/ab.txt 2>&1
grep -E "flash|PIPE_QK" $OUT/ab.txt
