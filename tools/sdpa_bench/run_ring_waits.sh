#!/bin/bash
# The ~150 cycles between two tiles of a one-warpgroup TMA loop (perf_notes item 53): a CTA barrier (the ring
# slot's reuse) and the next tile's full-mbarrier wait, both after P V's wait, on every warp's path.
# WARP_RELEASE: each warp releases the slot on an empty mbarrier the producer waits on before the refill
# (after its Q K^T issue, under the MMA). EARLY_WAIT: the next tile's full-mbarrier wait issued while P V
# computes. Predicted: the gap ~150 -> ~40 cycles, S512 -4 to -6%, S256 -2 to -4%, D64 sweep -2 to -5%.
# Not kept: the variant's code is tools/sdpa_bench/variants/ring_waits.patch (git apply it on commit eb2a985).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run rw mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem EXP2=f32,poly WARP_RELEASE=0,1 EARLY_WAIT=0,1 $W"
ab_run rw d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly WARP_RELEASE=0,1 EARLY_WAIT=0,1 $W"
ab_report rw
[ "${TIMELINE:-1}" = 1 ] && timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 WARP_RELEASE=0 EARLY_WAIT=0 $W" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 WARP_RELEASE=1 EARLY_WAIT=0 $W" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 WARP_RELEASE=0 EARLY_WAIT=1 $W" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 WARP_RELEASE=1 EARLY_WAIT=1 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/rw_timeline.txt"
exit 0
