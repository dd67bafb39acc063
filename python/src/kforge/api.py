"""The store and the shipped families from Python: search, best, results, export, load.

Each function is one (or a few) ``kforge`` CLI calls with ``--json``; see _cli.py for why.
Records come back as lists of flat dicts (a shape's dims and a config's parameters as their own
keys), so ``pandas.DataFrame(records)`` gives one column per dimension and parameter.
"""
from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import tempfile
from pathlib import Path
from typing import Any, Callable, Optional

from . import _cli
from ._cli import KforgeError, config_text, global_args, run, selection_args

Shape = "str | dict[str, Any]"


def cache_root() -> Path:
    """Where the package keeps what it generates: ``$KFORGE_HOME``, else ``~/.cache/kforge``."""
    env = os.environ.get("KFORGE_HOME")
    if env:
        return Path(env)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "kforge"


def families_dir() -> Path:
    """Families that tune_kernel builds: one folder per family, its spec named after it."""
    return cache_root() / "families"


def spec_dir_for(family: str, spec_dir: Optional[os.PathLike[str] | str] = None) -> Optional[str]:
    """The ``--spec-dir`` for a family: the one given, a tune_kernel family's own folder, or
    None (the CLI's default: ./search_spaces, else the installed specs)."""
    if spec_dir is not None:
        return os.fspath(spec_dir)
    own = families_dir() / family
    if (own / f"{family}.json").is_file():
        return str(own)
    return None


def _globals(family: str, db: Any, spec_dir: Any, cache_dir: Any = None) -> list[str]:
    return global_args(db, spec_dir_for(family, spec_dir), cache_dir)


def flatten(record: dict[str, Any], family: Optional[str] = None) -> dict[str, Any]:
    """A CLI record with its ``shape`` and ``config`` objects spread into columns.

    ``shape`` and ``config`` stay as their ``K=V,...`` texts (what the CLI takes back)."""
    out: dict[str, Any] = {}
    if family is not None:
        out["family"] = family
    shape = record.get("shape")
    config = record.get("config")
    if isinstance(shape, dict):
        out["shape"] = _cli.shape_text(shape)
        out.update(shape)
    if isinstance(config, dict):
        out["config"] = config_text(config)
        out.update(config)
    for k, v in record.items():
        if k not in ("shape", "config"):
            out[k] = v
    return out


def best(family: str, shape: Any = None, suite: Optional[str] = None, *, device: str = "local",
         objective: str = "time", pareto: bool = False, db: Any = None,
         spec_dir: Any = None) -> list[dict[str, Any]]:
    """The best stored kernel per shape (``kforge best --json``), one flat record per shape.

    With neither ``shape`` nor ``suite``: every shape the store has for the family.
    ``pandas.DataFrame(kforge.best("gemm"))`` loads them. ``objective``: "time", "energy" or "edp"
    (energy needs records whose energy was measured: ``search(..., energy=True)``); ``pareto``: every
    record on each shape's time/energy front instead of one winner."""
    args = [*_globals(family, db, spec_dir), "best", "--family", family, *selection_args(shape, suite),
            "--device", device, "--objective", objective, "--json"]
    if pareto:
        args.append("--pareto")
    rows = run(args, json_out=True)
    return [flatten(r, family) for r in rows]


def show(*, db: Any = None) -> list[dict[str, Any]]:
    """The store's campaigns and their status counts (``kforge show --json``)."""
    return run([*global_args(db), "show", "--json"], json_out=True)


def families(*, spec_dir: Any = None) -> list[dict[str, Any]]:
    """The families the CLI finds (``kforge list --json``)."""
    return run([*global_args(spec_dir=spec_dir), "list", "--json"], json_out=True)


def search(family: str, shape: Any = None, suite: Optional[str] = None, *, strategy: str = "evo",
           evals: Optional[int] = None, time: Optional[str] = None, fix: Any = None, seed: Optional[int] = None,
           objective: str = "time", energy: bool = False, extra_args: tuple[str, ...] = (), db: Any = None,
           spec_dir: Any = None, cache_dir: Any = None) -> dict[str, Any]:
    """Runs a campaign (``kforge search --json``) and returns its outcome.

    ``evals`` per shape and ``time`` ("30m", "2h") bound it; ``fix`` pins parameters (a dict or
    ``"K=V,..."``); ``objective`` is "time", "energy" or "edp" (the worker measures energy through NVML,
    also with ``energy=True`` under the time objective); ``extra_args`` go to the command as they are
    (``("--plateau", "50")``).
    Progress goes to the ``kforge`` logger, and to a tqdm bar where tqdm is installed."""
    args = [*_globals(family, db, spec_dir, cache_dir), "search", "--family", family, *selection_args(shape, suite),
            "--strategy", strategy, "--objective", objective, "--json"]
    if energy:
        args.append("--energy")
    if evals is not None:
        args += ["--evals", str(evals)]
    if time is not None:
        args += ["--time", time]
    if fix:
        args += ["--fix", config_text(fix)]
    if seed is not None:
        args += ["--seed", str(seed)]
    return run([*args, *extra_args], json_out=True, progress=f"search {family}")


def check(family: str, shape: Any = None, suite: Optional[str] = None, *, arch: Any = "sm_90",
          sample: Optional[int] = None, allow_failed: bool = False, spec_dir: Any = None,
          cache_dir: Any = None) -> list[dict[str, Any]]:
    """NVRTC-compiles the family's valid configs (``kforge check --json``; no GPU needed).

    Returns one record per (specialization, arch): counts (``valid_configs``, ``checked``,
    ``compiled_ok``, ``failed``), registers, the distinct errors. A config that fails to compile
    raises KforgeError (its message says how many failed), unless ``allow_failed``: then the rows
    come back with their ``failed`` counts and ``errors`` (Kernel Tuner skips such configs)."""
    archs = [arch] if isinstance(arch, str) else list(arch)
    args = [*global_args(None, spec_dir_for(family, spec_dir), cache_dir), "check", "--family", family,
            *selection_args(shape, suite)]
    for a in archs:
        args += ["--arch", a]
    if sample is not None:
        args += ["--sample", str(sample)]
    try:
        rows = run([*args, "--json"], json_out=True, progress=f"check {family}")
    except KforgeError as e:
        # Only the configs failed (not the reference, not the spec's expressions): the rows stand.
        if not (allow_failed and re.fullmatch(r"\d+ config\(s\) of \S+ failed to compile", str(e)) and e.stdout):
            raise
        rows = json.loads(e.stdout)
    return [flatten(r, family) for r in rows] if isinstance(rows, list) else rows


def results(family: str, shape: Shape, *, campaign: Optional[int] = None, db: Any = None,
            spec_dir: Any = None) -> list[dict[str, Any]]:
    """Every stored evaluation of one shape, as Kernel Tuner's cache records (its parameters,
    ``time`` in ms, ``times``, and the status where a config did not run), via ``kforge results
    --format kernel-tuner-cache``."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "cache.json"
        args = [*_globals(family, db, spec_dir), "results", "--format", "kernel-tuner-cache", "--family", family,
                "--shape", _cli.shape_text(shape) or "", "--out", str(out)]
        if campaign is not None:
            args += ["--campaign", str(campaign)]
        run(args)
        cache = json.loads(out.read_text())
    return list(cache.get("cache", {}).values())


def export(family: str, shape: Any = None, suite: Optional[str] = None, *, out: Any = "exported",
           name: Optional[str] = None, torch: bool = False, config: Any = None, arch: Optional[str] = None,
           defines: Optional[dict[str, Any]] = None, db: Any = None, spec_dir: Any = None) -> dict[str, Any]:
    """Writes the stored winner (or ``config``) as standalone CUDA with a C launcher and a CMake
    target, plus the torch op with ``torch=True`` (``kforge export --json``: returns the manifest)."""
    args = [*_globals(family, db, spec_dir), "export", "--family", family, *selection_args(shape, suite),
            "--out", os.fspath(out), "--json"]
    if name:
        args += ["--name", name]
    if torch:
        args.append("--torch")
    if config is not None:
        args += ["--config", config_text(config)]
    if arch:
        args += ["--arch", arch]
    for k, v in (defines or {}).items():
        args += ["--define", f"{k}={v}"]
    return run(args, json_out=True)


def _op_name(family: str, key: str) -> str:
    base = re.sub(r"[^A-Za-z0-9_]", "_", family)
    return f"{base}_{key[:8]}"


_loaded: dict[str, Callable[..., Any]] = {}


def load(family: str, shape: Any = None, suite: Optional[str] = None, *, db: Any = None,
         spec_dir: Any = None, cache: Any = None) -> Callable[..., Any]:
    """The stored winner as a callable on torch tensors: ``torch.ops.kforge.<name>``.

    On first use the winner is exported with ``--torch`` and built (nvcc for the kernel, then the
    op through torch's extension builder) into ``cache`` (default ``~/.cache/kforge/torch``);
    later calls, in this process or another, reuse the build while the store's winner is the
    same one. The op takes the family's input buffers and returns its outputs; it works in CUDA
    graphs and under ``torch.compile`` (docs/export.md)."""
    winners = best(family, shape, suite, db=db, spec_dir=spec_dir)
    key_src = json.dumps({"family": family, "shape": _cli.shape_text(shape) if isinstance(shape, (str, dict)) else shape,
                          "suite": suite, "winners": [(w.get("shape"), w.get("config"), w.get("device")) for w in winners]},
                         sort_keys=True, default=str)
    key = hashlib.sha256(key_src.encode()).hexdigest()
    if key in _loaded:
        return _loaded[key]
    name = _op_name(family, key)
    folder = Path(cache) if cache is not None else cache_root() / "torch"
    out = folder / name
    loader = out / "torch" / "load.py"
    if not loader.is_file():
        export(family, shape, suite, out=out, name=name, torch=True, db=db, spec_dir=spec_dir)
    spec = importlib.util.spec_from_file_location(f"kforge_torch_{name}", loader)
    if spec is None or spec.loader is None:
        raise KforgeError(f"{loader}: cannot import the exported op's loader")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    op = module.load()
    _loaded[key] = op
    return op
