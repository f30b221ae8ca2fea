"""NumPy's array utilities that were refused as "implemented in C": ``diagonal`` (and
``ndarray.diagonal``), ``fill_diagonal``, ``rollaxis``, ``trim_zeros``, ``real_if_close``,
``cumulative_sum``/``cumulative_prod`` and ``apply_along_axis``.

* ``diagonal`` is a read-only view in NumPy; its fdata (tangent) is the same view of the input's
  fdata (tangent), made writable so that rules downstream can increment it (``_writable_diagonal``).
  An input whose fdata is laid out otherwise gets a fresh fdata and the adjoint (the cotangent
  written back on the diagonal). ``rollaxis`` is a transpose (a view with shared fdata). Second
  order: linear.
* The others are written in plain NumPy here and differentiated like user code in every mode
  (``second_order.defined_as``), after NumPy's own function has checked the arguments where that
  is free of side effects: ``fill_diagonal`` is an assignment to the diagonal's positions
  (``val`` cycled as NumPy's flat assignment cycles it; the mutation convention), ``trim_zeros`` a
  slice (a view) found on the primal, ``real_if_close`` the real part when NumPy would take it
  (the derivative of what NumPy returns: ``a.real``'s), ``cumulative_sum``/``cumulative_prod``
  ``cumsum``/``cumprod`` with the optional initial 0 or 1, and ``apply_along_axis`` a loop over the
  1-d slices calling ``func1d`` (differentiated like user code), the result's axes put where
  ``axis`` was, as NumPy does.

Refused: ``out=`` of ``cumulative_sum``/``cumulative_prod`` (assign the result instead).
``apply_along_axis`` stacks the slices' results with their common dtype, where NumPy casts them to
the first result's dtype (the same unless ``func1d`` returns integers for some slices and floats for
others).
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..tangents import NoTangent
from ..tangents.arrays import array_root
from .cases import Case, randc, randn
from .core import CoDual, Dual, RuleArgumentError, primal
from .declare import nondifferentiable
from .numpy_arguments import deliver, forward, rule
from .numpy_shape import linear_op
from .util import fit_tangent, is_differentiable, out_cotangent, output, tangent
from .second_order import defined_as, linear

# --------------------------------------------------------------------------------------------
# diagonal, rollaxis: views
# --------------------------------------------------------------------------------------------


def _diagonal_adjoint(shape: tuple, offset: int, axis1: int, axis2: int) -> Any:
    """The cotangent of ``np.diagonal``'s result written back on the diagonal of a zero array."""
    ndim = len(shape)
    a1, a2 = axis1 % ndim, axis2 % ndim

    def adjoint(g: np.ndarray) -> np.ndarray:
        gx = np.zeros(shape, dtype=g.dtype)
        moved = np.moveaxis(gx, (a1, a2), (-2, -1))  # a view: writes reach gx
        n = g.shape[-1]
        rows = np.arange(n) + max(-offset, 0)
        cols = np.arange(n) + max(offset, 0)
        moved[..., rows, cols] = g
        return gx

    return adjoint


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _writable_diagonal(v: np.ndarray, offset: int, axis1: int, axis2: int) -> np.ndarray | None:
    """``np.diagonal(v, ...)`` as a writable view of ``v``'s root array (NumPy's is read-only):
    the fdata or tangent of a diagonal, which rules increment in place, laid out as the primal's
    view. None when there is no such view (an empty diagonal, a root that is not contiguous)."""
    moved = np.moveaxis(v, (axis1, axis2), (-2, -1))
    corner = moved[..., max(-offset, 0):, max(offset, 0):]
    n = min(corner.shape[-2], corner.shape[-1])
    root = array_root(v)
    if n <= 0 or corner.size == 0 or not root.flags.writeable or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return None
    return np.ndarray(moved.shape[:-2] + (n,), v.dtype, buffer=root, offset=_address(corner) - _address(root),
                      strides=moved.strides[:-2] + (sum(moved.strides[-2:]),))


def _diagonal_of_tangent(t: Any, x: np.ndarray, offset: int, axis1: int, axis2: int) -> Any:
    """The same view of ``t`` as ``np.diagonal`` is of ``x``, or None (``t`` laid out otherwise)."""
    if not isinstance(t, np.ndarray) or t.shape != x.shape or t.strides != x.strides:
        return None
    return _writable_diagonal(t, offset, axis1, axis2)


@rule(np.diagonal, (np.ndarray, "diagonal"))
def _diagonal_rrule(a, offset=0, axis1=0, axis2=1):
    x, off, a1, a2 = primal(a), int(primal(offset)), primal(axis1), primal(axis2)
    y = np.diagonal(x, off, a1, a2)
    fy = _diagonal_of_tangent(a.fdata, x, off, a1, a2) if isinstance(a, CoDual) else None
    if fy is not None:  # a view: the cotangent reaches x's fdata through shared memory
        return CoDual(y, fy), lambda dy: ()
    out = output(y)
    adjoint = _diagonal_adjoint(np.shape(x), off, a1, a2)
    return out, lambda dy: (deliver(a, adjoint(np.asarray(out_cotangent(out, dy)))),) if is_differentiable(y) else ()


@forward(np.diagonal, (np.ndarray, "diagonal"))
def _diagonal_frule(a, offset=0, axis1=0, axis2=1):
    x, off, a1, a2 = primal(a), int(primal(offset)), primal(axis1), primal(axis2)
    y = np.diagonal(x, off, a1, a2)
    t = tangent(a)
    ty = _diagonal_of_tangent(t, x, off, a1, a2)
    if ty is None:
        ty = fit_tangent(NoTangent if t is NoTangent else np.diagonal(np.asarray(t), off, a1, a2), y)
    return Dual(y, ty)


def _rollaxis_order(ndim: int, axis: int, start: int) -> list:
    """The axes of ``np.rollaxis(a, axis, start)`` in terms of ``a``'s (NumPy's rule: ``axis``
    moves to just before ``start``)."""
    axis = axis % ndim
    start = start + ndim if start < 0 else start
    if axis < start:
        start -= 1
    order = [i for i in range(ndim) if i != axis]
    order.insert(start, axis)
    return order


@linear_op(np.rollaxis)
def _rollaxis_spec(a, axis, start=0):
    order = _rollaxis_order(np.ndim(a), axis, start)
    return (lambda v: np.rollaxis(v, axis, start)), (lambda g: np.transpose(g, np.argsort(order)))


linear((np.ndarray, "diagonal"), np.rollaxis)  # np.diagonal is declared in second_order.py


# --------------------------------------------------------------------------------------------
# fill_diagonal, trim_zeros, real_if_close: plain NumPy with plans found on the primal
# --------------------------------------------------------------------------------------------


def _diagonal_plan(a: Any, val: Any, wrap: bool) -> tuple:
    """Where ``np.fill_diagonal`` writes (a multi-index of ``a``) and which flat element of
    ``val`` each place gets (NumPy's flat assignment cycles ``val``)."""
    probe = np.zeros(np.shape(a), dtype=bool)
    np.fill_diagonal(probe, True, wrap=wrap)  # NumPy's own positions and errors
    flat = np.flatnonzero(probe)
    return np.unravel_index(flat, probe.shape), np.arange(flat.size) % max(np.size(val), 1)


def _trim_slices(filt: Any, trim: str, axis: Any) -> tuple:
    """The slices ``np.trim_zeros`` keeps: from the first to the last nonzero along each trimmed
    axis (``trim`` 'f' the front, 'b' the back)."""
    nonzero = np.asarray(filt) != 0
    ndim = nonzero.ndim
    axes = range(ndim) if axis is None else [a % ndim for a in np.atleast_1d(axis)]
    slices = [slice(None)] * ndim
    for ax in axes:
        others = tuple(i for i in range(ndim) if i != ax)
        present = np.flatnonzero(np.any(nonzero, axis=others)) if others else np.flatnonzero(nonzero)
        if present.size == 0:
            slices[ax] = slice(0, 0)
            continue
        start = int(present[0]) if "f" in trim.lower() else 0
        stop = int(present[-1]) + 1 if "b" in trim.lower() else nonzero.shape[ax]
        slices[ax] = slice(start, stop)
    return tuple(slices)


def _imaginary_negligible(a: Any, tol: Any) -> bool:
    """Whether ``np.real_if_close`` drops the imaginary part of complex ``a``."""
    limit = np.finfo(a.dtype).eps * tol if tol > 1 else tol
    return bool(np.all(np.absolute(a.imag) < limit))


nondifferentiable(_diagonal_plan, _trim_slices, _imaginary_negligible)


def _fill_diagonal(a, val, wrap=False):
    """``np.fill_diagonal``: the diagonal of ``a`` takes ``val`` (cycled), in place."""
    places, which = _diagonal_plan(a, val, wrap)
    if which.size:
        a[places] = np.ravel(val)[which]


def _trim_zeros(filt, trim="fb", axis=None):
    """``np.trim_zeros``: a slice of ``filt`` without its leading/trailing zeros."""
    kept = _trim_slices(filt, trim, axis)
    if isinstance(filt, list):
        return filt[kept[0]]
    return filt[kept]


def _real_if_close(a, tol=100):
    """``np.real_if_close``: ``a.real`` when every imaginary part is negligible, else ``a``."""
    a = np.asanyarray(a)
    if np.iscomplexobj(a) and _imaginary_negligible(a, tol):
        return a.real
    return a


defined_as(np.fill_diagonal, _fill_diagonal)
defined_as(np.trim_zeros, _trim_zeros, validate=True)
defined_as(np.real_if_close, _real_if_close)


# --------------------------------------------------------------------------------------------
# cumulative_sum, cumulative_prod, apply_along_axis
# --------------------------------------------------------------------------------------------


def _refuse_out(name: str, out: Any) -> None:
    if out is not None:
        raise RuleArgumentError(f"numpy.{name}: yuebing does not differentiate out=; assign the result instead "
                                f"(y[...] = np.{name}(x))")


def _cumulative_axis(x: Any, axis: Any) -> int:
    """The axis NumPy accumulates along (NumPy has refused ``axis=None`` for 2-d and more)."""
    return 0 if axis is None else axis % max(np.ndim(x), 1)


nondifferentiable(_refuse_out, _cumulative_axis)


def _with_initial(y: Any, axis: int, initial: float) -> Any:
    """``y`` with a slab of ``initial`` in front along ``axis``."""
    shape = list(np.shape(y))
    shape[axis] = 1
    return np.concatenate([np.full(shape, initial, dtype=y.dtype), y], axis=axis)


def _cumulative_sum(x, axis=None, dtype=None, out=None, include_initial=False):
    """``np.cumulative_sum``: ``np.cumsum`` with an optional leading 0."""
    _refuse_out("cumulative_sum", out)
    x = np.atleast_1d(x)
    ax = _cumulative_axis(x, axis)
    y = np.cumsum(x, axis=ax, dtype=dtype)
    return _with_initial(y, ax, 0) if include_initial else y


def _cumulative_prod(x, axis=None, dtype=None, out=None, include_initial=False):
    """``np.cumulative_prod``: ``np.cumprod`` with an optional leading 1."""
    _refuse_out("cumulative_prod", out)
    x = np.atleast_1d(x)
    ax = _cumulative_axis(x, axis)
    y = np.cumprod(x, axis=ax, dtype=dtype)
    return _with_initial(y, ax, 1) if include_initial else y


if hasattr(np, "cumulative_sum"):  # NumPy 2.1 and later
    defined_as(np.cumulative_sum, _cumulative_sum, validate=True)
    defined_as(np.cumulative_prod, _cumulative_prod, validate=True)


def _slice_layout(shape: tuple, axis: int) -> tuple:
    """``(axis, number of 1-d slices)`` for ``apply_along_axis`` (NumPy's error for none)."""
    ndim = len(shape)
    if not -ndim <= axis < ndim:
        raise np.exceptions.AxisError(axis, ndim)
    axis = axis % ndim
    count = math.prod(s for i, s in enumerate(shape) if i != axis)
    if count == 0:
        raise ValueError("Cannot apply_along_axis when any iteration dimensions are 0")
    return axis, count


nondifferentiable(_slice_layout)


def _apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """``np.apply_along_axis``: ``func1d`` on every 1-d slice along ``axis``; the result's own
    axes take the place of ``axis``."""
    arr = np.asanyarray(arr)
    axis, count = _slice_layout(arr.shape, axis)
    moved = np.moveaxis(arr, axis, -1)
    rows = np.reshape(moved, (count, arr.shape[axis]))
    results = [np.asanyarray(func1d(rows[i], *args, **kwargs)) for i in range(count)]
    stacked = np.reshape(np.stack(results), moved.shape[:-1] + results[0].shape)
    extra = results[0].ndim
    batch = moved.ndim - 1
    return np.moveaxis(stacked, tuple(range(batch, batch + extra)), tuple(range(axis, axis + extra)))


defined_as(np.apply_along_axis, _apply_along_axis)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _fill_with(a, v):
    np.fill_diagonal(a, v)


def _fill_tall(a, v):
    np.fill_diagonal(a, v, wrap=True)


def _row_norms(x):
    return np.apply_along_axis(lambda r: np.sqrt(np.sum(r ** 2)), 1, x)


def _column_outer(x):
    return np.apply_along_axis(lambda c: np.outer(c, c), 0, x)


def _scaled_rows(x, s):
    return np.apply_along_axis(lambda r, k: r * k, -1, x, s)


CASES = [
    # diagonal
    Case(np.diagonal, randn(3, 3)),
    Case(np.diagonal, randn(3, 4), 1),
    Case(np.diagonal, randn(4, 3), -1),
    Case(np.diagonal, randn(2, 3, 4), 0, 1, 2),
    Case(np.diagonal, randc(3, 3)),
    Case(np.ndarray.diagonal, randn(3, 4), 1),
    # rollaxis
    Case(np.rollaxis, randn(2, 3, 4), 2),
    Case(np.rollaxis, randn(2, 3, 4), 0, 3),
    Case(np.rollaxis, randn(2, 3, 4), -1, 1),
    # fill_diagonal
    Case(np.fill_diagonal, randn(3, 3), randn()),
    Case(_fill_with, randn(3, 4), randn(2), name="numpy.fill_diagonal(cycling values)"),
    Case(_fill_tall, randn(7, 3), randn(3), name="numpy.fill_diagonal(wrap=True)"),
    Case(_fill_with, randn(3, 3, 3), randn(3), name="numpy.fill_diagonal(3-d)"),
    # real_if_close
    Case(np.real_if_close, randn(3)),
    Case(np.real_if_close, randc(3)),
    # apply_along_axis
    Case(_row_norms, randn(3, 4), name="numpy.apply_along_axis(scalar result)"),
    Case(_column_outer, randn(2, 3), name="numpy.apply_along_axis(2-d result)"),
    Case(_scaled_rows, randn(2, 3), randn(), name="numpy.apply_along_axis(extra argument)"),
]
if hasattr(np, "cumulative_sum"):
    CASES += [
        Case(np.cumulative_sum, randn(5)),
        Case(np.cumulative_sum, randn(3, 4), kwargs={"axis": 1, "include_initial": True}),
        Case(np.cumulative_prod, randn(5)),
        Case(np.cumulative_prod, randn(3, 4), kwargs={"axis": 0, "include_initial": True}),
        Case(np.cumulative_sum, randc(4)),
    ]
