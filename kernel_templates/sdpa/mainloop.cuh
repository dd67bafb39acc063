// One key tile of the mma-fragment paths: S = Q K^T (the path's GEMM), mask, online softmax in the base-2
// domain, O += P V. tile() is called by all threads once the tile is resident in shared memory; it calls
// issue() (the next tile's loads) once, before its MMAs or (LOAD_ORDER=after_qk) after Q K^T is issued.
#pragma once
#include "sdpa/gemm_mma.cuh"
#include "sdpa/gemm_wgmma.cuh"
// (the inliner inlines a file once, where it first appears, whatever #if surrounds it: includes stay unconditional)
#if defined(KF_MMA_WGMMA)
typedef WgmmaGemm Gemm;
#else
typedef MmaGemm Gemm;
#endif

struct Path : Gemm {
  template <bool MASK, class F>
  __device__ __forceinline__ void tile(const elem_t* sQ, const elem_t* sK, const elem_t* sV, int n0, int diag0, int S,
                                       float sl2, F&& issue) {
    if constexpr (WN > 1 && !WN_RANGE) {  // this key group's part of the tile
      sK += wn * BNW * LayKV::kRowStep;
      sV += wn * BNW * LayKV::kRowStep;
      n0 += wn * BNW;
    }
    float s[MT][NTN][4];
    this->issue_and_qk(sQ, sK, s, issue);
    softmax_pv<MASK>(s, sV, n0, diag0, S, sl2);
  }

  // mask, online softmax, O += P V for one tile whose scores are in s
  template <bool MASK>
  __device__ __forceinline__ void softmax_pv(float (&s)[MT][NTN][4], const elem_t* sV, int n0, int diag0, int S,
                                             float sl2) {
    PPacked pk;  // P as 16-bit pairs (P_EARLY)
    float al[MT][2];
    softmax<MASK>(s, pk, al, n0, diag0, S, sl2);
    rescale(al);
    wait_v_of(pipe, sV);  // KV_WAIT=split: V of this tile
    this->pv(s, pk, sV);
  }

  // Mask and online softmax of one tile's scores s (keys n0..): P packed into pk (PACK) or left in s, the
  // rows' running max and sum updated; al = each row's rescale factor for O (alpha; 1 when its max held).
  template <bool MASK, bool PACK = P_EARLY>
  __device__ __forceinline__ void softmax(float (&s)[MT][NTN][4], PPacked& pk, float (&al)[MT][2], int n0, int diag0,
                                          int S, float sl2) {
    static_assert(!EXP2_PAIR || PACK, "EXP2=pair produces P packed");
    const int g = lane >> 2, t = lane & 3;
    if constexpr (MASK) {
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int n = 0; n < NTN; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int col = n0 + n * 8 + 2 * t + (e & 1);
            int diag = diag0 + warp * RPW + mt * 16 + g + (e >> 1) * 8;  // the row's last visible key
            if constexpr (GQA_PACK) diag = diag % this->q_rows + this->q_off;  // (diag0: the packed row)
            bool masked = col >= S;
            if (CAUSAL) masked = masked || col > diag;
            if (masked) s[mt][n][e] = KF_NEG_INF;
          }
    }

    // online softmax, P kept in the score registers
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = KF_NEG_INF;
#pragma unroll
        for (int n = 0; n < NTN; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * r], s[mt][n][2 * r + 1]));
        mx = kf::quad_max(mx);
        if (KF_DIAG_CUT == 4) mx = s[mt][0][2 * r];  // timing diagnostic, wrong output: no row max
        float m_use;
        const float alpha = row[mt][r].update(mx, sl2, m_use);
        float rs = 0.f;
#pragma unroll
        for (int n = 0; n < NTN; ++n) {
          if constexpr (EXP2_PAIR) {
            const unsigned p = TR::exp2_pair(
                TR::pack2(fmaf(s[mt][n][2 * r], sl2, -m_use), fmaf(s[mt][n][2 * r + 1], sl2, -m_use)));
            pk[mt][n][r] = p;
            const float2 pf = TR::unpack2(p);  // the sum uses the P that P V sees
            rs += pf.x + pf.y;
            continue;
          }
#if KF_DIAG_CUT == 1  // timing diagnostic, wrong output: no exp2
          const float p0 = fmaf(s[mt][n][2 * r], sl2, -m_use), p1 = fmaf(s[mt][n][2 * r + 1], sl2, -m_use);
#else
          const float p0 = kf::fast_exp2(fmaf(s[mt][n][2 * r], sl2, -m_use));
          const float x1 = fmaf(s[mt][n][2 * r + 1], sl2, -m_use);
          const float p1 = (EXP2_POLY && (n & 1)) ? kf::poly_exp2(x1) : kf::fast_exp2(x1);
#endif
          if constexpr (PACK) {
            pk[mt][n][r] = TR::pack2(p0, p1);
          } else {
            s[mt][n][2 * r] = p0;
            s[mt][n][2 * r + 1] = p1;
          }
          rs += p0 + p1;
        }
        row[mt][r].l = row[mt][r].l * alpha + rs;
        al[mt][r] = alpha;
      }
    }
  }

  // P left in s (softmax<MASK, false>) packed into pk
  __device__ __forceinline__ static void pack(const float (&s)[MT][NTN][4], PPacked& pk) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int n = 0; n < NTN; ++n)
#pragma unroll
        for (int r = 0; r < 2; ++r) pk[mt][n][r] = TR::pack2(s[mt][n][2 * r], s[mt][n][2 * r + 1]);
  }

  // O *= alpha per row; alpha == 1 exactly when the row max did not move: LAZY_RESCALE's warp-uniform vote
  // skips the pass then
  __device__ __forceinline__ void rescale(const float (&al)[MT][2]) {
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      if (!KF_LAZY_RESCALE || __any_sync(0xffffffffu, al[mt][0] != 1.f || al[mt][1] != 1.f)) {
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
          for (int d = 0; d < NTD; ++d) {
            o[mt][d][2 * r] *= al[mt][r];
            o[mt][d][2 * r + 1] *= al[mt][r];
          }
      }
    }
  }
};
