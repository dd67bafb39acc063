#!/bin/bash
# PV_CHAINS (perf_notes item 51). Item 50's cuts: P V costs ~620 of a BN128 tile's ~1440 cycles, Q K^T ~370,
# for the same FLOPs: P V is 8 m64n64k16 steps into one accumulator (~32 cycles of tensor work each), Q K^T
# 4 m64n128k16 steps (~64 each). If each step waits ~60 cycles for the previous step's accumulator, the short
# P V steps run at half rate. Two accumulators (even / odd k-steps), summed once after the key loop, let
# one chain's step issue under the other's. Predicted: P V ~620 -> ~380 cycles, S512 -10 to -13%, S256 -7 to
# -10%, D64 sweep -5 to -12%.
# Not kept: the variant's code is tools/sdpa_bench/variants/pv_chains.patch (git apply it on commit eb2a985).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64"
ONE="WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 $W"
RANGE="WARPS=8 WARPS_N=2 WN_KEYS=range WG_PINGPONG=0 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run pvc mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem Q_LOAD=cp_async EXP2=f32,poly PV_CHAINS=1,2 $ONE" \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32,poly PV_CHAINS=1,2 $RANGE"
ab_run pvc d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32,poly PV_CHAINS=1,2 $ONE"
ab_report pvc
[ "${TIMELINE:-1}" = 1 ] && timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 PV_CHAINS=1 $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 PV_CHAINS=2 $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=cp_async EXP2=f32 PV_CHAINS=2 DIAG_CUT=3 $ONE" \
  --config "STAGES=2 Q_IN=regs Q_LOAD=tma EXP2=f32 PV_CHAINS=2 $RANGE" \
  2>&1 | grep -v "^compiled" | tee "$OUT/pvc_timeline.txt"
exit 0
