// The wgmma path's two GEMMs (sm_90a): S = Q K^T and O += P V on warpgroup MMA for the 64 rows of each
// warpgroup, K and V read from shared memory through 128-byte-swizzle descriptors, Q from registers
// (Q_IN=regs) or smem, P from registers. The accumulators have the mma.sync fragment layout, so the
// softmax, merges and epilogue are the mma path's. With WARPS_N > 1 each warpgroup takes its key group's
// BLOCK_N / WARPS_N keys of every tile (warps w .. w+3 share w / WM) and the groups merge at the end.
// Turn taking (WN_KEYS=pingpong, WG_PINGPONG): every MMA issue waits for its group's turn first.
#pragma once
#include "sdpa/barriers.cuh"
#include "sdpa/path_state.cuh"
// (each include is inlined once, where it first appears: included here unconditionally, so that an
// mma.sync config's render, where the block below is skipped, still has these headers)
#if defined(KF_MMA_WGMMA)
#include "common/wgmma_sm90.cuh"
#if KF_D == 256
#include "common/wgmma_sm90_wide.cuh"  // O += P V at n = D = 256
#endif

static_assert(MT == 1, "wgmma path: 16 rows per warp, 4 warps (64 rows) per warpgroup");
static_assert(WM % 4 == 0, "wgmma path: whole warpgroups per key group");

struct WgmmaGemm : PathState {
  typedef kf::Wgmma<BNW, TR::is_bf16> WgS;  // S = Q K^T: m64 n (BLOCK_N / WARPS_N) k16
  typedef kf::Wgmma<HD, TR::is_bf16> WgO;  // O += P V: m64 n D k16
  static constexpr unsigned V_LBO = HD == 64 ? LayKV::kAtomBytes : LayKV::kBlockBytes;
  // K-major operand (Q or K, [rows][D] in layout L) for k-step kk: 32 bytes per step inside a 64-column
  // block, L::kBlockBytes between blocks
  template <class L>
  static __device__ __forceinline__ unsigned long long k_major(unsigned base, int kk) {
    return kf::wgmma_desc(base + (kk >> 2) * L::kBlockBytes + (kk & 3) * 32, 16, L::kRowGroupBytes);
  }
  template <int N>
  static __device__ __forceinline__ void fence_acc(float (&d)[N][4]) {
#pragma unroll
    for (int j = 0; j < N; ++j)
#pragma unroll
      for (int e = 0; e < 4; ++e) kf::fence_operand(d[j][e]);
  }

  // Turns: every MMA issue (Q K^T, then P V, per tile) waits for this group's turn and then hands the turn
  // to the other group. Group 1 hands group 0 the first turn (turn_start) and keeps its last P V turn
  // (pp_last), so each barrier sees as many passes as waits. A group with fewer tiles still takes its turns
  // (turn_idle).
  bool pp_last = false;
  __device__ __forceinline__ void turn_begin() const {
    if constexpr (PINGPONG) turn_wait(pp_group());
  }
  // The turn-taking group: the key group (WN_KEYS=pingpong, WG_PINGPONG with WARPS_N 2) or the row warpgroup.
  __device__ __forceinline__ int pp_group() const { return ROW_PP ? warp >> 2 : wn; }
  __device__ __forceinline__ void turn_end(bool pv) const {
    if constexpr (PINGPONG) {
      if (!(pv && pp_group() == 1 && pp_last)) turn_pass(1 - pp_group());
    }
  }
  __device__ __forceinline__ void turn_start() const {
    if constexpr (PINGPONG) {
      if (pp_group() == 1) turn_pass(0);
    }
  }
  __device__ __forceinline__ void turn_idle() const {
    turn_begin();
    turn_end(false);
    turn_begin();
    turn_end(true);
  }

  // S = Q K^T for the 64 rows of this warp's warpgroup; A = Q (registers or smem), B = K (smem).
  // WAIT = false leaves it in flight (PIPE_QK): the next wgmma wait completes it, then qk_complete().
  template <bool WAIT = true>
  __device__ __forceinline__ void wg_qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    turn_begin();
    kf::wgmma_fence();
    qk_mmas(sQ, sK, s);
    kf::wgmma_commit();
    turn_end(false);
    if constexpr (WAIT) {
      kf::wgmma_wait<0>();
      fence_acc(s[0]);
    }
  }
  __device__ __forceinline__ void qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    wg_qk(sQ, sK, s);
  }
  // The MMAs alone (no fence, commit, turn or wait): S = Q K^T, and O += P V
  __device__ __forceinline__ void qk_mmas(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    const unsigned q0 = kf::smem_u32(sQ) + (warp >> 2) * 64 * 128;  // 64 rows of 128 bytes per warpgroup
    const unsigned k0 = kf::smem_u32(sK);
#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      if constexpr (Q_REGS)
        WgS::template rs<false>(s[0], qf[0][kk], k_major<LayKV>(k0, kk), kk);
      else
        WgS::template ss<false>(s[0], k_major<LayQ>(q0, kk), k_major<LayKV>(k0, kk), kk);
    }
  }
  __device__ __forceinline__ void pv_mmas(const float (&s)[MT][NTN][4], const PPacked& pk, const elem_t* sV) {
    const unsigned v0 = kf::smem_u32(sV);
#pragma unroll
    for (int kk = 0; kk < BNW / 16; ++kk) {
      unsigned a[4];
      p_frag(a, s, pk, 0, kk);
      WgO::template rs<true>(o[0], a, kf::wgmma_desc(v0 + kk * 2 * LayKV::kRowGroupBytes, V_LBO,
                                                     LayKV::kRowGroupBytes), 1);
    }
  }
  // The start of a tile: Q K^T and the next tile's loads (issue), in LOAD_ORDER.
  template <class F>
  __device__ __forceinline__ void issue_and_qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4], F&& issue) {
    if constexpr (KF_DIAG_CUT == 2) {  // timing diagnostic, wrong output: no Q K^T (scores from the lane id)
#pragma unroll
      for (int n = 0; n < NTN; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) s[0][n][e] = (float)(lane + n + e);
      issue();
    } else if constexpr (LOAD_AFTER_QK) {
      wg_qk<false>(sQ, sK, s);
      issue();
      kf::wgmma_wait<0>();
      fence_acc(s[0]);
    } else {
      issue();
      qk(sQ, sK, s);
    }
  }
  // PIPE_QK: Q K^T of the next tile stays in flight while this tile's softmax runs (FA3's intra-warpgroup
  // overlap) and completes with P V's wait; qk_complete() then makes its scores readable.
  __device__ __forceinline__ void qk_issue(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    wg_qk<false>(sQ, sK, s);
  }
  __device__ __forceinline__ static void qk_complete(float (&s)[MT][NTN][4]) { fence_acc(s[0]); }

  // O += P V; A = P (registers), B = V (smem [keys][D], N-major): 16 keys = two 8-row groups per
  // step, 64-column blocks of D LayKV::kBlockBytes apart (LBO; unused when D is one block, 1024 as before).
  __device__ __forceinline__ void wg_pv(const float (&s)[MT][NTN][4], const PPacked& pk, const elem_t* sV) {
    fence_acc(o[0]);
    turn_begin();
    kf::wgmma_fence();
    pv_mmas(s, pk, sV);
    kf::wgmma_commit();
    turn_end(true);
    kf::wgmma_wait<0>();
    fence_acc(o[0]);
  }
  __device__ __forceinline__ void pv(const float (&s)[MT][NTN][4], const PPacked& pk, const elem_t* sV) {
#if KF_DIAG_CUT == 3  // timing diagnostic, wrong output: no P V (P kept live)
#pragma unroll
    for (int n = 0; n < NTN; ++n) asm volatile("" ::"r"(pk[0][n][0]), "r"(pk[0][n][1]));
#else
    wg_pv(s, pk, sV);
#endif
  }
};
#endif  // KF_MMA_WGMMA
