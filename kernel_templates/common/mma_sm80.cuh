// Warp-level tensor-core fragments: ldmatrix and mma.sync m16n8k16 (f16/bf16 in, f32 accumulate).
//
// Fragment layout (PTX ISA, m16n8k16, g = lane / 4, t = lane % 4):
//   A (16x16, row): a0 = (g, 2t..2t+1)  a1 = (g+8, 2t..)  a2 = (g, 2t+8..)  a3 = (g+8, 2t+8..)
//   B (16x8, col):  b0 = (k 2t..2t+1, n g)   b1 = (k 2t+8.., n g)
//   C (16x8):       c0,c1 = (g, 2t..2t+1)    c2,c3 = (g+8, 2t..2t+1)
#pragma once
#include "common/cp_async.cuh"

namespace kf {

__device__ __forceinline__ void ldmatrix_x4(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                            const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_u32(smem)));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned& r0, unsigned& r1, unsigned& r2, unsigned& r3,
                                                  const void* smem) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
               : "r"(smem_u32(smem)));
}

// c += a * b, 16x8x16. BF16 selects the bf16 instruction.
template <bool BF16>
__device__ __forceinline__ void mma_16816(float (&c)[4], const unsigned (&a)[4], unsigned b0, unsigned b1) {
  if constexpr (BF16) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  } else {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
        "{%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
}

// Lane address helpers for ldmatrix.x4 over a row-major tile (rows x cols of 16-bit elements).
// A operand 16x16 at (r0, c0):            lane -> row r0 + lane%16,             col c0 + (lane/16)*8
// B operand from [n][k] storage (non-trans), two n-tiles of 8 at (n0, k0):
//                                          lane -> row n0 + lane%8 + (lane/16)*8, col k0 + ((lane/8)%2)*8
//   gives {b0,b1} of n-tile n0 and {b0,b1} of n-tile n0+8.
// B operand from [k][n] storage (trans), two n-tiles of 8 at (k0, n0):
//                                          lane -> row k0 + lane%8 + ((lane/8)%2)*8, col n0 + (lane/16)*8
//   gives {b0,b1} of n-tile n0 and {b0,b1} of n-tile n0+8.
__device__ __forceinline__ int lm_a_row(int lane) { return lane & 15; }
__device__ __forceinline__ int lm_a_col(int lane) { return (lane >> 4) << 3; }
__device__ __forceinline__ int lm_bn_row(int lane) { return (lane & 7) + ((lane >> 4) << 3); }
__device__ __forceinline__ int lm_bn_col(int lane) { return ((lane >> 3) & 1) << 3; }
__device__ __forceinline__ int lm_bt_row(int lane) { return (lane & 7) + (((lane >> 3) & 1) << 3); }
__device__ __forceinline__ int lm_bt_col(int lane) { return (lane >> 4) << 3; }

}  // namespace kf
