#!/usr/bin/env bash
# The Python package's GPU checks (python/tests/test_gpu.py and docs/python_example.py to its
# end), on a machine with a CUDA device, torch, and no package index: builds the kforge binary
# (no tests) and installs the package over it into $PYTHON's environment (default python3: on the
# GPU machines, the virtual environment that holds torch, numpy, pandas, pytest and
# scikit-build-core; a venv made from it would not see them), then runs them.
#   KT_WHEELS=dir    wheels of kernel_tuner and those of its dependencies the machine lacks,
#                    installed offline: the checks then compare with Kernel Tuner's brute force
#                    (without it, with a second brute force by kforge)
#   KT_EXAMPLES=dir  Kernel Tuner's examples/cuda (matmul.cu; without it the matmul check skips)
#   EXAMPLE=0        skip the worked example
# Arguments go to pytest (e.g. -k kernel_tuner): a whole run can outlast one 10-minute command.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$PWD"
BUILD_DIR="${BUILD_DIR:-build-gpu}"
py="${PYTHON:-python3}"
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DKFORGE_BUILD_TESTS=OFF >/dev/null
cmake --build "$BUILD_DIR" -j "$(nproc)" --target kforge >/dev/null
"$py" -m pip install -q --no-index --no-build-isolation ./python \
  -C cmake.define.KFORGE_PREBUILT="$(realpath "$BUILD_DIR/kforge")"
if [[ -n "${KT_WHEELS:-}" ]]; then
  "$py" -m pip install -q --no-index --find-links "$KT_WHEELS" kernel_tuner ||
    "$py" -m pip install -q --no-index --no-deps "$KT_WHEELS"/*.whl
fi
home="$(mktemp -d)"
export KFORGE_HOME="$home/home"
unset KFORGE_EXECUTABLE
status=0
(cd python && "$py" -m pytest -v -rs -p no:cacheprovider tests "$@") || status=1
# The example's store and torch build in a scratch folder (its default store is ./results.db).
if [[ "${EXAMPLE:-1}" != 0 ]]; then
  (cd "$home" && "$py" "$repo/docs/python_example.py") || status=1
fi
exit $status
