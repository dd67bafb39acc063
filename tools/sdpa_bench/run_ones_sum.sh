#!/bin/bash
# ONES_SUM (perf_notes item 54). Item 50's cuts put a BN128 tile's softmax at the MUFU's rate (the exp2 stream,
# 64 per thread at 8 cycles per warp instruction) with its ~350 issued instructions close behind, so EXP2=poly
# (a quarter of the exp2 on the FMA pipe) only traded one for the other. ONES_SUM moves the row sums (64 FADD
# per thread and tile) onto the tensor cores: P V as m64n72 whose last 8 columns of B are ones. Predicted: the
# softmax ~60 cycles shorter with f32, ~100 with poly (the issue slots it frees), S512 -3 to -6%, S256 -2 to -4%,
# D64 sweep -3 to -6%.
# Not kept: the variant's code is tools/sdpa_bench/variants/ones_sum.patch (git apply it on commit 29dd7dc).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async"
RANGE="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=range WG_PINGPONG=0 Q_LOAD=tma"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run os mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem EXP2=f32,poly ONES_SUM=0,1 $W" --grid "STAGES=2 Q_IN=regs EXP2=f32,poly ONES_SUM=0,1 $RANGE"
ab_run os d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly ONES_SUM=0,1 $W"
ab_report os
[ "${TIMELINE:-1}" = 1 ] && timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 ONES_SUM=0 $W" --config "STAGES=2 Q_IN=regs EXP2=f32 ONES_SUM=1 $W" \
  --config "STAGES=2 Q_IN=regs EXP2=poly ONES_SUM=1 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/os_timeline.txt"
exit 0
