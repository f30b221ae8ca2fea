"""NumPy reductions: sum, mean, prod, max/min (amax/amin), ptp and nansum/nanmean/nanmax/nanmin;
and the ``ndarray`` methods sum, mean, prod, max, min. (Statistics are in ``numpy_statistics``,
scans and differences in ``numpy_cumulative``.)

Every reduction takes ``axis`` (None, int, negative, tuple) and ``keepdims``; ``where=`` is
supported by sum/mean/prod/max/min and the nan-variants, ``initial=`` by sum/prod/max/min,
``dtype=`` where NumPy has it; ``out=`` runs as ``out[...] = f(..., out=None)`` in every mode
(``numpy_arguments.out_assigned``; its old contents get cotangent 0; it may alias the input). Inputs may be
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

Each derivative is written once, as a cotangent map ``vjp(g, y, *xs)`` in plain NumPy: the reverse
rule's pullback calls it (``numpy_arguments.vjp_pullback``) and second order differentiates it
(``with_vjp``; for sum and mean, declared ``linear``, only the pullback uses it). The forward rules
share its helpers (weights, shares, partials).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoTangent
from .cases import Case, Expect, randc, randn, randpos
from .core import Dual, primal
from .core import frule as core_frule
from .numpy_arguments import (NV, as_array, axes_of, conj_if_complex, dense_tangent, expand, forward, given_keywords,
                              initial_tangent, keeps_dims, no_out, reduced_count, rule, vjp_pullback, where_mask)
from .second_order import linear, with_vjp
from .util import defined_rrule, fit_tangent, output, tangent


# --------------------------------------------------------------------------------------------
# sum, nansum, mean, nanmean: the cotangent spread over the elements
# --------------------------------------------------------------------------------------------


def _spread_weights(x: Any, axes: tuple, where: Any, mean: bool, nan: bool) -> Any:
    """Each element's weight in a sum (1; 0 where ``where`` is False or, for the nan-variants, the
    element is NaN) or mean (divided by the count); None for a plain sum (all weights 1)."""
    mask = where_mask(where, x.shape)
    if nan:
        finite = ~np.isnan(x)
        mask = finite if mask is None else mask & finite
    if not mean:
        return mask
    if mask is None:
        return 1.0 / max(reduced_count(x.shape, axes), 1)
    return mask / np.maximum(np.sum(mask, axis=axes, keepdims=True), 1)  # empty slice: no elements


def _spread(g: Any, a: Any, axis: Any, keepdims: Any, initial: Any, where: Any, mean: bool, nan: bool) -> tuple:
    """The cotangents of ``a`` and ``initial=`` (the sum of ``g``: it is added to every output)."""
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    ge = expand(g, x.shape, axes, keeps_dims(keepdims))
    w = _spread_weights(x, axes, where, mean, nan)
    ga = ge if w is None else ge * w
    if initial is NV:
        return (ga,)
    return (ga, None, None, None, None, np.sum(g))


def _sum_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    return _spread(g, a, axis, keepdims, initial, where, False, False)


def _mean_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, where=NV):
    return _spread(g, a, axis, keepdims, NV, where, True, False)


def _nansum_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    return _spread(g, a, axis, keepdims, initial, where, False, True)


def _nanmean_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, where=NV):
    return _spread(g, a, axis, keepdims, NV, where, True, True)


def _delegated(name: str, x: Any) -> str | None:
    """The method NumPy hands ``x`` to (``np.sum(A)`` calls ``A.sum()``: a SciPy sparse matrix, a
    user class), None for arrays, numbers and sequences (reduced here)."""
    method = name.rsplit(".", 1)[-1]
    if not isinstance(x, (np.ndarray, np.generic, list, tuple, int, float, complex)) and hasattr(x, method):
        return method
    return None


def _method_sum(a, axis=None, dtype=None, out=None, **given):
    """``np.sum`` of an object with its own ``sum``, as NumPy calls it (differentiated as code)."""
    if dtype is None:
        return a.sum(axis=axis, out=out, **given)
    return a.sum(axis=axis, dtype=dtype, out=out, **given)


def _method_mean(a, axis=None, dtype=None, out=None, **given):
    """``np.mean`` of an object with its own ``mean``, as NumPy calls it."""
    return a.mean(axis=axis, dtype=dtype, out=out, **given)


def _by_method(method: str, a: Any, axis: Any, dtype: Any, out: Any, keepdims: Any, initial: Any,
               where: Any) -> tuple:
    """The definition of a call NumPy hands to the object's own method, and the arguments the call
    gave (the others are the definition's defaults: ``keepdims``, ``initial``, ``where`` are passed
    on only when given, as NumPy does)."""
    given = {k: v for k, v in (("axis", axis), ("dtype", dtype), ("out", out), ("keepdims", keepdims),
                               ("initial", initial), ("where", where)) if v is not None and v is not NV}
    return (_method_sum if method == "sum" else _method_mean), (a,), given


def _spread_rules(fn: Callable, vjp: Callable, mean: bool, nan: bool) -> tuple[Callable, Callable]:
    name = f"numpy.{fn.__name__}"

    def rrule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
        if (method := _delegated(name, primal(a))) is not None:
            definition, args, kwargs = _by_method(method, a, axis, dtype, out, keepdims, initial, where)
            return defined_rrule(definition, *args, **kwargs)
        no_out(name, out)
        kw = given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)
        result = output(fn(primal(a), **kw))
        args = (a, axis, dtype, out, keepdims, where) if mean else (a, axis, dtype, out, keepdims, initial, where)
        return result, vjp_pullback(vjp, result, args)

    def frule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
        if (method := _delegated(name, primal(a))) is not None:
            definition, args, kwargs = _by_method(method, a, axis, dtype, out, keepdims, initial, where)
            return core_frule(definition, *args, **kwargs)
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
            w = _spread_weights(xa, axes, primal(where), mean, nan)
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


for _fn, _method, _vjp, _is_mean, _is_nan in (
    (np.sum, "sum", _sum_vjp, False, False), (np.mean, "mean", _mean_vjp, True, False),
    (np.nansum, None, _nansum_vjp, False, True), (np.nanmean, None, _nanmean_vjp, True, True),
):
    _r, _f = _spread_rules(_fn, _vjp, _is_mean, _is_nan)
    _targets = (_fn,) if _method is None else (_fn, (np.ndarray, _method))
    rule(*_targets)(_r)
    forward(*_targets)(_f)
with_vjp(np.nansum, _nansum_vjp)
with_vjp(np.nanmean, _nanmean_vjp)


def _sum_delegated(args: tuple, kwargs: dict) -> Callable | None:
    """Second order of ``np.sum(A)`` of an object NumPy hands to its own ``sum``: that method."""
    return _method_sum if args and _delegated("numpy.sum", args[0]) else None


def _mean_delegated(args: tuple, kwargs: dict) -> Callable | None:
    return _method_mean if args and _delegated("numpy.mean", args[0]) else None


linear(np.sum, data=(5, "initial"), delegate=_sum_delegated)  # an int initial= is a value
linear((np.ndarray, "sum"), data=(5, "initial"))
linear(np.mean, delegate=_mean_delegated)
# np.trace's first-order rule is in linalg: a sum of the diagonal
linear(np.trace, (np.ndarray, "mean"), (np.ndarray, "trace"))


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


def _prod_factors(x: Any, axes: tuple, where: Any) -> tuple:
    """``(factors, partials)``: the factors (masked-out elements act as 1) and the partial of the
    product (without ``initial=``) in each element (0 where masked out)."""
    mask = where_mask(where, x.shape)
    factors = x if mask is None else np.where(mask, x, 1)
    partial = prod_partials(factors, axes)  # products of the others: no division, exact at zeros
    return factors, partial if mask is None else partial * mask


def _product_of_elements(factors: Any, axes: tuple, keepdims: Any) -> Any:
    """``prod`` without ``initial=``: the partial of ``initial * prod(x)`` in ``initial``. (Its own
    function: third order refuses a cotangent map that names its primitive.)"""
    return np.prod(factors, axis=axes, keepdims=keeps_dims(keepdims))


def _prod_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    factors, partial = _prod_factors(x, axes, where)
    ge = expand(g, x.shape, axes, keeps_dims(keepdims))
    if initial is NV:
        return (ge * conj_if_complex(partial),)
    g_initial = np.sum(g * conj_if_complex(_product_of_elements(factors, axes, keepdims)))
    return (ge * conj_if_complex(partial * initial), None, None, None, None, g_initial)


@rule(np.prod, (np.ndarray, "prod"))
def _prod_rrule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    no_out("numpy.prod", out)
    result = output(np.prod(primal(a), **given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)))
    return result, vjp_pullback(_prod_vjp, result, (a, axis, dtype, out, keepdims, initial, where))


@forward(np.prod, (np.ndarray, "prod"))
def _prod_frule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    no_out("numpy.prod", out)
    y = np.prod(primal(a), **given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where))
    dx = dense_tangent(primal(a), tangent(a))
    d_initial = initial_tangent(initial)
    if dx is None and d_initial is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    factors, partial = _prod_factors(x, axes, primal(where))
    dy = 0.0
    if dx is not None:
        if primal(initial) is not NV:
            partial = partial * primal(initial)
        dy = np.sum(dx * partial, axis=axes, keepdims=keeps_dims(primal(keepdims)))
    if d_initial is not None:
        dy = dy + d_initial * _product_of_elements(factors, axes, primal(keepdims))
    return Dual(y, fit_tangent(dy, y))


with_vjp(np.prod, _prod_vjp)
with_vjp(np.ndarray.prod, _prod_vjp)


# --------------------------------------------------------------------------------------------
# max, min, amax, amin, nanmax, nanmin, ptp: ties split evenly
# --------------------------------------------------------------------------------------------


def _equal(x: Any, y_kept: Any, nan: bool) -> Any:
    """Where ``x`` is the extremum ``y``: a NaN extremum is its NaN (not for the nan-variants)."""
    if nan:
        return x == y_kept
    return (x == y_kept) | (np.isnan(x) & np.isnan(y_kept))


def extremum_shares(x: Any, y_kept: Any, axes: tuple, where: Any, nan: bool, initial: Any = NV) -> tuple:
    """Each element's share of the cotangent of ``y`` (max or min), and ``initial=``'s share per
    output (keepdims shape; None when not given): ``initial`` is one more candidate, and each of
    the ``k`` tied candidates of a slice gets ``1/k``, the others 0."""
    hit = _equal(x, y_kept, nan)
    mask = where_mask(where, x.shape)
    if mask is not None:
        hit = hit & mask
    count = np.sum(hit, axis=axes, keepdims=True)
    if initial is NV:
        return hit / np.maximum(count, 1), None
    initial_hit = _equal(np.asarray(initial), y_kept, nan)
    count = count + initial_hit
    return hit / np.maximum(count, 1), initial_hit / np.maximum(count, 1)


def _kept(v: Any, axes: tuple, keepdims: Any) -> Any:
    """A reduction's output (or its cotangent) with the reduced axes kept, as length 1."""
    return np.asarray(v) if keeps_dims(keepdims) else np.expand_dims(np.asarray(v), axes)


def _extremum_cotangents(g: Any, y: Any, a: Any, axis: Any, keepdims: Any, initial: Any, where: Any, nan: bool) -> tuple:
    """``extremum_shares`` applied to ``g``: the cotangents of ``a`` and of ``initial=``."""
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    shares, initial_share = extremum_shares(x, _kept(y, axes, keepdims), axes, where, nan, initial)
    ga = expand(g, x.shape, axes, keeps_dims(keepdims)) * shares
    if initial is NV:
        return (ga,)
    return (ga, None, None, None, np.sum(_kept(g, axes, keepdims) * initial_share))


def _max_vjp(g, y, a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
    return _extremum_cotangents(g, y, a, axis, keepdims, initial, where, False)


def _nanmax_vjp(g, y, a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
    return _extremum_cotangents(g, y, a, axis, keepdims, initial, where, True)


def _extremum(fn: Callable, name: str, vjp: Callable, nan: bool) -> tuple[Callable, Callable]:
    def rrule(a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
        no_out(name, out)
        result = output(fn(primal(a), **given_keywords(axis=axis, keepdims=keepdims, initial=initial, where=where)))
        return result, vjp_pullback(vjp, result, (a, axis, out, keepdims, initial, where))

    def frule(a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
        no_out(name, out)
        y = fn(primal(a), **given_keywords(axis=axis, keepdims=keepdims, initial=initial, where=where))
        dx = dense_tangent(primal(a), tangent(a))
        d_initial = initial_tangent(initial)
        if dx is None and d_initial is None:
            return Dual(y, fit_tangent(NoTangent, y))
        x = as_array(primal(a))
        axes = axes_of(primal(axis), x.ndim)
        keep = keeps_dims(primal(keepdims))
        w, w_initial = extremum_shares(x, _kept(y, axes, primal(keepdims)), axes, primal(where), nan, primal(initial))
        dy = 0.0
        if dx is not None:
            dy = np.sum(np.where(w != 0, dx, 0) * w, axis=axes, keepdims=keep)
        if d_initial is not None:  # the share array summed over its length-1 axes: y's shape
            dy = dy + d_initial * np.sum(w_initial, axis=axes, keepdims=keep)
        return Dual(y, fit_tangent(dy, y))

    return rrule, frule


for _fn, _method, _is_nan in (
    (np.max, "max", False), (np.min, "min", False), (np.amax, None, False), (np.amin, None, False),
    (np.nanmax, None, True), (np.nanmin, None, True),
):
    _r, _f = _extremum(_fn, f"numpy.{_fn.__name__}", _nanmax_vjp if _is_nan else _max_vjp, _is_nan)
    _targets = (_fn,) if _method is None else (_fn, (np.ndarray, _method))
    rule(*_targets)(_r)
    forward(*_targets)(_f)
for _fn in (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min):
    with_vjp(_fn, _max_vjp)
with_vjp(np.nanmax, _nanmax_vjp)
with_vjp(np.nanmin, _nanmax_vjp)


def _ptp_shares(x: Any, axes: tuple) -> Any:
    """The partial of ``max - min`` in each element: the max's shares minus the min's."""
    hi = np.max(x, axis=axes, keepdims=True)
    lo = np.min(x, axis=axes, keepdims=True)
    return extremum_shares(x, hi, axes, NV, False)[0] - extremum_shares(x, lo, axes, NV, False)[0]


def _ptp_vjp(g, y, a, axis=None, out=None, keepdims=NV):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    return (expand(g, x.shape, axes, keeps_dims(keepdims)) * _ptp_shares(x, axes),)


@rule(np.ptp)
def _ptp_rrule(a, axis=None, out=None, keepdims=NV):
    no_out("numpy.ptp", out)
    result = output(np.ptp(primal(a), **given_keywords(axis=axis, keepdims=keepdims)))
    return result, vjp_pullback(_ptp_vjp, result, (a, axis, out, keepdims))


@forward(np.ptp)
def _ptp_frule(a, axis=None, out=None, keepdims=NV):
    no_out("numpy.ptp", out)
    y = np.ptp(primal(a), **given_keywords(axis=axis, keepdims=keepdims))
    dx = dense_tangent(primal(a), tangent(a))
    if dx is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    return Dual(y, fit_tangent(np.sum(dx * _ptp_shares(x, axes), axis=axes, keepdims=keeps_dims(primal(keepdims))), y))


with_vjp(np.ptp, _ptp_vjp)


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
