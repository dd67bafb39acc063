#!/usr/bin/env bash
# The Python package (python/), as CI checks it after tools/test.sh: `pip install ./python` into a
# fresh virtual environment, reusing tools/test.sh's build tree (same CMake options: nothing is
# recompiled, the test targets stay), then its tests and the worked example up to its first GPU
# step. Skips, saying why, where python3 cannot make a virtual environment.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${BUILD_DIR:-build}"
venv="${KFORGE_PY_VENV:-$PWD/.ci-pyvenv}"
if [[ ! -f "$BUILD_DIR/CMakeCache.txt" ]]; then
  echo "tools/test_python.sh: no configured $BUILD_DIR (run tools/test.sh first)" >&2
  exit 1
fi
if ! python3 -m venv --clear "$venv" >/dev/null 2>&1; then
  echo "tools/test_python.sh: skipped: python3 cannot create a virtual environment (python3-venv)" >&2
  exit 0
fi
# The tree's own generator (scikit-build-core would pick Ninja where it can) and its options.
CMAKE_GENERATOR="$(sed -n 's/^CMAKE_GENERATOR:INTERNAL=//p' "$BUILD_DIR/CMakeCache.txt")"
export CMAKE_GENERATOR
start=$(date +%s)
"$venv/bin/pip" install -q ./python pytest pandas \
  -C build-dir="$PWD/$BUILD_DIR" -C cmake.define.KFORGE_BUILD_TESTS=ON >&2
echo "tools/test_python.sh: pip install took $(( $(date +%s) - start )) s" >&2
cd python
# The installed package (not python/src) and the installed binary (not the build tree's).
env -u KFORGE_EXECUTABLE KFORGE_HOME="$PWD/../$BUILD_DIR/python-home" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider tests
env -u KFORGE_EXECUTABLE KFORGE_HOME="$PWD/../$BUILD_DIR/python-home" \
  "$venv/bin/python" ../docs/python_example.py
echo "tools/test_python.sh: $(( $(date +%s) - start )) s in all" >&2
