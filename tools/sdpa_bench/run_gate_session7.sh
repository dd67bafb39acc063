#!/bin/bash
# After the last template change (seventh session): every spec default plus the TMA variants (multicast 2 / 4,
# split waits, split-KV push and cluster, PIPE_QK, row ping-pong) and the earlier structural variants, gated on
# the mission and D64 f16 sweep shapes (bench.py --check-only: campaign shape + the spec's gate cases).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 WN_KEYS=tile WARPS_N=1"
ab_run gate mission "${T_GATE:-300}" --check-only --defaults --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 Q_IN=regs KV_LOAD=tma KV_MCAST=1,2,4 KV_WAIT=joint,split KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs KV_LOAD=tma KV_MCAST=1 KV_WAIT=joint KV_SPLITS=2 KV_MERGE=push,cluster,gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=3 Q_IN=regs KV_LOAD=tma KV_MCAST=1 KV_WAIT=joint KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=1 LOAD_ORDER=first WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=3 Q_IN=regs,smem KV_LOAD=tma KV_MCAST=1 KV_WAIT=joint,split KV_SPLITS=1 KV_MERGE=gmem PIPE_QK=0 LOAD_ORDER=after_qk WG_PINGPONG=0,1 $W"
grep -hE "wrong_result|FAULT|error|Traceback" "$OUT"/gate_*.log | head -5
python3 - "$OUT/gate_mission.json" <<'PY' | tee "$OUT/gate_summary.txt"
import json, sys, collections
res = [r for r in json.load(open(sys.argv[1]))["results"] if r.get("kind") == "kforge"]
c = collections.Counter(r.get("status") for r in res)
print(f"{len(res)} evaluations: {dict(c)}")
PY
