#!/usr/bin/env bash
# The main job: build kforge, then run a short evolutionary search of the attention family's
# mission shapes on the local GPU, into results.db (or $KFORGE_DB). Extra arguments go to
# `kforge search` (e.g. --evals 200, --suite sweep, --time 8h). Values that docs/perf_notes.md found
# to lose are tried last by the spec's search prior ("priors" in search_spaces/sdpa_fwd.json), so
# the search spends its budget on the rest without pins.
set -euo pipefail
cd "$(dirname "$0")/.."
extra=$(tools/install_deps.sh)
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DKFORGE_BUILD_TESTS=OFF $extra >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target kforge
# The user's --suite/--shape, --strategy and budget (--evals/--time/--plateau) replace the defaults below
# (CLI11 takes each of them once).
suite=mission; shape=""; defaults=(--suite mission --strategy evo --evals 40); args=("$@")
for ((i = 0; i < ${#args[@]}; ++i)); do
  a=${args[i]}
  case "$a" in
    --suite|--suite=*|--shape|--shape=*)
      drop=(--suite mission)
      [[ "$a" == --suite ]] && suite=${args[i + 1]:-mission}
      [[ "$a" == --suite=* ]] && suite=${a#--suite=}
      [[ "$a" == --shape ]] && { suite=""; shape=${args[i + 1]:-}; }
      [[ "$a" == --shape=* ]] && { suite=""; shape=${a#--shape=}; };;
    --strategy|--strategy=*) drop=(--strategy evo);;
    --evals|--evals=*|--time|--time=*|--plateau|--plateau=*) drop=(--evals 40);;
    *) continue;;
  esac
  kept=()
  for ((j = 0; j < ${#defaults[@]}; j += 2)); do
    [[ "${defaults[j]}" == "${drop[0]}" ]] || kept+=("${defaults[j]}" "${defaults[j + 1]}")
  done
  defaults=("${kept[@]}")
done
"$BUILD_DIR/kforge" --db "${KFORGE_DB:-results.db}" search --family sdpa_fwd "${defaults[@]}" "$@"
if [[ -n "$suite" ]]; then
  "$BUILD_DIR/kforge" --db "${KFORGE_DB:-results.db}" best --family sdpa_fwd --suite "$suite"
elif [[ -n "$shape" ]]; then
  "$BUILD_DIR/kforge" --db "${KFORGE_DB:-results.db}" best --family sdpa_fwd --shape "$shape"
fi
