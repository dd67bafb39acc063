#!/bin/bash
# Gates (bench.py --check-only: the spec's gate cases per shape) of the key-group configs that the one-way merge
# of two key-range groups (perf_notes item 57) changed, on the mma and wgmma paths, cp.async and TMA.
OUT=${OUT:-/tmp/o}; mkdir -p $OUT
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 LAZY_RESCALE=0 PIPE_QK=0 KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 WG_PINGPONG=0 KV_WAIT=joint"
timeout 300 python3 tools/sdpa_bench/bench.py --check-only --suite mission --shape B=4,H=16,S=1024,D=64,causal=1,dtype=bf16 --shape B=2,H=16,S=4096,D=128,causal=0,dtype=f16 \
  --grid "MMA=wgmma KV_LOAD=tma BLOCK_M=64 BLOCK_N=128,64 WARPS=8 WARPS_N=2 WN_KEYS=range,pingpong STAGES=2,3 Q_IN=regs Q_LOAD=tma,cp_async EXP2=f32,poly LOAD_ORDER=after_qk $W" \
  --grid "MMA=wgmma,mma KV_LOAD=cp_async BLOCK_M=64,128 BLOCK_N=64,128 WARPS=8 WARPS_N=2 WN_KEYS=range STAGES=2,3 Q_IN=regs EXP2=f32 LOAD_ORDER=first $W" \
  --out $OUT/gate_range.json > $OUT/gate_range.log 2>&1; echo "gate exit $?"
python3 -c "
import json, collections
rs = json.load(open('$OUT/gate_range.json'))['results']
rs = [r for r in rs if r.get('kind') == 'kforge']
print('gate:', dict(collections.Counter(r['status'] for r in rs)))
for r in rs:
    if r['status'] not in ('ok', 'invalid'): print('  ', r['status'], r['shape'], {k: v for k, v in r['config'].items() if k in ('MMA','KV_LOAD','BLOCK_M','BLOCK_N','WN_KEYS','STAGES','Q_LOAD','EXP2')})
" | tee $OUT/gate_range_summary.txt
