// sdpa_fwd's named barriers (common/named_barrier.cuh; id 0 is the CTA barrier):
//   1 + g         key group g's own barrier (WN_KEYS=range: each group streams its own ring)
//   1 + WN + g    turn of group g (WN_KEYS=pingpong, WG_PINGPONG): both turn-taking groups' threads
//   1 + 2 WN      two key-range groups' merge under KF_MERGE_ARRIVE (A/B only; otherwise the CTA barrier)
#pragma once
#include "common/named_barrier.cuh"

__device__ __forceinline__ void group_sync(int group) { kf::named_bar_sync<GT>(1 + group); }
// A group waits for its turn to issue MMAs with turn_wait(own) and hands the turn over with turn_pass(other).
__device__ __forceinline__ void turn_wait(int group) { kf::named_bar_sync<PP_THREADS>(1 + WN + group); }
__device__ __forceinline__ void turn_pass(int group) { kf::named_bar_arrive<PP_THREADS>(1 + WN + group); }
// The key-range merge's hand-off (sdpa/merge.cuh): both groups pass the CTA barrier. Two key groups are the whole
// CTA (WARPS_N > 1 rules out a producer warpgroup), so it orders what a named barrier over both groups would, and
// compute-sanitizer racecheck models it (not a bar.arrive). Group 0 has nothing left to do after it: a CTA's
// resources are freed when the CTA ends, not when a warp does. KF_MERGE_ARRIVE (A/B only) keeps the former
// named-barrier arrive.
#if defined(KF_MERGE_ARRIVE)
__device__ __forceinline__ void merge_pass() { kf::named_bar_arrive<1 + 2 * WN, 2 * GT>(); }
__device__ __forceinline__ void merge_take() { kf::named_bar_sync<1 + 2 * WN, 2 * GT>(); }
#else
__device__ __forceinline__ void merge_pass() { __syncthreads(); }
__device__ __forceinline__ void merge_take() { __syncthreads(); }
#endif
