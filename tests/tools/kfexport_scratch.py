#!/usr/bin/env python3
"""tools/kfexport.py's launcher, without a GPU: torch and the driver are stand-ins that record what the
launch would get. The caller's buffers are used by name and a size mismatch is refused; scratch buffers
the caller lacks are made once per name and size, so two kernels whose scratch differs in size (a
split-KV or tail-split kernel next to a plain one in compare_torch) each get their own, and kernels
sized alike share one."""
import os
import sys
import tempfile
import types

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))


class FakeTensor:
    made = 0

    def __init__(self, count):
        FakeTensor.made += 1
        self.count, self.ptr = count, FakeTensor.made

    def numel(self):
        return self.count

    def data_ptr(self):
        return self.ptr


torch = types.ModuleType("torch")
torch.float32 = torch.int32 = torch.float16 = torch.bfloat16 = object()
torch.zeros = lambda n, device=None, dtype=None: FakeTensor(n)
torch.cuda = types.SimpleNamespace(current_stream=lambda: types.SimpleNamespace(cuda_stream=0))
sys.modules["torch"] = torch
import kfexport as kx  # noqa: E402


class FakeKernel:
    def launcher(self, grid, block, smem, args):
        self.args = args
        return lambda stream: None


class FakeDriver:
    def load(self, cubin, entry):
        self.kernel = FakeKernel()
        return self.kernel


def manifest(scratch_count, o_count=4):
    return {"cubin": "k.cubin", "entry": "k", "launch": {"grid": [1, 1, 1], "block": [32, 1, 1]},
            "args": [{"kind": "buffer", "name": "O", "count": o_count},
                     {"kind": "buffer", "name": "OPART", "count": scratch_count, "dtype": "f32"},
                     {"kind": "i32", "value": 7}]}


def pointers(drv, man, out_dir, tensors):
    kx.launcher(drv, man, out_dir, tensors)
    return [v for kind, v in drv.kernel.args if kind == "ptr"]


def main():
    with tempfile.TemporaryDirectory() as d:
        with open(os.path.join(d, "k.cubin"), "wb") as f:
            f.write(b"\0")
        drv, tensors = FakeDriver(), {"O": FakeTensor(4)}
        plain = pointers(drv, manifest(1), d, tensors)
        split = pointers(drv, manifest(1 << 20), d, tensors)
        plain_again = pointers(drv, manifest(1), d, tensors)
        failures = []
        if not (plain[0] == split[0] == plain_again[0] == tensors["O"].data_ptr()):
            failures.append("the caller's O was not passed by name")
        if plain[1] == split[1]:
            failures.append("two kernels whose scratch differs in size got one buffer")
        if plain[1] != plain_again[1]:
            failures.append("kernels whose scratch is sized alike did not share it")
        try:
            pointers(drv, manifest(1, o_count=5), d, tensors)
            failures.append("a caller's buffer of another size than the manifest's was accepted")
        except RuntimeError:
            pass
    for f in failures:
        print("FAIL:", f)
    if not failures:
        print("ok: buffers by name, scratch per name and size")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
