#!/bin/bash
# The softmax arithmetic on the TMA ring (perf_notes item 30). With the loads off the compute warps a BN128
# tile is ~1440 cycles, about the serial sum of its tensor work (~512 cycles at peak), its MUFU exp2 (~512)
# and the rest of the softmax issue; two warpgroups in phase do not overlap them (item 28). EXP2=pair (one
# f16x2 MUFU op per two elements) and LAZY_RESCALE (skip O *= alpha when no row max moved) cut the softmax
# phase; both lost on cp.async (items 12, 17), when the load issue competed for the same issue slots.
# Predicted: EXP2=pair -4 to -8% on the mission, LAZY_RESCALE -1 to -3%. Also DIAG=2 (no K/V loads after
# the prologue; wrong output, timed anyway): how much of the loop the loads still are.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma PIPE_QK=0 KV_MCAST=1 LOAD_ORDER=after_qk WN_KEYS=tile KV_LOAD=tma BLOCK_M=64 WARPS=4 WARPS_N=1 BLOCK_N=128 KV_SPLITS=1 KV_MERGE=gmem"
T="--baselines --reps 20 --target-us 2000"
ab_run tsm mission "${T_MISSION:-240}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem EXP2=f32,pair LAZY_RESCALE=0,1 $W"
ab_run tsm d64 "${T_D64:-240}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,pair LAZY_RESCALE=0,1 $W"
ab_run tsm diag "${T_DIAG:-240}" --shape B=2,H=8,S=256,D=64,causal=0,dtype=f16 --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --reps 20 --target-us 2000 --skip-gate --time-anyway \
  --grid "STAGES=2,3 Q_IN=regs EXP2=f32 LAZY_RESCALE=0 DIAG=0,2 $W"
ab_summary tsm "flash|EXP2=|LAZY_RESCALE="
python3 tools/sdpa_bench/list_times.py "$OUT/tsm_diag.json" 2>&1 | tee "$OUT/tsm_diag.txt"
