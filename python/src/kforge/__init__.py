"""kforge from Python: search CUDA kernel families, read the store, export and load winners.

A thin layer over the ``kforge`` CLI (one process per call, ``--json`` output): see _cli.py for
why. ``tune_kernel`` takes Kernel Tuner's arguments and searches the kernel with kforge.
"""
from ._cli import KforgeError, KforgeUsageError, executable
from .api import best, cache_root, check, export, families, families_dir, load, results, search, show
from .tune import tune_kernel


def has_gpu() -> bool:
    """Whether the CUDA driver sees a device (a search needs one; check and best do not)."""
    import ctypes

    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        n = ctypes.c_int(0)
        return cuda.cuInit(0) == 0 and cuda.cuDeviceGetCount(ctypes.byref(n)) == 0 and n.value > 0
    except OSError:
        return False


__all__ = ["KforgeError", "KforgeUsageError", "best", "cache_root", "check", "executable", "export", "families",
           "families_dir", "has_gpu", "load", "results", "search", "show", "tune_kernel"]
__version__ = "0.1.0"
