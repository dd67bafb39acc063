#!/bin/bash
# K/V before Q in the producer's prologue (perf_notes item 55). Item 55's stamps: the producer (thread 0) inits
# the ring's barriers (0-381 cycles), requests its part of Q by cp.async (381-549) and only then the first K/V
# tiles (549-788); Q is resident at ~1017 and tile 0 starts at ~1428, waiting for K/V. Requesting K/V first
# should land them ~250 cycles earlier while Q (warps 1-3 unchanged, warp 0 ~240 later) still lands before
# them. Predicted: tile 0 -150 to -250 cycles; S512 -2 to -3%, S256 -3 to -5%, D64 sweep ~0.
# Not kept: the variant's code is tools/sdpa_bench/variants/kv_first.patch (git apply it on commit 29dd7dc).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk BLOCK_N=128 BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run kvf mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem KV_WAIT=joint,split EXP2=f32,poly KV_AFTER_Q=1,0 $W"
ab_run kvf d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs KV_WAIT=joint EXP2=f32 KV_AFTER_Q=1,0 $W"
ab_report kvf
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs KV_WAIT=joint EXP2=f32 KV_AFTER_Q=1 $W" --config "STAGES=2 Q_IN=regs KV_WAIT=joint EXP2=f32 KV_AFTER_Q=0 $W" \
  --config "STAGES=2 Q_IN=regs KV_WAIT=split EXP2=f32 KV_AFTER_Q=0 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/kvf_timeline.txt"
exit 0
