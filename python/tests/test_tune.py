"""kforge.tune_kernel: a Kernel Tuner problem becomes a family (spec, template, data) that
compiles in check mode without a GPU; searching it needs one."""
from __future__ import annotations

import json

import numpy as np
import pytest

import kforge
from kforge.tune import build_family, kernel_params

VECTOR_ADD = """
#include <stdio.h>
__global__ void vector_add(float *c, const float *a, const float *b, int n) {
    int i = blockIdx.x * block_size_x * work + threadIdx.x;
    #pragma unroll
    for (int k = 0; k < work; k++, i += block_size_x)
        if (i < n) c[i] = a[i] + b[i];
}
"""


def _problem(n: int = 5000):
    a = np.arange(n, dtype=np.float32)
    b = np.ones(n, dtype=np.float32)
    c = np.zeros_like(a)
    return [c, a, b, np.int32(n)], {"block_size_x": [64, 128, 256], "work": [1, 2, 4]}, a + b


def test_kernel_params_read_the_signature() -> None:
    ps = kernel_params(VECTOR_ADD, "vector_add")
    assert [(p.name, p.pointer, p.const) for p in ps] == [
        ("c", True, False), ("a", True, True), ("b", True, True), ("n", False, False)]


def test_family_files(tmp_path) -> None:
    args, params, expected = _problem()
    fam = build_family("vector_add", VECTOR_ADD, 5000, args, params, restrictions=["block_size_x * work <= 512"],
                       grid_div_x=["block_size_x", "work"], answer=[expected, None, None, None], atol=1e-5,
                       families_dir=tmp_path)
    spec = json.loads((fam.folder / f"{fam.name}.json").read_text())
    assert fam.shape == {"n": 5000}  # the scalar, the arrays' length and the problem size: one dim
    assert spec["constraints"] == ["(block_size_x * work) <= 512"]
    assert spec["launch"]["grid"][0] == "ceil_div(n, (block_size_x * work))"
    assert spec["launch"]["block"] == ["block_size_x", "1", "1"]
    roles = {b["name"]: (b["role"], b.get("expected"), b.get("compare", True)) for b in spec["buffers"]}
    assert roles == {"c": ("output", "c.expected.bin", True), "a": ("input", None, True), "b": ("input", None, True)}
    assert spec["args"][3] == {"i32": "n"}
    assert spec["tolerance"]["default"]["max_abs"] == 1e-5
    assert np.array_equal(np.fromfile(fam.folder / "c.expected.bin", dtype=np.float32), expected)
    src = (fam.folder / "kernel.cu").read_text()
    assert "#define block_size_x KF_BLOCK_SIZE_X" in src and 'extern "C" {' in src
    assert "// (kforge: NVRTC has no C library header) #include <stdio.h>" in src
    # the same problem is the same family; other data is another
    assert build_family("vector_add", VECTOR_ADD, 5000, args, params, restrictions=["block_size_x * work <= 512"],
                        grid_div_x=["block_size_x", "work"], answer=[expected, None, None, None], atol=1e-5,
                        families_dir=tmp_path).name == fam.name
    args2 = [args[0], args[1] * 2, args[2], args[3]]
    assert build_family("vector_add", VECTOR_ADD, 5000, args2, params, families_dir=tmp_path).name != fam.name


def test_without_answer_written_arrays_are_unchecked_outputs(tmp_path) -> None:
    args, params, _ = _problem()
    fam = build_family("vector_add", VECTOR_ADD, 5000, args, params, restrictions=[lambda p: p["work"] < 4],
                       families_dir=tmp_path)
    spec = json.loads((fam.folder / f"{fam.name}.json").read_text())
    assert spec["buffers"][0]["role"] == "output" and spec["buffers"][0]["compare"] is False
    assert spec["constraints"] == ["(work == 1 ? 1 : (work == 2 ? 1 : 0))"]


def test_refusals(tmp_path) -> None:
    args, params, _ = _problem()
    with pytest.raises(kforge.KforgeUsageError, match="float64"):
        build_family("vector_add", VECTOR_ADD, 5000, [args[0].astype(np.float64), *args[1:]], params,
                     families_dir=tmp_path)
    with pytest.raises(kforge.KforgeUsageError, match="takes 4 parameters"):
        build_family("vector_add", VECTOR_ADD, 5000, args[:3], params, families_dir=tmp_path)
    with pytest.raises(kforge.KforgeUsageError, match="not supported"):
        kforge.tune_kernel("vector_add", VECTOR_ADD, 5000, args, params, verify=lambda *a: True,
                           families_dir=tmp_path)
    with pytest.raises(TypeError):
        kforge.tune_kernel("vector_add", VECTOR_ADD, 5000, args, params, no_such_option=1, families_dir=tmp_path)


def test_check_mode_compiles_every_config(kforge_bin: str, home, tmp_path) -> None:
    args, params, expected = _problem()
    rows, env = kforge.tune_kernel("vector_add", VECTOR_ADD, 5000, args, params, grid_div_x=["block_size_x", "work"],
                                   restrictions=["block_size_x * work <= 512"], answer=[expected, None, None, None],
                                   check=True, arch=["sm_90", "sm_80"])
    assert env["mode"] == "check" and env["family"].startswith("vector_add_")
    assert rows and all(r.get("failed", 0) == 0 for r in rows)
    assert sum(r["compiled_ok"] for r in rows) == 2 * 8  # 9 configs, one over 512 threads of work; two archs


def test_search_needs_a_gpu(kforge_bin: str, home, tmp_path, gpu) -> None:
    args, params, expected = _problem()
    results, env = kforge.tune_kernel("vector_add", VECTOR_ADD, 5000, args, params,
                                      grid_div_x=["block_size_x", "work"], answer=[expected, None, None, None],
                                      db=tmp_path / "r.db")
    assert len(results) == 9 and all("time" in r for r in results)
    best = kforge.best(env["family"], db=tmp_path / "r.db")
    assert len(best) == 1 and best[0]["median_us"] > 0


def test_check_mode_counts_configs_that_do_not_compile(kforge_bin: str, home) -> None:
    # Kernel Tuner skips a config that fails to compile (its matmul example has six: too much
    # shared memory); check mode reports them in the rows instead of raising.
    source = VECTOR_ADD.replace("int i =", "static_assert(work < 4, \"too much work\");\n    int i =")
    args, params, expected = _problem()
    rows, _ = kforge.tune_kernel("vector_add", source, 5000, args, params, grid_div_x=["block_size_x", "work"],
                                 answer=[expected, None, None, None], check=True)
    assert sum(r["failed"] for r in rows) == 3 and sum(r["compiled_ok"] for r in rows) == 6
    assert "too much work" in json.dumps(rows[0]["errors"])
