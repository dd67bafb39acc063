#!/usr/bin/env bash
# Builds kforge and runs the whole test suite. GPU tests skip, with the reason, where there is
# no CUDA device. Extra arguments go to ctest (e.g. -L gpu, -R Store).
set -euo pipefail
cd "$(dirname "$0")/.."
extra=$(tools/install_deps.sh)
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${KFORGE_BUILD_TYPE:-Release} -DCMAKE_CXX_FLAGS_RELEASE="${KFORGE_OPT:--O1}" $extra ${KFORGE_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
