#!/usr/bin/env bash
# Distributed campaigns on one GPU machine, each GPU standing in for a node:
#   1. one agent (GPU 0) finishes a sweep-suite evo campaign; evaluations per hour
#   2. N agents (one per GPU) finish the same campaign on a fresh database; evaluations per hour
#   3. a kill -9 round: N agents, one killed mid-campaign and replaced; nothing lost, nothing doubled
# usage: tools/dist_bench.sh [BUILD_DIR] [GPUS] [EVALS_PER_SHAPE]   (defaults: build-gpu, all, 16)
# Needs PostgreSQL server binaries: the system's, or those `tools/offline_deps.sh fetch
# --with-postgres` gathered and `unpack` put under .offline/prefix. Writes dist-bench/.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build-gpu}"; evals="${3:-16}"
kforge="$PWD/$build/kforge"
gpus="${2:-$(nvidia-smi -L 2>/dev/null | wc -l)}"
[ "$gpus" -ge 1 ] || { echo "no GPU found" >&2; exit 1; }
out="$PWD/dist-bench"; rm -rf "$out"; mkdir -p "$out"
prefix="$PWD/.offline/prefix"
# The carried libpq (linked from the prefix) and server need the carried libraries (OpenLDAP 2.5, ICU 72).
if [ -e "$prefix/usr/lib/x86_64-linux-gnu/libpq.so.5" ]; then
  export LD_LIBRARY_PATH="$prefix/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
if [ -x "$prefix/usr/lib/postgresql/15/bin/initdb" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
  export PG_BIN="$prefix/usr/lib/postgresql/15/bin"
fi
"$kforge" --version >/dev/null || { echo "$kforge does not run (LD_LIBRARY_PATH?)" >&2; exit 1; }
psql_bin="$(dirname "$(command -v initdb 2>/dev/null || echo "${PG_BIN:-/usr/lib/postgresql/15/bin}/initdb")")/psql"
[ -x "$psql_bin" ] || psql_bin="$(command -v psql || true)"
tools/pg_cluster.sh start "$out/pg"
trap 'tools/pg_cluster.sh stop "$out/pg"' EXIT
admin="$(cat "$out/pg/url")"
base="${admin%/*}"
cores=$(nproc)
jobs=$(( cores / gpus > 1 ? cores / gpus : 1 ))

sql() { "$psql_bin" -At "$1" -c "$2"; }
new_db() { "$psql_bin" -q "$admin" -c "CREATE DATABASE $1" >/dev/null; echo "$base/$1"; }

# run NAME AGENTS [KILL_AFTER]: a sweep evo campaign served by AGENTS agents (GPU i each; with
# KILL_AFTER, agent 0 is killed -9 once that many evaluations are stored, and a new one takes GPU 0).
run() {
  local name="$1" agents="$2" kill_after="${3:-}" db t0 t1 n
  db="$(new_db "$name")"
  local common=(--db "$db" --cache-dir "$out/cache-$name" -q)
  local pids=()
  for ((i = 0; i < agents; i++)); do
    "$kforge" "${common[@]}" agent --gpus "$i" --compile-jobs "$jobs" --lease 30s --wait 5m \
      > "$out/$name-agent$i.log" 2>&1 & pids+=($!)
  done
  t0=$(date +%s.%N)
  "$kforge" "${common[@]}" search --family sdpa_fwd --suite sweep --strategy evo --evals "$evals" \
    --distributed --agents "$agents" --json > "$out/$name-outcome.json" 2> "$out/$name-coordinator.log" & local coord=$!
  if [ -n "$kill_after" ]; then
    until [ "$(sql "$db" "SELECT count(*) FROM evaluations" 2>/dev/null || echo 0)" -ge "$kill_after" ]; do sleep 1; done
    kill -9 "${pids[0]}"; echo "$name: killed agent 0 (pid ${pids[0]}) after $kill_after evaluations"
    "$kforge" "${common[@]}" agent --gpus 0 --compile-jobs "$jobs" --lease 30s --wait 5m \
      > "$out/$name-agent0b.log" 2>&1 & pids[0]=$!
  fi
  wait "$coord"; t1=$(date +%s.%N)
  for p in "${pids[@]}"; do wait "$p" || true; done
  n=$(sql "$db" "SELECT count(*) FROM evaluations WHERE status <> 'interrupted'")
  local dup lost status interrupted
  dup=$(sql "$db" "SELECT count(*) FROM (SELECT config_id, shape_id FROM evaluations WHERE status <> 'interrupted' GROUP BY 1, 2 HAVING count(*) > 1) d")
  lost=$(sql "$db" "SELECT count(*) FROM dist_work WHERE state NOT IN ('done', 'withdrawn')")
  interrupted=$(sql "$db" "SELECT count(*) FROM evaluations WHERE status = 'interrupted'")
  status=$(sql "$db" "SELECT status FROM campaigns")
  python3 - "$name" "$agents" "$n" "$t0" "$t1" "$dup" "$lost" "$interrupted" "$status" <<'EOF' | tee -a "$out/summary.txt"
import sys
name, agents, n, t0, t1, dup, lost, interrupted, status = sys.argv[1:]
wall = float(t1) - float(t0)
print(f"{name}: {agents} agent(s), campaign {status}, {n} evaluations in {wall:.0f} s = "
      f"{int(n) / wall * 3600:.0f} per hour; configs completed twice: {dup}; items not done: {lost}; "
      f"interrupted (re-run): {interrupted}")
EOF
}

run one_agent 1
run agents "$gpus"
run kill_round "$gpus" $(( evals * 3 ))
echo "logs and summary in $out/"
