// Reference for sdpa_fwd: O = softmax(Q K^T * scale [+ causal mask]) V, computed in fp32.
// Deliberately simple: one thread per (b, h, query row), three passes over the keys
// (max, sum of exponentials, weighted sum of V). Layout: Q and O [B, H, S, D], K and V [B, Hkv, Skv, D],
// contiguous; query head h reads K/V head h / (H / Hkv); causal: row i sees keys 0 .. i + Skv - S (bottom-right).
// Runtime dims and dtype so it needs no specialisation:
//   is_bf16 = 0: f16 elements, 1: bf16 elements. D <= 256.
// Launch: grid (ceil(S / 128), H, B), block (128, 1, 1), no dynamic shared memory.
#include <cuda_fp16.h>
#include <cuda_bf16.h>

__device__ __forceinline__ float ld_elem(const unsigned short* p, size_t i, int is_bf16) {
  const unsigned short bits = p[i];
  if (is_bf16) return __uint_as_float(((unsigned)bits) << 16);
  return __half2float(__ushort_as_half(bits));
}

__device__ __forceinline__ void st_elem(unsigned short* p, size_t i, float v, int is_bf16) {
  if (is_bf16)
    p[i] = __bfloat16_as_ushort(__float2bfloat16_rn(v));
  else
    p[i] = __half_as_ushort(__float2half_rn(v));
}

extern "C" __global__ void sdpa_reference(const unsigned short* Q, const unsigned short* K,
                                          const unsigned short* V, unsigned short* O, int B, int H, int S,
                                          int Hkv, int Skv, int D, int causal, int is_bf16, float scale) {
  const int i = blockIdx.x * blockDim.x + threadIdx.x;  // query row
  const int h = blockIdx.y, b = blockIdx.z;
  if (i >= S || h >= H || b >= B || D > 256 || Hkv < 1 || H % Hkv != 0) return;
  const size_t base = ((size_t)b * H + h) * (size_t)S * D;
  const size_t kv_base = ((size_t)b * Hkv + h / (H / Hkv)) * (size_t)Skv * D;
  const int n_keys = causal ? min(Skv, i + 1 + Skv - S) : Skv;  // keys 0..n_keys-1 are visible

  float q[256];
  for (int d = 0; d < D; ++d) q[d] = ld_elem(Q, base + (size_t)i * D + d, is_bf16);

  float m = -__int_as_float(0x7f800000);  // -inf (no <cmath> under NVRTC)
  for (int j = 0; j < n_keys; ++j) {
    float s = 0.f;
    for (int d = 0; d < D; ++d) s += q[d] * ld_elem(K, kv_base + (size_t)j * D + d, is_bf16);
    m = fmaxf(m, s * scale);
  }

  float acc[256];
  for (int d = 0; d < D; ++d) acc[d] = 0.f;
  float sum = 0.f;
  for (int j = 0; j < n_keys; ++j) {
    float s = 0.f;
    for (int d = 0; d < D; ++d) s += q[d] * ld_elem(K, kv_base + (size_t)j * D + d, is_bf16);
    const float p = expf(s * scale - m);
    sum += p;
    for (int d = 0; d < D; ++d) acc[d] += p * ld_elem(V, kv_base + (size_t)j * D + d, is_bf16);
  }
  for (int d = 0; d < D; ++d) st_elem(O, base + (size_t)i * D + d, acc[d] / sum, is_bf16);
}
