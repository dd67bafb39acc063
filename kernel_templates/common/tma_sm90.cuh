// TMA (sm_90) helpers: tensor-map box loads into shared memory, optionally multicast to every CTA
// of a thread-block cluster, completed on mbarriers by byte count.
//
// The tensor map is encoded on the host (cuTensorMapEncodeTiled, the spec's {"tensor_map": ...}
// argument) and passed by value as a `const __grid_constant__ kf::TmaDesc`; the copy instructions
// take its generic address. With a 128-byte swizzle map, a box whose rows are 128 bytes lands in
// smem in exactly the layout wgmma's 128-byte-swizzle descriptors read (kf::Sw128Layout), provided
// the destination is 1024-byte aligned.
#pragma once

namespace kf {

// CUtensorMap's size and alignment; the contents are opaque.
struct alignas(64) TmaDesc {
  unsigned long long words[16];
};

__device__ __forceinline__ void mbar_init(unsigned mbar, unsigned arrivals) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(mbar), "r"(arrivals) : "memory");
}
// Orders this thread's mbarrier inits before the cluster's (and the async proxy's) use of them;
// a cluster barrier must still follow before a peer may touch them.
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
}
// One arrival that also expects `bytes` more bytes of async copies before the phase completes.
__device__ __forceinline__ void mbar_arrive_expect_tx(unsigned mbar, unsigned bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(mbar), "r"(bytes) : "memory");
}
// Spins until the phase with the given parity has completed.
__device__ __forceinline__ void mbar_wait(unsigned mbar, unsigned parity) {
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(mbar),
      "r"(parity)
      : "memory");
}
// One plain arrival where `pred` holds (a consumer warp's lane 0 releasing a ring slot to the producer):
// predicated, not branched, so no divergent path sits between a wgmma issue and its wait (ptxas would
// serialise the wgmmas).
__device__ __forceinline__ void mbar_arrive_if(unsigned mbar, bool pred) {
  asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %1, 0;\n@p mbarrier.arrive.shared::cta.b64 _, [%0];\n}\n" ::"r"(mbar),
               "r"((int)pred)
               : "memory");
}
// Arrives on the mbarrier at the same smem offset in CTA `rank` of this cluster.
__device__ __forceinline__ void mbar_arrive_remote(unsigned mbar, unsigned rank) {
  asm volatile(
      "{\n.reg .b32 remote;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [remote];\n}\n" ::"r"(mbar),
      "r"(rank)
      : "memory");
}

// The 3-D box at coordinates (c0, c1, c2) (innermost first) into this CTA's smem at dst, its bytes
// counted on mbar. Coordinates past the tensor's end read as zeros (and still count).
__device__ __forceinline__ void tma_load_3d(unsigned dst, const TmaDesc& map, int c0, int c1, int c2, unsigned mbar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(mbar)
      : "memory");
}
// The same box written at offset dst of every CTA in cta_mask (cluster ranks), each copy counted on
// the mbarrier at offset mbar of its own CTA.
__device__ __forceinline__ void tma_load_3d_multicast(unsigned dst, const TmaDesc& map, int c0, int c1, int c2,
                                                      unsigned mbar, unsigned short cta_mask) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1, {%2, %3, %4}], [%5], %6;\n" ::"r"(dst),
      "l"(reinterpret_cast<unsigned long long>(&map)), "r"(c0), "r"(c1), "r"(c2), "r"(mbar), "h"(cta_mask)
      : "memory");
}

}  // namespace kf
