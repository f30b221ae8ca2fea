"""NumPy reductions: sum, mean, prod, max/min (amax/amin), ptp and nansum/nanmean/nanmax/nanmin;
and the ``ndarray`` methods sum, mean, prod, max, min. (Statistics are in ``numpy_statistics``,
scans and differences in ``numpy_cumulative``.)

Every reduction takes ``axis`` (None, int, negative, tuple) and ``keepdims``; ``where=`` is
supported by sum/mean/prod/max/min and the nan-variants, ``initial=`` by sum/prod/max/min,
``dtype=`` where NumPy has it. ``out=`` is refused (assign the result instead). Inputs may be
arrays, Python or NumPy numbers, or (nested) lists and tuples of numbers and arrays.

Conventions at non-smooth points (docs/conventions.md):

* ``max``/``min``/``nanmax``/``nanmin``/``ptp``: ties split the cotangent evenly among the tied
  extrema (Mooncake's convention). An ``initial=`` value counts as one more candidate of every
  output: when it beats every element it receives the whole cotangent, when it ties with ``k``
  elements each of the ``k + 1`` gets ``1/(k + 1)``.
* ``initial=`` is differentiated: ``sum``/``nansum`` send it the sum of the output cotangent,
  ``prod`` the cotangent times the product of the elements (the other factors).
* ``prod`` is exact with zeros in the input (no division by the input): the partial of a product
  with respect to one factor is the product of the others.

Internal convention: the pullbacks below return the rdata of the *arguments only* (as many as
they have something for); ``numpy_arguments.rule`` prepends ``f``'s rdata and pads with
``NoRData`` up to the number of arguments the call passed.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, Expect, randc, randn, randpos
from .core import CoDual, Dual, primal
from .numpy_arguments import (NV, as_array, axes_of, conj_if_complex, deliver, dense_tangent, element_count, expand,
                              forward, given_keywords, initial_tangent, keeps_dims, no_out, rule, where_mask)
from .second_order import linear, with_vjp
from .util import fit_tangent, out_cotangent, output, tangent


# --------------------------------------------------------------------------------------------
# sum, nansum, mean, nanmean
# --------------------------------------------------------------------------------------------


def _linear_reduction(fn: Callable, name: str, mean: bool, nan: bool) -> None:
    """sum / mean and their nan-variants: the cotangent is spread (divided by the count for means)."""

    def weights(x: np.ndarray, axes: tuple, where: Any) -> Any:
        mask = where_mask(primal(where), x.shape)
        if nan:
            finite = ~np.isnan(x)
            mask = finite if mask is None else mask & finite
        if not mean:
            return mask
        count = element_count(mask, x.shape, axes)
        return (1.0 / max(count, 1)) if mask is None else mask / np.maximum(count, 1)  # empty: no elements

    def rrule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
        no_out(name, out)
        x = as_array(primal(a))
        result = output(fn(primal(a), **given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)))

        def pullback(dy: Any) -> tuple:
            axes = axes_of(primal(axis), x.ndim)
            g = expand(out_cotangent(result, dy), x.shape, axes, keeps_dims(primal(keepdims)))
            w = weights(x, axes, where)
            # initial= is added to every output: its cotangent is the sum of the output's
            r_initial = deliver(initial, out_cotangent(result, dy))
            return (deliver(a, g if w is None else g * w), NoRData, NoRData, NoRData, NoRData, r_initial)

        return result, pullback

    def frule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
        no_out(name, out)
        x = primal(a)
        y = fn(x, **given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where))
        dx = dense_tangent(x, tangent(a))
        d_initial = initial_tangent(initial)
        if dx is None and d_initial is None:
            return Dual(y, fit_tangent(NoTangent, y))
        dy = 0.0
        if dx is not None:
            xa = as_array(x)
            axes = axes_of(primal(axis), xa.ndim)
            w = weights(xa, axes, where)
            dx = np.asarray(dx) if w is None else np.where(w != 0, dx, 0) * w  # nan-safe masking
            dy = np.sum(dx, axis=axes, keepdims=keeps_dims(primal(keepdims)))
        if d_initial is not None:
            dy = dy + d_initial
        return Dual(y, fit_tangent(dy, y))

    if mean:  # mean has no initial=; keep NumPy's parameter order
        def rrule_m(a, axis=None, dtype=None, out=None, keepdims=NV, where=NV):
            return rrule(a, axis, dtype, out, keepdims, NV, where)

        def frule_m(a, axis=None, dtype=None, out=None, keepdims=NV, where=NV):
            return frule(a, axis, dtype, out, keepdims, NV, where)

        return rrule_m, frule_m
    return rrule, frule


for _fn, _method, _is_mean, _is_nan in (
    (np.sum, "sum", False, False), (np.mean, "mean", True, False),
    (np.nansum, None, False, True), (np.nanmean, None, True, True),
):
    _r, _f = _linear_reduction(_fn, f"numpy.{_fn.__name__}", _is_mean, _is_nan)
    _targets = (_fn,) if _method is None else (_fn, (np.ndarray, _method))
    rule(*_targets)(_r)
    forward(*_targets)(_f)


# --------------------------------------------------------------------------------------------
# prod (exact with zeros)
# --------------------------------------------------------------------------------------------


def prod_partials(x: np.ndarray, axes: tuple) -> np.ndarray:
    """``d prod / d x_i`` = product of the other factors in ``x_i``'s slice, with no division
    (exclusive products from the left times from the right), so zeros are exact."""
    if not axes or x.size == 0:
        return np.ones_like(x)
    k = len(axes)
    moved = np.moveaxis(x, axes, range(-k, 0))
    flat = moved.reshape(moved.shape[: moved.ndim - k] + (-1,))
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], axis=-1), axis=-1)
    right = np.cumprod(np.concatenate([ones, flat[..., :0:-1]], axis=-1), axis=-1)[..., ::-1]
    return np.moveaxis((left * right).reshape(moved.shape), range(-k, 0), axes)


def _prod_setup(a, axis, where):
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    mask = where_mask(primal(where), x.shape)
    factors = x if mask is None else np.where(mask, x, 1)  # masked-out elements act as 1
    partial = prod_partials(factors, axes)
    return x, axes, partial if mask is None else partial * mask


def _product_of_elements(a, axis, keepdims, where) -> np.ndarray:
    """``prod`` without ``initial=``: the partial of ``initial * prod(x)`` in ``initial``."""
    x = as_array(primal(a))
    mask = where_mask(primal(where), x.shape)
    factors = x if mask is None else np.where(mask, x, 1)
    return np.prod(factors, axis=axes_of(primal(axis), x.ndim), keepdims=keeps_dims(primal(keepdims)))


@rule(np.prod, (np.ndarray, "prod"))
def _prod_rrule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    no_out("numpy.prod", out)
    result = output(np.prod(primal(a), **given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)))

    def pullback(dy: Any) -> tuple:
        x, axes, partial = _prod_setup(a, axis, where)
        if primal(initial) is not NV:
            partial = partial * primal(initial)
        g_out = out_cotangent(result, dy)
        g = expand(g_out, x.shape, axes, keeps_dims(primal(keepdims)))
        r_initial = NoRData
        if isinstance(initial, CoDual):
            r_initial = deliver(initial, g_out * conj_if_complex(_product_of_elements(a, axis, keepdims, where)))
        return (deliver(a, g * conj_if_complex(partial)), NoRData, NoRData, NoRData, NoRData, r_initial)

    return result, pullback


@forward(np.prod, (np.ndarray, "prod"))
def _prod_frule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    no_out("numpy.prod", out)
    y = np.prod(primal(a), **given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where))
    dx = dense_tangent(primal(a), tangent(a))
    d_initial = initial_tangent(initial)
    if dx is None and d_initial is None:
        return Dual(y, fit_tangent(NoTangent, y))
    dy = 0.0
    if dx is not None:
        x, axes, partial = _prod_setup(a, axis, where)
        if primal(initial) is not NV:
            partial = partial * primal(initial)
        dy = np.sum(dx * partial, axis=axes, keepdims=keeps_dims(primal(keepdims)))
    if d_initial is not None:
        dy = dy + d_initial * _product_of_elements(a, axis, keepdims, where)
    return Dual(y, fit_tangent(dy, y))


# --------------------------------------------------------------------------------------------
# max, min, amax, amin, nanmax, nanmin, ptp: ties split evenly
# --------------------------------------------------------------------------------------------


def _equal(x: Any, y_kept: Any, nan: bool) -> Any:
    """Where ``x`` is the extremum ``y``: a NaN extremum is its NaN (not for the nan-variants)."""
    return (x == y_kept) if nan else (x == y_kept) | (np.isnan(x) & np.isnan(y_kept))


def extremum_shares(x: np.ndarray, y_kept: Any, axes: tuple, where: Any, nan: bool,
                    initial: Any = NV) -> tuple[np.ndarray, Any]:
    """Each element's share of the cotangent of ``y`` (max or min), and ``initial=``'s share per
    output (keepdims shape; None when not given): ``initial`` is one more candidate, and each of
    the ``k`` tied candidates of a slice gets ``1/k``, the others 0."""
    hit = _equal(x, y_kept, nan)
    mask = where_mask(primal(where), x.shape)
    if mask is not None:
        hit = hit & mask
    count = np.sum(hit, axis=axes, keepdims=True)
    if initial is NV:
        return hit / np.maximum(count, 1), None
    initial_hit = _equal(np.asarray(initial), y_kept, nan)
    count = count + initial_hit
    return hit / np.maximum(count, 1), initial_hit / np.maximum(count, 1)


def extremum_weights(x: np.ndarray, y_kept: Any, axes: tuple, where: Any, nan: bool) -> np.ndarray:
    """The elements' shares of ``extremum_shares`` for a call without ``initial=``."""
    return extremum_shares(x, y_kept, axes, where, nan)[0]


def _extremum(fn: Callable, name: str, nan: bool) -> tuple[Callable, Callable]:
    def setup(a, axis, out, keepdims, initial, where):
        no_out(name, out)
        y = fn(primal(a), **given_keywords(axis=axis, keepdims=keepdims, initial=initial, where=where))
        return y

    def weights(a, axis, keepdims, y, where, initial):
        """``(x, axes, shares of the elements, share of initial= per output (keepdims))``."""
        x = as_array(primal(a))
        axes = axes_of(primal(axis), x.ndim)
        kept = np.asarray(y) if keeps_dims(primal(keepdims)) else np.expand_dims(np.asarray(y), axes)
        return (x, axes, *extremum_shares(x, kept, axes, where, nan, primal(initial)))

    def rrule(a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
        y = setup(a, axis, out, keepdims, initial, where)
        result = output(y)

        def pullback(dy: Any) -> tuple:
            x, axes, w, w_initial = weights(a, axis, keepdims, y, where, initial)
            g = expand(out_cotangent(result, dy), x.shape, axes, keeps_dims(primal(keepdims)))
            r_initial = NoRData
            if isinstance(initial, CoDual):  # its share of every output's cotangent
                g_kept = np.asarray(out_cotangent(result, dy))
                g_kept = g_kept if keeps_dims(primal(keepdims)) else np.expand_dims(g_kept, axes)
                r_initial = deliver(initial, g_kept * w_initial)
            return (deliver(a, g * w), NoRData, NoRData, NoRData, r_initial)

        return result, pullback

    def frule(a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
        y = setup(a, axis, out, keepdims, initial, where)
        dx = dense_tangent(primal(a), tangent(a))
        d_initial = initial_tangent(initial)
        if dx is None and d_initial is None:
            return Dual(y, fit_tangent(NoTangent, y))
        x, axes, w, w_initial = weights(a, axis, keepdims, y, where, initial)
        dy = 0.0
        if dx is not None:
            dy = np.sum(np.where(w != 0, dx, 0) * w, axis=axes, keepdims=keeps_dims(primal(keepdims)))
        if d_initial is not None:  # the share array summed over its length-1 axes: y's shape
            dy = dy + d_initial * np.sum(w_initial, axis=axes, keepdims=keeps_dims(primal(keepdims)))
        return Dual(y, fit_tangent(dy, y))

    return rrule, frule


for _fn, _method, _is_nan in (
    (np.max, "max", False), (np.min, "min", False), (np.amax, None, False), (np.amin, None, False),
    (np.nanmax, None, True), (np.nanmin, None, True),
):
    _r, _f = _extremum(_fn, f"numpy.{_fn.__name__}", _is_nan)
    _targets = (_fn,) if _method is None else (_fn, (np.ndarray, _method))
    rule(*_targets)(_r)
    forward(*_targets)(_f)


def _ptp_weights(a, axis, keepdims):
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    hi = np.max(x, axis=axes, keepdims=True)
    lo = np.min(x, axis=axes, keepdims=True)
    w = extremum_weights(x, hi, axes, NV, False) - extremum_weights(x, lo, axes, NV, False)
    return x, axes, w


@rule(np.ptp)
def _ptp_rrule(a, axis=None, out=None, keepdims=NV):
    no_out("numpy.ptp", out)
    result = output(np.ptp(primal(a), **given_keywords(axis=axis, keepdims=keepdims)))

    def pullback(dy: Any) -> tuple:
        x, axes, w = _ptp_weights(a, axis, keepdims)
        return (deliver(a, expand(out_cotangent(result, dy), x.shape, axes, keeps_dims(primal(keepdims))) * w),)

    return result, pullback


@forward(np.ptp)
def _ptp_frule(a, axis=None, out=None, keepdims=NV):
    no_out("numpy.ptp", out)
    y = np.ptp(primal(a), **given_keywords(axis=axis, keepdims=keepdims))
    dx = dense_tangent(primal(a), tangent(a))
    if dx is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x, axes, w = _ptp_weights(a, axis, keepdims)
    return Dual(y, fit_tangent(np.sum(dx * w, axis=axes, keepdims=keeps_dims(primal(keepdims))), y))


# --------------------------------------------------------------------------------------------
# Second order: cotangent maps in plain NumPy, differentiated in forward mode (the same
# cotangents as the pullbacks above, same ties, zeros and masks; ``keepdims``/``where``/
# ``initial`` arrive as constants, NumPy's "not given" marker when left out)
# --------------------------------------------------------------------------------------------


def _so_equal(x: Any, y_kept: Any, nan: bool) -> Any:
    if nan:
        return x == y_kept
    return (x == y_kept) | (np.isnan(x) & np.isnan(y_kept))


def _so_shares(x: Any, y_kept: Any, axes: tuple, mask: Any, nan: bool) -> Any:
    """``extremum_weights``: 1/k for each of k tied extrema, a NaN extremum to the NaN."""
    hit = _so_equal(x, y_kept, nan)
    if mask is not None:
        hit = hit & mask
    count = np.sum(hit, axis=axes, keepdims=True)
    return hit / np.maximum(count, 1)


def _so_extremum(g: Any, y: Any, a: Any, axis: Any, keepdims: Any, initial: Any, where: Any, nan: bool) -> tuple:
    """``extremum_shares`` applied to ``g``: the cotangents of ``a`` and of ``initial=``."""
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    keep = keeps_dims(keepdims)
    y_kept = np.asarray(y) if keep else np.expand_dims(np.asarray(y), axes)
    hit = _so_equal(x, y_kept, nan)
    mask = where_mask(where, x.shape)
    if mask is not None:
        hit = hit & mask
    count = np.sum(hit, axis=axes, keepdims=True)
    g_kept = np.asarray(g) if keep else np.expand_dims(np.asarray(g), axes)
    if initial is NV:
        return (expand(g, x.shape, axes, keep) * (hit / np.maximum(count, 1)),)
    initial_hit = _so_equal(np.asarray(initial), y_kept, nan)
    count = count + initial_hit
    g_share = g_kept / np.maximum(count, 1)
    return (np.broadcast_to(g_share, x.shape) * hit, None, None, None, np.sum(g_share * initial_hit))


def _max_vjp(g, y, a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
    return _so_extremum(g, y, a, axis, keepdims, initial, where, False)


def _nanmax_vjp(g, y, a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
    return _so_extremum(g, y, a, axis, keepdims, initial, where, True)


def _ptp_vjp(g, y, a, axis=None, out=None, keepdims=NV):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    hi = np.max(x, axis=axes, keepdims=True)
    lo = np.min(x, axis=axes, keepdims=True)
    shares = _so_shares(x, hi, axes, None, False) - _so_shares(x, lo, axes, None, False)
    return (expand(g, x.shape, axes, keeps_dims(keepdims)) * shares,)


def _nan_reduction(g: Any, a: Any, axis: Any, keepdims: Any, where: Any, mean: bool) -> tuple:
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    finite = ~np.isnan(x)
    mask = where_mask(where, x.shape)
    if mask is not None:
        finite = finite & mask
    w = finite / np.maximum(np.sum(finite, axis=axes, keepdims=True), 1) if mean else finite
    return (expand(g, x.shape, axes, keeps_dims(keepdims)) * w,)


def _nansum_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    if initial is NV:
        return _nan_reduction(g, a, axis, keepdims, where, False)
    return (*_nan_reduction(g, a, axis, keepdims, where, False), None, None, None, None, np.sum(g))


def _nanmean_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, where=NV):
    return _nan_reduction(g, a, axis, keepdims, where, True)


def _prod_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    mask = where_mask(where, x.shape)
    factors = x if mask is None else np.where(mask, x, 1)
    partial = prod_partials(factors, axes)  # products of the others: no division, exact at zeros
    if mask is not None:
        partial = partial * mask
    ge = expand(g, x.shape, axes, keeps_dims(keepdims))
    if initial is NV:
        return (ge * partial,)
    return (ge * (partial * initial), None, None, None, None, _so_initial_of_prod(g, factors, axes, keepdims))


def _so_initial_of_prod(g: Any, factors: Any, axes: tuple, keepdims: Any) -> Any:
    """The cotangent of ``prod``'s ``initial=``: ``g`` times the product of the elements. (Its own
    function: third order refuses a cotangent map that names its primitive.)"""
    return np.sum(g * np.prod(factors, axis=axes, keepdims=keeps_dims(keepdims)))



for _fn in (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min):
    with_vjp(_fn, _max_vjp)
with_vjp(np.nanmax, _nanmax_vjp)
with_vjp(np.nanmin, _nanmax_vjp)
with_vjp(np.ptp, _ptp_vjp)
with_vjp(np.nansum, _nansum_vjp)
with_vjp(np.nanmean, _nanmean_vjp)
with_vjp(np.prod, _prod_vjp)
with_vjp(np.ndarray.prod, _prod_vjp)
linear(np.sum, (np.ndarray, "sum"), data=(5, "initial"))  # an int initial= is a value
# np.trace's first-order rule is in linalg: a sum of the diagonal
linear(np.mean, np.trace, (np.ndarray, "mean"), (np.ndarray, "trace"))


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _with_zeros(count: int) -> np.ndarray:
    x = randn(3, 4)
    x[0, 1] = 0.0
    if count > 1:
        x[0, 3] = 0.0
    x[2, 2] = 0.0
    return x


_MASK = np.array([[True, False, True, True], [False, True, True, True], [True, True, False, True]])

CASES = [
    # sum
    Case(np.sum, randn(3, 4)),
    Case(np.sum, randn(3, 4), kwargs={"axis": 0}),
    Case(np.sum, randn(3, 4, 2), kwargs={"axis": (0, -1), "keepdims": True}),
    Case(np.sum, randn(3, 4, dtype=np.float32), kwargs={"axis": -1}),
    Case(np.sum, randn(3, 4, dtype=np.float32), kwargs={"dtype": np.float64}),
    Case(np.sum, randc(3, 2), kwargs={"axis": 1}),
    Case(np.sum, randn(), name="numpy.sum(float)"),
    Case(np.sum, np.array(1.5)),
    Case(np.sum, np.array(1.5), kwargs={"keepdims": True}),
    Case(np.mean, randn(), name="numpy.mean(float)"),
    Case(np.prod, randn(), name="numpy.prod(float)"),
    Case(np.max, randn(), name="numpy.max(float)"),
    Case(np.sum, np.zeros((0, 3)), kwargs={"axis": 0}),
    Case(np.sum, randn(3, 4), kwargs={"where": _MASK, "axis": 1}),
    Case(np.sum, randn(3, 4), kwargs={"initial": 2.0}),
    # initial= passed positionally is perturbed by check_rule: its derivative is checked too
    Case(np.sum, randn(3, 4), 1, None, None, False, randn(), name="numpy.sum(initial=float)"),
    Case(np.ndarray.sum, randn(3, 4), 0, None, None, True, randn(), name="ndarray.sum(initial=float)"),
    Case(np.nansum, randn(3, 4), 0, None, None, False, randn(), name="numpy.nansum(initial=float)"),
    Case(np.prod, randn(3, 4), 1, None, None, False, randn(), name="numpy.prod(initial=float)"),
    Case(np.max, np.array([[0.5, 1.0], [-1.0, -2.0]]), 1, None, False, 0.2, name="numpy.max(initial wins one row)"),
    Case(np.ndarray.min, np.array([[0.5, 1.0], [-1.0, -2.0]]), 0, None, True, 0.2, name="ndarray.min(initial=float)"),
    Case(np.sum, [randn(), randn(), randn()], name="numpy.sum(list of floats)"),
    Case(np.sum, [randn(2), randn(2)], kwargs={"axis": 0}, name="numpy.sum(list of arrays)"),
    Case(np.sum, (randn(), randn()), name="numpy.sum(tuple of floats)"),
    Case(np.ndarray.sum, randn(3, 4), kwargs={"axis": 1, "keepdims": True}),
    Case(np.ndarray.sum, randn(2, 3), 0),
    Expect(np.nansum, np.array([1.0, np.nan, -2.0, 0.5]), expected=[1, 0, 1, 1]),
    Case(np.nansum, randn(3, 4), kwargs={"axis": 0}),  # finite differences cannot see through NaN
    # mean
    Case(np.mean, randn(3, 4)),
    Case(np.mean, randn(3, 4, 5), kwargs={"axis": (0, 2)}),
    Case(np.mean, randn(3, 4, dtype=np.float32), kwargs={"axis": 0, "keepdims": True}),
    Case(np.mean, randc(4)),
    Case(np.mean, randn(3, 4), kwargs={"where": _MASK, "axis": 0}),
    Case(np.mean, randn(3, 4), kwargs={"dtype": np.float32}, rtol=3e-2, atol=1e-3),
    Case(np.ndarray.mean, randn(3, 4), kwargs={"axis": -1}),
    Expect(np.nanmean, np.array([[1.0, np.nan, -2.0], [0.5, 0.25, np.nan]]), kwargs={"axis": 1},
           expected=[[0.5, 0, 0.5], [0.5, 0.5, 0]]),
    Case(np.nanmean, randn(3, 4), kwargs={"axis": 1}),
    Case(np.nanmax, randn(3, 4), kwargs={"axis": 1}),
    Case(np.nanmin, randn(3, 4)),
    # prod: zeros handled exactly
    Case(np.prod, randpos(3, 4)),
    Case(np.prod, randn(3, 4), kwargs={"axis": 1}),
    Case(np.prod, randn(2, 3, 4), kwargs={"axis": (0, 2), "keepdims": True}),
    Case(np.prod, _with_zeros(1), kwargs={"axis": 1}, name="numpy.prod(one zero per row)"),
    Case(np.prod, _with_zeros(2), kwargs={"axis": 1}, name="numpy.prod(two zeros in a row)"),
    Case(np.prod, _with_zeros(1), name="numpy.prod(zeros, all axes)"),
    Case(np.prod, randc(3)),
    Case(np.prod, randn(3, dtype=np.float32)),
    Case(np.prod, randn(3, 4), kwargs={"where": _MASK, "axis": 0, "initial": 1.5}),
    Case(np.prod, np.zeros((0,))),
    Case(np.ndarray.prod, randn(3, 4), kwargs={"axis": 0}),
    # max / min: inputs away from ties except the dedicated convention case
    Case(np.max, randn(3, 4)),
    Case(np.max, randn(3, 4), kwargs={"axis": 0}),
    Case(np.min, randn(3, 4, 2), kwargs={"axis": (1, 2), "keepdims": True}),
    Case(np.amax, randn(5, dtype=np.float32)),
    Case(np.amin, randn(2, 3), kwargs={"axis": -1}),
    Case(np.max, randn(3, 4), kwargs={"axis": 1, "where": _MASK, "initial": -10.0}),
    Case(np.min, randn(3, 4), kwargs={"initial": -10.0}, name="numpy.min(initial wins: zero gradient)"),
    Case(np.max, np.array(0.7)),
    Case(np.ndarray.max, randn(3, 4), kwargs={"axis": 1}),
    Case(np.ndarray.min, randn(3, 4)),
    Expect(np.max, np.array([1.0, 3.0, -2.0, 3.0]), expected=[0, 0.5, 0, 0.5], name="numpy.max(ties split evenly)"),
    Expect(np.min, np.array([[1.0, 1.0, 1.0], [0.0, 2.0, 5.0]]), kwargs={"axis": 1},
           expected=[[1 / 3, 1 / 3, 1 / 3], [1, 0, 0]], name="numpy.min(three-way tie)"),
    Expect(np.ptp, np.array([2.0, 2.0, -1.0]), expected=[0.5, 0.5, -1.0], name="numpy.ptp(tied max)"),
    Expect(np.ndarray.max, np.array([1.0, 3.0, 3.0]), expected=[0, 0.5, 0.5], name="ndarray.max(ties)"),
    Expect(np.nanmax, np.array([1.0, np.nan, -2.0, 3.0]), expected=[0, 0, 0, 1]),
    Expect(np.nanmin, np.array([[1.0, np.nan], [-2.0, 0.5]]), kwargs={"axis": 0}, expected=[[0, 0], [1, 1]]),
    Expect(np.max, np.array([np.nan, 1.0]), expected=[1.0, 0.0], name="numpy.max(nan propagates: gradient to the nan)"),
    Case(np.ptp, randn(3, 4), kwargs={"axis": 1}),
    # logsumexp's shift m = np.max(x, keepdims=True): its cotangent cancels exactly in
    # m + log(sum(exp(x - m))), so composition needs no rule; this checks the max it uses.
    Case(np.max, randn(4, 6), kwargs={"axis": 1, "keepdims": True}, name="numpy.max(logsumexp shift)"),
]
