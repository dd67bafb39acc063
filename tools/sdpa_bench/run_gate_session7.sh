#!/bin/bash
# After the last template change (seventh session): the TMA variants (multicast 2 / 4, split waits, split-KV
# push / cluster / gmem, PIPE_QK, BM128 with and without row ping-pong) gated with bench.py --check-only
# (campaign shape + the spec's gate cases: odd S, one row, large scores).
#   run_gate_session7.sh            every spec default too, on the mission and D64 f16 sweep shapes -> $OUT/gate_mission.*
#   run_gate_session7.sh causal     the TMA variants on causal S256 (the clusters' causal tile counts, query
#                                   blocks past S) -> $OUT/gate_causal.*
source "$(dirname "$0")/ab_lib.sh"
if [ "${1:-}" = causal ]; then
  name=causal scope="--shape B=2,H=8,S=256,D=64,causal=1,dtype=f16"
else
  name=mission scope="--defaults --suite mission --suite sweep --filter D=64 --filter dtype=f16"
fi
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 WN_KEYS=tile WARPS_N=1 KV_LOAD=tma"
# shellcheck disable=SC2086
ab_run gate "$name" "${T_GATE:-300}" --check-only $scope \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 Q_IN=regs KV_MCAST=1,2,4 KV_WAIT=joint,split KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs KV_MCAST=1 KV_WAIT=joint KV_SPLITS=2 KV_MERGE=push,cluster,gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=3 Q_IN=regs KV_MCAST=1 KV_WAIT=joint KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=1 LOAD_ORDER=first WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=3 Q_IN=regs,smem KV_MCAST=1 KV_WAIT=joint,split KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0,1 $W"
grep -hE "wrong_result|FAULT|error|Traceback" "$OUT/gate_$name.log" | head -5
python3 - "$OUT/gate_$name.json" <<'PY' | tee "$OUT/gate_${name}_summary.txt"
import collections, json, sys
res = [r for r in json.load(open(sys.argv[1]))["results"] if r.get("kind") == "kforge"]
print(f"{len(res)} evaluations: {dict(collections.Counter(r.get('status') for r in res))}")
PY
