"""``functools.partial`` built inside a differentiated function.

The partial's tangent is the tangent model's (``Tangent[partial]`` with fields ``func``, ``args``,
``keywords``): its stored positional arguments carry their derivatives into the call
(``transform/runtime.py: _call_partial`` gives their rdata back as the partial's), in reverse and
forward mode. Keyword arguments that carry a derivative are refused (their cotangents are not
routed back out of the call yet): pass such values positionally. Second order refuses calls of
partials, so it refuses building them too (no second-order declaration).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..tangents import NoFData, NoRData, NoTangent, Tangent
from ..tangents import kinds as K
from .cases import Case, randn
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule


def _refuse_differentiable_keywords(kwargs: dict) -> None:
    for key, value in kwargs.items():
        if K.primal_kind(primal(value)) is not K.NONDIFF:
            raise RuleArgumentError(f"functools.partial(..., {key}=...): yuebing follows derivatives through a "
                                    "partial's positional arguments only; pass this value positionally")


def _partial_rrule(func: CoDual, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    _refuse_differentiable_keywords(kwargs)
    p = functools.partial(primal(func), *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    args_f = tuple(a.fdata if isinstance(a, CoDual) else NoFData for a in args)
    func_f = func.fdata if isinstance(func, CoDual) else NoFData
    if func_f is NoFData and all(f is NoFData for f in args_f):
        fd: Any = NoFData
    else:
        fd = Tangent(functools.partial, {"func": func_f, "args": args_f, "keywords": {}})
    n = len(args)

    def pullback(dy: Any) -> tuple:
        stored = dy.fields.get("args", NoRData) if isinstance(dy, Tangent) else NoRData
        rs = tuple(stored[i] if isinstance(stored, tuple) and i < len(stored) else NoRData for i in range(n))
        func_r = dy.fields.get("func", NoRData) if isinstance(dy, Tangent) else NoRData
        return (NoRData, func_r, *rs, *(NoRData for _ in kwargs))

    return CoDual(p, fd), pullback


def _partial_frule(func: Dual, *args: Dual, **kwargs: Dual) -> Dual:
    _refuse_differentiable_keywords(kwargs)
    p = functools.partial(primal(func), *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    args_t = tuple(a.tangent if isinstance(a, Dual) else NoTangent for a in args)
    func_t = func.tangent if isinstance(func, Dual) else NoTangent
    if func_t is NoTangent and all(t is NoTangent for t in args_t):
        return Dual(p, NoTangent)
    return Dual(p, Tangent(functools.partial, {"func": func_t, "args": args_t, "keywords": {}}))


register_rrule(functools.partial, _partial_rrule)
register_frule(functools.partial, _partial_frule)


def _scaled_power(x: float) -> float:
    return functools.partial(pow, x)(3.0) + functools.partial(max, 0.5)(x)


CASES = [
    Case(_scaled_power, 1.3, name="functools.partial built and called"),
    Case(_scaled_power, randn() ** 2 + 0.6, name="functools.partial built and called (random point)"),
]
