// sdpa_basic's WMMA path (nvcuda::wmma, sm_70+): each warp owns RPW query rows; S = Q K^T goes through a shared
// fp32 tile, the softmax runs row by row with the lanes across the keys, P goes back to smem as 16-bit, and O is
// accumulated in a shared fp32 tile by wmma.
#pragma once
#include "common/online_softmax.cuh"

#if defined(KF_MMA_WMMA)
#include "common/wmma_helpers.cuh"  // (only here: inlined once, inside this #if)
static_assert(RPW % 16 == 0, "wmma path: rows per warp must be a multiple of 16");
static_assert(Lay::kWmmaOk, "wmma path needs a plain or padded layout");
constexpr int MT = RPW / 16;
constexpr int SLD = BN + 4;  // fp32 score row stride
constexpr int PLD = BN + 8;  // 16-bit P row stride
constexpr int OLD = HD + 4;  // fp32 O row stride
constexpr int EXTRA_SMEM = BM * (SLD * 4 + PLD * 2 + OLD * 4);  // the S, P and O tiles (the spec's smem_bytes)

struct Path {
  float* sS;
  elem_t* sP;
  float* sO;
  float m[RPW], l[RPW];
  int warp, lane;

  __device__ __forceinline__ void init(int w, int ln) {
    warp = w;
    lane = ln;
  }
  __device__ __forceinline__ void set_scratch(unsigned char* base, elem_t* sQ) {
    sS = reinterpret_cast<float*>(base);
    sP = reinterpret_cast<elem_t*>(sS + BM * SLD);
    sO = reinterpret_cast<float*>(sP + BM * PLD);
    for (int i = lane; i < RPW * OLD; i += 32) sO[warp * RPW * OLD + i] = 0.f;
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      m[r] = KF_NEG_INF;
      l[r] = 0.f;
    }
    __syncwarp();
  }
  __device__ __forceinline__ void q_to_regs(const elem_t*) {}

  template <bool MASK, class F>
  __device__ __forceinline__ void tile(const elem_t* sQ, const elem_t* sK, const elem_t* sV, int n0, int m0, int S,
                                       float sl2, F&& issue) {
    using namespace kf;
    issue();
    const int rw = warp * RPW;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int nt = 0; nt < BN / 16; ++nt) {
        frag_acc acc;
        wm::fill_fragment(acc, 0.f);
#pragma unroll
        for (int kk = 0; kk < HD / 16; ++kk) {
          frag_a_row<elem_t> a;
          frag_b_col<elem_t> b;
          wm::load_matrix_sync(a, sQ + (rw + mt * 16) * ROWE + kk * 16, ROWE);
          wm::load_matrix_sync(b, sK + (nt * 16) * ROWE + kk * 16, ROWE);
          wm::mma_sync(acc, a, b, acc);
        }
        wm::store_matrix_sync(sS + (rw + mt * 16) * SLD + nt * 16, acc, SLD, wm::mem_row_major);
      }
    }
    __syncwarp();
    // softmax row by row, the warp's lanes across the columns
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int rl = rw + r;
      float v[BN / 32 > 0 ? (BN + 31) / 32 : 1];
      float mx = KF_NEG_INF;
#pragma unroll
      for (int i = 0; i < (BN + 31) / 32; ++i) {
        const int c = lane + 32 * i;
        float x = KF_NEG_INF;
        if (c < BN) {
          x = sS[rl * SLD + c];
          if (MASK) {
            const int col = n0 + c;
            if (col >= S || (CAUSAL && col > m0 + rl)) x = KF_NEG_INF;
          }
        }
        v[i] = x;
        mx = fmaxf(mx, x);
      }
      mx = warp_max(mx);
      float m_new = fmaxf(m[r], mx * sl2);
      float m_use = m_new == KF_NEG_INF ? 0.f : m_new;
      const float alpha = fast_exp2(m[r] - m_use);
      m[r] = m_new;
      float rs = 0.f;
#pragma unroll
      for (int i = 0; i < (BN + 31) / 32; ++i) {
        const int c = lane + 32 * i;
        if (c < BN) {
          const float p = fast_exp2(fmaf(v[i], sl2, -m_use));
          const elem_t pe = TR::from_float(p);
          sP[rl * PLD + c] = pe;
          rs += TR::to_float(pe);
        }
      }
      l[r] = l[r] * alpha + warp_sum(rs);
      for (int c = lane; c < HD; c += 32) sO[rl * OLD + c] *= alpha;
    }
    __syncwarp();
    wait_v();
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
#pragma unroll
      for (int dt = 0; dt < HD / 16; ++dt) {
        frag_acc acc;
        float* op = sO + (rw + mt * 16) * OLD + dt * 16;
        wm::load_matrix_sync(acc, op, OLD, wm::mem_row_major);
#pragma unroll
        for (int kk = 0; kk < BN / 16; ++kk) {
          frag_a_row<elem_t> a;
          frag_b_row<elem_t> b;
          wm::load_matrix_sync(a, sP + (rw + mt * 16) * PLD + kk * 16, PLD);
          wm::load_matrix_sync(b, sV + (kk * 16) * ROWE + dt * 16, ROWE);
          wm::mma_sync(acc, a, b, acc);
        }
        wm::store_matrix_sync(op, acc, OLD, wm::mem_row_major);
      }
    }
    __syncwarp();
  }

  __device__ __forceinline__ void store(elem_t*, elem_t* __restrict__ Oh, int m0, int S) {
#pragma unroll
    for (int r = 0; r < RPW; ++r) {
      const int rl = warp * RPW + r;
      const int gr = m0 + rl;
      const float inv = l[r] > 0.f ? 1.f / l[r] : 0.f;
      if (gr < S)
        for (int c = 2 * lane; c < HD; c += 64) {
          *reinterpret_cast<unsigned*>(Oh + (size_t)gr * HD + c) =
              TR::pack2(sO[rl * OLD + c] * inv, sO[rl * OLD + c + 1] * inv);
        }
    }
  }
};
#endif  // KF_MMA_WMMA
