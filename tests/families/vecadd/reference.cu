// Trusted reference for the vecadd test family: one element per thread, fp32 math.
#include "common.cuh"

extern "C" __global__ void vecadd_reference(const elem_t* A, const elem_t* B, elem_t* C, int n) {
  const long i = static_cast<long>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) store_elem(C, i, load_elem(A, i) + load_elem(B, i));
}
