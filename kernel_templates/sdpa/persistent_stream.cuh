// PERSIST=2 (with WS=1): a persistent CTA whose consumers stream through the key tiles of all its work tiles as
// one loop, so the compute pipeline never drains between work tiles. The overlap loop's issue of "Q K^T of the
// next tile with P V of this one" runs on across a work tile's end: its last P V goes out with the next work
// tile's first Q K^T, whose softmax then runs under that P V. At such a boundary the finished rows' sums are
// kept aside and the running rows restart (m = -inf, so the next softmax's rescale factor is 0 and the rescale
// zeroes O once the finished O is stored). PERSIST=1 (sdpa/persistent.cuh) starts each work tile's pipeline
// afresh (first Q K^T and softmax with nothing in flight) and ends it with a lone P V; at 8 key tiles a work
// tile that fill and drain is about a tile and a half of ten (predicted; measured, PERSIST=2 was no faster than
// PERSIST=1 there: docs/experiments/68-*).
// Q has two buffers: work tile k's Q is in buffer k % 2, loaded by the producer as soon as the consumers have
// stored work tile k - 2 (the finished O is staged in its own Q buffer, each warp in its own rows, as the plain
// kernel's store does). The producer is PERSIST=1's (persistent_producer). Barriers at q_bars: full 0, full 1 (the
// producer's box loads, counted in bytes), then empty 0, empty 1 (one arrival per consumer warp).
#pragma once
#include "common/tile_scheduler.cuh"
#include "sdpa/overlap_loop.cuh"
#include "sdpa/persistent.cuh"
#include "sdpa/producer.cuh"

#if defined(KF_MMA_WGMMA) && KF_PIPE_QK == 2
// One work tile as the stream sees it.
struct StreamTile {
  int k, w, m0, bh, ntiles, first_mask;
  __device__ __forceinline__ void load(const Work& work, int kk) {
    k = kk;
    w = work.nth(kk);
    if (w < work.total) {
      int kvh;  // (the producer's concern)
      work.at(w, m0, bh, kvh, ntiles);
      first_mask = work.first_masked_tile(m0);
    }
  }
};

__device__ __forceinline__ void stream_softmax(Path& path, float (&s)[MT][NTN][4], float (&al)[MT][2],
                                               const StreamTile& wt, int jj, const Work& work, float sl2) {
  Path::PPacked unused;
  if (jj >= wt.first_mask)
    path.template softmax<true, false>(s, unused, al, jj * BN, wt.m0 + work.off, work.Skv, sl2);
  else
    path.template softmax<false, false>(s, unused, al, jj * BN, wt.m0 + work.off, work.Skv, sl2);
}

// The finished work tile's O, normalised by the row sums kept aside (l), staged in its Q buffer; then that
// buffer goes back to the producer.
__device__ __forceinline__ void stream_store(const Path& path, const float (&l)[MT][2], elem_t* sQbuf,
                                             elem_t* __restrict__ O, const StreamTile& wt, int S, unsigned q_empty) {
  kf::OnlineRow fin[MT][2];
#pragma unroll
  for (int mt = 0; mt < MT; ++mt) fin[mt][0].l = l[mt][0], fin[mt][1].l = l[mt][1];
  kf::store_rows_normalised<LayQ, TR, HD, RPW, KF_DIAG_STORE>(path.o, fin, path.warp, path.lane, sQbuf,
                                                              O + (size_t)wt.bh * S * HD, wt.m0, S);
  kf::publish_to_async_proxy();  // (fence.proxy.async) the staging writes before the TMA write of the next Q
  __syncwarp();                  // every lane's staging reads done before the producer may overwrite the buffer
  kf::mbar_arrive_if(q_empty, path.lane == 0);
}

__device__ __forceinline__ void stream_consumer(KvPipe& pipe, elem_t* sQ, elem_t* sK, elem_t* sV,
                                               elem_t* __restrict__ O, unsigned q_bars, const Work& work, int S,
                                               float sl2, int tid) {
  consume_registers();
  const int lane = tid & 31;
  const bool lane0 = lane == 0;
  StreamTile cur;
  cur.load(work, 0);
  if (cur.w >= work.total) return;  // (no CTA is launched without work; kept for safety)
  Path path;
  path.init(tid >> 5, lane);
  path.pipe = &pipe;
  float s[MT][NTN][4], al[MT][2], lsave[MT][2];
  Path::PPacked pk;

  kf::mbar_wait(q_bars, 0);
  path.q_to_regs(sQ);
  pipe.template wait<0>(0);
  path.turn_start();
  path.qk(sQ, sK, s);  // (its own turn, waited for)
  pipe.release_k(0, lane0);
  stream_softmax(path, s, al, cur, 0, work, sl2);
  Path::pack(s, pk);

  // it: the ring count of the tile whose P V is next (tile jj of work tile cur)
  int it = 0, jj = 0;
  StreamTile nxt = cur;
  for (;;) {
    const bool boundary = jj + 1 == cur.ntiles;
    int nj = jj + 1;
    if (boundary) {
      nxt.load(work, cur.k + 1);
      if (nxt.w >= work.total) break;  // the last P V goes alone (below)
      nj = 0;
      kf::mbar_wait(q_bars + 8 * (nxt.k & 1), (nxt.k >> 1) & 1);
      path.q_to_regs(sQ + (nxt.k & 1) * Q_ELEMS);  // (Q_IN=regs: no Q K^T is in flight)
    }
    const elem_t* nQ = sQ + (nxt.k & 1) * Q_ELEMS;
    pipe.template wait<0>(it + 1);  // K of the next tile
    const elem_t* tV = sV + (it % STAGES) * KV_ELEMS;
    wait_v_of(&pipe, tV);  // V of this one
    path.turn_begin();
    kf::wgmma_fence();
    path.qk_mmas(nQ, sK + ((it + 1) % STAGES) * KV_ELEMS, s);
    kf::wgmma_commit();
    path.pv_mmas(s, pk, tV);
    kf::wgmma_commit();
    path.turn_end(true);
    kf::wgmma_wait<1>();  // Q K^T of the next tile (committed first)
    path.fence_acc(s[0]);
    pipe.release_k(it + 1, lane0);
    if (boundary) {  // the finished rows' sums aside; the next work tile's rows start over
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        lsave[0][r] = path.row[0][r].l;
        path.row[0][r].init();
      }
    }
    stream_softmax(path, s, al, nxt, nj, work, sl2);
    kf::wgmma_wait<0>();  // P V of this tile
    path.fence_acc(path.o[0]);
    pipe.release_v(it, lane0);
    if (boundary) stream_store(path, lsave, sQ + (cur.k & 1) * Q_ELEMS, O, cur, S, q_bars + 16 + 8 * (cur.k & 1));
    path.rescale(al);  // to the next tile's running max (a boundary's factor 0 zeroes O)
    Path::pack(s, pk);
    ++it;
    jj = nj;
    if (boundary) cur = nxt;
  }
  last_pv(path, pipe, s, pk, sV, it, lane0);
  // (the producer has loaded its last Q: nobody waits on this buffer's empty barrier)
  path.store(sQ + (cur.k & 1) * Q_ELEMS, O + (size_t)cur.bh * S * HD, cur.m0, S);
}
#else
__device__ __forceinline__ void stream_consumer(KvPipe&, elem_t*, elem_t*, elem_t*, elem_t* __restrict__, unsigned,
                                               const Work&, int, float, int) {}
#endif
