// Reference for export_fixture: Y[r, c] = X[r, c] * scale + bias[c] in f32, one element per
// thread. `kind` selects the element type of X and Y (1: f16, 2: bf16, 0: f32), so the
// reference needs no specialization.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

extern "C" __global__ void scale_bias_reference(const void* __restrict__ X, const float* __restrict__ bias,
                                                void* __restrict__ Y, int R, int C, float scale, int kind) {
  const long long row = blockIdx.y;
  const long long c = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= R || c >= C) return;
  const long long i = row * C + c;
  if (kind == 1) {
    static_cast<__half*>(Y)[i] = __float2half_rn(__half2float(static_cast<const __half*>(X)[i]) * scale + bias[c]);
  } else if (kind == 2) {
    static_cast<__nv_bfloat16*>(Y)[i] =
        __float2bfloat16_rn(__bfloat162float(static_cast<const __nv_bfloat16*>(X)[i]) * scale + bias[c]);
  } else {
    static_cast<float*>(Y)[i] = static_cast<const float*>(X)[i] * scale + bias[c];
  }
}
