# Sourced by the A/B scripts (run_lane.sh, run_wgmma*.sh): strict pipes, unbuffered Python, $OUT, and
#   ab_run PREFIX NAME TIMEOUT BENCH_ARGS...  one bench.py process -> $OUT/PREFIX_NAME.json and .log
#   ab_summary PREFIX REGEX                   failures, then the summarize_ab.py lines matching REGEX
#                                             (the whole summary is kept in $OUT/PREFIX_ab.txt)
#   ab_report PREFIX                          PREFIX_times.txt (list_times.py), PREFIX_ab.txt, failure lines
set -o pipefail
export PYTHONUNBUFFERED=1
OUT=${OUT:-/tmp/sdpa_out}; mkdir -p "$OUT"

ab_run() {
  local prefix=$1 name=$2 t=$3; shift 3
  timeout "$t" python3 tools/sdpa_bench/bench.py "$@" --out "$OUT/${prefix}_$name.json" \
    > "$OUT/${prefix}_$name.log" 2>&1 || echo "${prefix}_$name: exit $?"
}

ab_summary() {
  local prefix=$1 re=$2
  grep -hE "wrong_result|FAULT|ERROR|Traceback" "$OUT"/"${prefix}"_*.log | head -8
  python3 tools/sdpa_bench/summarize_ab.py "$OUT"/"${prefix}"_*.json > "$OUT/${prefix}_ab.txt" 2>&1
  grep -E "$re" "$OUT/${prefix}_ab.txt"
}

# ab_report PREFIX: every run's times (list_times.py), the A/B summary and any failure lines of $OUT/PREFIX_*
ab_report() {
  local prefix=$1
  python3 tools/sdpa_bench/list_times.py "$OUT"/"${prefix}"_*.json > "$OUT/${prefix}_times.txt"
  python3 tools/sdpa_bench/summarize_ab.py "$OUT"/"${prefix}"_*.json > "$OUT/${prefix}_ab.txt" 2>&1
  grep -E "wrong|FAULT|Traceback|rror" "$OUT"/"${prefix}"_*.log | head -5
}

# ab_gate PREFIX TIMEOUT BENCH_ARGS...: bench.py --check-only on the mission shapes plus the gate shapes below
# (B4 S1024 causal bf16, an odd S=77 and an odd causal bf16 S=333) -> $OUT/PREFIX_gate.json / .log, then the
# status counts and every failure (also in $OUT/PREFIX_gate_summary.txt)
ab_gate() {
  local prefix=$1 t=$2; shift 2
  timeout "$t" python3 tools/sdpa_bench/bench.py --check-only --suite mission \
    --shape B=4,H=16,S=1024,D=64,causal=1,dtype=bf16 --shape B=1,H=2,S=77,D=64,causal=0,dtype=f16 \
    --shape B=1,H=2,S=333,D=64,causal=1,dtype=bf16 "$@" --out "$OUT/${prefix}_gate.json" \
    > "$OUT/${prefix}_gate.log" 2>&1 || echo "gate exit $?"
  python3 -c "
import json, collections
rs = [r for r in json.load(open('$OUT/${prefix}_gate.json'))['results'] if r.get('kind') == 'kforge']
print('gate:', dict(collections.Counter(r['status'] for r in rs)))
for r in rs:
    if r['status'] not in ('ok', 'invalid'): print('  ', r['status'], r['shape'], r['config'])
" | tee "$OUT/${prefix}_gate_summary.txt"
}
