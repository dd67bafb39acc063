#!/usr/bin/env python3
"""How much a kernel's graph-replayed time depends on where its buffers happen to sit (perf_notes item 58, item
20's harness gap): the S512 mission shape's one-warpgroup and key-range winners and torch's cuDNN backend, timed
side by side (interleaved replays) on fresh Q, K, V, O allocations, each after a padding allocation of a
different size. Prints each round's medians and each op's spread over the rounds.
  python3 tools/sdpa_bench/alloc_spread.py [--rounds 6]"""
import argparse
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench  # noqa: E402
import kfbench as kb  # noqa: E402

BASE = ("LANE_ADDR=0 VEC=8 LAYOUT=swizzled MIN_BLOCKS=1 P_EARLY=1 MMA=wgmma LAZY_RESCALE=0 PIPE_QK=0 KV_LOAD=tma "
        "KV_SPLITS=1 KV_MERGE=gmem KV_MCAST=1 LOAD_ORDER=after_qk KV_WAIT=joint BLOCK_N=128 BLOCK_M=64 Q_IN=regs "
        "WG_PINGPONG=0")
CONFIGS = {
    "one_wg": f"WARPS=4 WARPS_N=1 WN_KEYS=tile STAGES=2 Q_LOAD=cp_async EXP2=f32 {BASE}",
    "key_range": f"WARPS=8 WARPS_N=2 WN_KEYS=range STAGES=3 Q_LOAD=tma EXP2=poly {BASE}",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=6)
    a = ap.parse_args()
    fam = kb.Family(bench.SPEC)
    shape = bench.parse_shape("B=2,H=8,S=512,D=64,causal=0,dtype=f16")
    args = argparse.Namespace(skip_gate=True, check_only=False, time_anyway=False, target_us=3000, reps=25, jobs=4)
    b = bench.Bench(fam, args)
    torch = b.torch
    cfgs = {n: bench.grid_configs(t, fam)[0] for n, t in CONFIGS.items()}
    b.compile_all([(c, shape) for c in cfgs.values()])
    kernels = {n: b.kernel(c, shape)[1] for n, c in cfgs.items()}
    times = {n: [] for n in list(cfgs) + ["cudnn"]}
    for r in range(a.rounds):
        pad = torch.empty(1 + r * 7919 * 256, dtype=torch.uint8, device="cuda")  # moves the next allocations
        t = b.make_inputs(shape, seed=r + 1)
        ref = kb.reference_fp64(t["Q"], t["K"], t["V"], shape["causal"])
        ops = {}
        for n, k in kernels.items():
            fn = b.launcher(k, cfgs[n], shape, t)
            t["O"].fill_(float("nan"))
            fn()
            torch.cuda.synchronize()
            err = kb.errors(t["O"], ref)
            if not b.passes(err, shape["dtype"]):
                sys.exit(f"{n}: wrong result {err}")
            ops[n] = fn
        cud, _ = kb.sdpa_fn(kb.sdpa_backends()["torch.cudnn"], t["Q"], t["K"], t["V"], shape["causal"])
        ops["cudnn"] = cud
        res = kb.time_graphs(ops, target_us=3000, reps=25)
        for n, v in res.items():
            times[n].append(v["median_us"])
        print(f"round {r}: " + "  ".join(f"{n} {v['median_us']:.2f}" for n, v in res.items()) +
              f"  (Q at {t['Q'].data_ptr() % (1 << 30):#x} in its GiB)", flush=True)
        del pad, t, ops
    for n, v in times.items():
        print(f"{n:10s} median {statistics.median(v):.2f} us, min {min(v):.2f}, max {max(v):.2f} "
              f"(spread {100 * (max(v) - min(v)) / min(v):.1f}%)")


if __name__ == "__main__":
    main()
