// The gemm family's Hopper path (MMA=wgmma, sm_90a): TMA loads into a STAGES-deep ring, warpgroup MMA,
// warp specialisation, optionally persistent CTAs.
//
// The block: CONSUMERS consumer warpgroups (threads 0 .. 128 * CONSUMERS - 1), then one producer warpgroup.
//   producer  one thread issues every TMA load: for each output tile this CTA owns, its K / 64 k-tiles of A
//             (BM x 64) and B (64 x BN) into the ring (gemm/gemm_ring.cuh), each slot as soon as the consumers
//             released it. The other 127 threads leave at once. With two consumer warpgroups the block
//             launches with 168 registers a thread; the producer drops to 40 and the consumers rise to 232
//             (setmaxnreg), so a consumer holds up to 192 accumulator registers (128 x 192 f32) without
//             spilling (ptxas allocates the consumer code for 232). One consumer warpgroup: 255 at launch.
//   consumer  warpgroup w owns rows w * BM / CONSUMERS .. of the tile (64 or 128 rows: one or two m64 wgmma
//             per k16 step) and all BN columns. Per k-tile: wait for the slot, four k16 steps of
//             wgmma m64nBNk16 (A K-major; B N-major, the trans-B form, where B is [K][N] row-major, or K-major
//             like A where it is stored [N][K]), commit,
//             then wait for the previous k-tile's group only (one group stays in flight under the next
//             slot's wait) and release the previous slot. After the last k-tile: registers -> C.
// Output tiles: tile t of ceil(M / BM) x ceil(N / BN) in the grouped raster order of common/gemm_tile_order.cuh
// (RASTER, GROUP); CTA x computes tiles x, x + gridDim.x, ...: one tile per CTA when the grid has one CTA per
// tile (PERSIST=0), or persistent CTAs (PERSIST=1, grid = SMs), whose producer loads the next tile's first
// k-tiles while the consumers finish and store the current one.
// CLUSTER=2: CTAs 2c and 2c + 1 form a thread-block cluster that computes tile-rows 2 tm' and 2 tm' + 1 of one
// tile-column (the tile order walks tiles of 2 BM x BN, one per cluster), so they read the same B tile: each
// loads half of it and multicasts it to both (gemm/gemm_ring.cuh), a third less L2 -> SM traffic a k-tile
// at BM = 128, BN = 256. A second tile-row past M computes zeros it does not store.
// SPLIT_K=S > 1 (few output tiles: the M = 1-64 rows of a decode step): the S CTAs of a cluster compute one
// tile, each over 1 / S of the k-tiles, and sum their partials through distributed shared memory
// (gemm/gemm_split_k.cuh); a plain grid of S x tiles CTAs.
// Tails: TMA reads zeros past M, N and K, so the MMA needs no masking; the stores are bounds-checked. The
// tensor maps need 16-byte row strides: K % 8 == 0 and N % 8 == 0 (the spec's constraints).
#pragma once
#if (defined(KF_CLUSTER) && KF_CLUSTER > 1) || (defined(KF_SPLIT_K) && KF_SPLIT_K > 1)
#define KF_USE_CLUSTER 1
#endif
#include "common/cluster_sm90.cuh"
#include "common/gemm_tile_order.cuh"
#include "common/warpgroup_sm90.cuh"
#include "common/wgmma_sm90_wide.cuh"
#include "gemm/gemm_ring.cuh"
#include "gemm/gemm_split_k.cuh"

#if !defined(KF_CONSUMERS) || !defined(KF_GROUP) || !defined(KF_CLUSTER) || !defined(KF_SPLIT_K)
#error "gemm_wgmma.cuh: a parameter #define is missing"
#endif

namespace kfgemm {

constexpr int BM = KF_BLOCK_M, BN = KF_BLOCK_N, BK = KF_BLOCK_K;
constexpr int STAGES = KF_STAGES;
constexpr int CONSUMERS = KF_CONSUMERS;
constexpr int WG_M = BM / CONSUMERS;  // rows of a consumer warpgroup
constexpr int MT = WG_M / 64;         // its m64 wgmma tiles
constexpr int NJ = BN / 8;            // n8 column groups of an accumulator
constexpr int THREADS = 128 * (CONSUMERS + 1);
constexpr int PRODUCER_REGS = CONSUMERS == 2 ? 40 : 0;   // 128 * 40 + 256 * 232 <= 64 Ki registers
constexpr int CONSUMER_REGS = CONSUMERS == 2 ? 232 : 0;  // (one consumer: 255 at launch already)
constexpr int GROUP = KF_GROUP;
constexpr int CLUSTER = KF_CLUSTER;  // CTAs of a multicast cluster along M
constexpr int SPLIT = KF_SPLIT_K;    // CTAs of a split-K cluster
constexpr int CL = CLUSTER * SPLIT;  // a cluster's CTAs (one of the two is 1)
#if defined(KF_RASTER_N)
constexpr bool ALONG_N = true;
#else
constexpr bool ALONG_N = false;
#endif

static_assert(BK == 64, "wgmma path: BLOCK_K is one 128-byte swizzle row of f16 (64)");
static_assert(CONSUMERS == 1 || CONSUMERS == 2, "one or two consumer warpgroups");
static_assert(WG_M == 64 || WG_M == 128, "a consumer warpgroup owns 64 or 128 rows");
static_assert(BN == 64 || BN == 128 || BN == 192 || BN == 256, "BLOCK_N: a wgmma n of 64, 128, 192 or 256");
static_assert(STAGES >= 2, "the ring needs two slots at least");
static_assert(CLUSTER == 1 || CLUSTER == 2, "a cluster of one or two CTAs");
static_assert(SPLIT == 1 || CLUSTER == 1, "a cluster multicasts or splits K, not both");
static_assert(MT * NJ * 4 <= 192, "accumulators: at most 192 registers per thread");

typedef kf::Wgmma<BN, IN_BF16> Mma;  // f16 or bf16 in, f32 accumulate
typedef kf::GemmRing<BM, BN, STAGES, 4 * CONSUMERS, B_NK, CLUSTER> Ring;
typedef kf::GemmTileOrder<GROUP, ALONG_N> TileOrder;
typedef kf::SplitKPartials<BM, BN, SPLIT> Partials;

// This CTA's walk over the output tiles: the tiles of CLUSTER * BM x BN that its cluster computes (cluster
// c of gridDim.x / CL takes tiles c, c + gridDim.x / CL, ...), in each its own tile-row (multicast) and its
// k-tiles kt0 .. kt1 - 1 (split K: rank r of S takes the r-th of S near-equal runs; a run may be empty).
struct TileWalk {
  TileOrder order;
  int first, step, kt0, kt1;
  unsigned rank;
  __device__ __forceinline__ TileWalk(int M, int N, int ktiles)
      : order(M, N, BM * CLUSTER, BN), first(blockIdx.x / CL), step(gridDim.x / CL), rank(kf::cluster_rank()) {
    const int per = (ktiles + SPLIT - 1) / SPLIT;
    kt0 = SPLIT > 1 ? min(ktiles, (int)rank * per) : 0;
    kt1 = SPLIT > 1 ? min(ktiles, kt0 + per) : ktiles;
  }
  // Tile t of the cluster's walk: this CTA's first row and column of C.
  __device__ __forceinline__ void at(int t, int& m0, int& n0) const {
    int tm, tn;
    order.at(t, tm, tn);
    m0 = (tm * CLUSTER + (CLUSTER > 1 ? (int)rank : 0)) * BM;
    n0 = tn * BN;
  }
  // This CTA's part of B in a multicast ring.
  __device__ __forceinline__ unsigned b_part() const { return CLUSTER > 1 ? rank : 0u; }
};

// The producer thread's whole program.
__device__ __forceinline__ void produce(const Ring& ring, const TileWalk& walk, const kf::TmaDesc& tmA,
                                        const kf::TmaDesc& tmB) {
  kf::tma_prefetch_desc(tmA);
  kf::tma_prefetch_desc(tmB);
  kf::RingPos<STAGES> p;
  for (int t = walk.first; t < walk.order.total; t += walk.step) {
    int m0, n0;
    walk.at(t, m0, n0);
    for (int kt = walk.kt0; kt < walk.kt1; ++kt) {
      ring.load(p, tmA, tmB, m0, n0, kt * BK, walk.b_part());
      p.advance();
    }
  }
}

// Two neighbouring outputs (col even; N % 8 == 0, so the pair is wholly inside C or outside it, and 4- (f16,
// bf16) or 8-byte (f32) aligned).
__device__ __forceinline__ void store_pair(out_t* __restrict__ c, float a, float b) {
#if defined(KF_DTYPE_F16)
  *reinterpret_cast<__half2*>(c) = __floats2half2_rn(a, b);
#elif defined(KF_DTYPE_BF16)
  *reinterpret_cast<__nv_bfloat162*>(c) = __floats2bfloat162_rn(a, b);
#else
  *reinterpret_cast<float2*>(c) = make_float2(a, b);
#endif
}

// The accumulators of one consumer warp: rows row0 + 64 mt + g (and + 8), columns col0 + 8 j + 2 t (and + 1) of
// the tile at (m0, n0), with g = lane / 4, t = lane % 4, handed to put(row, col, a, b) in tile coordinates.
template <class Put>
__device__ __forceinline__ void for_acc_pairs(const float (&acc)[MT][NJ][4], int row0, int lane, Put put) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int j = 0; j < NJ; ++j) put(row0 + mt * 64 + h * 8 + g, j * 8 + 2 * t, acc[mt][j][2 * h], acc[mt][j][2 * h + 1]);
}

// A consumer warpgroup's whole program.
__device__ __forceinline__ void consume(const Ring& ring, const TileWalk& walk, const Partials& partials,
                                        out_t* __restrict__ C, int M, int N, int tid) {
  if constexpr (CONSUMER_REGS > 0) kf::setmaxnreg_inc<CONSUMER_REGS>();
  const int wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
  const bool releaser = lane == 0;
  float acc[MT][NJ][4];
  kf::RingPos<STAGES> p;
  for (int t = walk.first; t < walk.order.total; t += walk.step) {
    int m0, n0;
    walk.at(t, m0, n0);
    int prev = 0;  // the slot of the k-tile before this one
    for (int kt = walk.kt0; kt < walk.kt1; ++kt) {
      const bool later = kt > walk.kt0;
      ring.wait_full(p);
      const unsigned long long da = ring.desc_a(p.slot, wg * WG_M), db = ring.desc_b(p.slot);
      kf::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          Mma::template ss<!B_NK>(acc[mt], da + Ring::a_step(kk, mt), db + Ring::b_step(kk), later || kk > 0);
      kf::wgmma_commit();
      kf::wgmma_wait<1>();  // the previous k-tile's MMAs are done with their slot
      ring.release(prev, releaser && later);
      prev = p.slot;
      p.advance();
    }
    kf::wgmma_wait<0>();
    ring.release(prev, releaser && walk.kt1 > walk.kt0);
    if (walk.kt1 == walk.kt0)  // (split K: a run with no k-tiles adds zeros)
#pragma unroll
      for (int mt = 0; mt < MT; ++mt)
#pragma unroll
        for (int j = 0; j < NJ; ++j)
#pragma unroll
          for (int e = 0; e < 4; ++e) acc[mt][j][e] = 0.f;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) kf::fence_operand(acc[mt][j][e]);
    const auto to_c = [&](int row, int col, float a, float b) {
      if (m0 + row < M && n0 + col < N) store_pair(C + (size_t)(m0 + row) * N + n0 + col, a, b);
    };
    if constexpr (SPLIT == 1) {
      for_acc_pairs(acc, wg * WG_M + warp * 16, lane, to_c);
    } else {  // one tile per cluster (PERSIST=0): the ring is idle, every load consumed
      for_acc_pairs(acc, wg * WG_M + warp * 16, lane,
                    [&](int row, int col, float a, float b) { partials.put(row, col, a, b); });
      kf::cluster_sync_all();
      partials.template reduce<128 * CONSUMERS>(walk.rank, tid,
                                                [&](int row, int col, float2 s) { to_c(row, col, s.x, s.y); });
    }
  }
}

}  // namespace kfgemm

using namespace kfgemm;

#if KF_USE_CLUSTER
#define KF_GEMM_CLUSTER_ATTR __cluster_dims__(CL, 1, 1)
#else
#define KF_GEMM_CLUSTER_ATTR
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1) KF_GEMM_CLUSTER_ATTR
    gemm_kernel(const in_t* __restrict__ A, const in_t* __restrict__ B, out_t* __restrict__ C, int M, int N,
                int K, const __grid_constant__ kf::TmaDesc tmA, const __grid_constant__ kf::TmaDesc tmB) {
  (void)A, (void)B;  // read through the tensor maps
  extern __shared__ __align__(1024) unsigned char smem[];
  // swizzle atoms sit on 1024-byte boundaries (the spec adds 1024 bytes of slack)
  const unsigned base = (kf::smem_u32(smem) + 1023u) & ~1023u;
  const Ring ring(base);
  const Partials partials{reinterpret_cast<float*>(smem + (base - kf::smem_u32(smem)))};
  const int tid = threadIdx.x;
  if (tid == 0) ring.init_barriers();
  __syncthreads();  // the barriers exist before anyone waits on them; no CTA barrier follows
  kf::cluster_sync_relaxed();  // (a cluster) and before a peer multicasts into this CTA or arrives on them
  const TileWalk walk(M, N, (K + BK - 1) / BK);
  if (tid >= 128 * CONSUMERS) {
    if constexpr (PRODUCER_REGS > 0) kf::setmaxnreg_dec<PRODUCER_REGS>();
    if (tid == 128 * CONSUMERS) produce(ring, walk, tmA, tmB);
    return;  // (the peers' loads into this CTA are all for tiles its consumers wait for)
  }
  consume(ring, walk, partials, C, M, N, tid);
  // A cluster: the peers' consumers arrive on this CTA's empty barriers until their last k-tile (multicast)
  // or read its partial (split K); its smem lives until they are done (a cluster barrier waits for the
  // threads that have not exited).
  kf::cluster_sync_relaxed();
}
