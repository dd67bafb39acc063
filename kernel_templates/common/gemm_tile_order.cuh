// The order in which a GEMM's output tiles are computed: tile t = 0 .. total - 1 of a grid of
// tiles_m x tiles_n tiles of C. CTAs that run at the same time take consecutive t (a plain grid in
// blockIdx order, or persistent CTAs x, x + gridDim.x, ...), so the order decides which rows of A and
// columns of B are read at once, and how much of them L2 holds for the neighbours.
//
// Grouped raster (Triton's and CUTLASS's swizzle): the tiles are cut into bands of GROUP tile-rows
// (ALONG_N false) and each band is walked column by column, down the band first: t, t + 1, ... share a
// column of tiles of B and GROUP tile-rows of A, so a wave of W CTAs reads GROUP tile-rows of A and
// about W / GROUP tile-columns of B instead of one tile-row of A and W columns of B. ALONG_N swaps the
// roles (bands of GROUP tile-columns, walked row by row). GROUP 1 is the plain row-major (ALONG_N false)
// or column-major order. The last band may be narrower.
#pragma once

namespace kf {

template <int GROUP, bool ALONG_N>
struct GemmTileOrder {
  static_assert(GROUP >= 1, "GROUP >= 1");
  int tiles_m, tiles_n, total;

  __device__ __forceinline__ GemmTileOrder(int M, int N, int BM, int BN) {
    tiles_m = (M + BM - 1) / BM;
    tiles_n = (N + BN - 1) / BN;
    total = tiles_m * tiles_n;
  }
  // Tile t's row tm (of tiles_m) and column tn (of tiles_n).
  __device__ __forceinline__ void at(int t, int& tm, int& tn) const {
    const int major = ALONG_N ? tiles_n : tiles_m;  // the dimension cut into bands
    const int minor = ALONG_N ? tiles_m : tiles_n;
    const int band = GROUP * minor;                  // tiles per full band
    const int first = (t / band) * GROUP;            // first tile-row (column) of t's band
    const int width = min(major - first, GROUP);     // tile-rows (columns) in this band
    const int in_band = t - (t / band) * band;
    const int a = first + in_band % width, b = in_band / width;
    tm = ALONG_N ? b : a;
    tn = ALONG_N ? a : b;
  }
};

}  // namespace kf
