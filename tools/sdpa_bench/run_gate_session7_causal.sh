#!/bin/bash
# The TMA variants of run_gate_session7.sh on the causal S256 mission shape and its gate cases (odd S, one row,
# large scores: the clusters' causal tile counts and the query blocks past S).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 WN_KEYS=tile WARPS_N=1"
ab_run gatec causal "${T_GATE:-280}" --check-only --shape B=2,H=8,S=256,D=64,causal=1,dtype=f16 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 Q_IN=regs KV_LOAD=tma KV_MCAST=1,2,4 KV_WAIT=joint,split KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs KV_LOAD=tma KV_MCAST=1 KV_WAIT=joint KV_SPLITS=2 KV_MERGE=push,cluster,gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=3 Q_IN=regs KV_LOAD=tma KV_MCAST=1 KV_WAIT=joint KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=1 LOAD_ORDER=first WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=3 Q_IN=regs,smem KV_LOAD=tma KV_MCAST=1 KV_WAIT=joint,split KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0,1 $W"
grep -hE "wrong_result|FAULT|error|Traceback" "$OUT"/gatec_*.log | head -5
python3 - "$OUT/gatec_causal.json" <<'PY' | tee "$OUT/gatec_summary.txt"
import json, sys, collections
res = [r for r in json.load(open(sys.argv[1]))["results"] if r.get("kind") == "kforge"]
print(f"{len(res)} evaluations: {dict(collections.Counter(r.get('status') for r in res))}")
PY
