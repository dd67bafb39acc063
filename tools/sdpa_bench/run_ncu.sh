#!/bin/bash
# Nsight Compute on one shape: the first launch of each kforge config given (a --grid string
# each), then torch's flash kernel, with the pipe, stall and occupancy figures that say what
# limits each.   SHAPE=B=..,dtype=.. [REF=kernel-regex] run_ncu.sh "GRID" ["GRID" ...]
# REF picks the baseline kernel profiled after the kforge ones (default torch's flash_fwd).
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
SHAPE=${SHAPE:-B=2,H=16,S=4096,D=128,causal=0,dtype=f16}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
stall="long_scoreboard short_scoreboard math_pipe_throttle mio_throttle barrier wait not_selected selected dispatch_stall lg_throttle no_instruction tex_throttle"
m="sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed_pipe_xu.avg.pct_of_peak_sustained_active"
m="$m,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__inst_executed.sum,sm__warps_active.avg.pct_of_peak_sustained_active"
m="$m,smsp__issue_active.avg.pct_of_peak_sustained_active,sm__cycles_active.avg,sm__cycles_active.max,gpc__cycles_elapsed.max"
for s in $stall; do m="$m,smsp__average_warps_issue_stalled_${s}_per_issue_active.ratio"; done
run() {  # name, kernel regex, bench arguments...
  local name=$1 k=$2; shift 2
  timeout 150 "$NCU" --clock-control none --section SpeedOfLight --section LaunchStats --metrics "$m" \
    -k "regex:$k" -c 1 python3 tools/sdpa_bench/bench.py --shape "$SHAPE" --skip-gate --reps 1 "$@" \
    > "$OUT/ncu_$name.txt" 2>&1
  echo "== $name"
  grep -E "Duration|SM Frequency|Registers Per|Grid Size|cycles_active|cycles_elapsed|issue_active|Compute \(SM\) Throughput|Memory Throughput|hmma|gmma|pipe_xu|bank_conflicts|inst_executed.sum|warps_active|stalled" "$OUT/ncu_$name.txt" |
    sed -E 's/smsp__average_warps_issue_stalled_(.*)_per_issue_active.ratio/stall \1/; s/ +/ /g'
}
i=0
for grid in "$@"; do i=$((i + 1)); run "kf$i" sdpa_fwd --grid "$grid"; done
run ref "${REF:-flash_fwd}" --baselines --grid "$1"
