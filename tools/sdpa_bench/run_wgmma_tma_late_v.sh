#!/bin/bash
# TMA_LATE_V experiment (perf_notes item 32; an extra define from variants/tma_late_v.patch, apply it first): with KV_WAIT=split,
# V_j is requested only once K_j has landed (tile j starts), so Q and K_0 reach the SM before any V and the
# first Q K^T starts earlier. Reading of items 28-31: every tile moves ~32 KB into the SM in ~1450 cycles
# (~22 B/cycle) and the prologue's ~2000 cycles match Q + K_0 + V_0 (40 KB) at that rate. Predicted: tile 0
# starts ~700 cycles earlier (S512 -5 to -8%, S256 -8 to -12%) if V_0 lands under Q K^T + softmax.
source "$(dirname "$0")/ab_lib.sh"
W="LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 EXP2=f32 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 WN_KEYS=tile KV_LOAD=tma BLOCK_M=64 WARPS=4 WARPS_N=1 BLOCK_N=128 KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1"
T="--baselines --reps 20 --target-us 2000"
ab_run tlv mission "${T_MISSION:-240}" $T --suite mission \
  --grid "STAGES=2 Q_IN=regs,smem KV_WAIT=joint LOAD_ORDER=after_qk $W" \
  --grid "STAGES=2,3 Q_IN=regs,smem KV_WAIT=split LOAD_ORDER=first,after_qk TMA_LATE_V=0,1 $W"
ab_summary tlv "flash|KV_WAIT=|LOAD_ORDER="
python3 tools/sdpa_bench/list_times.py "$OUT/tlv_mission.json" | sort -t' ' -k1,3 | tee "$OUT/tlv_times.txt" | grep -E "S512 D64 causal0" 
timeout 120 python3 tools/sdpa_bench/timeline.py --shape B=2,H=8,S=512,D=64,causal=0,dtype=f16 \
  --config "STAGES=2 Q_IN=regs KV_WAIT=split LOAD_ORDER=after_qk TMA_LATE_V=1 $W" \
  2>&1 | grep -v "^compiled" | tee "$OUT/tlv_timeline.txt"
