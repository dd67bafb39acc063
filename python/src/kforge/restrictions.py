"""Kernel Tuner restrictions as kforge constraints.

Kernel Tuner's string restrictions are Python expressions over the parameter names
(``"block_size_x * tile_x <= 1024"``). Those written with what kforge's expression language has
(arithmetic, comparisons, and/or/not, conditional expressions, min/max/abs, ``in (...)`` over
constants) become spec constraints, so kforge prunes its walks with them as Kernel Tuner does.
The rest (callables, and strings using anything else) are evaluated here in Python over the
product of the parameter values, exactly as Kernel Tuner evaluates them, and the configs that
pass become one constraint: a decision tree over the parameters (``p == 1 ? (...) : ...``), which
reads like any other constraint and costs one look-up per parameter to evaluate.
"""
from __future__ import annotations

import ast
import inspect
import itertools
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence

Restriction = "str | Callable[..., bool]"


class Untranslatable(ValueError):
    """The expression uses something kforge's expression language lacks."""


def _const(v: Any) -> str:
    if isinstance(v, bool):
        return "1" if v else "0"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, str) and "'" not in v:
        return f"'{v}'"
    raise Untranslatable(f"constant {v!r}")


_BINOPS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Mod: "%"}
_CMPOPS = {ast.Eq: "==", ast.NotEq: "!=", ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">="}


class _Translator:
    def __init__(self, names: Iterable[str]) -> None:
        self.names = set(names)

    def __call__(self, node: ast.AST) -> str:
        method = getattr(self, "_" + type(node).__name__, None)
        if method is None:
            raise Untranslatable(type(node).__name__)
        return method(node)

    def _Expression(self, n: ast.Expression) -> str:
        return self(n.body)

    def _Constant(self, n: ast.Constant) -> str:
        return _const(n.value)

    def _Name(self, n: ast.Name) -> str:
        if n.id in self.names:
            return n.id
        if n.id in ("True", "False"):
            return "1" if n.id == "True" else "0"
        raise Untranslatable(f"name {n.id}")

    def _BoolOp(self, n: ast.BoolOp) -> str:
        op = " && " if isinstance(n.op, ast.And) else " || "
        return "(" + op.join(self(v) for v in n.values) + ")"

    def _UnaryOp(self, n: ast.UnaryOp) -> str:
        if isinstance(n.op, ast.Not):
            return f"!({self(n.operand)})"
        if isinstance(n.op, ast.USub):
            return f"(-({self(n.operand)}))"
        if isinstance(n.op, ast.UAdd):
            return self(n.operand)
        raise Untranslatable("unary operator")

    def _BinOp(self, n: ast.BinOp) -> str:
        a, b = self(n.left), self(n.right)
        if type(n.op) in _BINOPS:
            return f"({a} {_BINOPS[type(n.op)]} {b})"
        if isinstance(n.op, ast.Div):  # Python's / is true division; kforge's int / truncates
            return f"(1.0 * {a} / {b})"
        if isinstance(n.op, ast.FloorDiv):
            return f"floor(1.0 * {a} / {b})"
        if isinstance(n.op, ast.Pow):
            return f"pow({a}, {b})"
        raise Untranslatable("binary operator")

    def _Compare(self, n: ast.Compare) -> str:
        parts = []
        left = n.left
        for op, right in zip(n.ops, n.comparators):
            if isinstance(op, (ast.In, ast.NotIn)):
                if not isinstance(right, (ast.Tuple, ast.List, ast.Set)) or not right.elts:
                    raise Untranslatable("'in' over something other than a list of constants")
                lhs = self(left)
                alts = " || ".join(f"{lhs} == {self(e)}" for e in right.elts)
                parts.append(f"({alts})" if isinstance(op, ast.In) else f"!({alts})")
            elif type(op) in _CMPOPS:
                parts.append(f"{self(left)} {_CMPOPS[type(op)]} {self(right)}")
            else:
                raise Untranslatable("comparison operator")
            left = right
        return parts[0] if len(parts) == 1 else "(" + " && ".join(parts) + ")"

    def _IfExp(self, n: ast.IfExp) -> str:
        return f"({self(n.test)} ? {self(n.body)} : {self(n.orelse)})"

    def _Call(self, n: ast.Call) -> str:
        if not isinstance(n.func, ast.Name) or n.keywords or n.func.id not in ("min", "max", "abs"):
            raise Untranslatable("call")
        args = [self(a) for a in n.args]
        if n.func.id in ("min", "max"):
            if len(args) < 2:
                raise Untranslatable(f"{n.func.id} of one argument")
            out = args[0]
            for a in args[1:]:  # kforge's min/max take two arguments
                out = f"{n.func.id}({out}, {a})"
            return out
        if len(args) != 1:
            raise Untranslatable("abs of several arguments")
        return f"abs({args[0]})"


def translate(expression: str, names: Iterable[str]) -> str:
    """A Kernel Tuner restriction string as a kforge expression; raises Untranslatable."""
    try:
        tree = ast.parse(expression.strip(), mode="eval")
    except SyntaxError as e:
        raise Untranslatable(f"not a Python expression: {e.msg}") from e
    return _Translator(names)(tree)


def _python_check(r: Any, names: Sequence[str]) -> Callable[[dict[str, Any]], bool]:
    """A restriction as Kernel Tuner evaluates it: a string with the parameters as variables,
    a callable given the config as a dict (or, when its parameters are named after tuning
    parameters, as keyword arguments)."""
    if isinstance(r, str):
        code = compile(r, "<restriction>", "eval")
        return lambda cfg: bool(eval(code, {"__builtins__": __builtins__}, dict(cfg)))  # noqa: S307 (the user's own)
    if not callable(r):
        raise TypeError(f"a restriction must be a string or a callable, not {type(r).__name__}")
    try:
        params = list(inspect.signature(r).parameters)
    except (TypeError, ValueError):
        params = []
    if params and all(p in names for p in params):
        return lambda cfg: bool(r(**{p: cfg[p] for p in params}))
    return lambda cfg: bool(r(cfg))


def split(restrictions: Any, tune_params: Mapping[str, Sequence[Any]]) -> tuple[list[str], list[Any]]:
    """(kforge constraints translated from strings, restrictions left to Python)."""
    if restrictions is None:
        return [], []
    if callable(restrictions) or isinstance(restrictions, str):
        restrictions = [restrictions]
    names = list(tune_params)
    constraints: list[str] = []
    rest: list[Any] = []
    for r in restrictions:
        if isinstance(r, str):
            try:
                constraints.append(translate(r, names))
                continue
            except Untranslatable:
                pass
        rest.append(r)
    return constraints, rest


def allowed_configs(rest: Sequence[Any], tune_params: Mapping[str, Sequence[Any]]) -> list[tuple[Any, ...]]:
    """The configs of the product that pass every restriction in ``rest`` (Python semantics)."""
    names = list(tune_params)
    checks = [_python_check(r, names) for r in rest]
    out = []
    for values in itertools.product(*(tune_params[n] for n in names)):
        cfg = dict(zip(names, values))
        if all(c(cfg) for c in checks):
            out.append(values)
    return out


def decision_tree(names: Sequence[str], domains: Sequence[Sequence[Any]], allowed: Sequence[tuple[Any, ...]]) -> str:
    """One kforge expression true exactly for the ``allowed`` configs.

    A trie over the parameters in order; a level whose every value leads to the same subtree
    tests nothing, so a restriction that reads few parameters gives a small expression."""
    memo: dict[tuple[int, tuple[tuple[Any, ...], ...]], str] = {}

    def node(level: int, rows: tuple[tuple[Any, ...], ...]) -> str:
        if not rows:
            return "0"
        if level == len(names):
            return "1"
        key = (level, rows)
        if key in memo:
            return memo[key]
        groups: dict[Any, list[tuple[Any, ...]]] = {}
        for r in rows:
            groups.setdefault(r[0], []).append(r[1:])
        subs = {v: node(level + 1, tuple(sorted(set(g), key=repr))) for v, g in groups.items()}
        if len(groups) == len(set(domains[level])) and len(set(subs.values())) == 1:
            text = next(iter(subs.values()))
        else:
            text = "0"
            for v in reversed([v for v in domains[level] if v in subs]):
                text = f"({names[level]} == {_const(v)} ? {subs[v]} : {text})"
        memo[key] = text
        return text

    return node(0, tuple(sorted(set(allowed), key=repr)))
