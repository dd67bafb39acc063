#!/bin/bash
# Softmax ILP and PV_DEFER's refill timing (perf_notes items 37-38; extra defines from
# variants/pv_defer_softmax_chains.patch, apply it first), mission + D64 f16 sweep, one process each.
# Item 37's ncu source profile of the S512 winner: 38% of the warps' samples in the softmax, half of them
# "wait" (fixed-latency dependencies: the row max was one chain of 17 dependent FMNMX per row, the row sum one
# chain of FADDs, row 1 after row 0). SOFTMAX_CHAINS=4 (a diagnostic define; 1 = the old code): both rows at
# once, four partial chains each. Predicted: tile -80 to -150 cycles, S512 -3 to -6%, sweep -2 to -5%.
# PV_DEFER with the refill moved before the MMA phase (its long-scoreboard stall in item 37 was the next tile
# arriving late): predicted tiles ~1300 against ~1440, S512 -4 to -8%.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 WN_KEYS=tile KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint EXP2=f32"
ONE="BLOCK_M=64 BLOCK_N=128 WARPS=4 WARPS_N=1 WG_PINGPONG=0 $W"
KEYS="BLOCK_M=64 BLOCK_N=128 WARPS=8 WARPS_N=2 WG_PINGPONG=1 $W"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run smc mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem PV_DEFER=0 SOFTMAX_CHAINS=1,4 $ONE" \
  --grid "STAGES=3,4 Q_IN=regs,smem PV_DEFER=1 SOFTMAX_CHAINS=4 $ONE" \
  --grid "STAGES=3,4 Q_IN=regs PV_DEFER=0,1 SOFTMAX_CHAINS=4 $KEYS"
ab_run smc d64 "${T_D64:-150}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs PV_DEFER=0 SOFTMAX_CHAINS=1,4 $ONE" --grid "STAGES=3 Q_IN=regs PV_DEFER=1 SOFTMAX_CHAINS=4 $ONE"
ab_summary smc "flash|SOFTMAX_CHAINS=|PV_DEFER="
[ "${TIMELINE:-1}" = 1 ] && timeout 100 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs PV_DEFER=0 SOFTMAX_CHAINS=1 $ONE" --config "STAGES=2 Q_IN=regs PV_DEFER=0 SOFTMAX_CHAINS=4 $ONE" \
  --config "STAGES=3 Q_IN=regs PV_DEFER=1 SOFTMAX_CHAINS=4 $ONE" --config "STAGES=4 Q_IN=regs PV_DEFER=1 SOFTMAX_CHAINS=4 $KEYS" \
  2>&1 | grep -v "^compiled" | tee "$OUT/smc_timeline.txt"
exit 0
