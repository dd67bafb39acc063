// sdpa_fwd's named barriers (common/named_barrier.cuh; id 0 is the CTA barrier):
//   1 + g         key group g's own barrier (WN_KEYS=range: each group streams its own ring)
//   1 + WN + g    turn of group g (WN_KEYS=pingpong, WG_PINGPONG): both turn-taking groups' threads
//   1 + 2 WN      two key-range groups' merge: group 0 hands its partial to group 1
#pragma once
#include "common/named_barrier.cuh"

__device__ __forceinline__ void group_sync(int group) { kf::named_bar_sync<GT>(1 + group); }
// A group waits for its turn to issue MMAs with turn_wait(own) and hands the turn over with turn_pass(other).
__device__ __forceinline__ void turn_wait(int group) { kf::named_bar_sync<PP_THREADS>(1 + WN + group); }
__device__ __forceinline__ void turn_pass(int group) { kf::named_bar_arrive<PP_THREADS>(1 + WN + group); }
__device__ __forceinline__ void merge_pass() { kf::named_bar_arrive<1 + 2 * WN, 2 * GT>(); }
__device__ __forceinline__ void merge_take() { kf::named_bar_sync<1 + 2 * WN, 2 * GT>(); }
