"""Batch-aware second-order rules (``batched_second_order.py`` says what a batched pass is): the
classes whose tangent parts are written for a leading batch axis, so a call runs once for all B
directions instead of once per direction.

* elementwise functions and operators (the ``elementwise`` class): the output tangent by batched
  forward mode (``rules.batched``), the cotangent tangent ``g_d * partial + g * d(partial)``
  with ``d(partial)`` from the batched forward transform of the partial, each tangent aligned to
  broadcast from the right and summed back to its argument's shape past the batch axis;
* ``@``, ``np.matmul``, ``np.dot`` and ``ndarray.dot`` of 1-D and 2-D float arrays (multilinear);
* ``np.sum``/``ndarray.sum`` of a float array without an axis, ``x[i]`` and ``x[i] = v`` with a
  basic index (ints and slices) into a float array (linear);
* ``-x``, ``a += b`` and ``a -= b`` on float arrays of one shape (linear: the unbatched rule on
  batched tangents is exact when no argument broadcasts).

A rule returns None when it does not handle the arguments it got (complex numbers, keywords,
broadcasting it does not know, a tangent part without the batch axis where a cotangent tangent
must go); the looped fallback then runs. The first-order part (primal, fdata, rdata) is always
the unbatched first-order rule's.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..rules.batched import BATCH, aligned, batched, batched_rule, batched_zeros, is_batched
from ..rules.core import CoDual, Dual, rrule
from ..rules.declare import ELEMENTWISE_PARTIALS, strong_product
from ..rules.util import accumulate, is_differentiable, out_cotangent, zero_fdata
from ..tangents import NoFData, NoRData, NoTangent
from .forward_runtime import call_frule


def batch_aware_rule(rule: Any, fn: Any) -> Callable | None:
    """The batch-aware version of second-order ``rule`` of ``fn``, or None."""
    kind = getattr(rule, "second_order_kind", None)
    try:
        special = _SPECIAL.get(fn)
    except TypeError:  # an unhashable callable
        return None
    if special is not None:
        return special
    if kind == "elementwise" and not hasattr(rule, "in_place_of"):
        forward = batched_rule(fn)
        if forward is None:
            return None
        partials = rule.partials
        return lambda f, args, kwargs: _elementwise(partials, forward, args, kwargs)
    if fn in _NUMBER_IN_PLACE:  # s += v on numbers: s + v (a float's batched tangent is never changed in place)
        plain = _NUMBER_IN_PLACE[fn]
        return lambda f, args, kwargs: None if type(args[0][0]) is np.ndarray else _elementwise(
            ELEMENTWISE_PARTIALS[plain], batched_rule(plain), args, kwargs)
    if kind == "linear" and fn in _SAME_SHAPE_LINEAR:
        return lambda f, args, kwargs: _same_shape_linear(rule, f, args, kwargs)
    return None


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


def _real_number(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "biuf"
    return isinstance(x, (int, float, np.integer, np.floating, bool, np.bool_))


def _fdata_tangent_ok(a: tuple) -> bool:
    """Whether argument ``a``'s fdata tangent can take a batched cotangent tangent: none (a
    number's goes back as rdata), a batched array, or an unbatched one of a constant of the pass
    (its tangent unbatched too: what reaches it goes nowhere, ``_into``)."""
    return a[3] is NoFData or type(a[0]) is np.ndarray and (is_batched(a[3], a[0]) or not is_batched(a[2], a[0]))


def _into(a: tuple) -> np.ndarray | None:
    """The batched fdata tangent of array argument ``a``, or None: a constant of the pass (tangent
    and fdata tangent without the batch axis, the result of calls on constants only), whose
    cotangent tangent would only flow back to such calls, which send nothing further."""
    return a[3] if type(a[3]) is np.ndarray and is_batched(a[3], a[0]) else None


def _tangent_ok(a: tuple) -> bool:
    """A tangent this module reads: none, a batched one, or an unbatched zero of a number/array."""
    t = a[2]
    return t is NoTangent or is_batched(t, a[0]) or isinstance(t, (float, int, np.floating, np.integer)) \
        or type(t) is np.ndarray and t.shape == np.shape(a[0])


def _fresh_fdata_tangent(y: Any) -> Any:
    return batched_zeros(y, BATCH.size) if type(y) is np.ndarray and y.dtype.kind == "f" else NoFData


def _cotangent_tangent(y: Any, y_fd: Any, dy_d: Any) -> Any:
    """The batched tangent of output ``y``'s cotangent (its fdata tangent for an array, the rdata
    tangent for a number), or None where it is zero."""
    g_d = y_fd if type(y_fd) is np.ndarray else dy_d
    if g_d is NoRData or g_d is NoFData or type(g_d) in (float, int) and g_d == 0:
        return None
    if not is_batched(g_d, y):
        raise ValueError("batched second order: a cotangent tangent without the batch axis")  # never expected
    return g_d


def _summed_to(g: np.ndarray, shape: tuple) -> np.ndarray:
    """Batched ``g`` (batch axis first) summed over the axes broadcasting added or stretched to
    reach ``g.shape[1:]`` from ``shape``."""
    extra = g.ndim - 1 - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(1, 1 + extra)))
    stretched = tuple(i + 1 for i, n in enumerate(shape) if n == 1 and g.shape[i + 1] != 1)
    if stretched:
        g = np.sum(g, axis=stretched, keepdims=True)
    return g


def _deliver(a: tuple, total: Any) -> Any:
    """Batched cotangent tangent ``total`` (shaped like a broadcast result) to argument ``a``: into
    its fdata tangent for an array (``NoRData`` back), as a length-B rdata for a number."""
    if total is None:
        return NoRData
    x = a[0]
    if type(x) is np.ndarray:
        into = _into(a)
        if into is not None:
            into[...] += _summed_to(total, x.shape) if total.ndim > 1 else total.reshape((-1,) + (1,) * x.ndim)
        return NoRData
    return total if total.ndim == 1 else np.sum(total, axis=tuple(range(1, total.ndim)))


# --------------------------------------------------------------------------------------------
# Elementwise
# --------------------------------------------------------------------------------------------


def _elementwise(partials: tuple, forward: Callable, args: tuple, kwargs: dict) -> tuple | None:
    if kwargs or len(args) != len(partials) or not all(_real_number(a[0]) for a in args):
        return None
    if not all(_tangent_ok(a) and (_fdata_tangent_ok(a) or not is_differentiable(a[0])) for a in args):
        return None
    duals = tuple(Dual(a[0], a[2]) for a in args)
    out = forward(duals, {})
    if out is None or out.tangent is NoTangent:
        return None
    y, y_d = out.primal, out.tangent
    if isinstance(y, np.ndarray) and any(y is a[0] for a in args):
        return None  # the argument itself handed back: the looped fallback keeps its identity
    y_f, y_fd = zero_fdata(y), _fresh_fdata_tangent(y)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g = out_cotangent(CoDual(y, y_f), dy)
        g_d = _cotangent_tangent(y, y_fd, dy_d)
        ndim = np.ndim(y)
        rs, rsd = [NoRData], [NoRData]
        with np.errstate(all="ignore"):
            for a, partial in zip(args, partials):
                if partial is None or not is_differentiable(a[0]):
                    rs.append(NoRData)
                    rsd.append(NoRData)
                    continue
                p = call_frule(Dual(partial, NoTangent), *duals, Dual(y, y_d))  # batched: BATCH.size is set
                rs.append(accumulate(CoDual(a[0], a[1]), strong_product(g, p.primal)))
                total = None if g_d is None else strong_product(g_d, p.primal)
                if is_batched(p.tangent, p.primal):
                    term = strong_product(g, aligned(p.tangent, p.primal, ndim))
                    total = term if total is None else total + term
                rsd.append(_deliver(a, total))
        return tuple(rs), tuple(rsd)

    return (y, y_f, y_d, y_fd), pullback


# --------------------------------------------------------------------------------------------
# Products
# --------------------------------------------------------------------------------------------


def _as_matrix(x: np.ndarray, left: bool) -> np.ndarray:
    """A 1-D left factor as a row, a 1-D right factor as a column."""
    if x.ndim == 2:
        return x
    return x[None, :] if left else x[:, None]


def _product(f: tuple, args: tuple, kwargs: dict) -> tuple | None:
    """``a @ b`` of 1-D and 2-D float arrays, every factor a matrix (a 1-D one a row or a column)."""
    if kwargs or len(args) != 2:
        return None
    (a, a_f, ta, a_fd), (b, b_f, tb, b_fd) = args
    if not all(type(x[0]) is np.ndarray and x[0].ndim in (1, 2) and x[0].dtype.kind == "f" for x in args) \
            or not all(_tangent_ok(x) and _fdata_tangent_ok(x) for x in args):
        return None
    k = BATCH.size
    a2, b2 = _as_matrix(a, True), _as_matrix(b, False)
    m, n = a2.shape[0], b2.shape[1]
    ta2 = ta.reshape((k,) + a2.shape) if is_batched(ta, a) else None
    tb2 = tb.reshape((k,) + b2.shape) if is_batched(tb, b) else None
    out1, pullback1 = rrule(CoDual(f[0], NoFData), CoDual(a, a_f), CoDual(b, b_f))
    y = out1.primal
    y_d2 = np.zeros((k, m, n)) if ta2 is None and tb2 is None else \
        ta2 @ b2 if tb2 is None else a2 @ tb2 if ta2 is None else ta2 @ b2 + a2 @ tb2
    y_d = y_d2.reshape((k,) + np.shape(y))
    y_fd = _fresh_fdata_tangent(y)
    a_fd, b_fd = _into(args[0]), _into(args[1])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g2 = np.reshape(out_cotangent(CoDual(y, out1.fdata), dy), (m, n))
        g_d = _cotangent_tangent(y, y_fd, dy_d)
        g_d2 = None if g_d is None else g_d.reshape((k, m, n))
        rs = pullback1(dy)
        if a_fd is not None:
            a_fd[...] += _sum_terms(None if g_d2 is None else g_d2 @ b2.T,
                                    None if tb2 is None else g2 @ np.swapaxes(tb2, -1, -2), (k,) + a.shape)
        if b_fd is not None:
            b_fd[...] += _sum_terms(None if g_d2 is None else a2.T @ g_d2,
                                    None if ta2 is None else np.swapaxes(ta2, -1, -2) @ g2, (k,) + b.shape)
        return rs, (NoRData,) * 3

    return (y, out1.fdata, y_d, y_fd), pullback


def _sum_terms(u: Any, v: Any, shape: tuple) -> Any:
    if u is None and v is None:
        return 0.0
    total = u if v is None else v if u is None else u + v
    return total.reshape(shape)


# --------------------------------------------------------------------------------------------
# Linear: sums, basic indexing, same-shape operators
# --------------------------------------------------------------------------------------------


def _sum(f: tuple, args: tuple, kwargs: dict) -> tuple | None:
    """``np.sum(x)`` / ``x.sum()`` of a float array, no axis."""
    if kwargs or len(args) != 1:
        return None
    x, x_f, t, x_fd = args[0]
    if type(x) is not np.ndarray or x.dtype.kind != "f" or not is_batched(t, x) or not _fdata_tangent_ok(args[0]):
        return None
    out1, pullback1 = rrule(CoDual(f[0], NoFData), CoDual(x, x_f))
    y = out1.primal
    if type(y) is np.ndarray:
        return None  # (a 0-d array: not what np.sum gives)
    y_d = np.sum(t.reshape(t.shape[0], -1), axis=1) if x.ndim != 1 else np.sum(t, axis=1)
    into = _into(args[0])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs = pullback1(dy)
        g_d = _cotangent_tangent(y, NoFData, dy_d)
        if g_d is not None and into is not None:
            into[...] += g_d.reshape((-1,) + (1,) * x.ndim)
        return rs, (NoRData, NoRData)

    return (y, out1.fdata, y_d, NoFData), pullback


def _basic(index: Any) -> bool:
    """Ints, slices, None and ``...`` (a view; the batch axis stays first behind a leading ``:``)."""
    parts = index if type(index) is tuple else (index,)
    return all(type(p) in (int, slice) or p is None or p is Ellipsis for p in parts)


def _getitem(f: tuple, args: tuple, kwargs: dict) -> tuple | None:
    """``x[index]`` of a float array with a basic index: a view (its tangent parts views of the
    batched ones) or a number."""
    if kwargs or len(args) != 2:
        return None
    (x, x_f, t, x_fd), index = args[0], args[1][0]
    if type(x) is not np.ndarray or x.dtype.kind != "f" or not _basic(index) or not is_batched(t, x) \
            or not _fdata_tangent_ok(args[0]):
        return None
    out1, pullback1 = rrule(CoDual(f[0], NoFData), CoDual(x, x_f), CoDual(index, NoFData))
    y = out1.primal
    where = (slice(None),) + (index if type(index) is tuple else (index,))
    if type(y) is np.ndarray:
        if not np.may_share_memory(y, x):
            return None
        into = _into(args[0])
        y_fd = into[where] if into is not None else x_fd
        return (y, out1.fdata, t[where], y_fd), lambda dy, dy_d: (pullback1(dy), (NoRData, NoRData, NoRData))
    y_d = t[where].copy()  # a number's tangent must not see later writes into the array's
    into = _into(args[0])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs = pullback1(dy)
        g_d = _cotangent_tangent(y, NoFData, dy_d)
        if g_d is not None and into is not None:
            into[where] += g_d
        return rs, (NoRData, NoRData, NoRData)

    return (y, out1.fdata, y_d, NoFData), pullback


def _setitem(f: tuple, args: tuple, kwargs: dict) -> tuple | None:
    """``x[index] = v`` into a float array with a basic index, ``v`` a number or an array whose
    shape broadcasts to the region's without leading ones."""
    if kwargs or len(args) != 3:
        return None
    (x, x_f, t, x_fd), index, value = args[0], args[1][0], args[2]
    v, tv = value[0], value[2]
    if type(x) is not np.ndarray or x.dtype.kind != "f" or not _basic(index) or not is_batched(t, x) \
            or _into(args[0]) is None or not _real_number(v) or not _tangent_ok(value) \
            or not (_fdata_tangent_ok(value) or not is_differentiable(v)):
        return None
    where = (slice(None),) + (index if type(index) is tuple else (index,))
    region = t[where]
    if np.ndim(v) > region.ndim - 1:
        return None  # leading ones NumPy drops: the looped fallback
    out1, pullback1 = rrule(CoDual(f[0], NoFData), CoDual(x, x_f), CoDual(index, NoFData), CoDual(v, value[1]))
    saved = region.copy()
    t[where] = aligned(tv, v, region.ndim - 1) if is_batched(tv, v) else 0.0

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g_d = x_fd[where].copy()
        x_fd[where] = 0.0  # the region was overwritten: its cotangent tangent goes to the value
        t[where] = saved
        rs = pullback1(dy)
        rd_v = _deliver(value, g_d) if is_differentiable(v) else NoRData
        return rs, (NoRData, NoRData, NoRData, rd_v)

    return (out1.primal, out1.fdata, NoTangent, NoFData), pullback


def _reshape(f: tuple, args: tuple, kwargs: dict) -> tuple | None:
    """``x.reshape(shape)`` / ``np.reshape(x, shape)`` of a float array: the tangent parts reshaped
    behind the batch axis, views where the result is a view of ``x``."""
    if kwargs or len(args) < 2 or not all(isinstance(a[0], (int, np.integer, tuple)) for a in args[1:]):
        return None
    x, x_f, t, _ = args[0]
    into = _into(args[0])
    if type(x) is not np.ndarray or x.dtype.kind != "f" or not is_batched(t, x) or into is None:
        return None
    out1, pullback1 = rrule(CoDual(f[0], NoFData), CoDual(x, x_f), *(CoDual(a[0], NoFData) for a in args[1:]))
    y, k = out1.primal, BATCH.size
    view = np.may_share_memory(y, x)
    y_d, y_fd = t.reshape((k,) + y.shape), into.reshape((k,) + y.shape)
    if view != np.may_share_memory(y_d, t) or view != np.may_share_memory(y_fd, into):
        if view:
            pullback1(NoRData)  # (nothing to undo: a reshape changes nothing)
            return None  # a view of x whose tangent would be a copy: the looped fallback
        y_d, y_fd = y_d.copy(), batched_zeros(y, k)
    elif not view:
        y_fd = batched_zeros(y, k)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        if not view:  # a copy: its cotangent tangent goes back to x's
            into[...] += y_fd.reshape((k,) + x.shape)
        return pullback1(dy), (NoRData,) * (1 + len(args))  # the callee, then each argument

    return (y, out1.fdata, y_d, y_fd), pullback


_NUMBER_IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub}
_SAME_SHAPE_LINEAR = {operator.neg, operator.iadd, operator.isub, np.negative}


def _same_shape_linear(rule: Callable, f: tuple, args: tuple, kwargs: dict) -> tuple | None:
    """A linear operator on float arrays of one shape: the unbatched rule is exact on batched
    tangents (nothing broadcasts, nothing is summed back to a primal's shape)."""
    if kwargs or not args:
        return None
    shape = np.shape(args[0][0])
    for a in args:
        if type(a[0]) is not np.ndarray or a[0].dtype.kind != "f" or a[0].shape != shape or not is_batched(a[2], a[0]) \
                or not _fdata_tangent_ok(a):
            return None
    with batched(0):
        out, pullback = rule(f, args, kwargs)

    def unbatched_pullback(dy: Any, dy_d: Any) -> tuple:
        with batched(0):
            return pullback(dy, dy_d)

    return out, unbatched_pullback


_SPECIAL: dict = {operator.matmul: _product, np.matmul: _product, np.dot: _product, np.ndarray.dot: _product,
                  np.sum: _sum, np.ndarray.sum: _sum, operator.getitem: _getitem, np.ndarray.__getitem__: _getitem,
                  operator.setitem: _setitem, np.ndarray.__setitem__: _setitem, np.reshape: _reshape,
                  np.ndarray.reshape: _reshape}

__all__ = ["batch_aware_rule"]
