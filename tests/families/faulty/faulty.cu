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
//   KF_MODE_OOB        correct y, plus two floats just past its end (wrong_result: the guard band)
//   KF_MODE_PRINT      correct y; block 0 prints one line per loaded module (ok: device output is
//                      kept off the worker's protocol channel)
//   KF_MODE_CORRUPT    correct y, then overwrites its input x (wrong_result naming x)
//   KF_MODE_RACE       each thread writes y for a thread of the neighbouring warp from that thread's
//                      shared-memory slot, with no barrier between the write and the read; odd warps
//                      write late, so even warps read the stale value (wrong_result; racecheck
//                      reports the hazard)
//   KF_MODE_TRAP       __trap() in one thread: a sticky launch failure (runtime_fault)
//   KF_MODE_NAN        one element 0/0 (wrong_result: NaN in the output)
// KF_SIZE_MULT: elements per thread (1 or 2); block = 256 threads.

#if defined(KF_MODE_NOCOMPILE)
#error "faulty family: MODE=nocompile does not compile, on purpose"
#endif

#ifndef KF_SIZE_MULT
#error "faulty family: KF_SIZE_MULT missing"
#endif

#if defined(KF_MODE_PRINT)
__device__ unsigned faulty_printed;  // per loaded module: one line per evaluation, not per launch
#endif

#if defined(KF_MODE_RACE)
// y[i] = 2 x[i], but through another warp's slot: thread t publishes x for its own element in
// slot[t], then writes its partner's element (t ^ 32, the neighbouring warp) from slot[t ^ 32].
// The barrier that should separate the two is missing, and odd warps publish late.
__device__ void racy_pass(const float* x, float* y, int n, int base) {
  __shared__ float slot[256];
  const int t = threadIdx.x, partner = t ^ 32;
  slot[partner] = 0.f;  // a stale value the late writer has not replaced yet
  __syncthreads();
  if ((t / 32) % 2 == 1) {  // a spin, not __nanosleep (which may return at once)
    const long long t0 = clock64();
    while (clock64() - t0 < 20000) {
    }
  }
  const int mine = base + t, theirs = base + partner;
  if (mine < n) slot[t] = x[mine];
  // Missing: __syncthreads();
  if (theirs < n) y[theirs] = 2.0f * slot[partner];
  __syncthreads();  // the slots are reused by the next pass
}
#endif

extern "C" __global__ void faulty_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
#if defined(KF_MODE_BIGSMEM) || defined(KF_MODE_TOOBIG)
  extern __shared__ float dyn[];  // touched so the request is not dead
  if (threadIdx.x == 0) dyn[0] = 0.f;
#endif
#if defined(KF_MODE_TRAP)
  if (blockIdx.x == 0 && threadIdx.x == 0) __trap();
#endif
#if defined(KF_MODE_PRINT)
  if (blockIdx.x == 0 && threadIdx.x == 0 && atomicAdd(&faulty_printed, 1u) == 0)
    printf("faulty kernel: hello from block 0 {\"not\": json\n");
#endif
#if defined(KF_MODE_HANG)
  volatile const float* vx = x;
  const float first = vx[0];
  while (vx[0] == first) {
  }  // inputs never change: spins until the watchdog kills the worker
#endif
#if defined(KF_MODE_RACE)
  for (int e = 0; e < KF_SIZE_MULT; ++e) racy_pass(x, y, n, (blockIdx.x * KF_SIZE_MULT + e) * blockDim.x);
  return;
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
#if defined(KF_MODE_NAN)
    if (i == n / 3) v = v * 0.0f / (v - v);  // 0/0, not folded away: NaN
#endif
#if defined(KF_MODE_FAULT)
    if (i == 0) {
      volatile float* bad = y + (static_cast<unsigned long long>(1) << 38);  // 1 TiB past y: unmapped
      *bad = v;  // illegal address
    }
#endif
    y[i] = v;
#if defined(KF_MODE_OOB)
    if (i == n - 1) {
      y[n] = v;  // two floats just past the end of y
      y[n + 1] = v;
    }
#endif
#if defined(KF_MODE_CORRUPT)
    const_cast<float*>(x)[i] = -v;  // after its own read: y is right, x is not
#endif
  }
}
