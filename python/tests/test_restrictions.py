"""Kernel Tuner restriction strings translate to kforge expressions that mean the same; the rest
become a decision tree true for exactly the configs Python's evaluation allows."""
from __future__ import annotations

import itertools
import random
import re

import pytest

from kforge import restrictions as rx

PARAMS = {"bx": [16, 32, 64, 128], "by": [1, 2, 4], "tx": [1, 2, 4, 8], "mode": ["plain", "vec"]}

TRANSLATABLE = [
    "bx * by <= 128",
    "bx == by * tx",
    "32 <= bx * tx < 256",
    "bx % 32 == 0 and not tx == 8",
    "tx in (1, 2) or mode == 'vec'",
    "by not in [2]",
    "bx / by >= 20",
    "bx // by >= 20",
    "max(bx, by * 16, tx) <= 64",
    "abs(bx - 64) <= 32",
    "bx ** 2 <= 4096",
    "(bx if mode == 'vec' else 2 * bx) <= 128",
    "True",
]


def _to_python(expr: str) -> str:
    """kforge's expression as Python: C operators, and each innermost parenthesised group
    (a ternary `c ? a : b` has one inside a group of its own) replaced by a placeholder."""
    groups: list[str] = []

    def convert(text: str) -> str:
        text = text.replace("&&", " and ").replace("||", " or ")
        text = re.sub(r"!(?!=)", " not ", text)
        if "?" in text:
            cond, rest = text.split("?", 1)
            then, other = rest.split(":", 1)
            text = f"({then}) if ({cond}) else ({other})"
        return text

    inner = re.compile(r"\(([^()]*)\)")
    while True:
        m = inner.search(expr)
        if not m:
            break
        groups.append(convert(m.group(1)))
        expr = expr[:m.start()] + f" _g{len(groups) - 1}_ " + expr[m.end():]
    expr = convert(expr)
    for k in range(len(groups) - 1, -1, -1):
        expr = expr.replace(f"_g{k}_", f"({groups[k]})")
    return expr


def _eval_kforge(expr: str, cfg: dict) -> bool:
    py = _to_python(expr)
    return bool(eval(py, {"floor": lambda v: int(v // 1), "pow": pow, "max": max, "min": min, "abs": abs}, dict(cfg)))


@pytest.mark.parametrize("text", TRANSLATABLE)
def test_translation_means_the_same(text: str) -> None:
    expr = rx.translate(text, PARAMS)
    for values in itertools.product(*PARAMS.values()):
        cfg = dict(zip(PARAMS, values))
        assert _eval_kforge(expr, cfg) == bool(eval(text, {}, dict(cfg))), (text, expr, cfg)


@pytest.mark.parametrize("text", ["bx in range(64)", "len(mode) > 3", "bx < some_global", "bx.bit_length() < 6", "bx <"])
def test_untranslatable_strings_stay_in_python(text: str) -> None:
    with pytest.raises(rx.Untranslatable):
        rx.translate(text, PARAMS)
    constraints, rest = rx.split([text, "bx > 16"], PARAMS)
    assert constraints == ["bx > 16"] and rest == [text]


def test_decision_tree_allows_exactly_the_python_set() -> None:
    rnd = random.Random(7)
    checks = [lambda p: p["bx"] * p["tx"] <= 256, lambda bx, by: bx >= 16 * by, "bx in range(16, 100)"]
    allowed = rx.allowed_configs(checks, PARAMS)
    tree = rx.decision_tree(list(PARAMS), list(PARAMS.values()), allowed)
    assert "mode" not in tree  # no restriction reads it: the tree never tests it
    allowed_set = set(allowed)
    product = list(itertools.product(*PARAMS.values()))
    for values in rnd.sample(product, 60) + allowed[:20]:
        assert _eval_kforge(tree, dict(zip(PARAMS, values))) == (values in allowed_set)


def test_decision_tree_of_everything_is_true() -> None:
    everything = list(itertools.product(*PARAMS.values()))
    assert rx.decision_tree(list(PARAMS), list(PARAMS.values()), everything) == "1"


# kforge's own parser and evaluator agree: a family whose one constraint is the translation (or
# the decision tree) has as many valid configs, counted by `kforge check --count`, as Python allows.
KERNEL = "__global__ void k(float *y) { y[threadIdx.x] = bx + by + tx; }\n"


def _kforge_count(tmp_path, restriction) -> int:
    import numpy as np

    from kforge import _cli
    from kforge.tune import build_family

    fam = build_family("k", KERNEL, 16, [np.zeros(16, np.float32)], PARAMS, restrictions=[restriction],
                       families_dir=tmp_path)
    rows = _cli.run(["--spec-dir", str(fam.folder), "--cache-dir", str(tmp_path / "cubins"), "check",
                     "--family", fam.name, "--count", "--sample", "1", "--json"], json_out=True)
    assert rows[0]["valid_exact"] and rows[0]["compiled_ok"] == 1
    return int(rows[0]["valid_configs"])


@pytest.mark.parametrize("restriction", [*TRANSLATABLE, lambda p: p["bx"] * p["tx"] <= 64 or p["mode"] == "vec"])
def test_kforge_counts_the_same_configs(kforge_bin: str, tmp_path, restriction) -> None:
    want = len(rx.allowed_configs([restriction], PARAMS))
    assert _kforge_count(tmp_path, restriction) == want
