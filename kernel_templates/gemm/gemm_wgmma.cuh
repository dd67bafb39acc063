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
// Tails: TMA reads zeros past M, N and K, so the MMA needs no masking; the stores are bounds-checked. The
// tensor maps need 16-byte row strides: K % 8 == 0 and N % 8 == 0 (the spec's constraints).
#pragma once
#if defined(KF_CLUSTER) && KF_CLUSTER > 1
#define KF_USE_CLUSTER 1
#endif
#include "common/cluster_sm90.cuh"
#include "common/gemm_tile_order.cuh"
#include "common/warpgroup_sm90.cuh"
#include "common/wgmma_sm90_wide.cuh"
#include "gemm/gemm_ring.cuh"

#if !defined(KF_CONSUMERS) || !defined(KF_GROUP) || !defined(KF_CLUSTER)
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
static_assert(MT * NJ * 4 <= 192, "accumulators: at most 192 registers per thread");

typedef kf::Wgmma<BN, IN_BF16> Mma;  // f16 or bf16 in, f32 accumulate
typedef kf::GemmRing<BM, BN, STAGES, 4 * CONSUMERS, B_NK, CLUSTER> Ring;
typedef kf::GemmTileOrder<GROUP, ALONG_N> TileOrder;

// This CTA's walk over the output tiles: the tiles of CLUSTER * BM x BN that its cluster computes (cluster
// c of gridDim.x / CLUSTER takes tiles c, c + gridDim.x / CLUSTER, ...), and in each its own tile-row.
struct TileWalk {
  TileOrder order;
  int first, step;
  unsigned rank;
  __device__ __forceinline__ TileWalk(int M, int N)
      : order(M, N, BM * CLUSTER, BN),
        first(blockIdx.x / CLUSTER),
        step(gridDim.x / CLUSTER),
        rank(kf::cluster_rank()) {}
  // Tile t of the cluster's walk: this CTA's first row and column of C.
  __device__ __forceinline__ void at(int t, int& m0, int& n0) const {
    int tm, tn;
    order.at(t, tm, tn);
    m0 = (tm * CLUSTER + (int)rank) * BM;
    n0 = tn * BN;
  }
};

// The producer thread's whole program.
__device__ __forceinline__ void produce(const Ring& ring, const TileWalk& walk, int ktiles, const kf::TmaDesc& tmA,
                                        const kf::TmaDesc& tmB) {
  kf::tma_prefetch_desc(tmA);
  kf::tma_prefetch_desc(tmB);
  kf::RingPos<STAGES> p;
  for (int t = walk.first; t < walk.order.total; t += walk.step) {
    int m0, n0;
    walk.at(t, m0, n0);
    for (int kt = 0; kt < ktiles; ++kt) {
      ring.load(p, tmA, tmB, m0, n0, kt * BK, walk.rank);
      p.advance();
    }
  }
}

// The accumulators of one consumer warp (rows row0 + 64 mt + g, + 8; columns col0 + 8 j + 2 t, + 1, with
// g = lane / 4, t = lane % 4) -> C, one pair per store. N % 8 == 0 and col is even, so a pair is wholly
// inside or outside C, and 4- (f16, bf16) or 8-byte (f32) aligned.
__device__ __forceinline__ void store_acc(const float (&acc)[MT][NJ][4], out_t* __restrict__ C, int M, int N,
                                          int row0, int col0, int lane) {
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int mt = 0; mt < MT; ++mt)
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const int row = row0 + mt * 64 + h * 8 + g;
      if (row >= M) continue;
      out_t* __restrict__ crow = C + (size_t)row * N;
#pragma unroll
      for (int j = 0; j < NJ; ++j) {
        const int col = col0 + j * 8 + 2 * t;
        if (col < N) {
#if defined(KF_DTYPE_F16)
          *reinterpret_cast<__half2*>(crow + col) = __floats2half2_rn(acc[mt][j][2 * h], acc[mt][j][2 * h + 1]);
#elif defined(KF_DTYPE_BF16)
          *reinterpret_cast<__nv_bfloat162*>(crow + col) = __floats2bfloat162_rn(acc[mt][j][2 * h], acc[mt][j][2 * h + 1]);
#else
          *reinterpret_cast<float2*>(crow + col) = make_float2(acc[mt][j][2 * h], acc[mt][j][2 * h + 1]);
#endif
        }
      }
    }
}

// A consumer warpgroup's whole program.
__device__ __forceinline__ void consume(const Ring& ring, const TileWalk& walk, int ktiles, out_t* __restrict__ C,
                                        int M, int N, int tid) {
  if constexpr (CONSUMER_REGS > 0) kf::setmaxnreg_inc<CONSUMER_REGS>();
  const int wg = tid >> 7, warp = (tid >> 5) & 3, lane = tid & 31;
  const bool releaser = lane == 0;
  float acc[MT][NJ][4];
  kf::RingPos<STAGES> p;
  for (int t = walk.first; t < walk.order.total; t += walk.step) {
    int m0, n0;
    walk.at(t, m0, n0);
    int prev = 0;  // the slot of the k-tile before this one
    for (int kt = 0; kt < ktiles; ++kt) {
      ring.wait_full(p);
      const unsigned long long da = ring.desc_a(p.slot, wg * WG_M), db = ring.desc_b(p.slot);
      kf::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < BK / 16; ++kk)
#pragma unroll
        for (int mt = 0; mt < MT; ++mt)
          Mma::template ss<!B_NK>(acc[mt], da + Ring::a_step(kk, mt), db + Ring::b_step(kk), kt > 0 || kk > 0);
      kf::wgmma_commit();
      kf::wgmma_wait<1>();  // the previous k-tile's MMAs are done with their slot
      ring.release(prev, releaser && kt > 0);
      prev = p.slot;
      p.advance();
    }
    kf::wgmma_wait<0>();
    ring.release(prev, releaser);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt)
#pragma unroll
      for (int j = 0; j < NJ; ++j)
#pragma unroll
        for (int e = 0; e < 4; ++e) kf::fence_operand(acc[mt][j][e]);
    store_acc(acc, C, M, N, m0 + wg * WG_M + warp * 16, n0, lane);
  }
}

}  // namespace kfgemm

using namespace kfgemm;

#if KF_USE_CLUSTER
#define KF_GEMM_CLUSTER_ATTR __cluster_dims__(CLUSTER, 1, 1)
#else
#define KF_GEMM_CLUSTER_ATTR
#endif

extern "C" __global__ void __launch_bounds__(THREADS, 1) KF_GEMM_CLUSTER_ATTR
    gemm_kernel(const in_t* __restrict__ A, const in_t* __restrict__ B, out_t* __restrict__ C, int M, int N,
                int K, const __grid_constant__ kf::TmaDesc tmA, const __grid_constant__ kf::TmaDesc tmB) {
  (void)A, (void)B;  // read through the tensor maps
  extern __shared__ __align__(1024) unsigned char smem[];
  // swizzle atoms sit on 1024-byte boundaries (the spec adds 1024 bytes of slack)
  const Ring ring((kf::smem_u32(smem) + 1023u) & ~1023u);
  const int tid = threadIdx.x;
  if (tid == 0) ring.init_barriers();
  __syncthreads();  // the barriers exist before anyone waits on them; no CTA barrier follows
  kf::cluster_sync_relaxed();  // (a cluster) and before a peer multicasts into this CTA or arrives on them
  const TileWalk walk(M, N);
  const int ktiles = (K + BK - 1) / BK;
  if (tid >= 128 * CONSUMERS) {
    if constexpr (PRODUCER_REGS > 0) kf::setmaxnreg_dec<PRODUCER_REGS>();
    if (tid == 128 * CONSUMERS) produce(ring, walk, ktiles, tmA, tmB);
    return;  // (the peers' loads into this CTA are all for tiles its consumers wait for)
  }
  consume(ring, walk, ktiles, C, M, N, tid);
  // A cluster: the peers' consumers arrive on this CTA's empty barriers until their last k-tile; its smem
  // lives until they are done (a cluster barrier waits for the threads that have not exited).
  kf::cluster_sync_relaxed();
}
