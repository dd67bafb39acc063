#!/usr/bin/env bash
# One-call GPU validation of the gemm family, the cuBLAS comparison tool and the faulty family.
# Usage (repo root, on a GPU node): tools/bench_gemm/run_validation.sh [OUTDIR]
set -u
cd "$(dirname "$0")/../.."
OUTDIR="${1:-${OUT:-/tmp/bench_gemm_out}}"
mkdir -p "$OUTDIR" /tmp/bg
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm --format=csv 2>&1 | tee "$OUTDIR/gpu.txt"
ARCH=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d .)
NVCC="nvcc -O2 -std=c++17 -arch=sm_${ARCH:-90}"
$NVCC tools/bench_gemm/bench_gemm.cu -lcublas -lcuda -o /tmp/bg/bench_gemm &
$NVCC tools/bench_gemm/validate_gemm.cu -lcublas -lcuda -lnvrtc -o /tmp/bg/validate_gemm
wait
mkdir -p /tmp/bg/export
echo "== gemm configs"
timeout 240 /tmp/bg/validate_gemm --root . --export /tmp/bg/export 2>&1 | tee "$OUTDIR/validate.log"
echo "== faulty family"
for mode in ok fault hang wrong nocompile bigsmem toobig unwritten; do
  timeout 10 /tmp/bg/validate_gemm --root . --faulty $mode --size-mult 2
  rc=$?
  [ $rc -eq 124 ] && echo "faulty $mode: timeout (killed after 10 s)"
  [ $rc -ne 0 ] && [ $rc -ne 124 ] && echo "faulty $mode: process exit $rc"
done 2>&1 | tee "$OUTDIR/faulty.log"
timeout 20 /tmp/bg/validate_gemm --root . --faulty ok --size-mult 1 2>&1 | tee -a "$OUTDIR/faulty.log"
echo "== bench_gemm"
{
  /tmp/bg/bench_gemm --m 4096 --n 4096 --k 4096 --out f16 --manifest /tmp/bg/export
  /tmp/bg/bench_gemm --m 4096 --n 4096 --k 4096 --out f32 --json
  /tmp/bg/bench_gemm --m 1024 --n 1024 --k 1024 --out f16 --json
  /tmp/bg/bench_gemm --m 8192 --n 8192 --k 8192 --out f16 --json
} 2>&1 | tee "$OUTDIR/bench.log"
