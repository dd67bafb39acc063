"""Shared fixtures: the repository, the binary, and whether a CUDA device is present."""
from __future__ import annotations

import ctypes
import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


def cuda_device_count() -> int:
    """Devices the driver sees (0 without a driver): no torch or CUDA Python needed."""
    try:
        cuda = ctypes.CDLL("libcuda.so.1")
        if cuda.cuInit(0) != 0:
            return 0
        n = ctypes.c_int(0)
        return n.value if cuda.cuDeviceGetCount(ctypes.byref(n)) == 0 else 0
    except OSError:
        return 0


@pytest.fixture(scope="session")
def kforge_bin() -> str:
    import kforge

    try:
        return kforge.executable()
    except kforge.KforgeError as e:
        pytest.skip(f"no kforge binary: {e}")


@pytest.fixture(scope="session")
def gpu() -> None:
    if cuda_device_count() == 0:
        pytest.skip("no CUDA device (GPU step)")


@pytest.fixture()
def home(tmp_path, monkeypatch) -> Path:
    """Generated families and torch builds in a scratch folder, not ~/.cache; run from there too,
    so the default store (./results.db) and cubin cache (./.kforge-cache) land there."""
    monkeypatch.setenv("KFORGE_HOME", str(tmp_path / "kforge-home"))
    monkeypatch.chdir(tmp_path)
    return tmp_path
