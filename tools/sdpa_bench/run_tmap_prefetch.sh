#!/bin/bash
# prefetch.tensormap at kernel entry (perf_notes item 56). Item 55: the producer's first K/V box loads leave at
# ~790 cycles and land ~640 later, ~400 after Q's cp.async, whatever their order or size (items 31, 32, 55);
# the first box load of a launch also fetches its tensor map. Prefetching the maps at entry (thread 0, before
# the index math and barrier init) should take that fetch off the first load. Predicted: tile 0 -100 to -300
# cycles; S512 -1 to -4%, S256 -2 to -6%, D64 sweep ~0.
# Not kept: the variant's code is tools/sdpa_bench/variants/tmap_prefetch.patch (git apply it on commit 29dd7dc).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
RANGE="WARPS=8 WARPS_N=2 WN_KEYS=range WG_PINGPONG=0 Q_LOAD=tma $W"
T="--baselines --reps 25 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run tpf mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem Q_LOAD=cp_async,tma EXP2=f32,poly TMAP_PREFETCH=0,1 $ONE" \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly TMAP_PREFETCH=0,1 $RANGE"
ab_run tpf d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 TMAP_PREFETCH=0,1 $ONE"
ab_report tpf
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 TMAP_PREFETCH=0 $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 TMAP_PREFETCH=1 $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32 TMAP_PREFETCH=1 $ONE" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 TMAP_PREFETCH=1 $RANGE" \
  2>&1 | grep -v "^compiled" | tee "$OUT/tpf_timeline.txt"
exit 0
