// Shared-memory layouts for row-major tiles of COLS 16-bit elements per row.
//   PlainLayout:    row * COLS + col                       (bank conflicts on column access)
//   PaddedLayout:   row * (COLS + 8) + col                 (one 16-byte pad per row)
//   SwizzledLayout: 16-byte chunk index XOR (row & 7)      (no padding, conflict-free ldmatrix)
// off(row, col) is in elements; col must keep 16-byte chunks intact (col % 8 + width <= 8).
#pragma once

namespace kf {

template <int COLS>
struct PlainLayout {
  static constexpr int kRowElems = COLS;
  static constexpr bool kWmmaOk = true;
  static __device__ __forceinline__ int off(int row, int col) { return row * COLS + col; }
};

template <int COLS>
struct PaddedLayout {
  static constexpr int kRowElems = COLS + 8;
  static constexpr bool kWmmaOk = true;
  static __device__ __forceinline__ int off(int row, int col) { return row * (COLS + 8) + col; }
};

template <int COLS>
struct SwizzledLayout {
  static_assert(COLS % 64 == 0, "swizzle needs rows of at least 8 chunks of 16 bytes");
  static constexpr int kRowElems = COLS;
  static constexpr bool kWmmaOk = false;
  static __device__ __forceinline__ int off(int row, int col) {
    return row * COLS + ((((col >> 3) ^ (row & 7))) << 3) + (col & 7);
  }
};

}  // namespace kf
