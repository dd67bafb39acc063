#!/bin/bash
# WN_KEYS=range (perf_notes item 20): two key groups over the same query rows, each streaming its own
# contiguous half of the key tiles through its own K/V ring, with its own named barrier, merged through
# smem at the end; against the one-warpgroup winners and WN_KEYS=tile (item 19's lockstep split).
# Reasoning: run_wgmma_occupancy.sh measured that a second CTA on an SM costs only +20% (B4 vs B2 at
# S512), so one warpgroup leaves the SM mostly idle; KS2 gets the second stream but pays a cluster merge.
# Predicted: mission S512 -20 to -25% (6.4 -> ~5.0 us), S256 -15 to -20% (4.1 -> ~3.4 us), causal a
# little less (the later group holds the diagonal tile); D64 sweep neutral or slower (it already runs
# several CTAs per SM).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 KV_SPLITS=1 KV_MERGE=gmem"
T="--baselines --reps 20 --target-us 2000"
ab_run wgr mission "${T_MISSION:-200}" $T --suite mission \
  --grid "MMA=wgmma BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=range BLOCK_N=64,128 STAGES=2,3 Q_IN=regs,smem $W" \
  --grid "MMA=wgmma BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=tile BLOCK_N=128 STAGES=2 Q_IN=regs $W" \
  --grid "MMA=wgmma BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2,3 Q_IN=regs $W" \
  --grid "MMA=mma BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=range BLOCK_N=64,128 STAGES=2 Q_IN=regs $W"
ab_run wgr d64 "${T_D64:-200}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "MMA=wgmma BLOCK_M=64 WARPS=8 WARPS_N=2 WN_KEYS=range BLOCK_N=64,128 STAGES=2 Q_IN=regs $W" \
  --grid "MMA=wgmma BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile BLOCK_N=128 STAGES=2,3 Q_IN=regs $W" \
  --grid "MMA=wgmma BLOCK_M=128 WARPS=8 WARPS_N=1 WN_KEYS=tile BLOCK_N=64 STAGES=3 Q_IN=smem $W"
ab_summary wgr "flash|WN_KEYS=|MMA="
