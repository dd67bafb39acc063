#!/bin/bash
# KV_WAIT=split on the wgmma path (perf_notes item 24): K_j and V_j in separate cp.async groups, so
# Q K^T starts before V_j has landed; V is published to the async proxy before P V. The DIAG=3
# timelines put the prologue (Q + K_0 + V_0, 40 KB per CTA) at ~1200 cycles at S256 (~33 B/clk per
# SM): with split waits Q K^T_0 needs only Q + K_0 (24 KB).
# Predicted: mission -0.2 us (S256 -5%, S512 -3%), D64 sweep neutral (+-2%).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 WARPS_N=1 WN_KEYS=tile MMA=wgmma KV_SPLITS=1 KV_MERGE=gmem KV_WAIT=joint,split"
T="--baselines --reps 20 --target-us 2000"
ab_run wgs2 mission "${T_MISSION:-200}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 Q_IN=regs LOAD_ORDER=first,after_qk $W"
ab_run wgs2 d64 "${T_D64:-200}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 Q_IN=regs LOAD_ORDER=first $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64 STAGES=3 Q_IN=smem LOAD_ORDER=first $W"
ab_summary wgs2 "flash|KV_WAIT=|LOAD_ORDER="
