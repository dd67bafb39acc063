// The mma.sync path's two GEMMs (sm_80+): S = Q K^T and O += P V per warp, B fragments by ldmatrix from
// the K / V tiles in shared memory, Q's A fragments from registers (Q_IN=regs) or smem.
#pragma once
#include "sdpa/path_state.cuh"

struct MmaGemm : PathState {
  // S = Q K^T for one tile (this warp's key group)
  __device__ __forceinline__ void qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    const int ln = fresh_lane();
    const int k_row = kf::lm_bn_row(ln), k_col = kf::lm_bn_col(ln), k_lane = LayKV::off(k_row, k_col);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < NTN; ++n) s[mt][n][0] = s[mt][n][1] = s[mt][n][2] = s[mt][n][3] = 0.f;

#pragma unroll
    for (int kk = 0; kk < HD / 16; ++kk) {
      unsigned a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) {
        if constexpr (Q_REGS) {
#pragma unroll
          for (int i = 0; i < 4; ++i) a[mt][i] = qf[mt][kk][i];
        } else {
          load_q_frag(a[mt], sQ, mt, kk, ln);
        }
      }
#pragma unroll
      for (int np = 0; np < BNW / 16; ++np) {
        unsigned b0, b1, b2, b3;
        kf::ldmatrix_x4(b0, b1, b2, b3, sK + frag_off<LayKV>(k_lane, k_row, k_col, np * 16, kk * 16));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          kf::mma_16816<TR::is_bf16>(s[mt][2 * np], a[mt], b0, b1);
          kf::mma_16816<TR::is_bf16>(s[mt][2 * np + 1], a[mt], b2, b3);
        }
      }
    }
  }
  // The start of a tile: the next tile's loads (issue), then Q K^T.
  template <class F>
  __device__ __forceinline__ void issue_and_qk(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4], F&& issue) {
    issue();
    qk(sQ, sK, s);
  }
  // PIPE_QK: Q K^T of the next tile, an ordinary qk() here (on wgmma it stays in flight).
  __device__ __forceinline__ void qk_issue(const elem_t* sQ, const elem_t* sK, float (&s)[MT][NTN][4]) const {
    qk(sQ, sK, s);
  }
  __device__ __forceinline__ static void qk_complete(float (&)[MT][NTN][4]) {}

  // O += P V for one tile, P from the scores (or packed P)
  __device__ __forceinline__ void pv(const float (&s)[MT][NTN][4], const PPacked& pk, const elem_t* sV) {
    const int ln = fresh_lane();
    const int v_row = kf::lm_bt_row(ln), v_col = kf::lm_bt_col(ln), v_lane = LayKV::off(v_row, v_col);
#pragma unroll
    for (int kk = 0; kk < BNW / 16; ++kk) {
      unsigned a[MT][4];
#pragma unroll
      for (int mt = 0; mt < MT; ++mt) p_frag(a[mt], s, pk, mt, kk);
#pragma unroll
      for (int dp = 0; dp < HD / 16; ++dp) {
        unsigned b0, b1, b2, b3;
        kf::ldmatrix_x4_trans(b0, b1, b2, b3, sV + frag_off<LayKV>(v_lane, v_row, v_col, kk * 16, dp * 16));
#pragma unroll
        for (int mt = 0; mt < MT; ++mt) {
          kf::mma_16816<TR::is_bf16>(o[mt][2 * dp], a[mt], b0, b1);
          kf::mma_16816<TR::is_bf16>(o[mt][2 * dp + 1], a[mt], b2, b3);
        }
      }
    }
  }
  // no turns on mma.sync (WN_KEYS=pingpong and WG_PINGPONG are wgmma's)
  bool pp_last = false;
  __device__ __forceinline__ void turn_start() const {}
  __device__ __forceinline__ void turn_idle() const {}
};
