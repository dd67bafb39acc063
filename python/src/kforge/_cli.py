"""Runs the ``kforge`` binary: finding it, passing the common options, reading ``--json`` output.

Every Python call is one process of the CLI. That keeps a CUDA fault in a kernel under test out of
the caller's process (the CLI already isolates evaluations in workers, and a broken driver state
dies with the process), keeps the Python package free of any ABI coupling to torch's CUDA
runtime, and makes the CLI's one-line errors the exceptions' messages.
"""
from __future__ import annotations

import json
import logging
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

log = logging.getLogger("kforge")

PathLike = "str | os.PathLike[str]"


class KforgeError(RuntimeError):
    """A kforge command failed (exit code 1): the message is the CLI's one-line error.

    ``returncode``, ``command`` (the argument list), ``stderr`` (everything it printed there) and
    ``stdout`` (what it printed before failing: a check's rows) are kept.
    """

    def __init__(self, message: str, returncode: int = 1, command: Sequence[str] = (), stderr: str = "",
                 stdout: str = "") -> None:
        super().__init__(message)
        self.returncode = returncode
        self.command = list(command)
        self.stderr = stderr
        self.stdout = stdout


class KforgeUsageError(KforgeError, ValueError):
    """The command line was refused (exit code 2): an unknown value, a malformed shape, ..."""


def executable() -> str:
    """The kforge binary: ``$KFORGE_EXECUTABLE``, else the one ``pip install`` put beside this
    interpreter's scripts, else ``kforge`` on PATH."""
    env = os.environ.get("KFORGE_EXECUTABLE")
    if env:
        if not os.access(env, os.X_OK):
            raise KforgeError(f"KFORGE_EXECUTABLE={env} is not an executable file")
        return env
    candidates = [Path(sysconfig.get_paths()["scripts"]) / "kforge", Path(sys.prefix) / "bin" / "kforge"]
    for c in candidates:
        if c.is_file() and os.access(c, os.X_OK):
            return str(c)
    found = shutil.which("kforge")
    if found:
        return found
    raise KforgeError("no kforge binary: install the package (pip install ./python) or set KFORGE_EXECUTABLE")


def global_args(db: Optional[PathLike] = None, spec_dir: Optional[PathLike] = None,
                cache_dir: Optional[PathLike] = None) -> list[str]:
    """The options every command takes, before the command's name."""
    out: list[str] = []
    if db is not None:
        out += ["--db", os.fspath(db)]
    if spec_dir is not None:
        out += ["--spec-dir", os.fspath(spec_dir)]
    if cache_dir is not None:
        out += ["--cache-dir", os.fspath(cache_dir)]
    return out


def _error_line(stderr: str) -> str:
    lines = [ln.strip() for ln in stderr.splitlines() if ln.strip()]
    for ln in reversed(lines):  # the CLI's error is its last "kforge: ..." line
        if ln.startswith("kforge: "):
            return ln[len("kforge: "):]
    return lines[-1] if lines else "kforge failed without a message"


# "[ 12/80 ]"-free progress: the CLI's lines carry "evals N" or "N/M"; tqdm shows them when present.
_EVALS = re.compile(r"\b(\d+)\s*/\s*~?(\d+)\b")


class _Progress:
    """Relays the CLI's stderr to logging; with tqdm installed, a bar follows "N/M" counts."""

    def __init__(self, what: str, bar: bool) -> None:
        self.what = what
        self.bar = None
        self._want_bar = bar

    def line(self, text: str) -> None:
        text = text.rstrip()
        if not text:
            return
        m = _EVALS.search(text) if self._want_bar else None
        if m:
            done, total = int(m.group(1)), int(m.group(2))
            if self.bar is None and total > 0:
                try:
                    from tqdm.auto import tqdm  # optional
                    self.bar = tqdm(total=total, desc=self.what, leave=False)
                except ImportError:
                    self._want_bar = False
            if self.bar is not None:
                self.bar.total = max(total, done)
                self.bar.n = done
                self.bar.refresh()
        log.info("%s", text.removeprefix("kforge: "))

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()


def run(args: Sequence[str], *, json_out: bool = False, progress: Optional[str] = None,
        cwd: Optional[PathLike] = None) -> Any:
    """Runs ``kforge ARGS``; returns its stdout parsed as JSON (``json_out``) or as text.

    stderr is relayed line by line to the ``kforge`` logger (INFO), so a long search reports its
    progress while it runs; ``progress`` names a tqdm bar. A non-zero exit raises KforgeError
    (KforgeUsageError for exit 2) with the CLI's one-line error as the message.
    """
    cmd = [executable(), *args]
    log.debug("running %s", " ".join(cmd))
    relay = _Progress(progress or (args[0] if args else "kforge"), progress is not None)
    err_lines: list[str] = []
    with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          cwd=None if cwd is None else os.fspath(cwd)) as p:
        import threading

        out_chunks: list[str] = []
        reader = threading.Thread(target=lambda: out_chunks.append(p.stdout.read()), daemon=True)  # type: ignore[union-attr]
        reader.start()
        assert p.stderr is not None
        buf = ""
        while True:
            ch = p.stderr.read(1)
            if not ch:
                break
            if ch in "\r\n":  # progress lines rewrite themselves with \r on a terminal
                if buf:
                    err_lines.append(buf)
                    relay.line(buf)
                buf = ""
            else:
                buf += ch
        if buf:
            err_lines.append(buf)
            relay.line(buf)
        reader.join()
        rc = p.wait()
    relay.close()
    stdout = "".join(out_chunks)
    stderr = "\n".join(err_lines)
    if rc != 0:
        cls = KforgeUsageError if rc == 2 else KforgeError
        raise cls(_error_line(stderr), rc, cmd, stderr, stdout)
    if not json_out:
        return stdout
    try:
        return json.loads(stdout)
    except json.JSONDecodeError as e:
        raise KforgeError(f"kforge {args[0] if args else ''}: output is not JSON ({e})", 0, cmd, stderr) from e


def shape_text(shape: "str | dict[str, Any] | None") -> Optional[str]:
    """A shape as the CLI takes it: ``{"M": 64, "dtype": "f16"}`` or ``"M=64,dtype=f16"``."""
    if shape is None or isinstance(shape, str):
        return shape
    return ",".join(f"{k}={v}" for k, v in shape.items())


def config_text(config: "str | dict[str, Any]") -> str:
    return config if isinstance(config, str) else ",".join(f"{k}={v}" for k, v in config.items())


def selection_args(shape: Any = None, suite: Optional[str] = None) -> list[str]:
    """``--shape`` (one, or a list of them) or ``--suite``."""
    out: list[str] = []
    shapes: Iterable[Any]
    if shape is None:
        shapes = []
    elif isinstance(shape, (str, dict)):
        shapes = [shape]
    else:
        shapes = shape
    for s in shapes:
        out += ["--shape", shape_text(s) or ""]
    if suite is not None:
        out += ["--suite", suite]
    return out
