"""``functools.partial`` built inside a differentiated function.

The partial's tangent is the tangent model's (``Tangent[partial]`` with fields ``func``, ``args``,
``keywords``): its stored arguments carry their derivatives into the call
(``transform/runtime.py: _call_partial`` gives positional arguments' rdata back as the partial's,
and adds a stored keyword's cotangent to its slot in the keywords' tangent), in reverse and forward
mode. Second order refuses calls of partials, so it refuses building them too (no second-order
declaration).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..tangents import NoFData, NoRData, NoTangent, Tangent
from .cases import Case, randn
from .core import CoDual, Dual, primal, register_frule, register_rrule
from .util import slot_rdata, slot_tangent


def _partial_rrule(func: CoDual, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    p = functools.partial(primal(func), *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    args_f = tuple(a.fdata if isinstance(a, CoDual) else NoFData for a in args)
    func_f = func.fdata if isinstance(func, CoDual) else NoFData
    keywords = {k: slot_tangent(v) for k, v in kwargs.items()}  # a mutable dict: cotangents gather in it
    fd = Tangent(functools.partial, {"func": func_f, "args": args_f, "keywords": keywords})
    n = len(args)

    def pullback(dy: Any) -> tuple:
        stored = dy.fields.get("args", NoRData) if isinstance(dy, Tangent) else NoRData
        rs = tuple(stored[i] if isinstance(stored, tuple) and i < len(stored) else NoRData for i in range(n))
        func_r = dy.fields.get("func", NoRData) if isinstance(dy, Tangent) else NoRData
        return (NoRData, func_r, *rs, *(slot_rdata(keywords[k]) for k in kwargs))

    return CoDual(p, fd), pullback


def _partial_frule(func: Dual, *args: Dual, **kwargs: Dual) -> Dual:
    p = functools.partial(primal(func), *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    args_t = tuple(a.tangent if isinstance(a, Dual) else NoTangent for a in args)
    func_t = func.tangent if isinstance(func, Dual) else NoTangent
    keywords = {k: v.tangent if isinstance(v, Dual) else NoTangent for k, v in kwargs.items()}
    return Dual(p, Tangent(functools.partial, {"func": func_t, "args": args_t, "keywords": keywords}))


register_rrule(functools.partial, _partial_rrule)
register_frule(functools.partial, _partial_frule)


def _scaled_power(x: float) -> float:
    return functools.partial(pow, x)(3.0) + functools.partial(max, 0.5)(x) + functools.partial(_weighted, w=x * x)(x)


def _weighted(v: float, w: float = 1.0) -> float:
    return v * w


CASES = [
    Case(_scaled_power, 1.3, name="functools.partial built and called"),
    Case(_scaled_power, randn() ** 2 + 0.6, name="functools.partial built and called (random point)"),
]
