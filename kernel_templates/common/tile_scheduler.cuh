// Which work a CTA of an attention forward kernel owns: one query block of BM rows of one head, and
// (split-KV) one contiguous slice of its key tiles. The grid is (query blocks * KS, H, B); the KS CTAs of
// one query block are adjacent in x (a cluster merges them). Causal: the heavy (late) query blocks are
// scheduled first, so the short ones fill the tail of the wave.
// Queries and keys may differ in number (a KV cache: Sq new rows against Skv keys). A causal mask is aligned
// bottom-right, as FlashAttention-2 and cuDNN align it: query row i sees keys 0 .. i + off, off = Skv - Sq
// (the callers require Sq <= Skv when causal, so every row sees at least one key).
#pragma once

namespace kf {

// The first key tile a query block must mask: past the causal diagonal of its first row (at key `diag0`: the
// row plus off), or past the Skv keys.
template <int BN, bool CAUSAL>
__device__ __forceinline__ int first_masked_tile(int diag0, int Skv) {
  int first = Skv / BN;
  if (CAUSAL) first = min(first, diag0 / BN);
  return first;
}

template <int BM, int BN, int KS, bool CAUSAL, int MC>
struct AttnBlock {
  int nblk;   // query blocks in the grid (a multiple of MC)
  int bx;     // this CTA's position in the launch order
  int split;  // its key slice, 0 .. KS - 1
  int mblk;   // its query block
  int m0;     // first query row
  int t0;     // first key tile of its slice
  int ntiles; // key tiles in its slice (a slice may get none: m = -inf, l = 0 is a valid partial)

  // The query block (no loads: the caller's own index arithmetic may follow).
  __device__ __forceinline__ void init() {
    nblk = (int)gridDim.x / KS;
    bx = (int)blockIdx.x / KS;
    split = KS == 1 ? 0 : (int)blockIdx.x % KS;
    mblk = CAUSAL ? nblk - 1 - bx : bx;
    m0 = mblk * BM;
  }
  // The key slice, for Skv keys whose causal diagonal is off keys past the query rows'.
  __device__ __forceinline__ void slice_keys(int Skv, int off) {
    int n_end = CAUSAL ? min(Skv, m0 + BM + off) : Skv;
    // KV_MCAST: a cluster of MC query blocks streams the tiles of its longest block (its first, heavy-first);
    // the others mask the extra keys away
    if (CAUSAL && MC > 1) n_end = min(Skv, (nblk - (bx / MC) * MC) * BM + off);
    const int ntiles_all = (n_end + BN - 1) / BN;
    const int per = (ntiles_all + KS - 1) / KS;
    t0 = min(split * per, ntiles_all);
    ntiles = min(t0 + per, ntiles_all) - t0;
  }
  // The first key tile that needs masking (first_masked_tile below).
  __device__ __forceinline__ int first_masked_tile(int Skv, int off) const {
    return kf::first_masked_tile<BN, CAUSAL>(m0 + off, Skv);
  }
};

// A persistent CTA's work tiles: every (query block, head) pair, numbered w = 0 .. total - 1; CTA x takes one
// in each pass of gridDim.x (nth). A head's query blocks are neighbours, so the CTAs running at once share few
// heads' K/V in L2; causal: within a head the heaviest (last) query block comes first, as in the plain grid's
// order. (All heads' heaviest blocks first was 1.39x slower at B16 H16 S1024 D128 causal: 132 CTAs on 132
// heads read 67 MB of K/V at once, more than the L2 holds.)
// Query heads share K/V heads in groups of G = H / Hkv (grouped-query attention; G = 1: multi-head).
template <int BM, int BN, bool CAUSAL>
struct PersistentWork {
  int nblk, heads, total;
  int Skv, off, H, G;  // keys, their causal offset (Skv - Sq), query heads, query heads per K/V head
  __device__ __forceinline__ PersistentWork(int Sq, int Skv_, int H_, int Hkv, int B) {
    nblk = (Sq + BM - 1) / BM;
    heads = H_ * B;
    total = nblk * heads;
    Skv = Skv_;
    off = Skv_ - Sq;
    H = H_;
    G = H_ / Hkv;
  }
  // This CTA's k-th work tile. Passes of gridDim.x tiles; causal: odd passes run in reverse, so the two tiles a
  // CTA takes in a pair of passes add up to about the same number of key tiles for every CTA. (A plain stride
  // unbalances them: 132 CTAs over 8 query blocks a head, 132 = 4 mod 8, gives some CTAs blocks 7 and 3, 12 key
  // tiles a pair, and others blocks 4 and 0, 6 a pair; in reverse every pair costs 9.)
  __device__ __forceinline__ int nth(int k) const {
    const int g = (int)gridDim.x, x = (int)blockIdx.x;
    return k * g + (CAUSAL && (k & 1) ? g - 1 - x : x);
  }
  // work tile w: its query block's first row, its query head (b * H + h), its K/V head (b * Hkv + h / G) and its
  // key tiles
  __device__ __forceinline__ void at(int w, int& m0, int& bh, int& kvh, int& ntiles) const {
    const int mblk = CAUSAL ? nblk - 1 - w % nblk : w % nblk;
    bh = w / nblk;
    kvh = bh / G;  // (b * H + h) / G = b * Hkv + h / G, as G divides H
    m0 = mblk * BM;
    const int n_end = CAUSAL ? min(Skv, m0 + BM + off) : Skv;
    ntiles = (n_end + BN - 1) / BN;
  }
  __device__ __forceinline__ int first_masked_tile(int m0) const { return kf::first_masked_tile<BN, CAUSAL>(m0 + off, Skv); }
};

// Key group g of G over a slice of n tiles from t0: its own contiguous range [first, first + count), per
// tiles each (the last groups may get fewer, or none).
struct KeyRange {
  int per, first, count;
  __device__ __forceinline__ KeyRange(int t0, int n, int g, int G) {
    per = (n + G - 1) / G;
    first = t0 + min(g * per, n);
    count = t0 + min((g + 1) * per, n) - first;
  }
};

}  // namespace kf
