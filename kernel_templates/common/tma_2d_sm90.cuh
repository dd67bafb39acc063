// 2-D TMA box loads (sm_90): a tile of a row-major matrix viewed through a 2-D tensor map (innermost
// dimension first), completed on an mbarrier by byte count like the 3-D loads of common/tma_sm90.cuh.
#pragma once
#include "common/tma_sm90.cuh"

namespace kf {

// The box at (c0, c1) (c0 innermost: the column) into this CTA's smem at dst, its bytes counted on mbar.
// Coordinates past the matrix's end read as zeros and still count, so tail tiles need no other path.
__device__ __forceinline__ void tma_load_2d(unsigned dst, const TmaDesc& map, int c0, int c1, unsigned mbar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3}], "
      "[%4];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(mbar)
      : "memory");
}

// The same box written at offset dst of every CTA in cta_mask (cluster ranks), each copy counted on the
// mbarrier at offset mbar of its own CTA (a thread-block cluster sharing one operand tile).
__device__ __forceinline__ void tma_load_2d_multicast(unsigned dst, const TmaDesc& map, int c0, int c1, unsigned mbar,
                                                      unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3}], [%4], %5;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(mbar), "h"(cta_mask)
      : "memory");
}

// Fetches the descriptor into the TMA unit's cache ahead of the first load through it.
__device__ __forceinline__ void tma_prefetch_desc(const TmaDesc& map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<unsigned long long>(&map)) : "memory");
}

}  // namespace kf
