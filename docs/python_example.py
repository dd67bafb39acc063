# %% [markdown]
# # kforge from Python: tune a kernel string, read the results, use the winner in torch
#
# Run it as a script (`python docs/python_example.py`) or cell by cell (`# %%` cells: VS Code,
# Jupytext). It needs `pip install ./python` (the kforge package and binary) and numpy; pandas
# and torch for the later cells. Without a GPU it stops, saying so, before the first step that
# needs one (CI runs it that far).

# %%
import logging
import sys

import numpy as np

import kforge

logging.basicConfig(level=logging.INFO, format="%(message)s")  # kforge's progress goes to logging

# %% [markdown]
# ## 1. A kernel string, as Kernel Tuner takes it
# `block_size_x` and `work` are tuning parameters, visible in the source as macros; the grid is
# `ceil(n / (block_size_x * work))` (Kernel Tuner's `grid_div_x`). `answer` makes every config
# prove it computes `y = 2x + bias` before it is timed.

# %%
SOURCE = """
__global__ void scale_add(float *y, const float *x, const float *bias, int n) {
    int i = (blockIdx.x * block_size_x + threadIdx.x) * work;
    #pragma unroll
    for (int k = 0; k < work; k++)
        if (i + k < n) y[i + k] = 2.0f * x[i + k] + bias[i + k];
}
"""
n = 1 << 22
x = np.random.randn(n).astype(np.float32)
bias = np.random.randn(n).astype(np.float32)
y = np.zeros_like(x)
args = [y, x, bias, np.int32(n)]
tune_params = {"block_size_x": [64, 128, 256, 512, 1024], "work": [1, 2, 4, 8]}
problem = dict(grid_div_x=["block_size_x", "work"], restrictions=["block_size_x * work <= 4096"],
               answer=[2 * x + bias, None, None, None], atol=1e-5)

# %% [markdown]
# ## 2. Compile every config (no GPU needed)
# `check=True` renders and NVRTC-compiles the valid configs for the given targets: what the
# search would run, without running it.

# %%
rows, env = kforge.tune_kernel("scale_add", SOURCE, n, args, tune_params, check=True, arch="sm_90", **problem)
print(f"family {env['family']} (in {env['spec_dir']}): {sum(r['compiled_ok'] for r in rows)} configs compile")

# %% [markdown]
# ## 3. Search it on the GPU
# The same call without `check` is Kernel Tuner's brute force (its default strategy), run by
# kforge: every config gated against `answer`, timed, and recorded in `results.db`.

# %%
if not kforge.has_gpu():
    print("no CUDA device: the rest of this example needs one")
    sys.exit(0)
results, env = kforge.tune_kernel("scale_add", SOURCE, n, args, tune_params, **problem)

# %% [markdown]
# ## 4. The results in pandas
# `results` are Kernel Tuner's records (`time` in ms); `kforge.best` gives the stored winner
# with its confidence interval, as flat records.

# %%
import pandas as pd

df = pd.DataFrame(results)
print(df.sort_values("time")[["block_size_x", "work", "time"]].head())
print(pd.DataFrame(kforge.best(env["family"]))[["config", "median_us", "ci_us"]])

# %% [markdown]
# ## 5. The winner in a torch model
# `kforge.load` exports the winner as a torch op (built once, cached) that takes the kernel's
# inputs (its `const` pointers) and returns its output; it works under `torch.compile`.

# %%
import torch

op = kforge.load(env["family"])


class ScaleAddReLU(torch.nn.Module):
    def forward(self, a: torch.Tensor, b: torch.Tensor) -> torch.Tensor:
        return torch.relu(op(a, b))


model = torch.compile(ScaleAddReLU(), fullgraph=True)
a, b = torch.from_numpy(x).cuda(), torch.from_numpy(bias).cuda()
torch.testing.assert_close(model(a, b), torch.relu(2 * a + b))
print("the tuned kernel runs inside torch.compile")
