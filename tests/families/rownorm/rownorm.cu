// Row L2 norms, one block per row: each thread sums squares of ITEMS consecutive elements per
// step, then the block reduces through warp shuffles and one shared-memory slot per warp.
// NVRTC compiles this without any standard header: sqrtf and __shfl_down_sync are built in,
// and `long long` stands in for <cstdint>'s int64_t.
extern "C" __global__ void rownorm(const float* __restrict__ x, float* __restrict__ y, int rows, int cols) {
  const int r = blockIdx.x;
  if (r >= rows) return;
  const float* row = x + static_cast<long long>(r) * cols;
  float acc = 0.f;
  // COLS % ITEMS == 0 (a constraint), so a step that starts inside the row ends inside it.
  for (int c = threadIdx.x * KF_ITEMS; c < cols; c += KF_THREADS * KF_ITEMS) {
#pragma unroll
    for (int i = 0; i < KF_ITEMS; ++i) acc += row[c + i] * row[c + i];
  }
  for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
  __shared__ float per_warp[KF_THREADS / 32];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (lane == 0) per_warp[warp] = acc;
  __syncthreads();
  if (warp == 0) {
    acc = lane < KF_THREADS / 32 ? per_warp[lane] : 0.f;
    for (int offset = 16; offset > 0; offset /= 2) acc += __shfl_down_sync(0xffffffffu, acc, offset);
    if (lane == 0) y[r] = sqrtf(acc);
  }
}
