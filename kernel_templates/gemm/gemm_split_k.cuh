// Split K across a thread-block cluster (the gemm family's wgmma path, SPLIT_K > 1): the SPLIT CTAs of a
// cluster compute one output tile, each over its own run of k-tiles, then add their f32 partials through
// distributed shared memory instead of a global workspace and a second kernel.
//
//   1. every CTA writes its accumulators into its own partial: BM rows x BN f32 in the (now idle) operand
//      ring's shared memory, rows padded by 8 floats so that a warp's 8 rows of a store fall on different banks;
//   2. a cluster barrier (release / acquire) publishes every partial to the cluster;
//   3. CTA r sums rows r * BM / SPLIT .. of all SPLIT partials (ld.shared::cluster, two columns a thread, so
//      neighbouring threads read and store neighbouring columns) and hands each sum to the caller's store;
//   4. the kernel's closing cluster barrier keeps every partial alive until the peers have read it.
#pragma once
#include "common/cluster_sm90.cuh"
#include "common/cp_async.cuh"

namespace kf {

template <int BM, int BN, int SPLIT>
struct SplitKPartials {
  static_assert(BM % SPLIT == 0, "each CTA of the split sums BM / SPLIT rows");
  static constexpr int PS = BN + 8;                 // floats a row of a partial
  static constexpr unsigned BYTES = BM * PS * 4u;   // one partial (the spec checks it fits the ring)
  static constexpr int ROWS = BM / SPLIT;           // rows a CTA sums
  float* part;                                      // this CTA's partial (generic address)

  // A consumer thread's accumulator pair at (row, col) of the tile (col even).
  __device__ __forceinline__ void put(int row, int col, float a, float b) const {
    *reinterpret_cast<float2*>(part + row * PS + col) = make_float2(a, b);
  }
  // Thread i of NT (after the cluster barrier): this CTA's rows summed over the cluster, pair by pair, each
  // handed to store(row, col, float2) in tile coordinates.
  template <int NT, class Store>
  __device__ __forceinline__ void reduce(unsigned rank, int i, Store store) const {
    const unsigned base = smem_u32(part);
    for (int e = i; e < ROWS * (BN / 2); e += NT) {
      const int row = (int)rank * ROWS + e / (BN / 2), col = 2 * (e % (BN / 2));
      const unsigned off = base + (unsigned)(row * PS + col) * 4u;
      float2 s = make_float2(0.f, 0.f);
#pragma unroll
      for (int q = 0; q < SPLIT; ++q) {
        const float2 v = dsmem_ld2(dsmem_map(off, (unsigned)q));
        s.x += v.x;
        s.y += v.y;
      }
      store(row, col, s);
    }
  }
};

}  // namespace kf
