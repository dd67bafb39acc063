#!/usr/bin/env bash
# Makes sure the build's dependencies are present; prints the extra CMake arguments to use.
# - Debian/Ubuntu with a package registry: installs the missing -dev packages with apt-get.
# - An air-gapped node: uses the .deb files gathered by `tools/offline_deps.sh fetch` (in
#   .offline/), unpacked into a prefix that CMake is pointed at.
# The CUDA toolkit (nvcc, NVRTC, cudart) must already be installed.
set -euo pipefail
cd "$(dirname "$0")/.."
have_header() { echo "#include <$1>" | ${CXX:-g++} -std=c++17 -x c++ -fsyntax-only - >/dev/null 2>&1; }

missing=()
optional=()
have_header nlohmann/json.hpp || missing+=(nlohmann-json3-dev)
have_header spdlog/spdlog.h || missing+=(libspdlog-dev)
have_header sqlite3.h || missing+=(libsqlite3-dev)
have_header CLI/CLI.hpp || missing+=(libcli11-dev)
have_header gtest/gtest.h || missing+=(libgtest-dev)
# PostgreSQL (optional: without libpq the build leaves out --db postgresql://...; without the
# server the PostgreSQL tests skip). Debian puts the server's binaries in /usr/lib/postgresql/N/bin.
have_header postgresql/libpq-fe.h || have_header libpq-fe.h || optional+=(libpq-dev)
ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 || command -v initdb >/dev/null || optional+=(postgresql)
command -v cmake >/dev/null || missing+=(cmake)

if [ ${#missing[@]} -gt 0 ]; then
  if [ "${missing[*]}" = "libsqlite3-dev" ] && ls .offline/*.deb >/dev/null 2>&1; then
    tools/offline_deps.sh unpack .offline >&2
    echo "-DKFORGE_DEPS_PREFIX=$PWD/.offline/prefix"
    exit 0
  fi
  if command -v apt-get >/dev/null; then
    SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
    echo "installing: ${missing[*]}" >&2
    $SUDO apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
  else
    echo "missing: ${missing[*]}; on an air-gapped node see tools/offline_deps.sh" >&2
    exit 1
  fi
fi
if [ ${#optional[@]} -gt 0 ] && command -v apt-get >/dev/null; then
  SUDO=""; [ "$(id -u)" = 0 ] || SUDO="sudo"
  echo "installing (optional): ${optional[*]}" >&2
  { $SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${optional[@]}"; } >&2 ||
    echo "could not install ${optional[*]}: PostgreSQL support or its tests are left out" >&2
fi
command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] ||
  { echo "the CUDA toolkit is not installed (need NVRTC and cudart)" >&2; exit 1; }
echo ""
