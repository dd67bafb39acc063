#!/bin/bash
# KV_WAIT=split on the TMA ring (perf_notes item 31): K and V of a tile on separate full mbarriers; P V waits
# for V, so Q K^T starts once K (16 KB) has landed. The timelines (item 28) show a ~2000-cycle prologue at
# S512: Q plus the first K and V tile of all 128 CTAs (5 MB) arriving at once. Predicted: the prologue
# -500 to -800 cycles (S512 -5 to -8%, S256 -8 to -12%), the key tiles unchanged.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 LOAD_ORDER=after_qk WN_KEYS=tile KV_LOAD=tma BLOCK_M=64 WARPS=4 WARPS_N=1 BLOCK_N=128 KV_SPLITS=1 KV_MERGE=gmem"
T="--baselines --reps 20 --target-us 2000"
ab_run tsw mission "${T_MISSION:-240}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem KV_WAIT=joint,split KV_MCAST=1,2 $W"
ab_run tsw d64 "${T_D64:-240}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "STAGES=2 Q_IN=regs KV_WAIT=joint,split KV_MCAST=1 $W"
ab_summary tsw "flash|KV_WAIT=|KV_MCAST="
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs KV_WAIT=split KV_MCAST=1 $W" --config "STAGES=2 Q_IN=regs KV_WAIT=joint KV_MCAST=2 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/tsw_timeline.txt"
