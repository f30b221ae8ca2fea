"""Inline templates for hot primitives (DESIGN.md §6).

A call the generic path would send through ``rrule`` -- a CoDual per argument, a rule lookup, a
pullback closure -- costs microseconds; Python's own ``a * b`` costs tens of nanoseconds. For the
operations that dominate scalar loops (float arithmetic, reading a float out of an array or list,
``math``/NumPy functions of one float) the generator emits the primal operation and its adjoint
inline, behind a type guard:

    forward                                        reverse
    if type(a) in _FT and type(b) in _FT:          _e = _pop()
        t = a * b; t_f = _NF                       if _e is _FAST:
        _push(a); _push(b); _push(_FAST)               _g = t_r; t_r = _NR; _b = _pop(); _a = _pop()
    else:                                              if _g is not _NR: a_r += _g * _b; b_r += _g * _a
        <generic rule call>                        else: <generic pullback>

Residuals go on the same tape as pullbacks, the marker ``_FAST`` says which path ran. Anything
the guard does not cover (arrays, ints, user types) takes the generic path, so templates only
ever speed up, never change, what a rule would compute.
"""
from __future__ import annotations

import math
import operator
from typing import Any, Callable

import numpy as np

from . import ir

FLOAT_TYPES = frozenset({float, np.float64})
SEQUENCE_TYPES = frozenset({list, np.ndarray})


class Fast:
    """The tape marker pushed by a template's forward code."""

    def __repr__(self) -> str:
        return "_FAST"


FAST = Fast()

_BINARY = {
    operator.add: "+", operator.iadd: "+", operator.sub: "-", operator.isub: "-",
    operator.mul: "*", operator.imul: "*", operator.truediv: "/", operator.itruediv: "/",
}

# f(x) for a float x: the derivative as an expression of x and t = f(x)
_UNARY: dict[Any, Callable[[str, str], str]] = {
    operator.neg: lambda x, t: "-1.0",
    math.sin: lambda x, t: f"_math.cos({x})", math.cos: lambda x, t: f"-_math.sin({x})",
    math.exp: lambda x, t: t, math.log: lambda x, t: f"1.0 / {x}",
    math.sqrt: lambda x, t: f"0.5 / {t}", math.tanh: lambda x, t: f"1.0 - {t} * {t}",
    np.sin: lambda x, t: f"_math.cos({x})", np.cos: lambda x, t: f"-_math.sin({x})",
    np.exp: lambda x, t: t, np.log: lambda x, t: f"1.0 / {x}",
    np.sqrt: lambda x, t: f"0.5 / {t}", np.tanh: lambda x, t: f"1.0 - {t} * {t}",
}


class Emit:
    """What a template needs from the generator: names and expressions of atoms."""

    def __init__(self, primal: Callable[[ir.Atom], str], fdata: Callable[[ir.Atom], str],
                 rdata: Callable[[str], str], const: Callable[[Any], str]) -> None:
        self.primal, self.fdata, self.rdata, self.const = primal, fdata, rdata, const


def _is_float_atom(a: ir.Atom) -> bool:
    return isinstance(a, ir.Var) or isinstance(a, ir.Const) and type(a.value) in (int, float)


def _float_guard(e: Emit, atoms: list) -> list[str]:
    return [f"type({e.primal(a)}) in _FT" for a in atoms if isinstance(a, ir.Var)]


def _accumulate(e: Emit, a: ir.Atom, expr: str) -> list[str]:
    if not isinstance(a, ir.Var):
        return []
    r = e.rdata(a.name)
    return [f"{r} = {expr} if {r} is _NR else {r} + {expr}"]


class Template:
    """For one call: ``guard`` (a Python condition), ``forward`` lines, ``pops`` (the reverse
    line taking the residuals off the tape) and ``reverse`` lines (run when the cotangent ``_g``
    of the result is not zero)."""

    def __init__(self, guard: str, forward: list[str], reverse: list[str], pops: str = "") -> None:
        self.guard, self.forward, self.reverse, self.pops = guard, forward, reverse, pops


def _func_guard(e: Emit, s: ir.Call, value: Any) -> list[str]:
    """A call through a global path (``np.sin``) is checked to still be that function."""
    if isinstance(s.func, ir.Global):
        return [f"{s.func.path} is {e.const(value)}"]
    return []


def template_for(s: ir.Call, value: Any, e: Emit) -> Template | None:
    """The template for call ``s`` whose function is ``value`` (known at generation), if any."""
    if s.kwargs or s.star_args is not None or s.star_kwargs is not None or not s.target:
        return None
    t, tf = s.target, e.fdata(ir.Var(s.target))
    try:
        binary = _BINARY.get(value)
        unary = _UNARY.get(value)
    except TypeError:  # unhashable callable
        return None
    if binary is not None and len(s.args) == 2 and all(_is_float_atom(a) for a in s.args) \
            and any(isinstance(a, ir.Var) for a in s.args):
        return _binary(s, binary, e, t, tf)
    if unary is not None and len(s.args) == 1 and isinstance(s.args[0], ir.Var):
        return _unary(s, value, unary, e, t, tf)
    if value is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], (ir.Var, ir.Global)) \
            and (isinstance(s.args[1], ir.Var) or isinstance(s.args[1], ir.Const) and type(s.args[1].value) is int):
        return _getitem(s, e, t, tf)
    return None


def _binary(s: ir.Call, op: str, e: Emit, t: str, tf: str) -> Template:
    a, b = s.args
    pa, pb = e.primal(a), e.primal(b)
    guard = " and ".join(_float_guard(e, [a, b]))
    forward = [f"{t} = {pa} {op} {pb}; {tf} = _NF"]
    reverse: list[str] = []
    if op in "+-":
        forward.append("_push(_FAST)")
        reverse += _accumulate(e, a, "_g")
        reverse += _accumulate(e, b, "_g" if op == "+" else "-_g")
        return Template(guard, forward, reverse)
    pushes = [x for x in (a, b) if isinstance(x, ir.Var)]
    # operands go on the tape before the result is bound: the target may be an operand (s = s * v)
    forward.insert(0, "; ".join(f"_push({e.primal(x)})" for x in pushes))
    forward.append("_push(_FAST)")
    names = {id(x): f"_v{i}" for i, x in enumerate(pushes)}
    pops = "; ".join(f"{names[id(x)]} = _pop()" for x in reversed(pushes))
    va = names.get(id(a), pa)
    vb = names.get(id(b), pb)
    if op == "*":
        reverse += _accumulate(e, a, f"_g * {vb}")
        reverse += _accumulate(e, b, f"_g * {va}")
    else:  # a / b
        reverse += _accumulate(e, a, f"_g / {vb}")
        reverse += _accumulate(e, b, f"-_g * {va} / ({vb} * {vb})")
    return Template(guard, forward, reverse, pops)


def _unary(s: ir.Call, value: Any, derivative: Callable[[str, str], str], e: Emit, t: str, tf: str) -> Template:
    (x,) = s.args
    px = e.primal(x)
    guard = " and ".join(_func_guard(e, s, value) + _float_guard(e, [x]))
    call = f"-{px}" if value is operator.neg else f"{e.primal(s.func)}({px})"
    forward = [f"{t} = {call}; {tf} = _NF"]
    if value is operator.neg:
        forward.append("_push(_FAST)")
        return Template(guard, forward, _accumulate(e, x, "-_g"))
    forward.insert(0, f"_push({px})")  # before the target (which may be x) is rebound
    forward.append(f"_push({t}); _push(_FAST)")
    return Template(guard, forward, _accumulate(e, x, f"_g * ({derivative('_x', '_t')})"), "_t = _pop(); _x = _pop()")


def _getitem(s: ir.Call, e: Emit, t: str, tf: str) -> Template:
    seq, index = s.args
    ps, pi = e.primal(seq), e.primal(index)
    guard_parts = [] if isinstance(index, ir.Const) else [f"type({pi}) is int"]
    guard_parts += [f"type({ps}) in _SEQ", f"type(_v := {ps}[{pi}]) in _FT"]
    forward = [f"{t} = _v; {tf} = _NF", f"_push({e.fdata(seq)}); _push({pi}); _push(_FAST)"]
    return Template(" and ".join(guard_parts), forward, ["_sf[_i] += _g"], "_i = _pop(); _sf = _pop()")


NAMESPACE = {"_FT": FLOAT_TYPES, "_SEQ": SEQUENCE_TYPES, "_FAST": FAST, "_math": math}
