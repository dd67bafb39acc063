// WMMA (nvcuda::wmma) fragment aliases for 16x16x16 tiles of f16/bf16 with f32 accumulation.
#pragma once
#include <mma.h>

namespace kf {
namespace wm = nvcuda::wmma;

template <class T>
using frag_a_row = wm::fragment<wm::matrix_a, 16, 16, 16, T, wm::row_major>;
template <class T>
using frag_b_col = wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::col_major>;
template <class T>
using frag_b_row = wm::fragment<wm::matrix_b, 16, 16, 16, T, wm::row_major>;
using frag_acc = wm::fragment<wm::accumulator, 16, 16, 16, float>;

}  // namespace kf
