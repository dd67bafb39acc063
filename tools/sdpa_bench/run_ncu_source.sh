#!/bin/bash
# Per-instruction warp-state sampling (Nsight Compute SourceCounters) of one launch of each kforge config
# given (a --grid string each) on SHAPE: $OUT/src_N.csv has every SASS instruction of the kernel with its
# stall samples, $OUT/src_N.txt the summary sections. tools/sdpa_bench/stall_regions.py reads the CSVs.
#   SHAPE=B=..,dtype=.. run_ncu_source.sh "GRID" ["GRID" ...]
set -o pipefail
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"
SHAPE=${SHAPE:-B=2,H=8,S=512,D=64,causal=0,dtype=f16}
NCU=$(command -v ncu || ls /opt/nvidia/nsight-compute/*/ncu /usr/local/cuda/bin/ncu 2>/dev/null | head -1)
i=0
for grid in "$@"; do
  i=$((i + 1))
  timeout 150 "$NCU" --clock-control none --section SourceCounters --section WarpStateStats --section SpeedOfLight \
    --warp-sampling-interval 0 -k regex:sdpa_fwd -s 2 -c 1 -f -o "$OUT/src_$i" \
    python3 tools/sdpa_bench/bench.py --shape "$SHAPE" --skip-gate --reps 1 --grid "$grid" > "$OUT/src_$i.log" 2>&1
  "$NCU" --import "$OUT/src_$i.ncu-rep" --page details > "$OUT/src_$i.txt" 2>&1
  "$NCU" --import "$OUT/src_$i.ncu-rep" --page source --print-source sass --csv > "$OUT/src_$i.csv" 2>&1
  echo "== $i: $grid"; grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Compute \(SM\)" "$OUT/src_$i.txt" | head -6
  head -c 600 "$OUT/src_$i.csv"; echo
done
