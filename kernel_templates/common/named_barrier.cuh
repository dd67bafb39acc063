// Named barriers (bar.sync / bar.arrive on ids 1..15; id 0 is __syncthreads): the scheduling tool of
// warp-specialised and ping-pong kernels. bar.sync waits until THREADS threads (a multiple of 32) have
// arrived on the id, counting itself; bar.arrive counts itself and goes on, so a producer can hand
// something over without waiting for the consumer. Both order shared-memory accesses like a barrier.
//
// Turn taking (FA3's warpgroup ping-pong): two groups A and B each own a barrier id over both groups'
// threads. A waits on its own id before issuing its tensor-core work and arrives on B's id after it;
// B does the same the other way round. Whoever holds the turn issues while the other one runs its
// softmax. The counts must balance: every wait of a group is matched by one pass from the other.
#pragma once

namespace kf {

// Runtime id (a register), THREADS a compile-time count.
template <int THREADS>
__device__ __forceinline__ void named_bar_sync(int id) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}
template <int THREADS>
__device__ __forceinline__ void named_bar_arrive(int id) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "n"(THREADS) : "memory");
}
// Compile-time id and count (immediates in the instruction).
template <int ID, int THREADS>
__device__ __forceinline__ void named_bar_sync() {
  asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}
template <int ID, int THREADS>
__device__ __forceinline__ void named_bar_arrive() {
  asm volatile("bar.arrive %0, %1;\n" ::"n"(ID), "n"(THREADS) : "memory");
}

}  // namespace kf
