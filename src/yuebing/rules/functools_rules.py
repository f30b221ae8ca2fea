"""``functools.partial`` built inside a differentiated function.

The partial's tangent is the tangent model's (``Tangent[partial]`` with fields ``func``, ``args``,
``keywords``): its stored arguments carry their derivatives into the call
(``transform/runtime.py: _call_partial`` gives positional arguments' rdata back as the partial's,
and adds a stored keyword's cotangent to its slot in the keywords' tangent), in reverse and forward
mode; second order's rules are in ``transform/second_order_calls.py``. A partial of a partial is
flattened by Python (``partial(partial(f, a), b)`` is ``partial(f, a, b)``): the inner partial's
stored values' fdata and tangents come first, and their cotangents go back to it.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..tangents import NoFData, NoRData, NoTangent, Tangent, zero_tangent
from .cases import Case, randn
from .core import CoDual, Dual, primal, register_frule, register_rrule
from .util import add_rdata_to, slot_rdata, slot_tangent


def _flattened(func: Any, p: functools.partial) -> bool:
    """``partial(partial(f, a), b)`` is ``partial(f, a, b)``: Python flattens a partial of a partial."""
    return isinstance(primal(func), functools.partial) and p.func is not primal(func)


def _partial_rrule(func: CoDual, *args: CoDual, **kwargs: CoDual) -> tuple[CoDual, Callable]:
    p = functools.partial(primal(func), *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    args_f = tuple(a.fdata if isinstance(a, CoDual) else NoFData for a in args)
    func_f = func.fdata if isinstance(func, CoDual) else NoFData
    keywords = {k: slot_tangent(v) for k, v in kwargs.items()}  # a mutable dict: cotangents gather in it
    inner = _Inner(primal(func), func_f, set(kwargs)) if _flattened(func, p) else None
    if inner is not None:  # the inner partial's stored values come first, its keywords under ours
        func_f, args_f = inner.func_f, inner.args_f + args_f
        keywords = {**{k: t for k, t in inner.keywords.items() if k not in keywords}, **keywords}
    fd = Tangent(functools.partial, {"func": func_f, "args": args_f, "keywords": keywords})
    n = len(args)

    def pullback(dy: Any) -> tuple:
        stored = dy.fields.get("args", NoRData) if isinstance(dy, Tangent) else NoRData
        func_r = dy.fields.get("func", NoRData) if isinstance(dy, Tangent) else NoRData
        rs = tuple(stored[i] if isinstance(stored, tuple) and i < len(stored) else NoRData for i in range(len(p.args)))
        if inner is not None:
            func_r = inner.rdata(rs[:len(rs) - n], func_r, keywords)
        return (NoRData, func_r, *rs[len(rs) - n:], *(slot_rdata(keywords[k]) for k in kwargs))

    return CoDual(p, fd), pullback


class _Inner:
    """The fdata of a partial flattened into a new one, and the way its cotangents go back."""

    def __init__(self, q: functools.partial, q_f: Any, overridden: set) -> None:
        fields = q_f.fields if isinstance(q_f, Tangent) else {}
        self.func_f = fields.get("func", NoFData)
        stored = fields.get("args", NoFData)
        self.args_f = tuple(stored[i] if isinstance(stored, tuple) and i < len(stored) else NoFData
                            for i in range(len(q.args)))
        self.keywords = fields.get("keywords", {}) if isinstance(fields.get("keywords"), dict) else {}
        self.overridden = overridden  # keywords the new partial gives again: the inner values go unused

    def rdata(self, stored_r: tuple, func_r: Any, keywords: dict) -> Any:
        """The inner partial's rdata; its keywords' cotangents (gathered in the new partial's
        slots) are moved into its own slots."""
        for k in self.keywords:
            if k in self.overridden:
                continue
            self.keywords[k] = add_rdata_to(self.keywords[k], slot_rdata(keywords[k]))
            keywords[k] = zero_tangent(keywords[k])
        fields = {"args": stored_r} if any(r is not NoRData for r in stored_r) else {}
        if func_r is not NoRData:
            fields["func"] = func_r
        return Tangent(functools.partial, fields) if fields else NoRData


def _partial_frule(func: Dual, *args: Dual, **kwargs: Dual) -> Dual:
    p = functools.partial(primal(func), *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
    args_t = tuple(a.tangent if isinstance(a, Dual) else NoTangent for a in args)
    func_t = func.tangent if isinstance(func, Dual) else NoTangent
    keywords = {k: v.tangent if isinstance(v, Dual) else NoTangent for k, v in kwargs.items()}
    if _flattened(func, p):  # the inner partial's stored tangents first, its keywords under ours
        fields = func_t.fields if isinstance(func_t, Tangent) else {}
        stored = fields.get("args", NoTangent)
        n_inner = len(primal(func).args)
        args_t = tuple(stored[i] if isinstance(stored, tuple) and i < len(stored) else NoTangent
                       for i in range(n_inner)) + args_t
        inner_kw = fields.get("keywords") if isinstance(fields.get("keywords"), dict) else {}
        keywords = {**{k: t for k, t in inner_kw.items() if k not in keywords}, **keywords}
        func_t = fields.get("func", NoTangent)
    return Dual(p, Tangent(functools.partial, {"func": func_t, "args": args_t, "keywords": keywords}))


register_rrule(functools.partial, _partial_rrule)
register_frule(functools.partial, _partial_frule)

#: the attributes of a partial holding what it stored (``objects.py`` reads them here)
PARTIAL_PARTS = ("func", "args", "keywords")


def read_part(p: CoDual, name: str) -> tuple[CoDual, Callable]:
    """``p.func``, ``p.args``, ``p.keywords`` in reverse mode: that part of the partial's fdata
    (a tuple's, a dict of slots), its rdata the partial's. (Read as constants, their derivatives
    were lost: 0 for ``np.sum(functools.partial(f, x).args[0])``.)"""
    v = getattr(p.primal, name)
    fields = p.fdata.fields if isinstance(p.fdata, Tangent) else {}
    fd = fields.get(name, NoFData)
    if isinstance(fd, tuple) and all(part is NoFData for part in fd):
        fd = NoFData
    if name == "keywords" and not isinstance(fd, dict):  # (a partial made outside: constants)
        fd = {k: zero_tangent(value) for k, value in v.items()}
    return CoDual(v, fd), lambda dy: NoRData if dy is NoRData else Tangent(functools.partial, {name: dy})


def part_tangent(p: Dual, name: str) -> Dual:
    """The same in forward mode: that part of the partial's tangent."""
    v = getattr(p.primal, name)
    t = p.tangent.fields.get(name, NoTangent) if isinstance(p.tangent, Tangent) else NoTangent
    if isinstance(t, tuple) and all(part is NoTangent for part in t):
        t = NoTangent
    return Dual(v, zero_tangent(v) if t is NoTangent else t)


def _scaled_power(x: float) -> float:
    return functools.partial(pow, x)(3.0) + functools.partial(max, 0.5)(x) + functools.partial(_weighted, w=x * x)(x)


def _parts_read(x: float) -> float:
    p = functools.partial(_weighted, x * x, w=x)
    return p.args[0] * p.keywords["w"] + p.func(x, w=2.0) + p(w=1.5)


def _weighted(v: float, w: float = 1.0) -> float:
    return v * w


CASES = [
    Case(_scaled_power, 1.3, name="functools.partial built and called"),
    Case(_scaled_power, randn() ** 2 + 0.6, name="functools.partial built and called (random point)"),
    Case(_parts_read, 0.7, name="functools.partial's func, args and keywords read"),
]
