"""NumPy's ranges: ``arange``, ``linspace`` and ``logspace``.

``arange(start, stop, step)`` computes ``start + i * step``: derivative 1 in ``start`` and ``i``
in ``step``, 0 in ``stop`` (it only sets the length); with one argument (``stop``) the derivative
is 0. ``linspace`` is ``start + t (stop - start)`` with ``t = i/div``; ``logspace`` is
``base ** linspace``. Cotangents reach array and list arguments as ``numpy_creation.py``
delivers them.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn, randpos
from .core import Dual, RuleArgumentError, frule_for, primal, rrule_for
from .numpy_creation import _F32_OUT, _has_tangent, _vjp_pullback, deliver_broadcast, dense
from ._ufunc_calls import Params, dense_tangent
from .second_order import linear, with_vjp
from .util import fit_tangent, out_cotangent, output

# --------------------------------------------------------------------------------------------
# arange(start, stop, step): start + i * step
# --------------------------------------------------------------------------------------------

_ARANGE = Params(lambda start, stop=None, step=None, dtype=None, device=None, like=None: None)


def _arange(args: tuple) -> tuple:
    start, stop, step, dtype, device, like = (primal(a) for a in _ARANGE.fill(args))
    if like is not None:
        raise RuleArgumentError("numpy.arange: yuebing does not support like=")
    kw = {} if device is None else {"device": device}
    return np.arange(start, stop, step, dtype=dtype, **kw), stop is None


def _arange_vjp(g, y, start, stop=None, step=None, dtype=None, device=None, like=None):
    """``arange(start, stop, step) = start + i * step`` (``i`` and the length are piecewise
    constant); ``arange(stop)`` has zero derivative."""
    if stop is None:
        return None, None, None, None, None, None
    g_step = None if step is None else np.sum(g * np.arange(np.size(y)))
    return np.sum(g), None, g_step, None, None, None


@rrule_for(np.arange)
@_ARANGE
def _arange_rrule(*args: Any) -> tuple:
    y, _ = _arange(args)
    result = output(y)
    return result, _vjp_pullback(_arange_vjp, result, args, _ARANGE)


@frule_for(np.arange)
@_ARANGE
def _arange_frule(*args: Any) -> Dual:
    y, only_stop = _arange(args)
    if only_stop or not _has_tangent(y):
        return Dual(y, fit_tangent(NoTangent, y))
    d_step = dense_tangent(args[2]) if len(args) > 2 else 0.0
    return Dual(y, fit_tangent(dense_tangent(args[0]) + np.arange(y.size) * d_step, y))


with_vjp(np.arange, _arange_vjp)


# --------------------------------------------------------------------------------------------
# linspace and logspace
# --------------------------------------------------------------------------------------------

_LINSPACE = Params.of(np.linspace)
_LOGSPACE = Params.of(np.logspace)


def _fractions(num: int, endpoint: bool) -> tuple[np.ndarray, int]:
    """``t_i = i / div`` (``y = start + t (stop - start)``) and ``div``."""
    div = num - 1 if endpoint else num
    t = np.arange(num, dtype=float) / div if div > 0 else np.zeros(num)
    return t, div


def _spread(a: np.ndarray, b: np.ndarray, t: np.ndarray, axis: int) -> np.ndarray:
    """``(1 - t) a + t b`` with the ``t`` axis inserted at ``axis`` (linspace's layout)."""
    a, b = np.broadcast_arrays(np.asarray(a), np.asarray(b))
    t = t.reshape((-1,) + (1,) * a.ndim)
    return np.moveaxis((1 - t) * a + t * b, 0, axis)


def _gather(g: np.ndarray, t: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    """The adjoint of ``_spread``: cotangents of ``a`` and ``b`` (broadcast shape)."""
    g = np.moveaxis(np.asarray(g), axis, 0)
    return np.tensordot(1 - t, g, axes=1), np.tensordot(t, g, axes=1)


def _linspace_layout(args: tuple, params: Params) -> tuple:
    values = dict(zip(params.signature.parameters, (primal(a) for a in params.fill(args))))
    t, div = _fractions(int(values["num"]), bool(values["endpoint"]))
    ndim = np.broadcast(np.asarray(values["start"]), np.asarray(values["stop"])).nd + 1
    return values, t, div, int(values["axis"]) % ndim


@rrule_for(np.linspace)
@_LINSPACE
def _linspace_rrule(*args: Any) -> tuple:
    values, t, div, axis = _linspace_layout(args, _LINSPACE)
    y = _LINSPACE.call(np.linspace, args)
    result = output(y)

    def pullback(dy: Any) -> tuple:
        rdatas = [NoRData] * (len(args) + 1)
        g = out_cotangent(result, dy)
        g_step = 0.0
        if values["retstep"]:
            g, g_step = (0.0 if v is NoTangent else v for v in g)
        g_start = g_stop = 0.0
        if _has_tangent(y[0] if values["retstep"] else y) and not np.isscalar(g):
            g_start, g_stop = _gather(g, t, axis)
        if div > 0:  # step = (stop - start) / div
            g_start, g_stop = g_start - np.asarray(g_step) / div, g_stop + np.asarray(g_step) / div
        rdatas[1] = deliver_broadcast(args[0], g_start)
        rdatas[2] = deliver_broadcast(args[1], g_stop)
        return tuple(rdatas)

    return result, pullback


@frule_for(np.linspace)
@_LINSPACE
def _linspace_frule(*args: Any) -> Dual:
    values, t, div, axis = _linspace_layout(args, _LINSPACE)
    y = _LINSPACE.call(np.linspace, args)
    d_start, d_stop = dense(args[0]), dense(args[1])
    samples = y[0] if values["retstep"] else y
    dy = fit_tangent(_spread(d_start, d_stop, t, axis), samples)
    if not values["retstep"]:
        return Dual(y, dy)
    d_step = (d_stop - d_start) / div if div > 0 else 0.0
    return Dual(y, (dy, fit_tangent(d_step, y[1])))


def _logspace_parts(args: tuple) -> tuple:
    """``(exponents, base, y, t, axis)`` of a logspace call, laid out as NumPy does: an array
    ``base`` is broadcast with ``start`` and ``stop`` and expanded at ``axis``."""
    values = dict(zip(_LOGSPACE.signature.parameters, (primal(a) for a in _LOGSPACE.fill(args))))
    start, stop, base = (np.asarray(values[k]) for k in ("start", "stop", "base"))
    ndmax = np.broadcast(start, stop, base).ndim if base.ndim else 0
    start, stop, base = (np.array(a, ndmin=ndmax) for a in (start, stop, base))
    t, _ = _fractions(int(values["num"]), bool(values["endpoint"]))
    axis = int(values["axis"]) % (np.broadcast(start, stop).ndim + 1)
    exponents = np.linspace(start, stop, int(values["num"]), bool(values["endpoint"]), axis=axis)
    if base.ndim:
        base = np.expand_dims(base, axis)
    return exponents, base, _LOGSPACE.call(np.logspace, args), t, axis, ndmax


def _logspace_vjp(g, y, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``logspace = base ** linspace(start, stop)``, laid out as NumPy does (an array ``base`` is
    broadcast with ``start`` and ``stop`` and expanded at ``axis``)."""
    ndmax = 0
    if np.ndim(base) > 0:
        ndmax = max(np.ndim(start), np.ndim(stop), np.ndim(base))
    s = np.array(start, ndmin=ndmax)
    e = np.array(stop, ndmin=ndmax)
    b = np.array(base, ndmin=ndmax)
    ax = axis % (max(np.ndim(s), np.ndim(e)) + 1)
    if np.ndim(base) > 0:
        b = np.expand_dims(b, ax)
    div = num - 1 if endpoint else num
    t = np.arange(num) / div if div > 0 else np.zeros(num)
    exponents = np.linspace(s, e, num, endpoint, axis=ax)
    gy = g * y
    moved = np.moveaxis(gy * np.log(b), ax, 0)
    g_start = np.tensordot(1 - t, moved, axes=1)
    g_stop = np.tensordot(t, moved, axes=1)
    g_base = gy * exponents / b
    axes = ()
    for i in range(np.ndim(g_base)):
        if np.ndim(b) > 0 and np.shape(b)[i] == 1 and np.shape(g_base)[i] != 1:
            axes = axes + (i,)
    if np.ndim(b) > 0:
        g_base = np.reshape(np.sum(g_base, axis=axes, keepdims=True), np.shape(base))
    return g_start, g_stop, None, None, g_base, None, None


@rrule_for(np.logspace)
@_LOGSPACE
def _logspace_rrule(*args: Any) -> tuple:
    result = output(_LOGSPACE.call(np.logspace, args))
    return result, _vjp_pullback(_logspace_vjp, result, args, _LOGSPACE)


@frule_for(np.logspace)
@_LOGSPACE
def _logspace_frule(*args: Any) -> Dual:
    exponents, base, y, t, axis, ndmax = _logspace_parts(args)
    if not _has_tangent(y):
        return Dual(y, fit_tangent(NoTangent, y))
    d_exp = _spread(np.array(dense(args[0]), ndmin=ndmax), np.array(dense(args[1]), ndmin=ndmax), t, axis)
    d_base = np.array(dense(args[4]) if len(args) > 4 else 0.0, ndmin=ndmax)
    d_base = np.expand_dims(d_base, axis) if ndmax else d_base
    return Dual(y, fit_tangent(y * (np.log(base) * d_exp + exponents / base * d_base), y))


with_vjp(np.logspace, _logspace_vjp)


linear(np.linspace, data=(0, 1, "start", "stop"))  # (1 - t) start + t stop, also its step

CASES = [
    # arange: start and step differentiable
    Case(np.arange, 5.5), Case(np.arange, 0.5, 4.7), Case(np.arange, 0.3, 3.05, 0.7),
    Case(np.arange, 1.2, 0.05, -0.25), Case(np.arange, 0.3, 3.45, 0.7, np.float32, **_F32_OUT),
    Case(np.arange, 1, 5, 2),
    # linspace: start and stop differentiable (floats, arrays, axis, endpoint, retstep, num = 1)
    Case(np.linspace, 0.5, 2.0), Case(np.linspace, -1.0, 3.0, 7), Case(np.linspace, 0.0, 1.0, 5, False),
    Case(np.linspace, randn(3), randn(2, 1), 4), Case(np.linspace, randn(3), 2.0, 5, kwargs={"axis": 1}),
    Case(np.linspace, randn(2), randn(2), 4, kwargs={"axis": -1}),
    Case(np.linspace, 0.5, 2.0, 6, True, True, name="linspace(retstep=True)"),
    Case(np.linspace, randn(2), randn(2), 3, False, True, name="linspace(arrays, retstep=True)"),
    Case(np.linspace, 0.5, 2.0, 1), Case(np.linspace, 0.5, 2.0, 0), Case(np.linspace, [0.0, 1.0], 2.0, 3),
    Case(np.linspace, 0.5, 2.0, 5, kwargs={"dtype": np.float32}, **_F32_OUT), Case(np.linspace, randc(), randc(), 4),
    # logspace: start, stop and base differentiable
    Case(np.logspace, 0.5, 1.5, 5), Case(np.logspace, randn(2), 1.0, 4, True, 2.5),
    Case(np.logspace, 0.1, 0.9, 4, False, randpos(3), kwargs={"axis": -1}),
    Case(np.logspace, randn(2, 1), 0.9, 3, True, randpos(3), kwargs={"axis": 1}),
]
