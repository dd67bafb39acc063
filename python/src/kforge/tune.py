"""``kforge.tune_kernel``: Kernel Tuner's entry point, run as a kforge search.

The kernel string, its tuning parameters and its data become a family in a folder of its own
(``~/.cache/kforge/families/<kernel>_<hash>/``: the spec, the template, the reference stub and the
arguments as raw files), named by a hash of all of it, so the same call finds the same family and
its stored results again. Then the family is searched (or, with ``check=True``, every valid config
is compiled with NVRTC, no GPU needed) into the usual store, where ``kforge.best``,
``kforge.export`` and ``kforge.load`` take it by name like any family. docs/python.md lists
which of Kernel Tuner's arguments map and how.
"""
from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Optional, Sequence

from . import api, restrictions as rx
from ._cli import KforgeUsageError

log = logging.getLogger("kforge")

# Kernel Tuner strategy names -> kforge's (None: Kernel Tuner's default, brute force).
STRATEGIES = {None: "exhaustive", "brute_force": "exhaustive", "random_sample": "random",
              "simulated_annealing": "anneal", "genetic_algorithm": "evo"}

# Arguments kforge has no counterpart for: refused when given, rather than silently ignored.
_UNSUPPORTED = ("verify", "smem_args", "cmem_args", "texmem_args", "observers", "metrics", "objective",
                "objective_higher_is_better", "simulation_mode")
# Accepted and without effect (kforge decides these itself): documented in docs/python.md.
_IGNORED = ("iterations", "log", "device", "platform", "verbose", "quiet", "compiler")

_NUMPY_DTYPES = {"float32": "f32", "float16": "f16", "int32": "i32"}


@dataclass
class KernelParam:
    name: str
    pointer: bool
    const: bool


@dataclass
class _Dims:
    """Integer sizes of the problem as family dimensions: equal values share one dimension,
    named after what first had it (a scalar argument, problem_size_x, an array's axis), so the
    exported op reads them from its inputs' shapes."""
    names: dict[int, str] = field(default_factory=dict)
    order: list[tuple[str, int]] = field(default_factory=list)

    def dim(self, value: int, name: str) -> str:
        if value not in self.names:
            self.names[value] = name
            self.order.append((name, value))
        return self.names[value]


def _source_text(kernel_source: Any) -> str:
    if isinstance(kernel_source, (list, tuple)):
        if len(kernel_source) != 1:
            raise KforgeUsageError("tune_kernel: several source files are not supported; give one kernel string or file")
        kernel_source = kernel_source[0]
    if isinstance(kernel_source, os.PathLike) or (isinstance(kernel_source, str) and "\n" not in kernel_source
                                                  and os.path.isfile(kernel_source)):
        return Path(kernel_source).read_text()
    if callable(kernel_source):
        raise KforgeUsageError("tune_kernel: a kernel source generator function is not supported")
    return str(kernel_source)


def kernel_params(source: str, kernel_name: str) -> list[KernelParam]:
    """The entry's parameters from its definition (a pointer whose pointee is const is an input)."""
    m = re.search(r"__global__[^;{(]*?\b" + re.escape(kernel_name) + r"\s*\(", source)
    if not m:
        raise KforgeUsageError(f"tune_kernel: no __global__ function named {kernel_name} in the kernel source")
    depth, i = 1, m.end()
    while i < len(source) and depth:
        depth += {"(": 1, ")": -1}.get(source[i], 0)
        i += 1
    text = re.sub(r"/\*.*?\*/|//[^\n]*", " ", source[m.end():i - 1], flags=re.S)
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part or part == "void":
            continue
        ident = re.findall(r"[A-Za-z_]\w*", part)
        star = part.find("*")
        out.append(KernelParam(name=ident[-1] if ident else f"arg{len(out)}", pointer=star >= 0 or "[" in part,
                               const=star >= 0 and re.search(r"\bconst\b", part[:star]) is not None))
    return out


_LIBC_INCLUDE = re.compile(r"\s*#\s*include\s*<(stdio|stdlib|math|cstdio|cstdlib|cmath)(\.h)?>")


def _wrap_extern_c(source: str) -> str:
    """NVRTC finds the entry by its plain name: wrap the code in extern "C" (as PyCUDA, Kernel
    Tuner's usual backend, does), keeping #include lines outside the block."""
    if 'extern "C"' in source:
        return source
    includes, body = [], []
    for line in source.splitlines():
        if _LIBC_INCLUDE.match(line):  # NVRTC has none of them; printf and the math are built in
            includes.append("// (kforge: NVRTC has no C library header) " + line.strip())
        else:
            (includes if line.lstrip().startswith("#include") else body).append(line)
    return "\n".join(includes + ['extern "C" {'] + body + ['}  // extern "C"', ""])


def _prelude(tune_params: dict[str, list[Any]], block_names: Sequence[str], grid_divs: Sequence[str],
             problem: Sequence[int], defines: dict[str, Any]) -> str:
    """Kernel Tuner's #defines (each parameter by its own name, block_size_*, grid_size_*,
    kernel_tuner) over kforge's KF_* ones."""
    lines = ["// kforge.tune_kernel: Kernel Tuner's names over kforge's KF_* defines", "#define kernel_tuner 1"]
    for name, values in tune_params.items():
        if all(isinstance(v, int) for v in values):
            lines.append(f"#define {name} KF_{name.upper()}")
        else:
            for k, v in enumerate(values):
                lines.append(f"#{'if' if k == 0 else 'elif'} defined(KF_{name.upper()}_{str(v).upper()})")
                lines.append(f"#define {name} {v}")
            lines.append("#endif")
    for name, default in zip(("block_size_x", "block_size_y", "block_size_z"), (256, 1, 1)):
        lines += [f"#ifndef {name}", f"#define {name} {default}", "#endif"]
    for axis, (size, div) in enumerate(zip(problem, grid_divs)):
        lines.append(f"#define grid_size_{'xyz'[axis]} ((({size}) + ({div}) - 1) / ({div}))")
    for k, v in defines.items():
        lines.append(f"#define {k} {v}")
    return "\n".join(lines) + "\n"


def _divisor(div: Optional[Sequence[str]], default: str, tune_params: dict[str, Any]) -> list[str]:
    if div is None:
        return [default] if default in tune_params else []
    if isinstance(div, str):
        div = [div]
    return list(div)


def _kforge_expr(text: str, tune_params: dict[str, Any]) -> str:
    try:
        return rx.translate(str(text), tune_params)
    except rx.Untranslatable as e:
        raise KforgeUsageError(f"tune_kernel: grid divisor '{text}' is not an expression over the parameters ({e})")


@dataclass
class GeneratedFamily:
    name: str
    folder: Path
    shape: dict[str, int]


def build_family(kernel_name: str, kernel_source: Any, problem_size: Any, arguments: Sequence[Any],
                 tune_params: dict[str, Sequence[Any]], *, grid_div_x: Any = None, grid_div_y: Any = None,
                 grid_div_z: Any = None, restrictions: Any = None, answer: Optional[Sequence[Any]] = None,
                 atol: float = 1e-6, block_size_names: Optional[Sequence[str]] = None,
                 compiler_options: Optional[Sequence[str]] = None, defines: Optional[dict[str, Any]] = None,
                 outputs: Optional[Sequence[Any]] = None, family: Optional[str] = None,
                 families_dir: Any = None) -> GeneratedFamily:
    """Writes the family for a Kernel Tuner problem (unless its folder exists) and names it."""
    import numpy as np

    source = _source_text(kernel_source)
    tune_params = {k: list(v) for k, v in tune_params.items()}
    for name, values in tune_params.items():
        if not values:
            raise KforgeUsageError(f"tune_kernel: tune_params['{name}'] is empty")
        for v in values:
            if isinstance(v, bool) or not (isinstance(v, (int, np.integer)) or
                                           (isinstance(v, str) and re.fullmatch(r"[A-Za-z_]\w*", v))):
                raise KforgeUsageError(f"tune_kernel: tune_params['{name}'] has {v!r}: kforge parameters take "
                                       "integers and identifier-like strings")
        tune_params[name] = [int(v) if isinstance(v, (int, np.integer)) else v for v in values]
    upper = [n.upper() for n in tune_params]
    if len(set(upper)) != len(upper):
        raise KforgeUsageError("tune_kernel: two tuning parameters differ only in case (kforge's defines are upper-cased)")
    problem = [int(problem_size)] if np.isscalar(problem_size) else [int(x) for x in problem_size]
    if not 1 <= len(problem) <= 3:
        raise KforgeUsageError("tune_kernel: problem_size takes 1 to 3 integers")
    names = list(block_size_names or ("block_size_x", "block_size_y", "block_size_z")) + ["block_size_y", "block_size_z"]
    divs = [_divisor(d, names[i], tune_params) for i, d in enumerate((grid_div_x, grid_div_y, grid_div_z))][:len(problem)]
    div_c = ["(" + ") * (".join(d) + ")" if d else "1" for d in divs]

    params = kernel_params(source, kernel_name)
    if len(params) != len(arguments):
        raise KforgeUsageError(f"tune_kernel: {kernel_name} takes {len(params)} parameters, arguments has {len(arguments)}")
    if answer is not None and len(answer) != len(arguments):
        raise KforgeUsageError("tune_kernel: answer must have one entry (or None) per argument")
    arrays = [i for i, a in enumerate(arguments) if isinstance(a, np.ndarray)]
    if outputs is not None:
        out_idx = {o if isinstance(o, int) else [p.name for p in params].index(o) for o in outputs}
    elif answer is not None and any(a is not None for a in answer):
        out_idx = {i for i, a in enumerate(answer) if a is not None}
    else:  # as written in the kernel: a pointer to non-const data may be written
        out_idx = {i for i in arrays if not params[i].const}
    for i, a in enumerate(answer or []):
        if a is not None and i not in out_idx:
            raise KforgeUsageError(f"tune_kernel: answer[{i}] is given but {params[i].name} is not among the outputs")

    dims = _Dims()
    for p, a in zip(params, arguments):  # scalars name the sizes they share first (n, not c_0)
        if isinstance(a, (np.integer, int)) and not isinstance(a, bool) and int(a) > 0:
            dims.dim(int(a), p.name)
    files: dict[str, bytes] = {}
    buffers, args = [], []
    for i, (p, a) in enumerate(zip(params, arguments)):
        if isinstance(a, np.ndarray):
            dt = _NUMPY_DTYPES.get(a.dtype.name)
            if dt is None:
                raise KforgeUsageError(f"tune_kernel: argument {i} ({p.name}) is {a.dtype.name}: kforge buffers are "
                                       "float32, float16 or int32")
            count = " * ".join(dims.dim(int(n), f"{p.name}_{k}") for k, n in enumerate(a.shape)) or "1"
            data = np.ascontiguousarray(a).astype(a.dtype.newbyteorder("<"), copy=False).tobytes()
            b: dict[str, Any] = {"name": p.name, "dtype": f"'{dt}'", "count": count,
                                 "role": "output" if i in out_idx else "input", "init": {"file": f"{p.name}.bin"}}
            files[f"{p.name}.bin"] = data
            if i in out_idx:
                if answer is not None and answer[i] is not None:
                    exp = np.asarray(answer[i])
                    if exp.size != a.size:
                        raise KforgeUsageError(f"tune_kernel: answer[{i}] has {exp.size} elements, {p.name} {a.size}")
                    files[f"{p.name}.expected.bin"] = exp.astype(a.dtype).astype(a.dtype.newbyteorder("<")).tobytes()
                    b["expected"] = f"{p.name}.expected.bin"
                else:
                    b["compare"] = False
            buffers.append(b)
            args.append({"buffer": p.name})
        elif isinstance(a, (np.integer, int)) and not isinstance(a, bool):
            kind = "i64" if isinstance(a, np.int64) else "i32"
            args.append({kind: dims.dim(int(a), p.name) if int(a) > 0 else str(int(a))})
        elif isinstance(a, (np.floating, float)):
            if isinstance(a, np.float64) and not isinstance(a, float):
                raise KforgeUsageError(f"tune_kernel: argument {i} ({p.name}) is float64: kforge scalars are f32, i32, i64")
            args.append({"f32": repr(float(a))})
        else:
            raise KforgeUsageError(f"tune_kernel: argument {i} ({p.name}) is {type(a).__name__}: kforge takes numpy "
                                   "arrays and integer or float scalars")
    if not any(b["role"] == "output" for b in buffers):
        raise KforgeUsageError("tune_kernel: no argument is an output: name them with outputs=[...] (indices or names)")
    problem_dims = [dims.dim(n, f"problem_size_{'xyz'[k]}") for k, n in enumerate(problem)]

    constraints, rest = rx.split(restrictions, tune_params)
    if rest:
        allowed = rx.allowed_configs(rest, tune_params)
        if not allowed:
            raise KforgeUsageError("tune_kernel: no config passes the restrictions")
        constraints.append(rx.decision_tree(list(tune_params), list(tune_params.values()), allowed))
    block = [_kforge_expr(n, tune_params) if n in tune_params else str(d)
             for n, d in zip(names[:3], (256, 1, 1))]
    grid = [f"ceil_div({pd}, {_kforge_expr(dc, tune_params) if dc != '1' else '1'})"
            for pd, dc in zip(problem_dims, div_c)]
    template = _prelude(tune_params, names[:3], div_c, problem, dict(defines or {})) + "\n" + _wrap_extern_c(source)
    reference = 'extern "C" __global__ void kf_no_reference(const void*) {}\n'
    total_bytes = sum(len(files[f"{b['name']}.bin"]) for b in buffers)
    spec = {
        "name": "",
        "description": f"Kernel Tuner problem {kernel_name} (kforge.tune_kernel)",
        "template": "kernel.cu", "entry": kernel_name,
        "compile_options": ["--std=c++17", *(compiler_options or [])],
        "params": tune_params,
        "constraints": constraints,
        "dims": {n: {"type": "int", "min": 1, "max": 2**62} for n, _ in dims.order},
        "suites": {"default": [{n: v for n, v in dims.order}]},
        "buffers": buffers, "args": args,
        "launch": {"grid": grid, "block": block, "smem": "0"},
        "reference": {"template": "reference.cu", "entry": "kf_no_reference", "args": [{"buffer": buffers[0]["name"]}],
                      "launch": {"grid": ["1"], "block": ["1"]}},
        "tolerance": {"default": {"max_abs": float(atol), "rel_l2": 1e30}},
        "cost": {"flops": "0", "bytes": str(total_bytes)},
    }
    h = hashlib.sha256(json.dumps(spec, sort_keys=True).encode() + template.encode())
    for k in sorted(files):
        h.update(k.encode() + hashlib.sha256(files[k]).digest())
    name = family or f"{re.sub(r'[^A-Za-z0-9_]', '_', kernel_name)}_{h.hexdigest()[:10]}"
    spec["name"] = name
    root = Path(families_dir) if families_dir is not None else api.families_dir()
    folder = root / name
    text = json.dumps(spec, indent=2)
    if not (folder / f"{name}.json").is_file() or (folder / f"{name}.json").read_text() != text:
        root.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{name}.", dir=root))
        (tmp / "kernel.cu").write_text(template)
        (tmp / "reference.cu").write_text(reference)
        for k, v in files.items():
            (tmp / k).write_bytes(v)
        (tmp / f"{name}.json").write_text(text)
        if folder.exists():
            shutil.rmtree(folder)
        os.replace(tmp, folder)
        log.info("tune_kernel: family %s in %s", name, folder)
    return GeneratedFamily(name, folder, {n: v for n, v in dims.order})


def tune_kernel(kernel_name: str, kernel_source: Any, problem_size: Any, arguments: Sequence[Any],
                tune_params: dict[str, Sequence[Any]], grid_div_x: Any = None, grid_div_y: Any = None,
                grid_div_z: Any = None, restrictions: Any = None, answer: Optional[Sequence[Any]] = None,
                atol: float = 1e-6, lang: Optional[str] = None, compiler_options: Optional[Sequence[str]] = None,
                defines: Optional[dict[str, Any]] = None, block_size_names: Optional[Sequence[str]] = None,
                strategy: Optional[str] = None, strategy_options: Optional[dict[str, Any]] = None,
                cache: Any = None, *, check: bool = False, arch: Any = "sm_90", outputs: Optional[Sequence[Any]] = None,
                family: Optional[str] = None, db: Any = None, families_dir: Any = None,
                search_args: Sequence[str] = (), **kt_only: Any) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Kernel Tuner's ``tune_kernel``, searched by kforge; returns ``(results, env)`` like it.

    ``results``: Kernel Tuner's records (each parameter, ``time`` in ms, ``times``), from the store;
    ``env``: the family's name and folder, the shape, the campaign and the store, so that
    ``kforge.best(env["family"])`` and ``kforge.load(env["family"])`` find them. kforge-only
    keywords: ``check`` (compile every valid config for ``arch`` instead of searching, no GPU; the
    rows count the configs that fail to compile, which a search would skip, as Kernel Tuner does),
    ``outputs`` (which arrays the kernel writes, by index or name), ``family`` (a name instead of
    the hashed one), ``db``, ``families_dir``, ``search_args`` (more ``kforge search`` options)."""
    for k in kt_only:
        if k in _UNSUPPORTED and kt_only[k] not in (None, False):
            raise KforgeUsageError(f"tune_kernel: {k} is not supported by kforge (docs/python.md)")
        if k not in _UNSUPPORTED and k not in _IGNORED:
            raise TypeError(f"tune_kernel() got an unexpected keyword argument '{k}'")
    if lang not in (None, "CUDA", "cuda", "cupy", "nvcuda"):
        raise KforgeUsageError(f"tune_kernel: lang={lang}: kforge tunes CUDA kernels only")
    if strategy not in STRATEGIES:
        raise KforgeUsageError(f"tune_kernel: strategy {strategy} (kforge maps {', '.join(k for k in STRATEGIES if k)})")
    fam = build_family(kernel_name, kernel_source, problem_size, arguments, tune_params, grid_div_x=grid_div_x,
                       grid_div_y=grid_div_y, grid_div_z=grid_div_z, restrictions=restrictions, answer=answer,
                       atol=atol, block_size_names=block_size_names, compiler_options=compiler_options,
                       defines=defines, outputs=outputs, family=family, families_dir=families_dir)
    env: dict[str, Any] = {"family": fam.name, "spec_dir": str(fam.folder), "shape": fam.shape,
                           "db": os.fspath(db) if db is not None else "results.db"}
    if check:
        rows = api.check(fam.name, fam.shape, arch=arch, allow_failed=True, spec_dir=fam.folder)
        env["mode"] = "check"
        return rows, env
    opts = dict(strategy_options or {})
    evals = opts.pop("max_fevals", None)
    time_limit = opts.pop("time_limit", None)
    outcome = api.search(fam.name, fam.shape, strategy=STRATEGIES[strategy], evals=evals,
                         time=f"{int(time_limit)}s" if time_limit else None, extra_args=tuple(search_args),
                         db=db, spec_dir=fam.folder)
    env.update(mode="search", outcome=outcome, campaign=outcome.get("campaign_id", outcome.get("campaign")))
    results = api.results(fam.name, fam.shape, campaign=env["campaign"], db=db, spec_dir=fam.folder)
    if cache is not None:
        api._cli.run([*api._cli.global_args(db, fam.folder), "results", "--format", "kernel-tuner-cache",
                      "--family", fam.name, "--shape", api._cli.shape_text(fam.shape) or "", "--out", os.fspath(cache)])
    return results, env
