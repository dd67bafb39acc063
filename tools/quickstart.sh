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
"$BUILD_DIR/kforge" --db "${KFORGE_DB:-results.db}" search --family sdpa_fwd --suite mission \
  --strategy evo --evals 40 "$@"
"$BUILD_DIR/kforge" --db "${KFORGE_DB:-results.db}" best --family sdpa_fwd --suite mission
