#!/bin/bash
# WG_PINGPONG on the TMA ring (perf_notes item 33): BLOCK_M 128, two warpgroups over the query rows that take
# turns issuing their MMAs (FA3's ping-pong) and run half a tile apart with no CTA barrier per tile; the
# lagging warpgroup issues the loads. Items 28-30: one warpgroup's BN128 tile is ~1445 cycles, about the
# serial sum of its tensor work and its exp2 on the MUFU, and two warpgroups in phase (item 29: ~2490 cycles
# for two) overlap little. Predicted: a ping-pong tile of both warpgroups ~1600-1900 cycles; S512 -5 to -12%
# against BM64 (5.65 us) although only 64 CTAs run; S256 slower (32 CTAs); D64 sweep -5 to -10%.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 WN_KEYS=tile KV_LOAD=tma WARPS_N=1 KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk"
T="--baselines --reps 20 --target-us 2000"
ab_run tpp mission "${T_MISSION:-240}" $T --suite mission \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs,smem KV_WAIT=joint WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=3,4 Q_IN=regs,smem KV_WAIT=joint,split WG_PINGPONG=0,1 $W"
ab_run tpp d64 "${T_D64:-240}" $T --suite sweep --filter D=64 --filter dtype=f16 \
  --grid "BLOCK_M=64 WARPS=4 BLOCK_N=128 STAGES=2 Q_IN=regs KV_WAIT=joint WG_PINGPONG=0 $W" \
  --grid "BLOCK_M=128 WARPS=8 BLOCK_N=64,128 STAGES=3 Q_IN=regs,smem KV_WAIT=joint WG_PINGPONG=0,1 $W"
ab_summary tpp "flash|BLOCK_M=|WG_PINGPONG="
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "BLOCK_M=128 WARPS=8 BLOCK_N=128 STAGES=3 Q_IN=regs KV_WAIT=joint WG_PINGPONG=1 $W" \
  --config "BLOCK_M=128 WARPS=8 BLOCK_N=128 STAGES=3 Q_IN=regs KV_WAIT=joint WG_PINGPONG=0 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/tpp_timeline.txt"
