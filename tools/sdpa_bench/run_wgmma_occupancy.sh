#!/bin/bash
# Does a second (or third) CTA on an SM add throughput? The mission winner's config (one warpgroup,
# BM64 BN128 ST2: 73 KB smem, 3 CTAs fit per SM) at B = 2, 4, 8 (128, 256, 512 CTAs of S512 D64), with
# EXP2 f32 and pair (pair halves the MUFU ops: it lost with one CTA per SM, item 17, but a second CTA
# per SM may make MUFU the bound). Then KS2 (two CTAs per SM on the mission shapes) with both EXP2
# forms and DIAG=1 (key loop only).
# Predicted: if the SM is latency-bound with one warpgroup, B4 takes < 1.5x B2's time (the second CTA
# overlaps) and pair helps at B4/B8; if it is throughput-bound, B4 ~ 2x B2.
source "$(dirname "$0")/ab_lib.sh"
W="MMA=wgmma LANE_ADDR=0 VEC=8 LAYOUT=swizzled KV_WAIT=joint WARPS_N=1 MIN_BLOCKS=1 P_EARLY=1 PIPE_QK=0 LAZY_RESCALE=0 BLOCK_M=64 WARPS=4 Q_IN=regs"
S="--shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 --shape B=4,H=8,S=512,D=64,causal=0,dtype=f16 --shape B=8,H=8,S=512,D=64,causal=0,dtype=f16"
ab_run wgo batch "${T_B:-150}" $S --baselines --reps 20 --target-us 2000 \
  --grid "BLOCK_N=128 STAGES=2 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32,pair $W" \
  --grid "BLOCK_N=64 STAGES=2 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32,pair $W"
ab_run wgo split "${T_S:-150}" --suite mission --reps 20 --target-us 2000 --time-anyway --skip-gate \
  --grid "BLOCK_N=128 STAGES=2 KV_SPLITS=1 KV_MERGE=gmem EXP2=f32,pair DIAG=0,1 $W" \
  --grid "BLOCK_N=64,128 STAGES=2 KV_SPLITS=2 KV_MERGE=cluster EXP2=f32,pair DIAG=0,1 $W"
python3 tools/sdpa_bench/list_times.py "$OUT/wgo_batch.json"
python3 tools/sdpa_bench/list_times.py "$OUT/wgo_split.json"
