#!/usr/bin/env bash
# A ten-line CMake project consumes two kforge exports with add_subdirectory: gemm (sm_90, with
# its runners) and sdpa_fwd's mission suite (the shipped winners: arch-specific sm_90a wgmma kernels
# behind a dispatcher, whose "-gencode" once reached nvcc as "SHELL:-gencode ..." and stopped the
# build). It configures, builds (compile and link, each kernel with its own target) and runs the
# host-only shape query, so no GPU is needed; on a GPU machine it also runs gemm against a host
# reference.
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
# Stored winners that passed the gate with the current kernel source export without a GPU.
"$kforge" --db "$work/results.db" -q export --family sdpa_fwd --suite mission --out "$app/attn" --name attn >/dev/null
test -f "$app/attn/attn_dispatch.h" || { echo "the sdpa export lacks its dispatcher"; exit 1; }
if grep -l "int main" "$app"/kernels/*.cu "$app"/attn/*.cu; then echo "a top-level .cu has main(): file(GLOB *.cu) would break the link"; exit 1; fi

cat > "$app/CMakeLists.txt" <<'CMAKE'
cmake_minimum_required(VERSION 3.18)
project(consumer LANGUAGES CXX CUDA)
add_subdirectory(kernels)
add_subdirectory(attn)
add_executable(consumer main.cpp)
target_link_libraries(consumer PRIVATE kforge::gemm_big kforge::attn)
CMAKE
cat > "$app/main.cpp" <<'CPP'
// The host-only shape query (no GPU needed); with a GPU, gemm_big on a 512^3 problem against a host
// reference (fp32 accumulation of the same f16 inputs).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>
#include "gemm_big.h"
#include "attn_dispatch.h"

static int run_on_gpu() {
  const int n = 512;
  std::vector<__half> a(n * n), b(n * n), c(n * n);
  std::vector<float> af(n * n), bf(n * n);
  srand(7);
  for (int i = 0; i < n * n; ++i) {
    a[i] = __float2half(rand() / (float)RAND_MAX - 0.5f), af[i] = __half2float(a[i]);
    b[i] = __float2half(rand() / (float)RAND_MAX - 0.5f), bf[i] = __half2float(b[i]);
  }
  __half *da, *db, *dc;
  const size_t bytes = sizeof(__half) * n * n;
  if (cudaMalloc(&da, bytes) || cudaMalloc(&db, bytes) || cudaMalloc(&dc, bytes)) return std::puts("cudaMalloc failed"), 1;
  cudaMemcpy(da, a.data(), bytes, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), bytes, cudaMemcpyHostToDevice);
  const cudaError_t e = gemm_big(da, db, dc, n, n, n, "f16", "f16", "kn", 0);
  if (e != cudaSuccess || cudaDeviceSynchronize() != cudaSuccess) return std::printf("launch failed: %s\n", cudaGetErrorString(e)), 1;
  cudaMemcpy(c.data(), dc, bytes, cudaMemcpyDeviceToHost);
  double worst = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      float ref = 0;
      for (int k = 0; k < n; ++k) ref += af[i * n + k] * bf[k * n + j];
      worst = std::fmax(worst, std::fabs(__half2float(c[i * n + j]) - ref) / (1.0 + std::fabs(ref)));
    }
  std::printf("gpu: gemm_big 512^3 against the host reference, worst relative error %.2e\n", worst);
  return worst < 1e-2 ? 0 : 1;
}

int main(int argc, char** argv) {
  const size_t scratch = gemm_big_workspace_size(4096, 4096, 4096, "f16", "f16", "kn");
  const int ok = gemm_big_supports(4096, 4096, 4096, "f16", "f16", "kn", nullptr) && !gemm_big_supports(4096, 4096, 4096, "f32", "f16", "kn", nullptr);
  std::printf("supports: %d, workspace: %zu bytes, launcher at %p, attention dispatcher at %p\n", ok, scratch,
              reinterpret_cast<void*>(&gemm_big), reinterpret_cast<void*>(&attn_dispatch));
  if (!(ok && scratch == 0)) return 1;
  return argc > 1 && std::strcmp(argv[1], "--gpu") == 0 ? run_on_gpu() : 0;
}
CPP
cmake -S "$app" -B "$app/build" -DKFORGE_GEMM_BIG_RUNNERS=ON >/dev/null
cmake --build "$app/build" -j 2
grep -q "arch=compute_90,code=sm_90\|-arch=sm_90\|sm_90" "$app/build/kernels/CMakeFiles/kforge_gemm_big.dir/flags.make" 2>/dev/null ||
  grep -rq "sm_90" "$app/build/kernels/CMakeFiles/kforge_gemm_big.dir/" || { echo "gemm_big.cu was not built for sm_90"; exit 1; }
test -x "$app/build/kernels/gemm_big_runner" || { echo "the runner did not build"; exit 1; }
grep -rq -- "--generate-code=arch=compute_90a,code=sm_90a" "$app/build/attn/CMakeFiles/kforge_attn.dir/" ||
  { echo "the sdpa kernels were not built for sm_90a"; exit 1; }
"$app/build/consumer"
# On a GPU machine the consumer also runs the kernel and checks it against the host reference.
if nvidia-smi -L 2>/dev/null | grep -q GPU; then
  "$app/build/consumer" --gpu
else
  echo "no GPU: the consumer's run of the kernel is left out"
fi
echo "consumer OK"
