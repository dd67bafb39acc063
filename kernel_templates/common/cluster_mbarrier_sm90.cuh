// Arrivals on a peer CTA's mbarrier (sm_90 thread-block clusters), for rings whose slots the cluster's CTAs
// share (gemm's multicast ring). Its own header so that kernels that never arrive remotely render unchanged.
#pragma once

namespace kf {

// One arrival on the mbarrier at offset mbar of CTA `rank` where `pred` holds, predicated like mbar_arrive_if,
// with the default (CTA-scope) release: a consumer handing a ring slot back to a multicasting producer, whose
// only earlier accesses to order are its reads of the slot, which its wgmma wait completed. (The cluster-scope
// release of mbar_arrive_remote fences this thread's global stores too: once a k-tile, it cost the gemm a third
// of its speed.)
__device__ __forceinline__ void mbar_arrive_remote_if(unsigned mbar, unsigned rank, bool pred) {
  asm volatile(
      "{\n.reg .pred p;\n.reg .b32 remote;\nsetp.ne.b32 p, %2, 0;\nmapa.shared::cluster.u32 remote, %0, %1;\n"
      "@p mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(mbar),
      "r"(rank), "r"((int)pred)
      : "memory");
}

}  // namespace kf
