// tma_fixture family: Y[b, r, c] = X[b, r, c] * scale, with X read by TMA. Test-only (tensor_map
// arguments). One CTA per box of X: BOX_R rows of 128 bytes (one 128-byte swizzle row each) of
// batch blockIdx.z, copied by cp.async.bulk.tensor into shared memory, then un-swizzled and
// written out with plain stores. A map encoded with other dims, strides, box or swizzle than
// the spec says gives wrong output. Needs sm_90.
// Params: KF_BOX_R rows per box, KF_THREADS threads. Specialized: KF_DTYPE_F16 | KF_DTYPE_F32.
#include <cuda_fp16.h>

#if defined(KF_DTYPE_F16)
typedef __half elem_t;
#elif defined(KF_DTYPE_F32)
typedef float elem_t;
#else
#error "tma_scale.cu: define KF_DTYPE_F16 or KF_DTYPE_F32"
#endif

// CUtensorMap's size and alignment: NVRTC cannot include <cuda.h>.
struct __align__(64) tma_map_t {
  unsigned long long opaque[16];
};

__device__ __forceinline__ float ts_to_float(__half v) { return __half2float(v); }
__device__ __forceinline__ float ts_to_float(float v) { return v; }
__device__ __forceinline__ void ts_store(__half* p, float v) { *p = __float2half_rn(v); }
__device__ __forceinline__ void ts_store(float* p, float v) { *p = v; }

constexpr int kBoxC = 128 / static_cast<int>(sizeof(elem_t));  // elements per 128-byte row
constexpr unsigned kBoxBytes = KF_BOX_R * 128;

extern "C" __global__ void __launch_bounds__(KF_THREADS)
    tma_scale(const __grid_constant__ tma_map_t x_map, elem_t* __restrict__ Y, int B, int R, int C, float scale) {
  // The 128-byte swizzle repeats every 1024 bytes: the box must start on a 1024-byte boundary.
  extern __shared__ unsigned char ts_smem[];
  __shared__ __align__(8) unsigned long long bar;
  const unsigned raw = static_cast<unsigned>(__cvta_generic_to_shared(ts_smem));
  const unsigned box = (raw + 1023u) & ~1023u;
  const unsigned char* tile = ts_smem + (box - raw);
  const unsigned bar_addr = static_cast<unsigned>(__cvta_generic_to_shared(&bar));
  const int c0 = blockIdx.x * kBoxC, r0 = blockIdx.y * KF_BOX_R, b = blockIdx.z;
  if (b >= B) return;

  if (threadIdx.x == 0) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(bar_addr));
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");  // the copy engine sees the init
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar_addr), "r"(kBoxBytes) : "memory");
    // Coordinates innermost first, as the map's dims: column, row, batch. Out-of-bounds parts
    // of the box arrive as zeros and still count towards the transaction bytes.
    asm volatile(
        "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];" ::
            "r"(box), "l"(reinterpret_cast<unsigned long long>(&x_map)), "r"(c0), "r"(r0), "r"(b), "r"(bar_addr)
        : "memory");
  }
  __syncthreads();  // the barrier is initialised before anyone waits on it
  unsigned done = 0;
  while (!done) {
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], 0;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(done)
        : "r"(bar_addr)
        : "memory");
  }

  for (int i = threadIdx.x; i < KF_BOX_R * kBoxC; i += KF_THREADS) {
    const int r = i / kBoxC, c = i % kBoxC;
    const int byte = c * static_cast<int>(sizeof(elem_t));
    // 128-byte swizzle: the 16-byte chunk index within a row is XORed with the row index mod 8.
    const int at = r * 128 + (((byte >> 4) ^ (r & 7)) << 4) + (byte & 15);
    const long long row = r0 + r, col = c0 + c;
    if (row < R && col < C)
      ts_store(Y + (static_cast<long long>(b) * R + row) * C + col,
               ts_to_float(*reinterpret_cast<const elem_t*>(tile + at)) * scale);
  }
}
