"""The methods of ufuncs: ``np.add.reduce``, ``np.multiply.accumulate``, ``np.subtract.outer``
(NumPy's own Python calls them: ``np.vander``, ``np.cov``, ``np.ptp``), in every mode.

Each is defined as the same computation written with covered functions (``defined_as``): a
reduction or accumulation of ``add``/``multiply``/``maximum``/``minimum`` is ``np.sum``/``np.prod``/
``np.max``/``np.min``/``np.cumsum``/``np.cumprod``; any other ufunc is applied pairwise along the
axis, in NumPy's order, so its own rule gives the derivative; ``outer`` is the ufunc on operands
shaped to broadcast. ``out=`` runs as an assignment ``out[...] = result`` (restored in the
pullback like any write). A result that is not float or complex (``logical_and.reduce``,
integer sums) has zero derivative and is NumPy's own.

``reduceat(x, indices, axis)`` reduces the pieces ``x[i_k:i_{k+1}]`` along ``axis`` (the piece is
``x[i_k]`` alone where ``i_k >= i_{k+1}``; the last runs to the end). ``add.reduceat`` is the
primitive ``add_reduceat``, linear: NumPy's own sums, the tangent summed the same way, and each
cotangent spread back over its piece (``np.add.at``: pieces may overlap). Every other ufunc is
the ufunc's own ``reduce`` of each piece, stacked (a Python loop over the pieces).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn, randpos
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .declare import nondifferentiable
from .second_order import defined_as, linear
from .util import accumulate, fit_tangent, out_cotangent, output, tangent

_NO_VALUE = np._NoValue
_REDUCTIONS = {np.add: np.sum, np.multiply: np.prod, np.maximum: np.max, np.minimum: np.min}
_ACCUMULATIONS = {np.add: np.cumsum, np.multiply: np.cumprod}


def _plain(ufunc: np.ufunc, method: str, array: Any, keywords: dict) -> Any:
    """NumPy's own result (its errors, its dtype), without ``out=``."""
    return getattr(ufunc, method)(array, **keywords)


def _is_inexact(value: Any) -> bool:
    return np.asarray(value).dtype.kind in "fc"


def _reduction(ufunc: np.ufunc, table: dict) -> Any:
    return table.get(ufunc)


def _moved_axis(ndim: int, axis: Any, method: str) -> int:
    """The one axis a pairwise reduction runs along (tuples and None only for the fast forms)."""
    if not isinstance(axis, (int, np.integer)):
        raise RuleArgumentError(f"numpy.ufunc.{method}: yuebing reduces this ufunc along one integer axis; "
                                f"got axis={axis!r} (reduce axes one at a time)")
    return int(axis) % max(ndim, 1)


def _refuse_where(where: Any) -> None:
    if where is not True:
        raise RuleArgumentError("numpy.ufunc.reduce: where= is supported for add, multiply, maximum and minimum "
                                "only; select the elements with np.where(mask, x, identity) first")


nondifferentiable(_plain, _is_inexact, _reduction, _moved_axis, _refuse_where)


def _store(out, result):
    """``out=``: the result written into the given array (a tuple of one, as NumPy allows)."""
    if out is None:
        return result
    if isinstance(out, tuple):
        out = out[0]
    out[...] = result
    return out


def _pairwise_reduce(ufunc, array, axis, keepdims, initial):
    a = np.moveaxis(array, axis, 0)
    if initial is _NO_VALUE:
        result = a[0]
        start = 1
    else:
        result = ufunc(initial, a[0])
        start = 1
    for i in range(start, a.shape[0]):
        result = ufunc(result, a[i])
    if keepdims:
        result = np.expand_dims(result, axis)
    return result


def _ufunc_reduce(ufunc, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO_VALUE, where=True):
    keywords = {"axis": axis, "dtype": dtype, "keepdims": keepdims, "initial": initial, "where": where}
    plain = _plain(ufunc, "reduce", array, keywords)
    if not _is_inexact(plain):
        return _store(out, plain)
    x = np.asarray(array)
    fast = _reduction(ufunc, _REDUCTIONS)
    if fast is not None:
        if dtype is not None:  # computed in dtype, as NumPy does (np.max takes no dtype=)
            x = x.astype(dtype)
        if initial is _NO_VALUE:
            result = fast(x, axis=axis, keepdims=keepdims, where=where)
        else:
            result = fast(x, axis=axis, keepdims=keepdims, initial=initial, where=where)
    else:
        _refuse_where(where)
        if axis is None:
            x = np.ravel(x)
            axis = 0
        result = _pairwise_reduce(ufunc, x, _moved_axis(x.ndim, axis, "reduce"), keepdims, initial)
        if dtype is not None:
            result = np.asarray(result).astype(dtype)
    return _store(out, result)


def _ufunc_accumulate(ufunc, array, axis=0, dtype=None, out=None):
    plain = _plain(ufunc, "accumulate", array, {"axis": axis, "dtype": dtype})
    if not _is_inexact(plain):
        return _store(out, plain)
    x = np.asarray(array)
    fast = _reduction(ufunc, _ACCUMULATIONS)
    if fast is not None:
        result = fast(x, axis=axis, dtype=dtype)
    else:
        moved = _moved_axis(x.ndim, axis, "accumulate")
        a = np.moveaxis(x, moved, 0)
        running = a[0]
        pieces = [running]
        for i in range(1, a.shape[0]):
            running = ufunc(running, a[i])
            pieces.append(running)
        result = np.moveaxis(np.stack(pieces), 0, moved)
        if dtype is not None:
            result = result.astype(dtype)
    return _store(out, result)


def _ufunc_outer(ufunc, a, b, **kwargs):
    x = np.asarray(a)
    y = np.asarray(b)
    return ufunc(np.reshape(x, np.shape(x) + (1,) * np.ndim(y)), y, **kwargs)


def _plain_reduceat(ufunc: np.ufunc, array: Any, indices: Any, axis: Any, dtype: Any) -> Any:
    """NumPy's own ``reduceat`` (its errors: indices out of range, a bad axis)."""
    return ufunc.reduceat(array, indices, axis=axis, dtype=dtype)


def reduceat_pieces(n: int, indices: Any) -> tuple[list, list]:
    """Each output's piece ``[start, stop)`` along an axis of length ``n``, as NumPy takes them."""
    starts = np.asarray(indices, dtype=np.intp).ravel()
    after = np.append(starts[1:], n)
    stops = np.where(starts < after, after, starts + 1)
    return starts.tolist(), stops.tolist()


nondifferentiable(_plain_reduceat, reduceat_pieces)


def _spread(g: np.ndarray, indices: Any, n: int, axis: int) -> np.ndarray:
    """The cotangent of ``add.reduceat``'s input: output ``k``'s cotangent added over its piece."""
    starts, stops = (np.asarray(p, dtype=np.intp) for p in reduceat_pieces(n, indices))
    lengths = stops - starts
    offsets = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
    positions = np.repeat(starts, lengths) + offsets
    moved = np.moveaxis(g, axis, 0)
    spread = np.zeros((n,) + moved.shape[1:], dtype=g.dtype)
    np.add.at(spread, positions, np.repeat(moved, lengths, axis=0))
    return np.moveaxis(spread, 0, axis)


def add_reduceat(array: np.ndarray, indices: Any, axis: int, dtype: Any) -> np.ndarray:
    """``np.add.reduceat`` on an array along one integer axis (``_ufunc_reduceat`` calls it)."""
    return np.add.reduceat(array, indices, axis=axis, dtype=dtype)


@rrule_for(add_reduceat)
def _add_reduceat_rrule(array: CoDual, indices: Any, axis: Any, dtype: Any) -> tuple[CoDual, Callable]:
    x, ax = primal(array), primal(axis)
    result = output(add_reduceat(x, primal(indices), ax, primal(dtype)))

    def pullback(dy: Any) -> tuple:
        g = np.asarray(out_cotangent(result, dy))
        return NoRData, accumulate(array, _spread(g, primal(indices), x.shape[ax], ax)), NoRData, NoRData, NoRData

    return result, pullback


@frule_for(add_reduceat)
def _add_reduceat_frule(array: Any, indices: Any, axis: Any, dtype: Any) -> Dual:
    args = (primal(indices), primal(axis), primal(dtype))
    y = add_reduceat(primal(array), *args)
    t = tangent(array)
    return Dual(y, fit_tangent(NoTangent if t is NoTangent else add_reduceat(t, *args), y))


linear(add_reduceat)


def _ufunc_reduceat(ufunc, array, indices, axis=0, dtype=None, out=None):
    plain = _plain_reduceat(ufunc, array, indices, axis, dtype)
    if not _is_inexact(plain):
        return _store(out, plain)
    x = np.asarray(array)
    if dtype is not None:  # computed in dtype, as NumPy does
        x = x.astype(dtype)
    ax = _moved_axis(x.ndim, axis, "reduceat")
    if ufunc is np.add:
        return _store(out, add_reduceat(x, indices, ax, None))
    starts, stops = reduceat_pieces(x.shape[ax], indices)
    a = np.moveaxis(x, ax, 0)
    pieces = [ufunc.reduce(a[start:stop], axis=0) for start, stop in zip(starts, stops)]
    return _store(out, np.moveaxis(np.stack(pieces), 0, ax))


defined_as((np.ufunc, "reduce"), _ufunc_reduce)
defined_as((np.ufunc, "accumulate"), _ufunc_accumulate)
defined_as((np.ufunc, "outer"), _ufunc_outer)
defined_as((np.ufunc, "reduceat"), _ufunc_reduceat)


def _reduce_into(x):
    out = np.zeros(3)
    np.add.reduce(x, axis=0, out=out)
    return out


def _accumulate_into(x):
    out = np.zeros_like(x)
    np.multiply.accumulate(x, axis=1, out=out)
    return out


_PIECES = np.array([0, 3, 3, 6, 2, 7])


def _reduceat_into(x):
    out = np.zeros(4)
    np.add.reduceat(x, [0, 2, 5, 6], out=out)
    return out


CASES = [
    Case(np.add.reduce, randn(3, 4), name="add.reduce"),
    Case(np.multiply.reduce, randpos(3, 4), kwargs={"axis": 1, "keepdims": True}, name="multiply.reduce axis=1"),
    Case(np.maximum.reduce, randn(5), kwargs={"axis": None}, name="maximum.reduce axis=None"),
    Case(np.hypot.reduce, randpos(4, 2), name="hypot.reduce (pairwise)"),
    Case(np.subtract.reduce, randn(3, 2), kwargs={"axis": 1, "initial": 0.5}, name="subtract.reduce initial"),
    Case(np.add.accumulate, randn(2, 3), kwargs={"axis": 1}, name="add.accumulate"),
    Case(np.multiply.accumulate, randpos(4), name="multiply.accumulate"),
    Case(np.maximum.accumulate, randn(5), name="maximum.accumulate (pairwise)"),
    Case(np.divide.accumulate, randpos(3, 2), kwargs={"axis": 1}, name="divide.accumulate"),
    Case(np.multiply.outer, randn(3), randn(2, 2), name="multiply.outer"),
    Case(np.subtract.outer, randn(2), randn(3), name="subtract.outer"),
    Case(_reduce_into, randn(2, 3), name="add.reduce out="),
    Case(_accumulate_into, randpos(2, 3), name="multiply.accumulate out="),
    # reduceat: pieces of several lengths, a repeated index (one element), a decreasing one (overlap)
    Case(np.add.reduceat, randn(8), _PIECES, name="add.reduceat"),
    Case(np.add.reduceat, randn(3, 8), _PIECES, kwargs={"axis": 1}, name="add.reduceat axis=1"),
    Case(np.add.reduceat, randn(8, 2, dtype=np.float32), _PIECES, name="add.reduceat float32"),
    Case(np.add.reduceat, randc(8), _PIECES, name="add.reduceat complex"),
    Case(np.multiply.reduceat, randpos(8, 2), _PIECES, name="multiply.reduceat"),
    Case(np.maximum.reduceat, randn(2, 8), _PIECES, kwargs={"axis": -1}, name="maximum.reduceat"),
    Case(np.subtract.reduceat, randn(8), _PIECES, name="subtract.reduceat (pairwise)"),
    Case(_reduceat_into, randn(8), name="add.reduceat out="),
]
