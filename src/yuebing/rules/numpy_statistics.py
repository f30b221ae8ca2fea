"""NumPy statistics: var, std, median, average; and the ``ndarray`` methods var and std.

``var``/``std`` take ``axis``, ``keepdims``, ``ddof``, ``correction``, ``where=`` and ``dtype=``;
``mean=`` (a precomputed mean) and ``out=`` are refused. ``average`` takes ``weights`` shaped like
``a`` or 1-D along an int ``axis``; ``returned=True`` is refused. Inputs may be arrays, numbers or
(nested) lists and tuples of them.

Conventions at non-smooth points (docs/conventions.md):

* ``median`` sends the cotangent to the middle element (odd count) or half to each of the two
  middle elements (even count), chosen by a stable sort (ties: the earlier index).
* ``std`` at zero spread: NumPy's arithmetic (0/0 = nan), as ``sqrt'(0)``.

Pullbacks return the rdata of the arguments only (``numpy_arguments.rule``).
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, Expect, randc, randn, randpos
from .core import Dual, RuleArgumentError, primal
from .numpy_arguments import (NV, as_array, axes_of, conj_if_complex, deliver, dense_tangent, element_count, expand,
                              forward, given_keywords, keeps_dims, no_out, reduced_count, refuse, rule, where_mask)
from .second_order import with_vjp
from .util import fit_tangent, out_cotangent, output, tangent, unbroadcast


# --------------------------------------------------------------------------------------------
# var, std
# --------------------------------------------------------------------------------------------


def _var_setup(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    no_out(name, out)
    refuse(name, "mean", mean, NV, "let NumPy compute the mean (a given mean is not differentiated)")
    kw = given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, where=where, correction=correction)
    if primal(ddof) != 0:
        kw["ddof"] = primal(ddof)
    return kw


def _var_parts(a, axis, ddof, where, correction):
    """``(x, axes, d, n_eff)``: deviations ``x - mean`` (masked) and the divisor ``N - ddof``."""
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    mask = where_mask(primal(where), x.shape)
    m = np.mean(x, axis=axes, keepdims=True, **({} if mask is None else {"where": mask}))
    d = x - m
    if mask is not None:
        d = np.where(mask, d, 0)
    corr = primal(correction)
    # a float array: N - ddof = 0 gives inf/nan with a warning, as NumPy's own var does
    n_eff = np.asarray(element_count(mask, x.shape, axes) - (primal(ddof) if corr is NV else corr), dtype=float)
    return x, axes, d, n_eff


def _variance(std: bool) -> tuple[Callable, Callable]:
    fn = np.std if std else np.var
    name = f"numpy.{fn.__name__}"

    def rrule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
        y = fn(primal(a), **_var_setup(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction))
        result = output(y)

        def pullback(dy: Any) -> tuple:
            x, axes, d, n_eff = _var_parts(a, axis, ddof, where, correction)
            g = expand(out_cotangent(result, dy), x.shape, axes, keeps_dims(primal(keepdims)))
            scale = 1.0 / (n_eff * expand(y, x.shape, axes, keeps_dims(primal(keepdims)))) if std else 2.0 / n_eff
            return (deliver(a, g * d * scale),)

        return result, pullback

    def frule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
        y = fn(primal(a), **_var_setup(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction))
        dx = dense_tangent(primal(a), tangent(a))
        if dx is None:
            return Dual(y, fit_tangent(NoTangent, y))
        x, axes, d, n_eff = _var_parts(a, axis, ddof, where, correction)
        dvar = np.sum(2.0 * np.real(np.conj(d) * dx) / n_eff, axis=axes, keepdims=keeps_dims(primal(keepdims)))
        return Dual(y, fit_tangent(dvar / (2.0 * np.asarray(y)) if std else dvar, y))

    return rrule, frule


for _std, _method in ((False, "var"), (True, "std")):
    _r, _f = _variance(_std)
    rule(getattr(np, _method), (np.ndarray, _method))(_r)
    forward(getattr(np, _method), (np.ndarray, _method))(_f)


# --------------------------------------------------------------------------------------------
# average, median
# --------------------------------------------------------------------------------------------


def _average_weights(a, axis, weights):
    """``(x, axes, wb, sw)``: weights broadcast against ``a`` and their sums (keepdims)."""
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    w = as_array(primal(weights))
    if w.shape != x.shape:
        if isinstance(primal(axis), (tuple, list)) or primal(axis) is None or w.ndim != 1:
            raise RuleArgumentError("numpy.average: yuebing supports weights shaped like a, or 1-D weights with an int axis")
        shape = [1] * x.ndim
        shape[axes[0]] = w.shape[0]
        w = w.reshape(shape)
    return x, axes, w, np.sum(np.broadcast_to(w, x.shape), axis=axes, keepdims=True)


@rule(np.average)
def _average_rrule(a, axis=None, weights=None, returned=False, keepdims=NV):
    refuse("numpy.average", "returned", returned, False, "compute the sum of weights separately")
    result = output(np.average(primal(a), **given_keywords(axis=axis, weights=weights, keepdims=keepdims)))

    def pullback(dy: Any) -> tuple:
        if primal(weights) is None:
            x = as_array(primal(a))
            axes = axes_of(primal(axis), x.ndim)
            g = expand(out_cotangent(result, dy), x.shape, axes, keeps_dims(primal(keepdims)))
            return (deliver(a, g / max(element_count(None, x.shape, axes), 1)),)
        x, axes, wb, sw = _average_weights(a, axis, weights)
        g = expand(out_cotangent(result, dy), x.shape, axes, keeps_dims(primal(keepdims)))
        avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
        r_a = deliver(a, g * conj_if_complex(wb / sw))
        gw = unbroadcast(g * conj_if_complex((x - avg) / sw), wb.shape).reshape(np.shape(primal(weights)))
        return r_a, NoRData, deliver(weights, gw)

    return result, pullback


@forward(np.average)
def _average_frule(a, axis=None, weights=None, returned=False, keepdims=NV):
    refuse("numpy.average", "returned", returned, False, "compute the sum of weights separately")
    y = np.average(primal(a), **given_keywords(axis=axis, weights=weights, keepdims=keepdims))
    da = dense_tangent(primal(a), tangent(a))
    if primal(weights) is None:
        dy = NoTangent if da is None else np.average(da, **given_keywords(axis=axis, keepdims=keepdims))
        return Dual(y, fit_tangent(dy, y))
    x, axes, wb, sw = _average_weights(a, axis, weights)
    dw = dense_tangent(primal(weights), tangent(weights))
    avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
    num = 0.0
    if da is not None:
        num = num + da * wb
    if dw is not None:
        num = num + np.reshape(dw, wb.shape) * (x - avg)
    dy = np.sum(np.broadcast_to(num, x.shape) / sw, axis=axes, keepdims=keeps_dims(primal(keepdims)))
    return Dual(y, fit_tangent(dy, y))


def _median_weights(x: np.ndarray, axes: tuple) -> np.ndarray:
    """1 on the middle element of each slice (odd count), 1/2 on each of the two (even)."""
    k = len(axes)
    moved = np.moveaxis(x, axes, range(-k, 0))
    n = math.prod(moved.shape[moved.ndim - k:])
    flat = moved.reshape(moved.shape[: moved.ndim - k] + (n,))
    w = np.zeros(flat.shape)
    if n:
        order = np.argsort(flat, axis=-1, kind="stable")
        for j in {(n - 1) // 2, n // 2}:
            idx = order[..., j:j + 1]
            np.put_along_axis(w, idx, np.take_along_axis(w, idx, -1) + (1.0 if (n - 1) // 2 == n // 2 else 0.5), -1)
    return np.moveaxis(w.reshape(moved.shape), range(-k, 0), axes)


@rule(np.median)
def _median_rrule(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    no_out("numpy.median", out)
    refuse("numpy.median", "overwrite_input", overwrite_input, False, "leave the input intact")
    result = output(np.median(primal(a), axis=primal(axis), keepdims=primal(keepdims)))

    def pullback(dy: Any) -> tuple:
        x = as_array(primal(a))
        axes = axes_of(primal(axis), x.ndim)
        g = expand(out_cotangent(result, dy), x.shape, axes, bool(primal(keepdims)))
        return (deliver(a, g * _median_weights(x, axes)),)

    return result, pullback


@forward(np.median)
def _median_frule(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    no_out("numpy.median", out)
    refuse("numpy.median", "overwrite_input", overwrite_input, False, "leave the input intact")
    y = np.median(primal(a), axis=primal(axis), keepdims=primal(keepdims))
    dx = dense_tangent(primal(a), tangent(a))
    if dx is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    return Dual(y, fit_tangent(np.sum(dx * _median_weights(x, axes), axis=axes, keepdims=bool(primal(keepdims))), y))


# --------------------------------------------------------------------------------------------
# Second order: cotangent maps in plain NumPy, differentiated in forward mode (the same
# cotangents as the pullbacks above; ``keepdims``/``where`` arrive as constants)
# --------------------------------------------------------------------------------------------


def _variance_cotangent(g: Any, y: Any, a: Any, axis: Any, ddof: Any, keepdims: Any, where: Any,
                        correction: Any, std: bool) -> tuple:
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    keep = keeps_dims(keepdims)
    mask = where_mask(where, x.shape)
    if mask is None:
        d = x - np.mean(x, axis=axes, keepdims=True)
        count = reduced_count(x.shape, axes)
    else:
        d = np.where(mask, x - np.mean(x, axis=axes, keepdims=True, where=mask), 0)
        count = np.sum(mask, axis=axes, keepdims=True)
    n_eff = np.asarray(count - (ddof if correction is NV else correction), dtype=float)
    ge = expand(g, x.shape, axes, keep)
    if std:
        return (ge * d / (n_eff * expand(y, x.shape, axes, keep)),)
    return (ge * d * (2.0 / n_eff),)


def _var_vjp(g, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
    return _variance_cotangent(g, y, a, axis, ddof, keepdims, where, correction, False)


def _std_vjp(g, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
    return _variance_cotangent(g, y, a, axis, ddof, keepdims, where, correction, True)


def _median_shares(x: Any, axes: tuple) -> Any:
    """``_median_weights`` without in-place writes: by each element's rank in a stable sort."""
    k = len(axes)
    moved = np.moveaxis(x, axes, range(-k, 0))
    flat = moved.reshape(moved.shape[:moved.ndim - k] + (-1,))
    n = flat.shape[-1]
    rank = np.argsort(np.argsort(flat, axis=-1, kind="stable"), axis=-1, kind="stable")
    w = 0.5 * (rank == (n - 1) // 2) + 0.5 * (rank == n // 2)
    return np.moveaxis(w.reshape(moved.shape), range(-k, 0), axes)


def _median_vjp(g, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    return (expand(g, x.shape, axes, bool(keepdims)) * _median_shares(x, axes),)


def _average_vjp(g, y, a, axis=None, weights=None, returned=False, keepdims=NV):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    ge = expand(g, x.shape, axes, keeps_dims(keepdims))
    if weights is None:
        return (ge / max(reduced_count(x.shape, axes), 1), None, None)
    w = np.asarray(weights)
    if w.shape != x.shape:  # 1-d weights along an int axis (the only other shape the rule takes)
        w = np.moveaxis(np.expand_dims(w, tuple(range(1, x.ndim))), 0, axes[0])
    wb = np.broadcast_to(w, x.shape)
    sw = np.sum(wb, axis=axes, keepdims=True)
    avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
    gw = ge * (x - avg) / sw
    if w.shape != x.shape:
        gw = np.sum(np.moveaxis(gw, axes[0], -1).reshape(-1, x.shape[axes[0]]), axis=0)
    return (ge * wb / sw, None, gw)



with_vjp(np.var, _var_vjp)
with_vjp(np.ndarray.var, _var_vjp)
with_vjp(np.std, _std_vjp)
with_vjp(np.ndarray.std, _std_vjp)
with_vjp(np.median, _median_vjp)
with_vjp(np.average, _average_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

_MASK = np.array([[True, False, True, True], [False, True, True, True], [True, True, False, True]])

CASES = [
    Case(np.var, np.array([randn(), randn()], dtype=np.float32)),
    Case(np.median, randn(), name="numpy.median(float)"),
    Expect(np.median, np.array([3.0, 1.0, 2.0, 2.0]), expected=[0, 0, 0.5, 0.5], name="numpy.median(tied middle)"),
    # var / std
    Case(np.var, randn(3, 4)),
    Case(np.var, randn(3, 4), kwargs={"axis": 0, "ddof": 1}),
    Case(np.std, randn(3, 4), kwargs={"axis": (0, 1), "keepdims": True}),
    Case(np.std, randn(5, dtype=np.float32), kwargs={"correction": 1}),
    Case(np.var, randc(4)),
    Case(np.std, randn(3, 4), kwargs={"axis": 1, "where": _MASK}),
    Case(np.ndarray.std, randn(3, 4), kwargs={"axis": 1}),
    Case(np.ndarray.var, randn(3, 4), kwargs={"ddof": 1}),
    # average / median
    Case(np.average, randn(3, 4)),
    Case(np.average, randn(3, 4), kwargs={"axis": 1}),
    Case(np.average, randn(3, 4), 1, randpos(4)),
    Case(np.average, randn(3, 4), None, randpos(3, 4)),
    Case(np.average, randn(3, 4), (0, 1), randpos(3, 4), kwargs={"keepdims": True}),
    Case(np.median, randn(5)),
    Case(np.median, randn(4, 6), kwargs={"axis": 1}),
    Case(np.median, randn(3, 4, 5), kwargs={"axis": (0, 2), "keepdims": True}),
    Case(np.median, randn(4, dtype=np.float32)),
]
