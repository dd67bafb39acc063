#!/bin/bash
# Where a one-warpgroup BN128 tile's ~1440 cycles go (perf_notes item 50): DIAG_CUT removes one part of the
# tile at a time (wrong output, timed anyway): 1 the exp2 (the MUFU stream), 2 the Q K^T wgmma, 3 the P V wgmma,
# 4 the row max. Items 48-49 found that a warpgroup's MMAs do not overlap its own softmax; this splits the
# serial chain. Prediction: exp2 ~450-550 of the 1440, Q K^T and P V ~250-350 each, the row max ~100-200.
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async STAGES=2 Q_IN=regs"
timeout 200 python3 tools/sdpa_bench/bench.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 --shape B=2,H=8,S=256,D=64,causal=0,dtype=f16 \
  --reps 20 --target-us 2000 --skip-gate --time-anyway --grid "EXP2=f32,poly DIAG_CUT=0,1,2,3,4 $W" \
  --out "$OUT/cut.json" > "$OUT/cut.log" 2>&1 || echo "bench exit $?"
python3 tools/sdpa_bench/list_times.py "$OUT/cut.json" | tee "$OUT/cut_times.txt"
timeout 150 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "EXP2=f32 DIAG_CUT=0 $W" --config "EXP2=f32 DIAG_CUT=1 $W" --config "EXP2=f32 DIAG_CUT=2 $W" \
  --config "EXP2=f32 DIAG_CUT=3 $W" --config "EXP2=f32 DIAG_CUT=4 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/cut_timeline.txt"
exit 0
