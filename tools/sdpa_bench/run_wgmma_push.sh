#!/bin/bash
# KV_MERGE=push (perf_notes item 23): split-KV CTAs 1.. st.async their slices into CTA 0's smem, counted
# on its mbarrier; CTA 0 merges and stores. No cluster barrier after the key loop (the release form's
# GPU-scope fence), no DSMEM round trips. Against KS1 and KV_MERGE=cluster, mission shapes.
# Reasoning: DIAG=1 (run_wgmma_merge.sh) measured the KS2 key loop 0.6-0.7 us shorter than KS1's at
# S256 and S512, and the cluster merge ~1.3 us more than KS1's epilogue.
# Predicted: KS2 push 0.3-0.6 us faster than KS1 (S256 4.1 -> ~3.6 us, S512 6.4 -> ~5.9 us).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 WARPS_N=1 WN_KEYS=tile MMA=wgmma"
T="--baselines --reps 20 --target-us 2000"
ab_run wgu mission "${T_MISSION:-240}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 KV_SPLITS=2,4 KV_MERGE=push,cluster Q_IN=regs LOAD_ORDER=first $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=64,128 STAGES=2,3 KV_SPLITS=2 KV_MERGE=push Q_IN=regs LOAD_ORDER=after_qk $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=2 KV_SPLITS=2,4 KV_MERGE=push Q_IN=regs,smem LOAD_ORDER=first $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs LOAD_ORDER=first,after_qk $W"
ab_summary wgu "flash|KV_SPLITS=|KV_MERGE=|BLOCK_M="
