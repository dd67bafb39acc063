// WS=1 (FA3's warp specialisation): the producer warpgroup. It follows the NT consumer threads in the
// block, hands its registers to them (setmaxnreg), and one of its threads issues every TMA load of the CTA:
// Q's boxes, then each K/V tile in order, each K and each V as soon as every consumer warp has released
// the slot's previous one (common/kv_pipeline.cuh, RELEASERS). The consumers never wait on a refill they
// issue themselves, so the ring needs only two stages, and the loads never sit in a consumer's
// instruction stream. The caller has published every mbarrier (a CTA barrier) before this runs; no CTA
// barrier follows it.
#pragma once
#include "common/warpgroup_sm90.cuh"
#include "sdpa/pipeline.cuh"

// The producer warpgroup's whole program: Q, then tiles 0 .. ntiles - 1 of this thread's pipeline.
__device__ __forceinline__ void produce(KvPipe& pipe, elem_t* sQ, const kf::TmaDesc& tmQ, unsigned q_mbar, int m0,
                                       int bh, int S, int ntiles, int tid) {
#if defined(KF_KV_LOAD_TMA)
  if constexpr (PRODUCER_REGS > 0) kf::setmaxnreg_dec<PRODUCER_REGS>();
  if (tid != TMA_PRODUCER) return;
  load_q(sQ, nullptr, tmQ, q_mbar, m0, bh, S, tid);
  for (int t = 0; t < ntiles; ++t) pipe.issue(t);
#else
  (void)pipe, (void)sQ, (void)tmQ, (void)q_mbar, (void)m0, (void)bh, (void)S, (void)ntiles, (void)tid;
#endif
}

// A consumer warpgroup's side of the split: the producer's registers.
__device__ __forceinline__ void consume_registers() {
  if constexpr (CONSUMER_REGS > 0) kf::setmaxnreg_inc<CONSUMER_REGS>();
}
