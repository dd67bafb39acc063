// Test-only family: y[i] = 2 * x[i] (f32), broken on purpose according to MODE.
//   KF_MODE_OK         correct
//   KF_MODE_FAULT      writes 1 TiB past y: illegal address, a sticky error (runtime_fault)
//   KF_MODE_HANG       spins forever on a volatile read of the input (timeout)
//   KF_MODE_WRONG      one element off by 1.0 (wrong_result through max_abs)
//   KF_MODE_NOCOMPILE  #error (compile_error)
//   KF_MODE_BIGSMEM    correct code, but the spec launches it with 300000 bytes of dynamic shared
//                      memory and no constraint stops it (launch_error)
//   KF_MODE_TOOBIG     the spec declares 300000 bytes and its constraint rejects it (invalid)
//   KF_MODE_UNWRITTEN  writes only the first half of y; the rest stays NaN (wrong_result)
// KF_SIZE_MULT: elements per thread (1 or 2); block = 256 threads.

#if defined(KF_MODE_NOCOMPILE)
#error "faulty family: MODE=nocompile does not compile, on purpose"
#endif

#ifndef KF_SIZE_MULT
#error "faulty family: KF_SIZE_MULT missing"
#endif

extern "C" __global__ void faulty_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
#if defined(KF_MODE_BIGSMEM) || defined(KF_MODE_TOOBIG)
  extern __shared__ float dyn[];  // touched so the request is not dead
  if (threadIdx.x == 0) dyn[0] = 0.f;
#endif
#if defined(KF_MODE_HANG)
  volatile const float* vx = x;
  const float first = vx[0];
  while (vx[0] == first) {
  }  // inputs never change: spins until the watchdog kills the worker
#endif
  const int base = (blockIdx.x * blockDim.x) * KF_SIZE_MULT + threadIdx.x;
#pragma unroll
  for (int e = 0; e < KF_SIZE_MULT; ++e) {
    const int i = base + e * blockDim.x;
    if (i >= n) continue;
#if defined(KF_MODE_UNWRITTEN)
    if (i >= n / 2) continue;
#endif
    float v = 2.0f * x[i];
#if defined(KF_MODE_WRONG)
    if (i == n / 2) v += 1.0f;
#endif
#if defined(KF_MODE_FAULT)
    if (i == 0) {
      volatile float* bad = y + (static_cast<unsigned long long>(1) << 38);  // 1 TiB past y: unmapped
      *bad = v;  // illegal address
    }
#endif
    y[i] = v;
  }
}
