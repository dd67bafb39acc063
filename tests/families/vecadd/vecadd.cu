// Test-only family: C = A + B, with KF_BUG_* switches that break it in known ways (see the spec).
#include "common.cuh"

#if defined(KF_SMEM_KB) && KF_SMEM_KB > 0
#define VECADD_USES_SMEM 1
#endif

extern "C" __global__ void vecadd(const elem_t* __restrict__ A, const elem_t* __restrict__ B,
                                  elem_t* __restrict__ C, int* counter, int n) {
#ifdef VECADD_USES_SMEM
  extern __shared__ float dyn[];  // requested through the launch; touched so it is real
  if (threadIdx.x == 0) dyn[0] = 0.f;
#endif
  const long first = (static_cast<long>(blockIdx.x) * KF_BLOCK + threadIdx.x) * KF_VEC;
#pragma unroll
  for (int v = 0; v < KF_VEC; ++v) {
    const long i = first + v;
    if (i >= n) continue;
    float c = load_elem(A, i) + load_elem(B, i);
#if defined(KF_BUG_WRONG)
    if (i % 7 == 3) c += 0.5f;
#endif
#if defined(KF_BUG_UNWRITTEN)
    if (i == n - 1) continue;
#endif
#if defined(KF_BUG_OOB)
    if (i == 0) store_elem(C, i + (1L << 40), c);  // far outside any allocation
#endif
#if defined(KF_BUG_STATEFUL)
    if (i == 0 && atomicAdd(counter, 1) > 0) c += 1.0f;  // counter never reset: later launches differ
#endif
    store_elem(C, i, c);
  }
  (void)counter;
}
