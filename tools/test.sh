#!/usr/bin/env bash
# Builds kforge and runs the whole test suite. GPU tests skip, with the reason, where there is
# no CUDA device. Extra arguments go to ctest (e.g. -L gpu, -R Store).
set -euo pipefail
cd "$(dirname "$0")/.."
extra=$(tools/install_deps.sh)
# Libraries unpacked from .offline/ (libpq needs the carried OpenLDAP and ICU) are found at run time too:
# the test executables run while the build discovers their tests.
prefix_lib="$PWD/.offline/prefix/usr/lib/x86_64-linux-gnu"
if [[ "$extra" == *KFORGE_DEPS_PREFIX* && -d "$prefix_lib" ]]; then
  export LD_LIBRARY_PATH="$prefix_lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi
BUILD_DIR="${BUILD_DIR:-build}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=${KFORGE_BUILD_TYPE:-Release} -DCMAKE_CXX_FLAGS_RELEASE="${KFORGE_OPT:--O1}" $extra ${KFORGE_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)"
ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$(nproc)" "$@"
