// Split-KV (KV_SPLITS > 1, WARPS_N 1): the KV_SPLITS CTAs of a query block each hold a partial over their
// slice of the keys; merged here, by KV_MERGE, and O stored once. With KV_SPLITS 1 only the store is left.
//   push    (cluster) CTAs 1.. write their partials into CTA 0's smem with st.async, counted in bytes on
//           CTA 0's mbarrier; CTA 0 waits on it, merges, stores (no cluster barrier after the loop: its
//           release costs a GPU-scope fence)
//   cluster each parks its partial in its own smem, cluster barrier, CTA r merges the rows of warps w with
//           w % KV_SPLITS == r over DSMEM and stores them
//   gmem    each writes its partial to global scratch and counts its arrival; the last to arrive (it resets
//           the counter to 0 for the next launch) merges and stores
#pragma once
#include "common/cluster_sm90.cuh"
#include "sdpa/mainloop.cuh"

struct SplitScratch {
  float* __restrict__ Opart;   // [B*H*nblk][KV_SPLITS][BM*D]
  float* __restrict__ MLpart;  // [B*H*nblk][KV_SPLITS][BM*8]
  int* __restrict__ Cnt;       // [B*H*nblk]
  unsigned char* push_tail;    // KV_MERGE=push: CTA 0's mbarrier, then its receive buffer
};

__device__ __forceinline__ void merge_splits_and_store(Path& path, const SplitScratch& sc, elem_t* sQ, elem_t* sK,
                                                       elem_t* __restrict__ Oh, int m0, int S, int tid, int warp,
                                                       int b, int H, int h, int nblk, int mblk, int split) {
  if constexpr (MERGE_PUSH) {
    const unsigned push_mbar = kf::smem_u32(sc.push_tail), push_rbuf = push_mbar + 16;
    const int rank = (int)kf::cluster_rank();
    if (rank != 0) {
      path.push_partial(kf::dsmem_map(push_rbuf, 0), kf::dsmem_map(push_mbar, 0), rank - 1);
      return;
    }
    kf::push_mbar_wait(push_mbar);
    const float2* o2 = reinterpret_cast<const float2*>(sc.push_tail + 16);
    const float2* m2 = o2 + (KS - 1) * BM * HD / 2;
    path.merge_partials(
        [&](int sp, int kind, int idx) {
          return kind == 1 ? o2[(sp - 1) * (BM * HD / 2) + idx] : m2[(sp - 1) * (BM * 4) + idx];
        },
        0);
    path.store(sQ, Oh, m0, S);
    return;
  }
#if KF_MERGE_IN_CLUSTER
  if constexpr (!MERGE_PUSH) {
    // a second barrier keeps every CTA's smem alive until all remote reads are done
    float* part = reinterpret_cast<float*>(sK);  // O [BM * HD] then (m, l) [BM * 8], over the idle K/V ring
    __syncthreads();  // every warp is done with the K/V ring
    path.template save_partial<true>(part, part + BM * HD);
    kf::cluster_sync_all();
    const int rank = (int)kf::cluster_rank();
    if (warp % KS == rank) {
      const unsigned base = kf::smem_u32(part);
      path.merge_partials(
          [&](int sp, int kind, int idx) {
            const unsigned a = base + (unsigned)(kind == 1 ? idx * 8 : BM * HD * 4 + idx * 8);
            return kf::dsmem_ld2(kf::dsmem_map(a, (unsigned)sp));
          },
          rank);
      path.store(sQ, Oh, m0, S);
    }
    kf::cluster_sync_relaxed();
    return;
  }
#endif
  if constexpr (KS > 1) {
    // publish this slice, count arrivals; the last CTA of the query block merges and stores
    const size_t blk = ((size_t)b * H + h) * nblk + mblk;
    // a warp whose rows all lie past the last query row (a decode step's few packed rows in a 64-row
    // block) neither writes nor reads a partial: most of the scratch traffic would be for dead rows
    const bool live = m0 + warp * RPW < S;
    if (live)
      path.template save_partial<false>(sc.Opart + (blk * KS + split) * (BM * HD),
                                        sc.MLpart + (blk * KS + split) * (BM * 8));
    __threadfence();
    __syncthreads();  // also: every warp is done with the K/V ring, reused below for the flag
    volatile int* flag = reinterpret_cast<volatile int*>(sK);
    if (tid == 0) {
      const int prev = atomicAdd(sc.Cnt + blk, 1);
      const int last = prev == KS - 1;
      if (last) sc.Cnt[blk] = 0;  // every slice has arrived: leave the counter zero for the next launch
      *flag = last;
    }
    __syncthreads();
    if (!*flag || !live) return;
    __threadfence();
    const float2* o2 = reinterpret_cast<const float2*>(sc.Opart + blk * KS * (BM * HD));
    const float2* m2 = reinterpret_cast<const float2*>(sc.MLpart + blk * KS * (BM * 8));
    path.merge_partials(
        [&](int sp, int kind, int idx) {
          return kind == 1 ? __ldcg(o2 + sp * (BM * HD / 2) + idx) : __ldcg(m2 + sp * (BM * 4) + idx);
        },
        split);
  }
  path.store(sQ, Oh, m0, S);
}
