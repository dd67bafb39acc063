"""GPU checks of the Python front door (each skips, saying why, without a GPU or a package):

- tune_kernel on Kernel Tuner's vector-add and matmul examples reaches the config Kernel Tuner's
  own brute force finds (or one within 3 % of its time, by Kernel Tuner's measurements: two
  configs that close swap places from run to run). Needs kernel_tuner with a CUDA backend
  (cuda-python, PyCUDA or CuPy); the matmul kernel is read from a Kernel Tuner checkout:
  KT_EXAMPLES=/path/to/kernel_tuner/examples/cuda.
- kforge.load: the winner as a torch op inside a torch.nn.Module, eager and under torch.compile.

Run: KFORGE_GPU_TESTS=1 pytest python/tests/test_gpu.py -v
"""
from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

import kforge

pytestmark = pytest.mark.usefixtures("kforge_bin", "gpu")

VECTOR_ADD = """
__global__ void vector_add(float *c, float *a, float *b, int n) {
    int i = blockIdx.x * block_size_x + threadIdx.x;
    if (i < n) {
        c[i] = a[i] + b[i];
    }
}
"""


def _kernel_tuner():
    kt = pytest.importorskip("kernel_tuner")
    return kt


def _same_best(kt_results: list[dict], kf_env: dict, params: list[str], db: Path) -> None:
    kt_ok = [r for r in kt_results if isinstance(r.get("time"), float)]
    kt_best = min(kt_ok, key=lambda r: r["time"])
    kf = kforge.best(kf_env["family"], db=db)[0]
    kf_cfg = {p: kf[p] for p in params}
    kt_cfg = {p: kt_best[p] for p in params}
    if kf_cfg == kt_cfg:
        return
    same = [r for r in kt_ok if all(r[p] == kf_cfg[p] for p in params)]
    assert same, f"kforge's best {kf_cfg} is not among Kernel Tuner's valid configs"
    assert same[0]["time"] <= kt_best["time"] * 1.03, (
        f"kforge's best {kf_cfg} takes {same[0]['time']:.4f} ms by Kernel Tuner's clock; its best {kt_cfg} "
        f"{kt_best['time']:.4f} ms")


def test_vector_add_matches_kernel_tuner_brute_force(home, tmp_path) -> None:
    kt = _kernel_tuner()
    size = 10_000_000
    a = np.random.randn(size).astype(np.float32)
    b = np.random.randn(size).astype(np.float32)
    c = np.zeros_like(b)
    args = [c, a, b, np.int32(size)]
    tune_params = {"block_size_x": [128 + 64 * i for i in range(15)]}
    try:
        kt_results, _ = kt.tune_kernel("vector_add", VECTOR_ADD, (size, 1), args, tune_params, quiet=True)
    except Exception as e:  # no CUDA backend for Kernel Tuner
        pytest.skip(f"Kernel Tuner could not run: {e}")
    db = tmp_path / "kt.db"
    _, env = kforge.tune_kernel("vector_add", VECTOR_ADD, (size, 1), args, tune_params,
                                answer=[a + b, None, None, None], db=db, outputs=[0])
    _same_best(kt_results, env, list(tune_params), db)


def test_matmul_matches_kernel_tuner_brute_force(home, tmp_path) -> None:
    kt = _kernel_tuner()
    examples = os.environ.get("KT_EXAMPLES")
    if not examples or not (Path(examples) / "matmul.cu").is_file():
        pytest.skip("KT_EXAMPLES is not a Kernel Tuner examples/cuda folder with matmul.cu")
    source = (Path(examples) / "matmul.cu").read_text()
    n = 512  # the WIDTH matmul.cu is written for
    A = np.random.randn(n, n).astype(np.float32)
    B = np.random.randn(n, n).astype(np.float32)
    C = np.zeros_like(A)
    tune_params = {"block_size_x": [16 * 2**i for i in range(3)], "block_size_y": [2**i for i in range(6)],
                   "tile_size_x": [2**i for i in range(4)], "tile_size_y": [2**i for i in range(4)]}
    common = dict(grid_div_x=["block_size_x", "tile_size_x"], grid_div_y=["block_size_y", "tile_size_y"],
                  restrictions=["block_size_x==block_size_y*tile_size_y"])
    try:
        kt_results, _ = kt.tune_kernel("matmul_kernel", source, (n, n), [C, A, B], tune_params, quiet=True, **common)
    except Exception as e:
        pytest.skip(f"Kernel Tuner could not run: {e}")
    db = tmp_path / "kt.db"
    _, env = kforge.tune_kernel("matmul_kernel", source, (n, n), [C, A, B], tune_params, answer=[A @ B, None, None],
                                atol=1e-3, db=db, **common)
    _same_best(kt_results, env, list(tune_params), db)


SCALE = """
__global__ void scale_add(float *y, const float *x, const float *bias, int n) {
    int i = (blockIdx.x * block_size_x + threadIdx.x) * work;
    #pragma unroll
    for (int k = 0; k < work; k++)
        if (i + k < n) y[i + k] = 2.0f * x[i + k] + bias[i + k];
}
"""


def test_load_in_a_torch_module_under_compile(home, tmp_path) -> None:
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA")
    n = 1 << 20
    x = np.random.randn(n).astype(np.float32)
    bias = np.random.randn(n).astype(np.float32)
    y = np.zeros_like(x)
    db = tmp_path / "load.db"
    _, env = kforge.tune_kernel("scale_add", SCALE, n, [y, x, bias, np.int32(n)],
                                {"block_size_x": [128, 256, 512], "work": [1, 2, 4]},
                                grid_div_x=["block_size_x", "work"], answer=[2 * x + bias, None, None, None],
                                atol=1e-5, db=db)
    op = kforge.load(env["family"], db=db)

    class Model(torch.nn.Module):
        def forward(self, a, b):
            return torch.relu(op(a, b))

    a = torch.from_numpy(x).cuda()
    b = torch.from_numpy(bias).cuda()
    want = torch.relu(2 * a + b)
    torch.testing.assert_close(Model()(a, b), want)
    compiled = torch.compile(Model(), fullgraph=True)
    torch.testing.assert_close(compiled(a, b), want)
    assert kforge.load(env["family"], db=db) is op  # cached in the process
