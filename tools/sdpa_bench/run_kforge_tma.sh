#!/bin/bash
# Through kforge on a GPU node (seventh session): build, the GPU tests, an evolutionary campaign over the
# mission (STEP=mission; STRATEGY and MISSION_FIX override the strategy and the pinned parameters) or the D64
# sweep shapes (STEP=sweep) with the TMA ring free, or a refresh of a suite's stored winners (STEP=refresh,
# SUITE, EVALS), then compare_torch
# over `kforge export` for that suite (COMPARE=suites to choose; COMPARE_SEQUENTIAL=1 also times it one op after
# another). Database: $DB (a copy of the shipped results.db), copied to $OUT.
set -uo pipefail
cd "$(dirname "$0")/../.."
export OUT=${OUT:-/tmp/kf_out} WORK=${WORK:-$PWD/build-gpu/work}; mkdir -p "$OUT" "$WORK"
export DB=${DB:-$WORK/results.db}; [ -f "$DB" ] || cp results.db "$DB"
export KFORGE_OPT=-O2
K=build-gpu/kforge
PIN="MMA=wgmma,MIN_BLOCKS=1,PIPE_QK=0,LANE_ADDR=0,VEC=8,LAYOUT=swizzled,P_EARLY=1,KV_MCAST=1"
t0=$(date +%s)
save_db() { python3 -c "import sqlite3;s=sqlite3.connect('$DB');s.execute('pragma wal_checkpoint(TRUNCATE)');s.backup(sqlite3.connect('$OUT/results.db'))"; }
if [ "${GPU_TESTS:-1}" = 1 ]; then
  tools/gpu_validate.sh build > "$OUT/build.log" 2>&1
else  # kforge alone
  extra=$(tools/install_deps.sh)
  { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DCMAKE_CXX_FLAGS_RELEASE=-O2 -DKFORGE_BUILD_TESTS=OFF $extra &&
    cmake --build build-gpu -j "$(nproc)" --target kforge; } > "$OUT/build.log" 2>&1
fi
echo "build $(( $(date +%s) - t0 )) s"
[ -x "$K" ] || { tail -30 "$OUT/build.log"; exit 1; }
if [ "${GPU_TESTS:-1}" = 1 ]; then
  ctest --test-dir build-gpu -L gpu -j 2 > "$OUT/ctest_gpu.log" 2>&1; grep -E "tests passed|Failed|\*\*\*Failed" "$OUT/ctest_gpu.log"
fi
SUITES=""
case "${STEP:-mission}" in
  mission)
    "$K" --db "$DB" -q search --family sdpa_fwd --suite mission --strategy "${STRATEGY:-evo}" --evals "${EVALS:-30}" \
      --timeout 20 --fix "${MISSION_FIX:-$PIN}" --top-k 3 > "$OUT/campaign_mission.log" 2>&1; tail -12 "$OUT/campaign_mission.log"
    SUITES=mission ;;
  sweep)
    shapes=$(python3 -c "import json;s=json.load(open('search_spaces/sdpa_fwd.json'))['suites']['sweep'];print(' '.join('--shape B=%d,H=%d,S=%d,D=%d,causal=%d,dtype=%s'%(x['B'],x['H'],x['S'],x['D'],x['causal'],x['dtype']) for x in s if x['D']==64))")
    "$K" --db "$DB" -q search --family sdpa_fwd $shapes --strategy evo --evals "${EVALS:-8}" --timeout 30 \
      --fix "$PIN${SWEEP_PIN:+,$SWEEP_PIN}" --top-k 1 > "$OUT/campaign_sweep.log" 2>&1; tail -12 "$OUT/campaign_sweep.log"
    SUITES=sweep ;;
  refresh)  # re-time a suite's stored winners after a template change: the store's best configs seed the
            # search, and the ones timed with an older kernel source run again (EVALS per shape)
    "$K" --db "$DB" -q search --family sdpa_fwd --suite "${SUITE:-sweep}" --strategy evo --evals "${EVALS:-3}" \
      --timeout 60 --top-k 1 > "$OUT/campaign_refresh.log" 2>&1; tail -12 "$OUT/campaign_refresh.log"
    SUITES=${SUITE:-sweep} ;;
esac
save_db
echo "campaign done at $(( $(date +%s) - t0 )) s"
for suite in ${COMPARE-$SUITES}; do
  python3 tools/compare_torch.py --suite "$suite" --kforge "$K" --db "$DB" --baselines-out "$WORK/baselines_$suite.json" \
    > "$OUT/compare_$suite.log" 2>&1 && "$K" --db "$DB" baseline import "$WORK/baselines_$suite.json" > /dev/null
  cat "$OUT/compare_$suite.log" | tail -30
  if [ "${COMPARE_SEQUENTIAL:-0}" = 1 ]; then  # the previous method (one op after another), for comparison
    python3 tools/compare_torch.py --suite "$suite" --kforge "$K" --db "$DB" --sequential > "$OUT/compare_${suite}_sequential.log" 2>&1
    tail -8 "$OUT/compare_${suite}_sequential.log"
  fi
done
save_db
echo "all done at $(( $(date +%s) - t0 )) s"
