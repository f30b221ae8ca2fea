"""Rules for builtins called as functions (DESIGN.md §4): ``abs sum round divmod pow float int
bool complex dict range enumerate zip map vars``. The builtins that order or choose elements
(``list tuple reversed sorted filter min max``) are in ``ordering.py``.

Conventions:

* These rules run where laziness cannot be seen: ``enumerate``, ``zip`` and ``map`` of lists,
  tuples or arrays (``map`` of a function that changes no data). They return a **list** (of
  tuples for ``enumerate``/``zip``), every item made at once; ``next()`` on it takes its items in
  turn. ``zip`` stops at the shortest argument; ``zip(strict=True)`` raises as Python does. Given
  an iterator, or a function that may change data, the call makes CPython's lazy iterator instead
  (``iteration.lazy_definition``, ``ir/lazy_iterators.py``).
* ``map`` calls the function's rule per element (registered, or derived from source) and runs the
  pullbacks in reverse order.
* Iterating an array (``zip(a, b)``...): a 1-D array gives NumPy scalars whose cotangents go into
  the array's fdata; a k-D array gives row *views* whose fdata are the same rows of the array's
  fdata. Other iterables (ranges, strings, sets, generators) must carry no derivative, else
  ``RuleArgumentError`` asks for a list.
* ``round``, ``int``, ``bool``, ``range``, 3-argument ``pow`` (integers only) and the quotient of
  ``divmod`` have zero derivative; ``divmod``'s remainder follows ``operator.mod``.
* ``float(x)`` passes the cotangent through (a size-1 array receives it in its fdata);
  ``complex(re, im)`` is ``re + 1j * im``.
"""
from __future__ import annotations

import builtins
import operator
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..ir.lazy_iterators import whole_map
from ..tangents import NoFData, NoRData, NoTangent
from ._partial_work import carry
from .cases import Case, ConventionCase, ListedCase, randc, randn, randpos
from . import core, float_text
from .core import CoDual, Dual, RuleArgumentError, frule, primal, register_frule, register_rrule, rrule_for, frule_for
from .operators import (
    ABS_RULES, POW_RULES, Elements, _pow_dbase, _pow_dexp, fit_element, forward_elements, forward_sequence,
    fresh_tangent, list_output, rdata_part, ref, send, tangent_free, tuple_of,
)
from .declare import nondifferentiable
from .second_order import defined_as, defined_by, linear, with_vjp
from .util import accumulate, fit_tangent, out_cotangent, output, sum_rdata, tangent

_NOARG = object()  # "not passed", distinct from any value a caller could pass

# round, int, bool, range: declared in nondifferentiable.py

register_rrule(builtins.abs, ABS_RULES[0])
register_frule(builtins.abs, ABS_RULES[1])


def _call_rrule(f: Any, *args: CoDual) -> tuple[CoDual, Callable]:
    """The reverse rule of any callable: registered, or derived from its source."""
    from . import core

    return core.derive_rrule(f if isinstance(f, CoDual) else CoDual(f, NoFData), *args)


def _kw(kwargs: dict, name: str, default: Any = None) -> Any:
    return primal(kwargs[name]) if name in kwargs else default


def _numeric(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind != "O"
    return isinstance(x, (int, float, complex, np.number, np.bool_))


# ============================================================================================
# pow, divmod, float, complex
# ============================================================================================


@rrule_for(builtins.pow)
def _pow_rrule(base, exp, mod=_NOARG):
    if mod is _NOARG or primal(mod) is None:
        out, pullback = POW_RULES[0](base, exp)
        return out, pullback if mod is _NOARG else (lambda dy: pullback(dy) + (NoRData,))
    y = pow(primal(base), primal(exp), primal(mod))  # integers only: zero derivative
    return output(y), lambda dy: (NoRData,) * 4


@frule_for(builtins.pow)
def _pow_frule(base, exp, mod=_NOARG):
    if mod is _NOARG or primal(mod) is None:
        return POW_RULES[1](base, exp)
    y = pow(primal(base), primal(exp), primal(mod))
    return Dual(y, T.zero_tangent(y))


@rrule_for(builtins.divmod)
def _divmod_rrule(a, b):
    x, z = primal(a), primal(b)
    q, r = divmod(x, z)
    out = output((q, r))
    if not (_numeric(x) and _numeric(z)):
        if tangent_free(x) and tangent_free(z):
            return out, lambda dy: (NoRData,) * 3
        raise RuleArgumentError(f"divmod: yuebing has no rule for ({type(x).__qualname__}, {type(z).__qualname__})")

    def pullback(dy):
        g = out_cotangent(out, dy)
        gr = g[1] if isinstance(g, tuple) else NoTangent
        if gr is NoTangent or gr is NoRData:
            return NoRData, NoRData, NoRData
        ga, gb = _divmod_vjp(g, (q, r), x, z)
        return NoRData, accumulate(a, ga), accumulate(b, gb)

    return out, pullback


@frule_for(builtins.divmod)
def _divmod_frule(a, b):
    x, z = primal(a), primal(b)
    q, r = divmod(x, z)
    dr: Any = NoTangent
    for arg, scale in ((a, 1), (b, -q)):
        t = tangent(arg)
        if t is not NoTangent and _numeric(primal(arg)):
            dr = scale * t if dr is NoTangent else dr + scale * t
    return Dual((q, r), _tuple_tangent(fit_tangent(NoTangent, q), fit_tangent(dr, r)))


def _tuple_tangent(*ts: Any) -> Any:
    return NoTangent if all(t is NoTangent for t in ts) else tuple(ts)


@rrule_for(builtins.float)
def _float_rrule(x=_NOARG):
    if x is _NOARG:
        return output(0.0), lambda dy: (NoRData,)
    v = primal(x)
    y = float(v)
    if isinstance(v, (str, bytes, bytearray)):
        float_text.refuse_parsed("float")  # (text parsed after float data was formatted in the call)
    differentiable = isinstance(v, (float, complex, np.floating, np.complexfloating)) or \
        isinstance(v, np.ndarray) and v.dtype.kind in "fc"

    def pullback(dy):
        if dy is NoRData or not differentiable or not isinstance(x, CoDual):
            return NoRData, NoRData
        if isinstance(v, np.ndarray):
            x.fdata += dy  # a size-1 array: float() read its only element
            return NoRData, NoRData
        return NoRData, complex(dy) if isinstance(v, (complex, np.complexfloating)) else float(dy)

    return output(y), pullback


@frule_for(builtins.float)
def _float_frule(x=_NOARG):
    if x is _NOARG:
        return Dual(0.0, 0.0)
    v, t = primal(x), tangent(x)
    y = float(v)
    if isinstance(v, (str, bytes, bytearray)):
        float_text.refuse_parsed("float")
    if t is NoTangent:
        return Dual(y, 0.0)
    return Dual(y, float(np.real(np.reshape(t, -1)[0] if isinstance(t, np.ndarray) else t)))


def _complex_value(real: Any, imag: Any) -> complex:
    parts = {name: primal(c) for name, c in (("real", real), ("imag", imag)) if c is not _NOARG}
    return complex(**parts)


@rrule_for(builtins.complex)
def _complex_rrule(real=_NOARG, imag=_NOARG):
    n = 2 if imag is not _NOARG else 1 if real is not _NOARG else 0  # rdata per bound position
    y = _complex_value(real, imag)

    def pullback(dy):
        rdatas = [NoRData]
        for c, scale in ((real, 1), (imag, 1j))[:n]:
            differentiable = dy is not NoRData and c is not _NOARG and _differentiable_number(primal(c))
            rdatas.append(accumulate(c, dy * np.conj(scale)) if differentiable else NoRData)
        return tuple(rdatas)

    return output(y), pullback


@frule_for(builtins.complex)
def _complex_frule(real=_NOARG, imag=_NOARG):
    y = _complex_value(real, imag)
    dy = 0j
    for c, scale in ((real, 1), (imag, 1j)):
        if c is not _NOARG and _differentiable_number(primal(c)) and tangent(c) is not NoTangent:
            dy += scale * complex(np.reshape(tangent(c), -1)[0] if isinstance(tangent(c), np.ndarray) else tangent(c))
    return Dual(y, dy)


def _differentiable_number(v: Any) -> bool:
    return isinstance(v, (float, complex, np.floating, np.complexfloating)) or \
        isinstance(v, np.ndarray) and v.dtype.kind in "fc"


# ============================================================================================
# sum
# ============================================================================================


@rrule_for(builtins.sum)
def _sum_rrule(iterable, start=_NOARG):
    src = Elements(iterable, "sum")
    passed = start is not _NOARG
    start = 0 if start is _NOARG else start
    s = primal(start)
    if not (_numeric(s) and all(map(_numeric, src.items))):
        return _chained_sum_rrule(src, start, passed)
    y = builtins.sum(src.items, s)
    if not src.items and y is s and isinstance(start, CoDual) and isinstance(s, np.ndarray):
        return CoDual(s, start.fdata), lambda dy: (NoRData, NoRData, NoRData)  # returned start itself
    out = output(y)

    def pullback(dy):
        g = out_cotangent(out, dy)
        for i in range(len(src) - 1, -1, -1):
            src.deliver(i, accumulate(src.codual(i), g))
        return (NoRData, src.rdata(), accumulate(start, g))[: 3 if passed else 2]

    return out, pullback


def _chained_sum_rrule(src: Elements, start: Any, passed: bool) -> tuple[CoDual, Callable]:
    """``sum`` of sequences (``sum(lists, [])``): Python adds left to right with ``+``."""
    add_rrule = _lookup_add_rrule()
    if any(_user_object(v) for v in [primal(start), *src.items]):  # __add__/__radd__ as user code
        add_rrule = _operator_protocol(operator.add, core.derive_rrule, CoDual)
    acc = start if isinstance(start, CoDual) else output(start)
    pullbacks = []
    for i in range(len(src)):
        acc, pb = add_rrule(acc, src.codual(i))
        pullbacks.append(pb)

    def pullback(dy):
        r = dy
        for i in range(len(pullbacks) - 1, -1, -1):
            _, r, r_item = pullbacks[i](r)
            src.deliver(i, r_item)
        return (NoRData, src.rdata(), r)[: 3 if passed else 2]

    return acc, pullback


def _user_object(value: Any) -> bool:
    """An instance of a class defined in Python outside the standard types (its operators are
    user code, run through the call protocol of the transforms)."""
    return type(value).__module__ not in ("builtins", "numpy") and hasattr(type(value), "__dict__") \
        and not isinstance(value, (np.ndarray, np.generic))


def _operator_protocol(op: Callable, derive: Callable, wrap: type) -> Callable:
    """``op``'s rule through the transforms' dispatch (which follows ``__add__``/``__radd__``)."""
    return lambda *args: derive(wrap(op, NoFData if wrap is CoDual else NoTangent), *args)


def _lookup_add_rrule() -> Callable:
    from .core import RRULES

    return RRULES.by_function[operator.add][0]


@frule_for(builtins.sum)
def _sum_frule(iterable, start=_NOARG):
    items = forward_elements(iterable, "sum")
    start = 0 if start is _NOARG else start
    s = primal(start)
    if not (_numeric(s) and all(_numeric(p) for p, _ in items)):
        acc = start if isinstance(start, Dual) else Dual(s, T.zero_tangent(s))
        add = _operator_protocol(operator.add, core.derive_frule, Dual) \
            if any(_user_object(v) for v in [s, *(p for p, _ in items)]) else lambda a, b: frule(operator.add, a, b)
        for p, t in items:
            acc = add(acc, Dual(p, t))
        return acc
    y = builtins.sum((p for p, _ in items), s)
    if not items and y is s and isinstance(start, Dual):
        return Dual(s, start.tangent)
    dy: Any = NoTangent
    for p, t in [(s, tangent(start))] + items:
        if t is not NoTangent and _differentiable_number(p):
            dy = t if dy is NoTangent else dy + t
    return Dual(y, fit_tangent(dy, y))


# ============================================================================================
# enumerate, zip, map
# ============================================================================================


@rrule_for(builtins.enumerate)
def _enumerate_rrule(iterable, start=_NOARG):
    src = Elements(iterable, "enumerate")
    first = 0 if start is _NOARG else operator.index(primal(start))
    out, send_back = list_output([tuple_of([(first + i, NoFData, None), ref(src, i)]) for i in range(len(src))])

    def pullback(dy):
        send_back()
        return (NoRData, src.rdata()) if start is _NOARG else (NoRData, src.rdata(), NoRData)

    return out, pullback


@frule_for(builtins.enumerate)
def _enumerate_frule(iterable, start=_NOARG):
    first = 0 if start is _NOARG else operator.index(primal(start))
    items = forward_elements(iterable, "enumerate")
    return forward_sequence(list, [((first + i, p), _tuple_tangent(NoTangent, fit_element(p, t)))
                                   for i, (p, t) in enumerate(items)])


def _zip_length(lengths: list, strict: bool) -> int:
    if strict and len(set(lengths)) > 1:
        list(zip(*(range(n) for n in lengths), strict=True))  # Python's ValueError
    return min(lengths) if lengths else 0


@rrule_for(builtins.zip)
def _zip_rrule(*iterables, **kwargs):
    srcs = [Elements(c, "zip") for c in iterables]
    n = _zip_length([len(s) for s in srcs], bool(_kw(kwargs, "strict", False)))
    out, send_back = list_output([tuple_of([ref(s, i) for s in srcs]) for i in range(n)])
    n_kw = len(kwargs)

    def pullback(dy):
        send_back()
        return (NoRData, *(s.rdata() for s in srcs)) + (NoRData,) * n_kw

    return out, pullback


@frule_for(builtins.zip)
def _zip_frule(*iterables, **kwargs):
    columns = [forward_elements(c, "zip") for c in iterables]
    n = _zip_length([len(c) for c in columns], bool(_kw(kwargs, "strict", False)))
    rows = []
    for i in range(n):
        parts = [c[i] for c in columns]
        rows.append((tuple(p for p, _ in parts), _tuple_tangent(*(fit_element(p, t) for p, t in parts))))
    return forward_sequence(list, rows)


def _unchanged_lists(iterables: tuple) -> list:
    """The list arguments of ``map`` with a copy of their items: the rules take every item at
    once, so a function that changes a list it walks (``xs.append``) must not go unseen."""
    return [(x, list(x)) for x in map(primal, iterables) if type(x) is list]


def _check_unchanged(lists: list, step: int) -> None:
    for x, items in lists:
        if len(x) != len(items) or step < len(items) and x[step] is not items[step]:
            raise RuleArgumentError(
                "map: the function given to map changed a list it iterates (CPython's map would see "
                "the change, yuebing takes the items at once); iterate with a for loop instead")


@rrule_for(builtins.map, whole_map)
def _map_rrule(function, *iterables):
    srcs = [Elements(c, "map") for c in iterables]
    n = min(len(s) for s in srcs)
    nodes, f_rdata = [], [NoRData]

    def back_of(pb_i, i):
        def back(r):
            rdatas = pb_i(r)
            f_rdata[0] = sum_rdata(f_rdata[0], rdatas[0])
            for s, r_arg in zip(srcs, rdatas[1:]):
                s.deliver(i, r_arg)
        return back

    def result():
        return (NoRData, f_rdata[0], *(s.rdata() for s in srcs))

    lists = _unchanged_lists(iterables)
    for i in range(n):
        _check_unchanged(lists, i)
        try:
            out_i, pb_i = _call_rrule(function, *(s.codual(i) for s in srcs))
        except Exception as error:  # its work and the completed calls' go with it (issue 13)
            carry(error, [node[2] for node in nodes], lambda raised: back_of(raised, i), result, "map")
            raise
        nodes.append((out_i.primal, out_i.fdata, back_of(pb_i, i)))
    _check_unchanged(lists, n)
    out = CoDual([p for p, _, _ in nodes], [fresh_tangent(p, fd) for p, fd, _ in nodes])

    def pullback(dy):
        for j in range(n - 1, -1, -1):
            nodes[j][2](rdata_part(out.fdata[j]))
        return result()

    return out, pullback


@frule_for(builtins.map, whole_map)
def _map_frule(function, *iterables):
    columns = [forward_elements(c, "map") for c in iterables]
    n = min(len(c) for c in columns)
    f = function if isinstance(function, Dual) else Dual(function, NoTangent)
    lists = _unchanged_lists(iterables)
    results = []
    for i in range(n):
        _check_unchanged(lists, i)
        results.append(frule(f, *(Dual(*c[i]) for c in columns)))
    _check_unchanged(lists, n)
    return forward_sequence(list, [(d.primal, d.tangent) for d in results])


def _map_definition(function, *iterables):
    """``map`` as a list comprehension, for batched forward mode: each call is dispatched with the
    batch, so a function that changes a container (``namedtuple._replace`` runs ``map(kwds.pop,
    fields, self)``) changes the batched tangent itself; the looped fallback would change one
    direction's slice of it and be refused."""
    return [function(*items) for items in zip(*iterables)]


_map_frule.definition, _map_frule.check = _map_definition, lambda args, kwargs: None  # type: ignore[attr-defined]


# ============================================================================================
# dict
# ============================================================================================


@rrule_for(builtins.dict)
def _dict_rrule(*args, **kwargs):
    if len(args) > 1:
        raise TypeError(f"dict expected at most 1 argument, got {len(args)}")
    values: dict = {}  # key -> (primal, fdata, back)
    source_rdata: list = []
    if args:
        m = args[0]
        mp = primal(m)
        if isinstance(mp, dict):
            mf = m.fdata if isinstance(m, CoDual) and isinstance(m.fdata, dict) else {}
            for k, v in mp.items():
                t = mf.get(k, NoTangent)
                values[k] = (v, T.fdata(t) if t is not NoTangent else NoFData, _dict_slot_back(mf, k))
            source_rdata.append(lambda: NoRData)
        else:
            src = Elements(m, "dict")
            for i in range(len(src)):
                pair = Elements(src.codual(i), "dict")
                if len(pair) != 2:
                    raise ValueError(f"dictionary update sequence element #{i} has length {len(pair)}; 2 is required")
                values[pair.items[0]] = (pair.items[1], pair.fdatas[1], _pair_back(src, i, pair))
            source_rdata.append(src.rdata)
    kw_r = {k: NoRData for k in kwargs}
    for k, c in kwargs.items():
        values[k] = (primal(c), c.fdata if isinstance(c, CoDual) else NoFData, _kw_back(kw_r, k))
    y = {k: p for k, (p, _, _) in values.items()}
    fd = {k: fresh_tangent(p, f) for k, (p, f, _) in values.items()}

    def pullback(dy):
        for k in reversed(list(values)):
            send(values[k][2], rdata_part(fd[k]))
        return (NoRData, *(get() for get in source_rdata), *kw_r.values())

    return CoDual(y, fd), pullback


def _dict_slot_back(mf: dict, k: Any) -> Callable:
    from .util import add_rdata_to

    def back(r):
        if r is not NoRData and k in mf:
            mf[k] = add_rdata_to(mf[k], r)

    return back


def _pair_back(src: Elements, i: int, pair: Elements) -> Callable:
    def back(r):
        if r is not NoRData:
            pair.deliver(1, r)
            src.deliver(i, pair.rdata())

    return back


def _kw_back(kw_r: dict, k: str) -> Callable:
    def back(r):
        kw_r[k] = sum_rdata(kw_r[k], r)

    return back


@frule_for(builtins.dict)
def _dict_frule(*args, **kwargs):
    y: dict = {}
    t: dict = {}
    if args:
        m = args[0]
        mp = primal(m)
        if isinstance(mp, dict):
            mt = tangent(m) if isinstance(tangent(m), dict) else {}
            for k, v in mp.items():
                y[k], t[k] = v, fit_element(v, mt.get(k, NoTangent))
        else:
            for pair_p, pair_t in forward_elements(m, "dict"):
                (kp, _), (vp, vt) = forward_elements(Dual(pair_p, pair_t), "dict")
                y[kp], t[kp] = vp, fit_element(vp, vt)
    for k, d in kwargs.items():
        y[k], t[k] = primal(d), fit_element(primal(d), tangent(d))
    return Dual(y, t)


# ============================================================================================
# Second order
# ============================================================================================
# pow's reverse rule is operator.pow's, whose partials _pow_vjp uses; divmod's calls _divmod_vjp.


def _pow_vjp(g, y, base, exp, mod=None):
    """``pow(base, exp)`` as ``operator.pow`` (its partials and conventions); the 3-argument form
    takes integers only: no cotangent (``mod`` is None, or the rule's "not passed" marker, else)."""
    if isinstance(mod, (int, np.integer)):
        return None, None, None
    return g * _pow_dbase(base, exp, y), g * _pow_dexp(base, exp, y), None


def _divmod_vjp(g, y, a, b):
    """``divmod(a, b) = (q, a - b q)``: the quotient has zero derivative, so the remainder is
    linear in ``(a, b)`` at a fixed ``q`` (piecewise linear, like ``operator.mod``)."""
    if not isinstance(g, tuple):  # integer operands: nothing to differentiate
        return None, None
    q = y[0]
    g_r = g[1]
    return g_r, -g_r * q


with_vjp(builtins.pow, _pow_vjp)
with_vjp(builtins.divmod, _divmod_vjp)
linear(builtins.complex, data=(0, 1, "real", "imag"))  # re + 1j * im


def _map_as_list(function, *iterables):
    """``map`` as its first-order rule computes it (a list): the function's own second order runs
    on each element; a list it changes is refused as the first-order rules refuse it."""
    lists = _unchanged_lists(iterables)
    out = []
    for items in zip(*iterables):
        _check_unchanged(lists, len(out))
        out.append(function(*items))
    _check_unchanged(lists, len(out))
    return out


nondifferentiable(_unchanged_lists, _check_unchanged)


defined_by(builtins.map, _map_as_list)
defined_by(whole_map, _map_as_list)


# ============================================================================================
# Cases
# ============================================================================================


def _square(x):
    return x * x


def _iterable_cases() -> list:
    shared = randn(3)
    return [
        ListedCase(builtins.enumerate, [1.5, shared], name="enumerate(list)"),
        ListedCase(builtins.enumerate, (1.5, 2.5), 3, name="enumerate(tuple, start=3)"),
        ListedCase(builtins.zip, [1.5, shared], (2.5, -1.0, 7.0), name="zip(list, longer tuple)"),
        ListedCase(builtins.zip, randn(3), randn(3, 2), name="zip(arrays)"),
        ListedCase(builtins.zip, [1.5, 2.5], [3.5, 4.5], kwargs={"strict": True}, name="zip(strict=True)"),
        ListedCase(builtins.map, abs, [1.5, -2.5, shared], name="map(abs, list)"),
        ListedCase(builtins.map, operator.mul, [1.5, shared], (2.0, -0.5), name="map(mul, list, tuple)"),
        ListedCase(builtins.map, _square, [1.5, -2.5], name="map(python function)", mode=("rev",)),  # no forward transform yet
        Case(dict, [("a", 1.5), ("b", shared)], name="dict(pairs)"),
        Case(dict, [["a", 1.5], ["a", 2.5]], name="dict(list pairs, repeated key)"),
        Case(dict, {"a": 1.5, "b": randn(2)}, name="dict(dict)"),
        Case(dict, {"a": 1.5}, kwargs={"b": 2.0}, name="dict(dict, keyword)"),
        Case(dict, (("x", (1.5, randn(2))),), name="dict(tuple of pairs)"),
    ]


def _vars(obj: Any) -> dict:
    """``vars(obj)``: the instance dict, whose derivatives are the object's attributes' (rules/objects.py)."""
    return obj.__dict__


defined_as(vars, _vars)

CASES = [
    Case(abs, -1.5),
    Case(abs, randn(3)),
    Case(abs, randc(2)),
    ConventionCase(abs, 0.0, expected=(0.0,), name="abs'(0) = 0"),
    Case(pow, 1.5, 2.5),
    Case(pow, randpos(3), randn(3)),
    Case(pow, 3, 4, 5, name="pow 3-argument"),
    Case(divmod, 7.5, 2.0),
    Case(divmod, -7.5, 2.0, name="divmod negative"),
    Case(divmod, randpos(3) * 5, randpos(3)),
    Case(divmod, randpos(3) * 5, 1.5, name="divmod(array, float)"),
    Case(round, 2.567, 2),
    Case(round, np.float64(2.567), name="round(numpy float)"),
    Case(float, 1.5),
    Case(float, 3),
    Case(float, np.float32(1.5), name="float(float32)"),
    Case(float, np.array(1.5), name="float(0-d array)"),
    Case(int, 2.5),
    Case(bool, 2.5),
    Case(complex, 1.5, -0.5),
    Case(complex, 1.5),
    Case(complex, randc(), 0.5, name="complex(complex, float)"),
    Case(complex, kwargs={"imag": 2.0}, name="complex(imag=2.0)"),
    Case(sum, [1.5, -0.5, 2.0]),
    Case(sum, [1.5, -0.5], 2.5, name="sum(list, start)"),
    Case(sum, [randn(3), randn(2, 3), 1.5], name="sum(arrays, broadcasting)"),
    Case(sum, [randn(2), randn(2)], kwargs={"start": 1}, name="sum(start=1)"),
    Case(sum, (1.5, randc()), name="sum(tuple with complex)"),
    Case(sum, randn(4), name="sum(1-d array)"),
    Case(sum, randn(3, 2), name="sum(2-d array rows)"),
    Case(sum, [randn(2, dtype=np.float32), randn(2, dtype=np.float32)], name="sum(float32 arrays)"),
    Case(sum, [[1.5], [randn(2)]], [], name="sum(lists, []): concatenation"),
    *_iterable_cases(),
]
