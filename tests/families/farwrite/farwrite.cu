// Test-only family: y[i] = 2 * x[i] (f32), right in every element, plus one stray float far
// outside y according to MODE:
//   KF_MODE_OK         no stray write
//   KF_MODE_AFTER64K   one float 64 KiB past the end of y
//   KF_MODE_AFTER1M    one float 1 MiB past the end of y
//   KF_MODE_BEFORE64K  one float 64 KiB before the start of y
// A 4 KiB guard band misses all three (the write lands in whatever memory lies there); the
// gate must still never pass them. Offsets are 64-bit, so they cannot wrap for any N.

extern "C" __global__ void farwrite_kernel(const float* __restrict__ x, float* __restrict__ y, int n) {
  const long long i = static_cast<long long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float v = 2.0f * x[i];
  y[i] = v;
  if (i != n - 1) return;  // one thread makes the stray write
#if defined(KF_MODE_AFTER64K)
  y[n + 65536LL / 4] = v;
#elif defined(KF_MODE_AFTER1M)
  y[n + 1048576LL / 4] = v;
#elif defined(KF_MODE_BEFORE64K)
  y[-65536LL / 4] = v;
#endif
}
