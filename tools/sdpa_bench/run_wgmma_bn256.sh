#!/bin/bash
# BLOCK_N 256 on the wgmma path (one m64n256 Q K^T per k-step; the mission's S256 in one key tile,
# perf_notes item 18) against BLOCK_N 128, gated and timed side by side with torch's backends.
# BLOCK_N 256 is not in the space (it lost): `git apply tools/sdpa_bench/variants/wgmma_bn256.patch` and
# `python3 tools/gen_wgmma_header.py` first.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32 P_EARLY=1 PIPE_QK=0"
ab_run wgn d64 "${T_BN:-200}" --suite mission --suite sweep --filter D=64 --filter dtype=f16 \
  --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128,256 STAGES=2,3 Q_IN=regs,smem LAZY_RESCALE=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,256 STAGES=2 Q_IN=smem LAZY_RESCALE=0 $W"
ab_summary wgn "flash|BLOCK_N="
