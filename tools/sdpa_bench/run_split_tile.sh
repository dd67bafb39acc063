#!/bin/bash
# SPLIT_TILE (perf_notes item 49): each BN128 tile as two 64-key halves with their own online-softmax step,
# pipelined inside the warpgroup: Q K^T of both halves issued at once, half 0's softmax under half 1's Q K^T,
# half 1's softmax under half 0's P V, half 1's P V into a second accumulator joined after both complete.
# Item 48 (PIPE_PV): a warpgroup's softmax of one tile slows while its own MMAs of another run, and the
# whole-tile variants lost the overlap to the tail and to waits for the next tile. Here nothing waits on a
# later tile. A tile now: Q K^T ~300 + softmax ~850 + P V ~300 (+ ~150 between tiles). Predicted: ~150-250 of
# its ~1440 cycles hidden, S512 -6 to -10%, S256 -4 to -8%, D64 sweep -5 to -10%.
# Not kept: the variant's code is tools/sdpa_bench/variants/split_tile.patch (git apply it on commit eb2a985).
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 WARPS=4 WARPS_N=1 WN_KEYS=tile WG_PINGPONG=0 Q_LOAD=cp_async"
T="--baselines --reps 20 --target-us 2000 ${BENCH_EXTRA:-}"
ab_run spt mission "${T_MISSION:-200}" $T --suite mission \
  --grid "STAGES=2,3 Q_IN=regs,smem EXP2=f32,poly SPLIT_TILE=0,1 $W"
ab_run spt d64 "${T_D64:-150}" $T --suite sweep --filter D=64 \
  --grid "STAGES=2 Q_IN=regs EXP2=f32,poly SPLIT_TILE=0,1 $W"
ab_report spt
[ "${TIMELINE:-1}" = 1 ] && timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs EXP2=f32 SPLIT_TILE=0 $W" \
  --config "STAGES=2 Q_IN=regs EXP2=f32 SPLIT_TILE=1 $W" \
  --config "STAGES=2 Q_IN=regs EXP2=poly SPLIT_TILE=1 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/spt_timeline.txt"
exit 0
