#!/usr/bin/env python3
"""A Kernel Tuner cache written by `kforge results` replays in Kernel Tuner's simulation mode.

    kernel_tuner_simulation.py KFORGE_BINARY RESULTS_DB TEST_FAMILIES_DIR

Copies the database (it is only read), writes gemm's exhaustively measured 4096^3 space as a
Kernel Tuner cache, and runs kernel_tuner.tune_cache on it (simulation: no GPU): brute force
must visit every ok config kforge recorded and find kforge's fastest time; a random sample
must stay inside the recorded space. The faulty test family's results (every status) must
load with Kernel Tuner's own error kinds. Exits 77 (ctest: skipped) when kernel_tuner is missing.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile

SHAPE = "M=4096,N=4096,K=4096,dtype=f16"


def main():
    try:
        import kernel_tuner
    except ImportError:
        print("SKIPPED: the kernel_tuner package is not installed (pip install -r requirements.txt)")
        return 77
    kforge, db, test_families = sys.argv[1], sys.argv[2], sys.argv[3]
    with tempfile.TemporaryDirectory() as tmp:
        db_copy = os.path.join(tmp, "results.db")
        shutil.copy(db, db_copy)
        cache = os.path.join(tmp, "gemm_cache.json")
        subprocess.run([kforge, "--db", db_copy, "results", "--format", "kernel-tuner-cache",
                        "--family", "gemm", "--shape", SHAPE, "--out", cache], check=True)
        with open(cache) as f:
            written = json.load(f)
        ok_times = [e["time"] for e in written["cache"].values() if "__error__" not in e]
        assert len(ok_times) >= 100, f"expected the exhaustive gemm space, got {len(ok_times)} ok configs"
        keys = list(written["cache"])
        assert keys == sorted(keys), "cache entries are not sorted"

        results, env = kernel_tuner.tune_cache(cache, strategy="brute_force", quiet=True)
        visited = [r for r in results if "__error__" not in r]
        assert len(visited) == len(ok_times), f"brute force visited {len(visited)} of {len(ok_times)} ok configs"
        best = min(r["time"] for r in visited)
        assert abs(best - min(ok_times)) < 1e-12, f"Kernel Tuner's best {best} ms != kforge's {min(ok_times)} ms"
        assert env.get("simulation"), "not run in simulation mode"

        sample, _ = kernel_tuner.tune_cache(cache, strategy="random_sample",
                                            strategy_options={"max_fevals": 40}, quiet=True)
        known = {tuple(e[k] for k in written["tune_params_keys"]) for e in written["cache"].values()}
        for r in sample:
            assert tuple(r[k] for k in written["tune_params_keys"]) in known, f"config outside the cache: {r}"
        faulty = os.path.join(tmp, "faulty_cache.json")
        subprocess.run([kforge, "--db", db_copy, "--spec-dir", test_families, "results", "--format",
                        "kernel-tuner-cache", "--family", "faulty", "--shape", "N=1048576", "--out", faulty], check=True)
        from kernel_tuner import util
        loaded = util.read_cache(faulty, open_cache=False)["cache"]
        kinds = {k: type(e["__error__"]).__name__ for k, e in loaded.items() if "__error__" in e}
        assert kinds.get("nocompile,1") == "CompilationFailedConfig", kinds
        assert kinds.get("bigsmem,1") == "InvalidConfig", kinds
        assert kinds.get("wrong,1") == "RuntimeFailedConfig", kinds
        assert "ok,1" not in kinds and isinstance(loaded["ok,1"]["time"], float)
        print(f"kernel_tuner {getattr(kernel_tuner, '__version__', '?')}: simulated {len(visited)} configs, "
              f"best {best * 1000:.2f} us (kforge's {min(ok_times) * 1000:.2f} us); random sample of {len(sample)} in the space")
    return 0


if __name__ == "__main__":
    sys.exit(main())
