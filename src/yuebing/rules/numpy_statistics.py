"""NumPy statistics: var, std, median, average; and the ``ndarray`` methods var and std.

``var``/``std`` take ``axis``, ``keepdims``, ``ddof``, ``correction``, ``where=`` and ``dtype=``;
``mean=`` (a precomputed mean) is refused; ``out=`` (of ``median`` too) runs as ``out[...] = f(...)``
(``numpy_arguments.out_assigned``). ``average`` takes ``weights`` shaped like
``a`` or 1-D along an int ``axis``; with ``returned=True`` it is differentiated as
``_average_definition`` (the mean and the sum of the weights), which second order follows always. Inputs may be arrays, numbers or
(nested) lists and tuples of them.

Conventions at non-smooth points (docs/conventions.md):

* ``median`` sends the cotangent to the middle element (odd count) or half to each of the two
  middle elements (even count), chosen by a stable sort (ties: the earlier index).
* ``std`` at zero spread: NumPy's arithmetic (0/0 = nan), as ``sqrt'(0)``.

Each derivative is written once, as a cotangent map ``vjp(g, y, *xs)`` in plain NumPy: the reverse
rule's pullback calls it (``numpy_arguments.vjp_pullback``) and second order differentiates it
(``with_vjp``). The forward rules share its helpers (deviations, weights, median shares).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoTangent
from .cases import Case, Expect, randc, randn, randpos
from .core import CoDual, Dual, RuleArgumentError, frule, primal
from .numpy_arguments import (NV, as_array, axes_of, conj_if_complex, dense_tangent, expand, forward, given_keywords,
                              keeps_dims, no_out, reduced_count, refuse, rule, vjp_pullback, where_mask)
from .second_order import defined_by, with_vjp
from .util import defined_rrule, fit_tangent, output, tangent


# --------------------------------------------------------------------------------------------
# var, std
# --------------------------------------------------------------------------------------------


def _var_keywords(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    no_out(name, out)
    refuse(name, "mean", mean, NV, "let NumPy compute the mean (a given mean is not differentiated)")
    kw = given_keywords(axis=axis, dtype=dtype, keepdims=keepdims, where=where, correction=correction)
    if primal(ddof) != 0:
        kw["ddof"] = primal(ddof)
    return kw


def _deviations(x: Any, axes: tuple, ddof: Any, where: Any, correction: Any) -> tuple:
    """``(d, n_eff)``: deviations ``x - mean`` (0 where masked out) and the divisor ``N - ddof``
    (a float array: ``N - ddof = 0`` gives inf/nan with a warning, as NumPy's own var does)."""
    mask = where_mask(where, x.shape)
    if mask is None:
        d = x - np.mean(x, axis=axes, keepdims=True)
        count = reduced_count(x.shape, axes)
    else:
        d = np.where(mask, x - np.mean(x, axis=axes, keepdims=True, where=mask), 0)
        count = np.sum(mask, axis=axes, keepdims=True)
    return d, np.asarray(count - (ddof if correction is NV else correction), dtype=float)


def _nonzero(y: Any) -> Any:
    """``y`` with its zeros (a standard deviation of identical values) replaced by 1: where it
    is 0 the numerator (the deviations) is 0 too, so the derivative there is 0."""
    return np.where(y == 0, 1.0, y)


def _variance_cotangent(g: Any, y: Any, a: Any, axis: Any, ddof: Any, keepdims: Any, where: Any,
                        correction: Any, std: bool) -> tuple:
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    keep = keeps_dims(keepdims)
    d, n_eff = _deviations(x, axes, ddof, where, correction)
    ge = expand(g, x.shape, axes, keep)
    if std:  # at zero spread (every deviation 0) the gradient is 0, as the norm's at 0 (conventions.md)
        return (ge * d / (n_eff * _nonzero(expand(y, x.shape, axes, keep))),)
    return (ge * d * (2.0 / n_eff),)


def _var_vjp(g, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
    return _variance_cotangent(g, y, a, axis, ddof, keepdims, where, correction, False)


def _std_vjp(g, y, a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
    return _variance_cotangent(g, y, a, axis, ddof, keepdims, where, correction, True)


def _variance(std: bool) -> tuple[Callable, Callable]:
    fn = np.std if std else np.var
    name = f"numpy.{fn.__name__}"
    vjp = _std_vjp if std else _var_vjp

    def rrule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
        result = output(fn(primal(a), **_var_keywords(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction)))
        return result, vjp_pullback(vjp, result, (a, axis, dtype, out, ddof, keepdims, where, mean, correction))

    def frule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
        y = fn(primal(a), **_var_keywords(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction))
        dx = dense_tangent(primal(a), tangent(a))
        if dx is None:
            return Dual(y, fit_tangent(NoTangent, y))
        x = as_array(primal(a))
        axes = axes_of(primal(axis), x.ndim)
        d, n_eff = _deviations(x, axes, primal(ddof), primal(where), primal(correction))
        dvar = np.sum(2.0 * np.real(np.conj(d) * dx) / n_eff, axis=axes, keepdims=keeps_dims(primal(keepdims)))
        return Dual(y, fit_tangent(dvar / (2.0 * _nonzero(np.asarray(y))) if std else dvar, y))

    return rrule, frule


for _std, _method in ((False, "var"), (True, "std")):
    _r, _f = _variance(_std)
    rule(getattr(np, _method), (np.ndarray, _method))(_r)
    forward(getattr(np, _method), (np.ndarray, _method))(_f)
with_vjp(np.var, _var_vjp)
with_vjp(np.ndarray.var, _var_vjp)
with_vjp(np.std, _std_vjp)
with_vjp(np.ndarray.std, _std_vjp)


# --------------------------------------------------------------------------------------------
# average
# --------------------------------------------------------------------------------------------


def _check_weights(a: Any, axis: Any, weights: Any) -> None:
    w, x = primal(weights), primal(a)
    if w is not None and np.shape(w) != np.shape(x) and (isinstance(primal(axis), (tuple, list))
                                                         or primal(axis) is None or np.ndim(w) != 1):
        raise RuleArgumentError("numpy.average: yuebing supports weights shaped like a, or 1-D weights with an int axis")


def _weights_along(w: Any, x: Any, axes: tuple) -> Any:
    """The weights shaped to broadcast against ``x``: as they are, or 1-D along the one axis."""
    if w.shape == x.shape:
        return w
    shape = []
    for i in range(x.ndim):
        shape.append(w.shape[0] if i == axes[0] else 1)
    return np.reshape(w, tuple(shape))


def _average_vjp(g, y, a, axis=None, weights=None, returned=False, keepdims=NV):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    ge = expand(g, x.shape, axes, keeps_dims(keepdims))
    if weights is None:
        return (ge / max(reduced_count(x.shape, axes), 1), None, None)
    w = np.asarray(weights)
    wb = np.broadcast_to(_weights_along(w, x, axes), x.shape)
    sw = np.sum(wb, axis=axes, keepdims=True)
    avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
    gw = ge * conj_if_complex((x - avg) / sw)
    if w.shape != x.shape:  # 1-D weights along axes[0]: summed over the other axes
        others = []
        for i in range(x.ndim):
            if i != axes[0]:
                others.append(i)
        gw = np.sum(gw, axis=tuple(others))
    return (ge * conj_if_complex(wb / sw), None, gw)


def _average_core(a, axis=None, weights=None, returned=False, keepdims=NV):
    """The weighted mean alone: ``np.average``'s value without ``returned=True`` (the primitive
    whose rule ``_average_definition`` calls, second order differentiating its cotangent map)."""
    return np.average(a, **given_keywords(axis=axis, weights=weights, keepdims=keepdims))


def _average_definition(a, axis=None, weights=None, returned=False, keepdims=NV):
    """``np.average`` written out: the weighted mean, and with ``returned=True`` the sum of the
    weights too, broadcast to the mean's shape (NumPy's own steps and dtypes)."""
    avg = _average_core(a, axis, weights, False, keepdims)
    if not returned:
        return avg
    shape = np.shape(avg)
    if weights is None:  # the count of averaged elements: a constant
        scl = np.asarray(avg).dtype.type(np.size(a) / np.size(avg))
    else:
        w = np.asarray(weights)
        if np.shape(w) != np.shape(a):  # 1-D weights along the int axis
            w = np.swapaxes(np.broadcast_to(w, (np.ndim(a) - 1) * (1,) + w.shape), -1, axis)
        if keepdims is NV:
            scl = np.sum(w, axis=axis, dtype=np.asarray(avg).dtype)
        else:
            scl = np.sum(w, axis=axis, dtype=np.asarray(avg).dtype, keepdims=keepdims)
    if np.shape(scl) != shape:
        scl = np.broadcast_to(scl, shape).copy()
    return avg, scl


def _as_coduals(args: tuple) -> tuple:
    return tuple(a if isinstance(a, CoDual) else CoDual(a, NoFData) for a in args)


def _as_duals(args: tuple) -> tuple:
    return tuple(a if isinstance(a, Dual) else Dual(a, NoTangent) for a in args)


@rule(np.average, _average_core)
def _average_rrule(a, axis=None, weights=None, returned=False, keepdims=NV):
    _check_weights(a, axis, weights)
    if primal(returned):  # two outputs: differentiated as the definition (one rule per output)
        out, pullback = defined_rrule(_average_definition, *_as_coduals((a, axis, weights, returned, keepdims)))
        return out, lambda dy: pullback(dy)[1:]
    result = output(np.average(primal(a), **given_keywords(axis=axis, weights=weights, keepdims=keepdims)))
    return result, vjp_pullback(_average_vjp, result, (a, axis, weights, returned, keepdims))


@forward(np.average, _average_core)
def _average_frule(a, axis=None, weights=None, returned=False, keepdims=NV):
    if primal(returned):
        _check_weights(a, axis, weights)
        return frule(_average_definition, *_as_duals((a, axis, weights, returned, keepdims)))
    y = np.average(primal(a), **given_keywords(axis=axis, weights=weights, keepdims=keepdims))
    da = dense_tangent(primal(a), tangent(a))
    if primal(weights) is None:
        dy = NoTangent if da is None else np.average(da, **given_keywords(axis=axis, keepdims=keepdims))
        return Dual(y, fit_tangent(dy, y))
    _check_weights(a, axis, weights)
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    wb = _weights_along(as_array(primal(weights)), x, axes)
    sw = np.sum(np.broadcast_to(wb, x.shape), axis=axes, keepdims=True)
    dw = dense_tangent(primal(weights), tangent(weights))
    avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
    num = 0.0
    if da is not None:
        num = num + da * wb
    if dw is not None:
        num = num + np.reshape(dw, wb.shape) * (x - avg)
    dy = np.sum(np.broadcast_to(num, x.shape) / sw, axis=axes, keepdims=keeps_dims(primal(keepdims)))
    return Dual(y, fit_tangent(dy, y))


with_vjp(_average_core, _average_vjp)
defined_by(np.average, _average_definition)


# --------------------------------------------------------------------------------------------
# median
# --------------------------------------------------------------------------------------------


def _median_shares(x: Any, axes: tuple) -> Any:
    """1 on the middle element of each slice (odd count), 1/2 on each of the two (even), chosen by
    a stable sort (no in-place writes: second order follows this code)."""
    k = len(axes)
    moved = np.moveaxis(x, axes, range(-k, 0))
    flat = moved.reshape(moved.shape[:moved.ndim - k] + (-1,))
    n = flat.shape[-1]
    if n == 0:
        return np.zeros(x.shape)
    order = np.argsort(flat, axis=-1, kind="stable")
    positions = np.arange(n)
    w = 0.5 * (positions == order[..., (n - 1) // 2:(n - 1) // 2 + 1]) + 0.5 * (positions == order[..., n // 2:n // 2 + 1])
    return np.moveaxis(w.reshape(moved.shape), range(-k, 0), axes)


def _median_vjp(g, y, a, axis=None, out=None, overwrite_input=False, keepdims=False):
    x = np.asarray(a)
    axes = axes_of(axis, x.ndim)
    return (expand(g, x.shape, axes, bool(keepdims)) * _median_shares(x, axes),)


def _median_checks(out: Any, overwrite_input: Any) -> None:
    """``overwrite_input=True`` is a permission NumPy may use (the input is undefined after the
    call); the rules compute on the input without touching it, as ``np.quantile``'s do."""
    no_out("numpy.median", out)


@rule(np.median)
def _median_rrule(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _median_checks(out, overwrite_input)
    result = output(np.median(primal(a), axis=primal(axis), keepdims=primal(keepdims)))
    return result, vjp_pullback(_median_vjp, result, (a, axis, out, overwrite_input, keepdims))


@forward(np.median)
def _median_frule(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    _median_checks(out, overwrite_input)
    y = np.median(primal(a), axis=primal(axis), keepdims=primal(keepdims))
    dx = dense_tangent(primal(a), tangent(a))
    if dx is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    return Dual(y, fit_tangent(np.sum(dx * _median_shares(x, axes), axis=axes, keepdims=bool(primal(keepdims))), y))


with_vjp(np.median, _median_vjp)


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
    Case(np.average, randn(3, 4), 1, randpos(4), True, name="average returned=True, 1-D weights"),
    Case(np.average, randn(3, 4), None, randpos(3, 4), True, name="average returned=True, weights like a"),
    Case(np.average, randn(3, 4), 0, None, True, kwargs={"keepdims": True}, name="average returned=True, no weights"),
    Case(np.average, randn(2, 3), 0, randpos(2, 3), True, kwargs={"keepdims": True}, name="average returned keepdims"),
    Case(np.median, randn(5)),
    Case(np.median, randn(4, 6), kwargs={"axis": 1}),
    Case(np.median, randn(3, 4, 5), kwargs={"axis": (0, 2), "keepdims": True}),
    Case(np.median, randn(4, dtype=np.float32)),
]
