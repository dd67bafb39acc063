#!/bin/bash
# EXP2=pair (two exps per MUFU op, ex2.approx.f16x2 / .bf16x2) against f32 exps, same configs otherwise,
# gated and timed side by side with torch's backends.   run_exp2.sh mission|sweep
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
C="MMA=mma VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 P_EARLY=1 EXP2=f32,pair"
case "$1" in
mission)
  timeout 200 python3 $B --suite mission --baselines --reps 25 --target-us 2000 \
    --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 $C" \
    --grid "BLOCK_M=128 BLOCK_N=64 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=0 $C" \
    --out $OUT/exp2_mission.json 2>&1 > $OUT/exp2_mission.log ;;
sweep)
  timeout 150 python3 $B --suite sweep --filter D=64 --baselines --reps 10 --target-us 1500 \
    --grid "BLOCK_M=128 BLOCK_N=64 WARPS=4 STAGES=3 Q_IN=regs LAZY_RESCALE=0 $C" \
    --grid "BLOCK_M=64 BLOCK_N=64 WARPS=4 STAGES=4 Q_IN=regs LAZY_RESCALE=0 $C" \
    --out $OUT/exp2_d64.json 2>&1 > $OUT/exp2_d64.log
  timeout 200 python3 $B --suite sweep --filter D=128 --baselines --reps 10 --target-us 1500 \
    --grid "BLOCK_M=128 BLOCK_N=32 WARPS=4 STAGES=2 Q_IN=smem LAZY_RESCALE=1 $C" \
    --grid "BLOCK_M=128 BLOCK_N=128 WARPS=8 STAGES=3 Q_IN=regs LAZY_RESCALE=1 $C" \
    --out $OUT/exp2_d128.json 2>&1 > $OUT/exp2_d128.log ;;
esac
grep -hE "wrong_result|FAULT|ERROR" $OUT/exp2_*.log | head -5
python3 tools/sdpa_bench/summarize_ab.py $OUT/exp2_*.json > $OUT/exp2_ab.txt 2>&1
grep -E "flash|EXP2" $OUT/exp2_ab.txt
