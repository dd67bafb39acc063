#!/bin/bash
# PIPE_PV (perf_notes item 48): FA3's intra-warpgroup pipeline on the TMA ring. Each iteration issues Q K^T of
# tile j and P V of tile j - 1 back to back, waits for Q K^T alone, and runs tile j's softmax while P V holds
# the tensor cores. A one-warpgroup BN128 tile now takes ~1440 cycles + ~150 between tiles, about the serial
# sum of its tensor work (~512), its exp2 (~512) and the waits; with P V under the softmax it should take
# ~950-1100. (PIPE_QK, item 26, overlapped the next Q K^T instead and gained nothing; item 37's PV_DEFER
# waited for both MMAs before the softmax, so one warpgroup overlapped nothing.) Predicted: S512 -12 to -20%
# (5.7 -> 4.6-5.0 us), S256 -5 to -10%, D64 sweep -10 to -20%.
# Not kept: the variant's code is tools/sdpa_bench/variants/pipe_pv.patch (git apply it on commit eb2a985).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run ppv mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32,poly PIPE_PV=0 $W" \
  --grid "STAGES=4 Q_IN=smem Q_LOAD=cp_async,tma EXP2=f32,poly PIPE_PV=1 $W"
ab_run ppv d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 PIPE_PV=0 $W" \
  --grid "STAGES=4 Q_IN=smem Q_LOAD=cp_async EXP2=f32,poly PIPE_PV=1 $W"
ab_report ppv
[ "${TIMELINE:-1}" = 1 ] && timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 PIPE_PV=0 $W" \
  --config "STAGES=4 Q_IN=smem Q_LOAD=tma EXP2=f32 PIPE_PV=1 $W" \
  --config "STAGES=4 Q_IN=smem Q_LOAD=cp_async EXP2=f32 PIPE_PV=1 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/ppv_timeline.txt"
exit 0
