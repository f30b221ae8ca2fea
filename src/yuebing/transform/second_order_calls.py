"""Second-order rules of calls through Python's protocols: building and calling a
``functools.partial``, ``sum`` of user objects (``__add__``/``__radd__``), and calls with
``*seq`` and ``**mapping`` (``call_rrule2`` routes those here).

A rule takes 4-tuples ``(primal, fdata, tangent, fdata_tangent)`` and returns the output 4-tuple
and a dual pullback ``(dy, dy_tangent) -> (rdatas, rdata_tangents)`` (``transform/lifting.py``).
These rules route values and their derivatives to a callee that ``call_rrule2`` runs, so they sit
next to the dual runtime rather than among the declared classes. ``transform/second_order.py``
imports this module, which registers the rules of ``functools.partial`` and ``sum``.

A partial's fdata, tangent and fdata tangent are each a ``Tangent[partial]`` with the fields
``func``, ``args`` and ``keywords`` (the tangent model's, as ``rules/functools_rules.py`` builds
in first order): the stored arguments carry their derivatives into every call, and the call's
cotangents come back to them (positional ones as the partial's rdata, keywords into their slots).
"""
from __future__ import annotations

import builtins
import collections
import functools
import operator
from typing import Any, Callable

import numpy as np

from ..rules._partial_work import reroute
from ..rules.batched import BATCH
from ..rules.core import CoDual, Dual, SecondOrderError, describe_callable, rrule
from ..rules.core import frule as registered_frule
from ..rules.second_order import _register
from ..rules.util import add_rdata_to
from ..tangents import NoFData, NoRData, NoTangent, Tangent, fdata
from .lifting import _has_float_data, _linear_rule, _with_fdata_tangents, _zero_tangent_of

#: ``CALL_RRULE2(f, *args, **kwargs)``: the dual runtime's call of anything on 4-tuples (set by
#: ``transform/second_order.py``, which imports this module)
CALL_RRULE2: Callable = None  # type: ignore[assignment]

# --------------------------------------------------------------------------------------------
# functools.partial
# --------------------------------------------------------------------------------------------


def _build_partial(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``functools.partial(func, *args, **kwargs)``: the first-order rule run with the fdata and
    with the fdata tangents; the tangent holds the stored values' tangents."""
    out1, out2, pullback = _with_fdata_tangents(CoDual(functools.partial, NoFData), args, kwargs)
    tangent = registered_frule(functools.partial, *(Dual(a[0], a[2]) for a in args),
                               **{k: Dual(v[0], v[2]) for k, v in kwargs.items()}).tangent  # (a partial of a partial: flattened)
    return (out1.primal, out1.fdata, tangent, out2.fdata), pullback


_build_partial.second_order_kind = "special"  # type: ignore[attr-defined]
_register((functools.partial,), _build_partial)


def _field(t: Any, name: str, empty: Any) -> Any:
    return t.fields.get(name, empty) if isinstance(t, Tangent) else empty


def _slot(parts: Any, i: int, empty: Any) -> Any:
    return parts[i] if isinstance(parts, tuple) and i < len(parts) else empty


def call_partial(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A call of a partial: its function called with the stored arguments, each with its fdata,
    tangent and fdata tangent, then the call's."""
    p, p_f, p_d, p_fd = f
    parts = [(_field(t, "args", empty), empty) for t, empty in ((p_f, NoFData), (p_d, NoTangent), (p_fd, NoFData))]
    stored = [(a, _slot(parts[0][0], i, NoFData),
               _slot(parts[1][0], i, NoTangent) if isinstance(parts[1][0], tuple) else _zero_tangent_of(a),
               _slot(parts[2][0], i, NoFData)) for i, a in enumerate(p.args)]
    kw_f, kw_d, kw_fd = (_field(t, "keywords", None) for t in (p_f, p_d, p_fd))
    stored_kw = {k: (v, fdata(kw_f[k]) if isinstance(kw_f, dict) and k in kw_f else NoFData,
                     kw_d[k] if isinstance(kw_d, dict) and k in kw_d else _zero_tangent_of(v),
                     fdata(kw_fd[k]) if isinstance(kw_fd, dict) and k in kw_fd else NoFData)
                 for k, v in p.keywords.items() if k not in kwargs}  # a call's keyword overrides the stored one
    func = (p.func, _field(p_f, "func", NoFData), _field(p_d, "func", NoTangent), _field(p_fd, "func", NoFData))
    shape = (len(stored), len(args), stored_kw, kw_f, kw_fd)
    try:
        out, pullback = CALL_RRULE2(func, *stored, *args, **stored_kw, **kwargs)
    except Exception as error:  # a function that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _stored_routed(inner, *shape))
        raise
    return out, _stored_routed(pullback, *shape)


def _stored_routed(pullback: Callable, n_stored: int, n_args: int, stored_kw: dict, kw_f: Any, kw_fd: Any) -> Callable:
    """The pullback of a call of a ``functools.partial``: the stored arguments' rdata go to it."""
    def routed(rs: tuple, keywords: Any) -> tuple:
        """The call site's rdata: the partial's (its stored positionals', its function's), then
        the call's arguments; stored keywords' cotangents go into their slots of ``keywords``."""
        stored_r = tuple(rs[1:1 + n_stored])
        fields = {}
        if any(r is not NoRData for r in stored_r):
            fields["args"] = stored_r
        if rs[0] is not NoRData:
            fields["func"] = rs[0]
        rest = rs[1 + n_stored:]
        if isinstance(keywords, dict):
            for key, r in zip(stored_kw, rest[n_args:n_args + len(stored_kw)]):
                if key in keywords:
                    keywords[key] = add_rdata_to(keywords[key], r)
        f_r = Tangent(functools.partial, fields) if fields else NoRData
        return (f_r, *rest[:n_args], *rest[n_args + len(stored_kw):])

    def partial_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return routed(rs, kw_f), routed(rsd, kw_fd)

    return partial_pullback


# --------------------------------------------------------------------------------------------
# sum of user objects
# --------------------------------------------------------------------------------------------

_SUM_DATA = (1, "start")
_linear_sum = _linear_rule(_SUM_DATA, ())


def _sum(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``sum(iterable, start=0)``: linear in numbers and arrays; for user objects Python adds left
    to right with ``+``, so each addition is the second-order call of ``operator.add`` (which
    follows ``__add__``/``__radd__``: ``transform/protocols.py``)."""
    from ..rules.builtins import _user_object

    if not args or len(args) + len(kwargs) > 2:
        return _linear_sum(f, args, kwargs)
    start = args[1] if len(args) > 1 else kwargs.get("start")
    items = args[0][0]
    if not isinstance(items, (list, tuple)) or not any(map(_user_object, [*items, *([start[0]] if start else [])])):
        return _linear_sum(f, args, kwargs)
    return _chained_sum(args[0], start)


_sum.second_order_kind = "linear"  # type: ignore[attr-defined] - third order: as declared
_sum.data, _sum.stored = _SUM_DATA, ()  # type: ignore[attr-defined]
_register((builtins.sum,), _sum)


def _chained_sum(seq: tuple, start: tuple | None) -> tuple:
    """``start + x0 + x1 + ...`` by the second-order ``+``; the elements' cotangents go back to the
    sequence's fdata and fdata tangent (a list's slots) or its rdata (a tuple's)."""
    from ..rules.operators.common import Elements
    primal_side = Elements(CoDual(seq[0], seq[1]), "sum")
    tangent_side = Elements(CoDual(seq[0], seq[3]), "sum")
    tangents = seq[2] if isinstance(seq[2], (list, tuple)) else [_zero_tangent_of(x) for x in seq[0]]
    add = (operator.add, NoFData, NoTangent, NoFData)
    acc = start if start is not None else (0, NoFData, NoTangent, NoFData)
    pullbacks = []
    for i in range(len(primal_side)):
        item = primal_side.codual(i)
        acc, pullback = CALL_RRULE2(add, acc, (item.primal, item.fdata, tangents[i], tangent_side.codual(i).fdata))
        pullbacks.append(pullback)

    def sum_pullback(dy: Any, dy_d: Any) -> tuple:
        r, rd = dy, dy_d
        for i in range(len(pullbacks) - 1, -1, -1):
            rs, rsd = pullbacks[i](r, rd)
            r, rd = rs[1], rsd[1]
            primal_side.deliver(i, rs[2])
            tangent_side.deliver(i, rsd[2])
        if start is None:
            return (NoRData, primal_side.rdata()), (NoRData, tangent_side.rdata())
        return (NoRData, primal_side.rdata(), r), (NoRData, tangent_side.rdata(), rd)

    return acc, sum_pullback


# --------------------------------------------------------------------------------------------
# f(*seq) and f(**mapping)
# --------------------------------------------------------------------------------------------


def call_with_star(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``f(*args, *seq, **kwargs)``: the elements of ``seq`` become arguments (each with its slot of
    the sequence's fdata, tangent and fdata tangent), and their rdata go back to ``seq``."""
    from ..rules.core import CoDual
    from .runtime import _expand_star
    from .star_arrays import is_star_array, star_tangents

    star, list_pullback = _listed_star(kwargs.pop("_STAR"))
    seq, seq_f, seq_d, seq_fd = star
    primal_parts = _expand_star(CoDual(seq, seq_f))
    tangent_parts = _expand_star(CoDual(seq, seq_fd))
    tangents = list(seq_d) if isinstance(seq_d, (list, tuple, collections.deque)) else star_tangents(seq, seq_d) if is_star_array(seq) \
        else [_zero_tangent_of(x.primal) for x in primal_parts]
    if BATCH.size and any(isinstance(p.primal, (float, complex, np.floating)) and type(t) is np.ndarray
                          for p, t in zip(primal_parts, tangents)):
        from .batched_second_order import Unbatched  # (a number's slot in a list's fdata tangent is an array)

        raise Unbatched("a number with batched tangents passed by *args")
    elements = tuple((p.primal, p.fdata, t, q.fdata) for p, q, t in zip(primal_parts, tangent_parts, tangents))
    shape = (seq, seq_f, seq_fd, len(args), len(kwargs), len(elements))
    try:
        out, pullback = CALL_RRULE2(f, *args, *elements, **kwargs)
    except Exception as error:  # a function that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _with_listed_star(_star_routed(inner, *shape), list_pullback))
        raise
    return out, _with_listed_star(_star_routed(pullback, *shape), list_pullback)


def _listed_star(star: tuple) -> tuple[tuple, Callable | None]:
    """``*x`` of a set, an iterator, a dict view, a deque made in the function or a user iterable:
    ``list(x)`` differentiated, and its pullback (``runtime._listed_star``)."""
    from .runtime import splits

    if splits(star[0], star[1]):
        return star, None
    return CALL_RRULE2((list, NoFData, NoTangent, NoFData), star)


def _with_listed_star(pullback: Callable, list_pullback: Callable | None) -> Callable:
    """The pullback of a call given ``*list(x)``, the list's rdata (the call site's last) taken back
    to ``x``."""
    if list_pullback is None:
        return pullback

    def unlisted(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        r, rd = list_pullback(NoRData, NoRData)
        return (*rs[:-1], r[1]), (*rsd[:-1], rd[1])

    return unlisted


def _star_routed(pullback: Callable, seq: Any, seq_f: Any, seq_fd: Any, n_plain: int, n_kw: int, n_star: int) -> Callable:
    """The pullback of a call given ``*seq``: its elements' rdata go back to ``seq``."""
    from .runtime import _route_star_rdata

    def routed(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        result = []
        for seq_fdata, r in ((seq_f, rs), (seq_fd, rsd)):
            r = list(r)
            plain = r[:1 + n_plain]
            stars = r[1 + n_plain:1 + n_plain + n_star]
            keyword = r[1 + n_plain + n_star:]
            result.append(tuple(plain + keyword[:n_kw] + [_route_star_rdata(CoDual(seq, seq_fdata), stars)]))
        return result[0], result[1]

    return routed


def call_with_starstar(f: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``f(..., **mapping)``: each entry becomes a keyword argument, with its slot of the dict's
    fdata and fdata tangent and its tangent; the entries' rdata go back into those slots."""
    from ..rules.core import CoDual

    mapping = kwargs.pop("_STARSTAR")
    if not isinstance(mapping, tuple):  # a plain dict from generated code: constants
        kwargs.update(_constant_keywords(f[0], mapping))
        return CALL_RRULE2(f, *args, **kwargs)
    d, d_f, d_d, d_fd = mapping
    if not isinstance(d, dict):
        raise TypeError(f"argument after ** must be a mapping, not {type(d).__qualname__}")
    duplicate = d.keys() & kwargs.keys()
    if duplicate:
        raise TypeError(f"got multiple values for keyword argument {sorted(duplicate)[0]!r}")
    primal_parts = _expand_mapping(CoDual(d, d_f))
    tangent_parts = _expand_mapping(CoDual(d, d_fd))
    extra = {k: (d[k], primal_parts[k], d_d.get(k, NoTangent) if isinstance(d_d, dict) else _zero_tangent_of(d[k]),
                 tangent_parts[k]) for k in d}
    n_explicit = len(args) + len(kwargs) - ("_STAR" in kwargs)
    shape = (d, d_f, d_fd, n_explicit, list(extra))
    try:
        out, pullback = CALL_RRULE2(f, *args, **kwargs, **extra)
    except Exception as error:  # a function that raised after partial work: routed alike (issue 13)
        reroute(error, lambda inner: _starstar_routed(inner, *shape))
        raise
    return out, _starstar_routed(pullback, *shape)


def _starstar_routed(pullback: Callable, d: dict, d_f: Any, d_fd: Any, n_explicit: int, keys: list) -> Callable:
    """The pullback of a call given ``**d``: its entries' rdata go back into ``d``'s slots."""
    from .runtime import _route_starstar_rdata

    def routed(dy: Any, dy_d: Any) -> tuple:
        # the callee's rdata: f, args, keywords, the entries, then *seq's if any; the call site's:
        # f, args, keywords, *seq's, then the mapping's
        rs, rsd = pullback(dy, dy_d)
        result = []
        for fdata_of_dict, r in ((d_f, rs), (d_fd, rsd)):
            r = list(r)
            entries = r[1 + n_explicit:1 + n_explicit + len(keys)]
            routed_r = _route_starstar_rdata(CoDual(d, fdata_of_dict), keys, entries)
            result.append(tuple(r[:1 + n_explicit] + r[1 + n_explicit + len(keys):]) + (routed_r,))
        return result[0], result[1]

    return routed


def _expand_mapping(mapping: Any) -> dict:
    """The fdata of each entry of a dict (from its slot in the dict's fdata)."""
    from ..tangents import fdata, zero_tangent

    f = mapping.fdata if isinstance(mapping.fdata, dict) else {}
    return {k: fdata(f[k]) if k in f else fdata(zero_tangent(v)) for k, v in mapping.primal.items()}


def _constant_keywords(fn: Any, mapping: Any) -> dict:
    """``f(**mapping)``: keywords passed this way are constants of second order (flags, axes)."""

    result = {}
    for key, value in mapping.items():
        if _has_float_data(value):
            raise SecondOrderError(
                f"yb.hvp/yb.hessian: the differentiable value {key}= reaches {describe_callable(fn)} "
                "through **kwargs, which second order does not follow yet; pass it by name"
            )
        result[key] = (value, NoFData, NoTangent, NoFData)
    return result
