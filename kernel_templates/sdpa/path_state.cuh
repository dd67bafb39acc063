// The per-thread state of the mma-fragment paths (mma.sync and wgmma): O accumulators, the online-softmax
// rows, Q fragments (Q_IN=regs), and what the GEMMs share: ldmatrix addressing of Q, P as the A operand of
// P V, partial save / merge for the merges (common/partials.cuh), the normalising store (common/epilogue.cuh).
#pragma once
#include "common/epilogue.cuh"
#include "common/mma_sm80.cuh"
#include "common/online_softmax.cuh"
#include "common/partials.cuh"

struct PathState {
  float o[MT][NTD][4];
  kf::OnlineRow row[MT][2];
  unsigned qf[Q_REGS ? MT : 1][Q_REGS ? HD / 16 : 1][4];
  int warp, lane, wn;  // warp = row group (0..WM-1), wn = key group (0..WN-1)
  KvPipe* pipe = nullptr;  // KV_LOAD=tma: the ring P V waits on for V (KV_WAIT=split)
  int q_rows = 1, q_off = 0;  // PACK_GQA: query rows per head (S) and the causal offset (Skv - S)

  static constexpr int kNTN = NTN;
  using PPacked = unsigned[P_EARLY ? MT : 1][P_EARLY ? NTN : 1][2];  // P as 16-bit pairs (P_EARLY)

  __device__ __forceinline__ void init(int w, int l) {
    warp = w % WM;
    wn = w / WM;
    lane = l;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int d = 0; d < NTD; ++d) o[mt][d][0] = o[mt][d][1] = o[mt][d][2] = o[mt][d][3] = 0.f;
      row[mt][0].init();
      row[mt][1].init();
    }
  }

  // The lane id read anew in each tile's fragment loops: its fragment addresses are then
  // computed there instead of hoisted out of the key loop, where ~80 of them pinned registers.
  __device__ __forceinline__ int fresh_lane() const {
    if constexpr (!LANE_ADDR) return lane;
    int l;
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(l));
    return l;
  }
  // Offset of this lane's ldmatrix row in the 16x16 block at (r0, c0), where the lane map puts the
  // lane at (row, col) of the block at (0, 0) and lane_off = L::off(row, col) in the tile's layout L (LayQ or
  // LayKV). LANE_ADDR: one XOR on lane_off (computed once per tile); otherwise the full offset, which the
  // compiler hoists.
  template <class L>
  static __device__ __forceinline__ int frag_off(int lane_off, int row, int col, int r0, int c0) {
    if constexpr (LANE_ADDR)
      return r0 * L::kRowStep + L::add_col(lane_off, c0);
    else
      return L::off(r0 + row, c0 + col);
  }
  __device__ __forceinline__ void load_q_frag(unsigned (&a)[4], const elem_t* sQ, int mt, int kk, int ln) const {
    const int row = warp * RPW + kf::lm_a_row(ln), col = kf::lm_a_col(ln);
    kf::ldmatrix_x4(a[0], a[1], a[2], a[3], sQ + frag_off<LayQ>(LayQ::off(row, col), row, col, mt * 16, kk * 16));
  }
  __device__ __forceinline__ void q_to_regs(const elem_t* sQ) {
    if constexpr (Q_REGS) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) load_q_frag(qf[mt][kk], sQ, mt, kk, lane);
    }
  }

  // A operand of P V for m-tile mt, keys [16 kk, 16 kk + 16): P as 16-bit pairs
  __device__ __forceinline__ static void p_frag(unsigned (&a)[4], const float (&s)[MT][NTN][4], const PPacked& pk,
                                                int mt, int kk) {
    if constexpr (P_EARLY) {
      a[0] = pk[mt][2 * kk][0];
      a[1] = pk[mt][2 * kk][1];
      a[2] = pk[mt][2 * kk + 1][0];
      a[3] = pk[mt][2 * kk + 1][1];
    } else {
      a[0] = TR::pack2(s[mt][2 * kk][0], s[mt][2 * kk][1]);
      a[1] = TR::pack2(s[mt][2 * kk][2], s[mt][2 * kk][3]);
      a[2] = TR::pack2(s[mt][2 * kk + 1][0], s[mt][2 * kk + 1][1]);
      a[3] = TR::pack2(s[mt][2 * kk + 1][2], s[mt][2 * kk + 1][3]);
    }
  }

  // Partials (split-KV CTAs, key-range groups): this thread's into smem or global scratch, into CTA 0's
  // receive buffer (KV_MERGE=push: slot `slot` of rbuf, O parts of every slot then their (m, l)), and the
  // merge of SLOTS slots into the registers (ld(slot, kind, index), common/partials.cuh).
  template <bool SMEM>
  __device__ __forceinline__ void save_partial(float* __restrict__ op, float* __restrict__ ml) const {
    kf::save_partial<SMEM>(o, row, warp, lane, op, ml);
  }
  __device__ __forceinline__ void push_partial(unsigned rbuf, unsigned mbar, int slot) const {
    const unsigned o_base = rbuf + (unsigned)slot * BM * HD * 4;
    const unsigned m_base = rbuf + (unsigned)(KS - 1) * BM * HD * 4 + (unsigned)slot * BM * 8 * 4;
    kf::push_partial(o, row, warp, lane, o_base, m_base, mbar);
  }
  template <int SLOTS = KS, class LD>
  __device__ __forceinline__ void merge_partials(LD ld, int self) {
    kf::merge_partials<SLOTS>(o, row, warp, lane, ld, self);
  }

  // Normalise and write this warp's rows (WARPS_N 1): registers -> its own rows of sQ -> 16-byte stores.
  // (A TMA box store per warp was no faster, docs/experiments/46-o-by-tma-box-stores.md.)
  __device__ __forceinline__ void store(elem_t* sQ, elem_t* __restrict__ Oh, int m0, int S) {
    kf::store_rows_normalised<LayQ, TR, HD, RPW, KF_DIAG_STORE>(o, row, warp, lane, sQ, Oh, m0, S);
  }

  // DIAG: a value of every accumulator, for a test the compiler cannot fold (their results stay live).
  __device__ __forceinline__ float diag_checksum() const {
    float c = 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int d = 0; d < NTD; ++d)
#pragma unroll
        for (int e = 0; e < 4; ++e) c += o[mt][d][e];
    return c + row[0][0].l;
  }
};
