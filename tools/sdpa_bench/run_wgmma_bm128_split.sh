#!/bin/bash
# Mission shapes: two warpgroups over 128 query rows with the keys split across a 2- or 4-CTA cluster
# (BLOCK_M=128 WARPS=8 KV_SPLITS=2,4), against the one-warpgroup winner (BLOCK_M=64, KV_SPLITS=1); plus
# the DIAG timings of the winner (1: no merge/store, 2: no K/V loads after the prologue; wrong output,
# timed anyway) to see how much of the key loop is the K/V stream into the SM.
# Reasoning: at S512 the 128 CTAs each read the head's whole K/V from L2 (16.8 MB per launch); BM128 with
# KV_SPLITS=2 keeps 128 CTAs but each reads half the keys (8.4 MB), with the same MMA work per SM.
# Predicted: if the K/V stream bounds the loop, S512 -15 to -25% (6.4 -> ~5.0 us), S256 -5 to -10%.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0"
ab_run wgc mission "${T_MISSION:-240}" --suite mission --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=2,3 KV_SPLITS=1,2,4 KV_MERGE=cluster Q_IN=regs,smem $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=2 KV_SPLITS=2 KV_MERGE=gmem Q_IN=smem $W" \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs $W"
ab_run wgc diag "${T_DIAG:-90}" --shape B=2,H=8,S=256,D=64,causal=0,dtype=f16 --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --reps 20 --target-us 2000 --time-anyway --skip-gate \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2,3 KV_SPLITS=1 KV_MERGE=gmem Q_IN=regs DIAG=0,1,2 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=128 STAGES=2 KV_SPLITS=2 KV_MERGE=cluster Q_IN=smem DIAG=0,2 $W"
ab_summary wgc "flash|KV_SPLITS=|BLOCK_M="
python3 tools/sdpa_bench/list_times.py "$OUT/wgc_diag.json"
