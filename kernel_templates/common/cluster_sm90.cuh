// Thread-block cluster helpers (sm_90): barriers, rank, distributed shared memory (DSMEM) loads and
// st.async pushes counted on a peer's mbarrier.
//
// A kernel launched as a cluster defines KF_USE_CLUSTER 1 before including this header; otherwise
// (KF_USE_CLUSTER 0 or undefined) every helper compiles to nothing (rank 0, the address itself, zeros),
// so code shared by cluster and non-cluster variants calls them without #if, and none of these
// sm_90 instructions reaches an sm_89 build.
#pragma once

#ifndef KF_USE_CLUSTER
#define KF_USE_CLUSTER 0
#endif

namespace kf {

// Release / acquire barrier over the whole cluster.
__device__ __forceinline__ void cluster_sync_all() {
#if KF_USE_CLUSTER
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
#endif
}
// Execution-only barrier (no memory ordering of its own): keeps this CTA's smem alive until the
// peers have read it (the release form above costs a GPU-scope MEMBAR that waits for this CTA's
// global stores), and, after fence.mbarrier_init, holds the cluster until a peer's mbarrier exists.
__device__ __forceinline__ void cluster_sync_relaxed() {
#if KF_USE_CLUSTER
  asm volatile("barrier.cluster.arrive.relaxed.aligned;\nbarrier.cluster.wait.aligned;\n" ::: "memory");
#endif
}
__device__ __forceinline__ unsigned cluster_rank() {
  unsigned r = 0;
#if KF_USE_CLUSTER
  asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(r));
#endif
  return r;
}
// This CTA's shared address saddr as the cluster address of the same offset in CTA `rank`.
__device__ __forceinline__ unsigned dsmem_map(unsigned saddr, unsigned rank) {
  unsigned r = saddr;
#if KF_USE_CLUSTER
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(saddr), "r"(rank));
#endif
  return r;
}
__device__ __forceinline__ float2 dsmem_ld2(unsigned caddr) {
  float2 v = make_float2(0.f, 0.f);
#if KF_USE_CLUSTER
  asm volatile("ld.shared::cluster.v2.f32 {%0, %1}, [%2];\n" : "=f"(v.x), "=f"(v.y) : "r"(caddr) : "memory");
#endif
  return v;
}

// Pushes into one CTA's smem: its mbarrier (one arrival) expects `bytes` from the peers' st.async.
__device__ __forceinline__ void push_mbar_init(unsigned mbar, unsigned bytes) {
#if KF_USE_CLUSTER
  asm volatile(
      "mbarrier.init.shared::cta.b64 [%0], 1;\n"
      "mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n"
      "fence.mbarrier_init.release.cluster;\n" ::"r"(mbar),
      "r"(bytes)
      : "memory");
#endif
}
__device__ __forceinline__ void push_mbar_wait(unsigned mbar) {
#if KF_USE_CLUSTER
  asm volatile(
      "{\n.reg .pred done;\nwait_%=:\n"
      "mbarrier.try_wait.parity.acquire.cluster.shared::cta.b64 done, [%0], 0;\n"
      "@!done bra wait_%=;\n}\n" ::"r"(mbar)
      : "memory");
#endif
}
// 8 bytes into a peer CTA's smem (cluster address), counted on the peer's mbarrier (cluster address).
__device__ __forceinline__ void push_st2(unsigned caddr, float2 v, unsigned cmbar) {
#if KF_USE_CLUSTER
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v2.f32 [%0], {%1, %2}, [%3];\n" ::"r"(caddr),
               "f"(v.x), "f"(v.y), "r"(cmbar)
               : "memory");
#endif
}

}  // namespace kf
