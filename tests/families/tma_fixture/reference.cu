// Reference for tma_fixture: Y[i] = X[i] * scale with plain loads, one element per thread.
// `kind` selects the element type (1: f16, 0: f32), so the reference needs no specialization.
#include <cuda_fp16.h>

extern "C" __global__ void tma_scale_reference(const void* __restrict__ X, void* __restrict__ Y, long long n,
                                               float scale, int kind) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  if (kind == 1) {
    static_cast<__half*>(Y)[i] = __float2half_rn(__half2float(static_cast<const __half*>(X)[i]) * scale);
  } else {
    static_cast<float*>(Y)[i] = static_cast<const float*>(X)[i] * scale;
  }
}
