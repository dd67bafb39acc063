// sdpa_fwd's timing diagnostics: defines a harness passes (`--define`, bench.py) but the spec does not
// list. Each gives WRONG OUTPUT on purpose and exists only to time a part of the kernel.
//   DIAG=1   stops after the key loop (no merge, no store); every accumulator stays live (diag_keep_live)
//   DIAG=2   no K/V loads after the prologue's: the key loop's time without the K/V stream into the SM
//   DIAG=3   the first thread of each warpgroup records clock64 at fixed points (slot k: 0 entry,
//            1 prologue done, 2 + 2t / 3 + 2t before / after its t-th tile, 14 loop done, 15 merge (or one
//            group's store) done, 16 / 17 globaltimer at entry / end, 18 the first K/V tiles requested,
//            19 Q resident, 20 the ring barriers initialised, 21 Q requested, 22 indices computed) and
//            writes them over its CTA's O rows instead of O (read back by `git show 2843624:tools/sdpa_bench/timeline.py`).
//            The stamps live in shared memory, one row per warpgroup: as a per-thread array (indexed by the
//            tile) they lived in local memory, and every thread's zero-fill stored 160 bytes at entry,
//            inside the prologue being measured.
//   DIAG_CUT (wgmma, one key group) removes one part of each tile: 1 the exp2, 2 Q K^T, 3 P V, 4 the row max
//   DIAG_STORE (mma / wgmma): 1 no global stores of O, 2 no normalisation of O
#pragma once

#if defined(KF_DIAG) && KF_DIAG == 2
#define KF_DIAG_NO_RELOAD 1
#else
#define KF_DIAG_NO_RELOAD 0
#endif
#ifndef KF_DIAG_STORE
#define KF_DIAG_STORE 0
#endif
#ifndef KF_DIAG_CUT
#define KF_DIAG_CUT 0
#endif
#if defined(KF_DIAG) && KF_DIAG == 1
#define KF_DIAG_STOP_AFTER_LOOP 1
#else
#define KF_DIAG_STOP_AFTER_LOOP 0
#endif

#if defined(KF_DIAG) && KF_DIAG == 3
#define KF_STAMPS 1
#define KF_NSTAMPS 23
#define KF_STAMP(k)                                                                          \
  do {                                                                                       \
    if ((k) < KF_NSTAMPS && (threadIdx.x & 127) == 0) stamps[(k)] = clock64();                      \
  } while (0)
// At kernel entry: `stamps`, this warpgroup's row, zeroed; slot 0 and the entry globaltimer taken.
#define KF_STAMPS_PTR stamps
#define KF_STAMPS_BEGIN(tid)                                                           \
  __shared__ long long stamps_sm[NT >= 128 ? NT / 128 : 1][KF_NSTAMPS];                \
  long long* stamps = stamps_sm[(tid) >> 7];                                           \
  if (((tid) & 127) == 0)                                                              \
    for (int k = 0; k < KF_NSTAMPS; ++k) stamps[k] = 0;                                \
  KF_STAMP(0);                                                                         \
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(stamps[16]))
#else
#define KF_STAMPS 0
#define KF_STAMP(k) \
  do {              \
  } while (0)
#define KF_STAMPS_PTR nullptr
#define KF_STAMPS_BEGIN(tid) \
  do {                       \
  } while (0)
#endif

static_assert(!(TMA_KV && SPLIT_WAIT && KF_DIAG_NO_RELOAD), "DIAG=2 with KV_LOAD=tma needs KV_WAIT=joint");
static_assert(KF_DIAG_CUT == 0 || (WGMMA && P_EARLY && !EXP2_PAIR),
              "DIAG_CUT needs wgmma, P_EARLY 1 and EXP2 f32 or poly");

#if KF_STAMPS
// DIAG=3, after the epilogue's merge: the end globaltimer, then each warpgroup's stamps over its CTA's O rows.
// The checksum test keeps P V live (see DIAG=1).
template <class Path>
__device__ __forceinline__ void diag_write_stamps(const Path& path, long long* stamps, elem_t* Oh, int m0, int S,
                                                  int tid) {
  __syncthreads();  // the stamps go over O rows the merge may have written
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(stamps[17]));
  if (path.diag_checksum() == -1.2345f) stamps[17] = 0;
  if ((tid & 127) == 0 && m0 < S) {
    long long* out = reinterpret_cast<long long*>(Oh + (size_t)m0 * HD) + (tid >> 7) * KF_NSTAMPS;
    for (int k = 0; k < KF_NSTAMPS; ++k) out[k] = stamps[k];
  }
}
#endif
