#!/usr/bin/env bash
# A ten-line CMake project consumes a kforge export with add_subdirectory: it configures, builds
# (compile and link, with the exported kernels' own -gencode targets) and runs the host-only
# shape query, so no GPU is needed. The runners (in their own subfolder) build too.
# Usage: check_consumer.sh KFORGE_BINARY RESULTS_DB
set -euo pipefail
kforge=$1 db=$2
export PATH="$PATH:/usr/local/cuda/bin"
command -v nvcc >/dev/null || { echo "SKIPPED: no nvcc (the CUDA toolkit) on PATH"; exit 77; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cp "$db" "$work/results.db"
app=$work/app
"$kforge" --db "$work/results.db" -q export --family gemm --shape M=4096,N=4096,K=4096,dtype=f16 \
  --out "$app/kernels" --name gemm_big >/dev/null
for f in CMakeLists.txt gemm_big.cu gemm_big.h runners/gemm_big_runner.cu; do
  test -f "$app/kernels/$f" || { echo "the export lacks $f"; exit 1; }
done
if grep -l "int main" "$app"/kernels/*.cu; then echo "a top-level .cu has main(): file(GLOB *.cu) would break the link"; exit 1; fi

cat > "$app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(consumer LANGUAGES CXX CUDA)
add_subdirectory(kernels)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE kforge::gemm_big)
CMAKE
cat > "$app/main.cpp" <<'CPP'
#include <cstdio>
#include "gemm_big.h"
int main() {
  const size_t scratch = gemm_big_workspace_size(4096, 4096, 4096, "f16");
  const int ok = gemm_big_supports(4096, 4096, 4096, "f16", nullptr) && !gemm_big_supports(4096, 4096, 4096, "f32", nullptr);
  std::printf("supports: %d, workspace: %zu bytes, launcher at %p\n", ok, scratch, reinterpret_cast<void*>(&gemm_big));
  return ok && scratch == 0 ? 0 : 1;
}
CPP
cmake -S "$app" -B "$app/build" -DKFORGE_GEMM_BIG_RUNNERS=ON >/dev/null
cmake --build "$app/build" -j 2
grep -q "arch=compute_90,code=sm_90\|-arch=sm_90\|sm_90" "$app/build/kernels/CMakeFiles/kforge_gemm_big.dir/flags.make" 2>/dev/null ||
  grep -rq "sm_90" "$app/build/kernels/CMakeFiles/kforge_gemm_big.dir/" || { echo "gemm_big.cu was not built for sm_90"; exit 1; }
test -x "$app/build/kernels/gemm_big_runner" || { echo "the runner did not build"; exit 1; }
"$app/build/consumer"
echo "consumer OK"
