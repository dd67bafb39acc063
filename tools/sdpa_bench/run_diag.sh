#!/bin/bash
# Diagnostic: where does the split-KV time go? KS 1/2/4 with and without the merge+store (DIAG=1: wrong output,
# timed anyway), plus the proposed defaults validated on the D128 bf16 shapes.
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p $OUT
B=tools/sdpa_bench/bench.py
C="MMA=mma VEC=8 LAYOUT=swizzled Q_IN=regs KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 LAZY_RESCALE=0 P_EARLY=0"
timeout 120 python3 $B --shape B=2,H=8,S=256,D=64,causal=0,dtype=f16 --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --reps 20 --target-us 2000 --time-anyway --skip-gate \
  --grid "BLOCK_M=64 BLOCK_N=64,128 WARPS=4 STAGES=2 $C KV_SPLITS=1,2,4 KV_MERGE=cluster,gmem DIAG=0,1" --grid "BLOCK_M=64 BLOCK_N=64 WARPS=4 STAGES=2 $C KV_SPLITS=2 KV_MERGE=cluster DIAG=0" \
  --out $OUT/diag.json 2>&1 > $OUT/diag.log
true
python3 - <<'PY'
import json,os
res=json.load(open(os.environ.get("OUT","/tmp/sdpa_out")+"/diag.json"))["results"]
for r in res:
    if "median_us" in r:
        c=r["config"]; print(r["shape"]["S"], f"BN{c['BLOCK_N']} KS{c['KV_SPLITS']} {c['KV_MERGE']} DIAG{c.get('DIAG')} {r['median_us']:.2f} {r['status']}")
PY
[ -n "$D128" ] && timeout 150 python3 $B --suite sweep --filter D=128 --filter dtype=bf16 --baselines --reps 10 --target-us 1500 \
  --configs tools/sdpa_bench/configs/d128_new.json --out $OUT/d128_bf16.json 2>&1 > $OUT/d128_bf16.log; tail -8 $OUT/d128_bf16.log
grep -E "wrong_result|FAULT|ERROR" $OUT/d128_bf16.log | head -5
