#!/usr/bin/env bash
# The Python package (python/), as CI checks it after tools/test.sh: `pip install ./python` into a
# fresh virtual environment, then its tests and the worked example up to its first GPU step.
# The install takes the binary tools/test.sh built (-C cmake.define.KFORGE_PREBUILT=...: the
# package's CMake build then compiles nothing and installs that binary with the data) instead of
# compiling kforge a second time; `pip install ./python` without it builds from source.
# Skips, saying why, where python3 cannot make a virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
BUILD_DIR="${BUILD_DIR:-build}"
venv="${KFORGE_PY_VENV:-$PWD/.ci-pyvenv}"
if [[ ! -x "$BUILD_DIR/kforge" ]]; then
  echo "tools/test_python.sh: no $BUILD_DIR/kforge (run tools/test.sh first)" >&2
  exit 1
fi
if ! python3 -m venv --clear "$venv" >/dev/null 2>&1; then
  echo "tools/test_python.sh: skipped: python3 cannot create a virtual environment (python3-venv)" >&2
  exit 0
fi
# Make, as tools/test.sh builds with (scikit-build-core would otherwise fetch Ninja where none is installed).
export CMAKE_GENERATOR="Unix Makefiles"
start=$(date +%s)
"$venv/bin/pip" install -q ./python pytest pandas -C cmake.define.KFORGE_PREBUILT="$(realpath "$BUILD_DIR/kforge")" >&2
echo "tools/test_python.sh: pip install took $(( $(date +%s) - start )) s" >&2
home="$(mktemp -d)"
trap 'rm -rf "$home"' EXIT
cd python
# The installed package (not python/src) and the installed binary (not the build tree's).
env -u KFORGE_EXECUTABLE KFORGE_HOME="$home" "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
# From a scratch folder: the example's store and cubin cache are the CLI's defaults, ./results.db and ./.kforge-cache.
(cd "$home" && env -u KFORGE_EXECUTABLE KFORGE_HOME="$home" "$venv/bin/python" "$repo/docs/python_example.py")
echo "tools/test_python.sh: $(( $(date +%s) - start )) s in all" >&2
