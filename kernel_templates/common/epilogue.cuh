// Epilogues of attention kernels whose O accumulators are mma.sync fragments (layout: common/partials.cuh):
// normalise by the row sums and write 16-bit O rows to global memory through shared memory, so that each
// global store is 16 bytes of one row.
#pragma once
#include "common/online_softmax.cuh"

namespace kf {

// One warp's RPW rows (rows warp * RPW .. of the tile at m0): registers -> its own rows of the smem tile s
// (layout Lay, COLS columns) -> 16-byte stores of rows < S. DIAG_STORE (timing diagnostic, wrong output):
// 1 no global stores (the smem reads stay), 2 no normalisation.
template <class Lay, class TR, int COLS, int RPW, int DIAG_STORE, int MT, int NTD, class T>
__device__ __forceinline__ void store_rows_normalised(const float (&o)[MT][NTD][4], const OnlineRow (&row)[MT][2],
                                                      int warp, int lane, T* s, T* __restrict__ O, int m0, int S) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float l = DIAG_STORE == 2 ? 1.f : quad_sum(row[mt][r].l);
      const float inv = DIAG_STORE == 2 ? 1.f : l > 0.f ? fast_rcp(l) : 0.f;
      const int rl = warp * RPW + mt * 16 + g + 8 * r;
#pragma unroll
      for (int d = 0; d < NTD; ++d) {
        *reinterpret_cast<unsigned*>(s + Lay::off(rl, d * 8 + 2 * t)) =
            TR::pack2(o[mt][d][2 * r] * inv, o[mt][d][2 * r + 1] * inv);
      }
    }
  }
  __syncwarp();
  constexpr int CPR = COLS / 8;
#pragma unroll
  for (int i = lane; i < RPW * CPR; i += 32) {
    const int r = i / CPR, c = (i % CPR) * 8;
    const int gr = m0 + warp * RPW + r;
    if (DIAG_STORE == 1) {
      const uint4 v = *reinterpret_cast<const uint4*>(s + Lay::off(warp * RPW + r, c));
      asm volatile("" ::"r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w));
    } else if (gr < S)
      *reinterpret_cast<uint4*>(O + (size_t)gr * COLS + c) =
          *reinterpret_cast<const uint4*>(s + Lay::off(warp * RPW + r, c));
  }
}

// ROWS x COLS O rows staged in the smem tile s (layout Lay) -> global rows m0 .. (those < S), 16 bytes per
// store, by threads tid = 0 .. NTHR - 1.
template <class Lay, int COLS, int ROWS, int NTHR, class T>
__device__ __forceinline__ void store_tile_from_smem(const T* s, T* __restrict__ O, int m0, int S, int tid) {
  constexpr int CPR = COLS / 8;
#pragma unroll
  for (int i = tid; i < ROWS * CPR; i += NTHR) {
    const int r = i / CPR, c = (i % CPR) * 8;
    if (m0 + r < S)
      *reinterpret_cast<uint4*>(O + (size_t)(m0 + r) * COLS + c) = *reinterpret_cast<const uint4*>(s + Lay::off(r, c));
  }
}

}  // namespace kf
