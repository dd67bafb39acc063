// Shared-memory layouts for row-major tiles of COLS 16-bit elements per row.
//   PlainLayout:    row * COLS + col                       (bank conflicts on column access)
//   PaddedLayout:   row * (COLS + 8) + col                 (one 16-byte pad per row)
//   SwizzledLayout: 16-byte chunk index XOR (row & 7)      (no padding, conflict-free ldmatrix)
//   Sw128Layout:    the same swizzle in 8-row x 64-column atoms of 1024 bytes, for a tile of ROWS rows:
//                   64-column blocks one after the other, each ROWS x 128 bytes ([col / 64][row][64]),
//                   the 128-byte-swizzle layout wgmma reads (common/wgmma_sm90.cuh) and the layout in which
//                   one TMA box of 64 columns x ROWS rows lands per block (CuTe's tile_to_shape of the
//                   atom, column blocks outermost). Equal to SwizzledLayout when COLS == 64.
// In every layout off(row + 8 k, col) == off(row, col) + 8 k * kRowStep (kRowStep == kRowElems except in
// Sw128Layout, whose rows are 64 elements apart inside a block).
// off(row, col) is in elements; col must keep 16-byte chunks intact (col % 8 + width <= 8).
// add_col(off(row, c), c0) == off(row, c + c0) for c < 16 and c0 % 16 == 0: one ALU op per
// fragment address (an XOR for the swizzle) instead of a precomputed register per address.
#pragma once

namespace kf {

template <int COLS>
struct PlainLayout {
  static constexpr int kRowElems = COLS;
  static constexpr int kRowStep = COLS;
  static constexpr bool kWmmaOk = true;
  static __device__ __forceinline__ int off(int row, int col) { return row * COLS + col; }
  static __device__ __forceinline__ int add_col(int off, int c0) { return off + c0; }
};

template <int COLS>
struct PaddedLayout {
  static constexpr int kRowElems = COLS + 8;
  static constexpr int kRowStep = COLS + 8;
  static constexpr bool kWmmaOk = true;
  static __device__ __forceinline__ int off(int row, int col) { return row * (COLS + 8) + col; }
  static __device__ __forceinline__ int add_col(int off, int c0) { return off + c0; }
};

template <int COLS>
struct SwizzledLayout {
  static_assert(COLS % 64 == 0, "swizzle needs rows of at least 8 chunks of 16 bytes");
  static constexpr int kRowElems = COLS;
  static constexpr int kRowStep = COLS;
  static constexpr bool kWmmaOk = false;
  static __device__ __forceinline__ int off(int row, int col) {
    return row * COLS + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
  }
  // c0 / 8 is even and c / 8 is 0 or 1, so (c + c0) / 8 == (c / 8) ^ (c0 / 8) and the XOR moves
  // onto the whole offset (the row part has no bits below COLS).
  static __device__ __forceinline__ int add_col(int off, int c0) { return off ^ c0; }
};

template <int COLS, int ROWS>
struct Sw128Layout {
  static_assert(COLS % 64 == 0, "128-byte swizzle atoms are 64 columns wide");
  static_assert(ROWS % 8 == 0, "128-byte swizzle atoms are 8 rows high");
  static constexpr int kRowElems = COLS;
  static constexpr int kRowStep = 64;  // within a 64-column block, rows are 128 bytes apart
  static constexpr bool kWmmaOk = false;
  static constexpr int kAtomBytes = 1024;
  static constexpr int kRowGroupBytes = 1024;      // bytes between 8-row groups of one block (wgmma SBO)
  static constexpr int kBlockBytes = ROWS * 128;   // bytes between 64-column blocks
  static __device__ __forceinline__ int off(int row, int col) {
    return (col >> 6) * (ROWS * 64) + row * 64 + ((((col >> 3) & 7) ^ (row & 7)) << 3) + (col & 7);
  }
  static __device__ __forceinline__ int add_col(int off, int c0) { return (off ^ (c0 & 63)) + (c0 >> 6) * (ROWS * 64); }
};

}  // namespace kf
