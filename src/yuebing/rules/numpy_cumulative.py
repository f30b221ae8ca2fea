"""NumPy scans, differences and integrals: cumsum, cumprod, diff, trapezoid (and trapz where
NumPy has it); and the ``ndarray`` methods cumsum and cumprod.

``cumsum``/``cumprod`` take ``axis`` (None: the flattened input) and ``dtype=``; ``out=`` runs as
``out[...] = f(...)`` (``numpy_arguments.out_assigned``). ``diff`` takes ``n``, ``axis``, and differentiates ``prepend=``/``append=``;
``trapezoid`` differentiates ``y``, the sample points ``x`` (1-D or shaped like ``y``) and the
spacing ``dx``. Inputs may be arrays, numbers or (nested) lists and tuples of them.

Convention (docs/conventions.md): ``cumprod`` is exact with zeros in the input (no division by
the input): the partial of a product with respect to one factor is the product of the others.

The derivatives of cumprod and trapezoid are written once, as cotangent maps ``vjp(g, y, *xs)``
in plain NumPy: the reverse rule's pullback calls it (``numpy_arguments.vjp_pullback``) and
second order differentiates it (``with_vjp``). cumsum and diff are linear.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn, randpos
from .core import Dual, primal
from .numpy_arguments import (NV, as_array, conj_if_complex, deliver, dense_tangent, forward, given_keywords, no_out, rule,
                              sum_to_shape, vjp_pullback, zeros_or)
from .second_order import jvp_defined_by, linear, with_vjp
from .util import fit_tangent, out_cotangent, output, tangent


# --------------------------------------------------------------------------------------------
# cumsum, cumprod (exact with zeros)
# --------------------------------------------------------------------------------------------


def _scan_input(a, axis):
    """The scanned array (flattened for axis=None) and the axis scanned."""
    x = as_array(primal(a))
    return (x.ravel(), 0) if primal(axis) is None else (x, int(primal(axis)) % max(x.ndim, 1))


def _reverse_cumsum(g: np.ndarray, axis: int) -> np.ndarray:
    return np.flip(np.cumsum(np.flip(g, axis), axis=axis), axis)


@rule(np.cumsum, (np.ndarray, "cumsum"))
def _cumsum_rrule(a, axis=None, dtype=None, out=None):
    no_out("numpy.cumsum", out)
    result = output(np.cumsum(primal(a), axis=primal(axis), dtype=primal(dtype)))

    def pullback(dy: Any) -> tuple:
        x, ax = _scan_input(a, axis)
        g = np.asarray(out_cotangent(result, dy)).reshape(x.shape)
        return (deliver(a, _reverse_cumsum(g, ax).reshape(np.shape(primal(a)))),)

    return result, pullback


@forward(np.cumsum, (np.ndarray, "cumsum"))
def _cumsum_frule(a, axis=None, dtype=None, out=None):
    no_out("numpy.cumsum", out)
    y = np.cumsum(primal(a), axis=primal(axis), dtype=primal(dtype))
    dx = dense_tangent(primal(a), tangent(a))
    return Dual(y, fit_tangent(NoTangent if dx is None else np.cumsum(dx, axis=primal(axis)), y))


linear(np.cumsum, (np.ndarray, "cumsum"))


def _products_after(gm: Any, xm: Any) -> Any:
    """``s_i = sum_{k>=i} g_k prod_{i<l<=k} x_l`` along the last axis (``s_i = g_i + x_{i+1}
    s_{i+1}``), by recursive doubling: ``s_i = a_i + b_i s_{i+step}`` holds throughout, and
    each step doubles ``step`` (log2(n) whole-array products and sums; no division, so exact at
    zeros, and no loop over the elements)."""
    n = xm.shape[-1]
    a = gm
    b = np.concatenate([xm[..., 1:], np.zeros_like(xm[..., :1])], axis=-1)  # x_{i+1}; 0 past the end
    step = 1
    while step < n:
        a = a + b * np.concatenate([a[..., step:], np.zeros_like(a[..., :step])], axis=-1)
        b = b * np.concatenate([b[..., step:], np.zeros_like(b[..., :step])], axis=-1)
        step = step * 2
    return a


def _cumprod_vjp(g, y, a, axis=None, dtype=None, out=None):
    x0 = np.asarray(a)
    if axis is None:
        x = x0.ravel()
        ax = 0
    else:
        x = x0
        ax = int(axis) % max(x0.ndim, 1)
    x = conj_if_complex(x)  # holomorphic: the adjoint uses conjugate partials
    gs = np.asarray(g).reshape(x.shape)
    if np.all(x != 0):
        gx = _reverse_cumsum(gs * np.cumprod(x, axis=ax), ax) / x
    else:
        # exact at zeros: gx_i = (prod_{j<i} x_j) * s_i, s_i = g_i + x_{i+1} s_{i+1}
        xm = np.moveaxis(x, ax, -1)
        left = np.cumprod(np.concatenate([np.ones_like(xm[..., :1]), xm[..., :-1]], axis=-1), axis=-1)
        gx = np.moveaxis(left * _products_after(np.moveaxis(gs, ax, -1), xm), -1, ax)
    return (gx.reshape(x0.shape),)


@rule(np.cumprod, (np.ndarray, "cumprod"))
def _cumprod_rrule(a, axis=None, dtype=None, out=None):
    no_out("numpy.cumprod", out)
    result = output(np.cumprod(primal(a), axis=primal(axis), dtype=primal(dtype)))
    return result, vjp_pullback(_cumprod_vjp, result, (a, axis, dtype, out))


def _first_zero_parts(x: np.ndarray, axis: int):
    """For cumprod with zeros: where no zero has occurred yet, the first zero, and the running
    product with the first zero replaced by 1 (= the product of all factors but that zero)."""
    zero = x == 0
    seen = np.cumsum(zero, axis=axis)
    clean = seen == 0
    first = zero & (seen == 1)
    y_skip = np.cumprod(np.where(first, 1, x), axis=axis)
    safe = np.where(zero, 1, x)
    return clean, first, y_skip, safe


@forward(np.cumprod, (np.ndarray, "cumprod"))
def _cumprod_frule(a, axis=None, dtype=None, out=None):
    no_out("numpy.cumprod", out)
    y = np.cumprod(primal(a), axis=primal(axis), dtype=primal(dtype))
    dx = dense_tangent(primal(a), tangent(a))
    if dx is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x, ax = _scan_input(a, axis)
    dx = np.asarray(dx).reshape(x.shape)
    yx = np.cumprod(x, axis=ax)
    clean, first, y_skip, safe = _first_zero_parts(x, ax)
    at_zero = np.sum(np.where(first, dx, 0), axis=ax, keepdims=True)
    dy = np.where(clean, yx * np.cumsum(dx / safe, axis=ax), at_zero * y_skip)
    return Dual(y, fit_tangent(dy.reshape(np.shape(y)), y))


def _cumprod_jvp(a, a_t, axis=None, axis_t=None, dtype=None, dtype_t=None, out=None, out_t=None):
    """cumprod's value and tangent for third order, whose cotangent map calls cumprod again: the
    recurrence ``dy_i = dy_{i-1} x_i + y_{i-1} dx_i`` along the axis (no division: exact at zeros)."""
    y = np.cumprod(a, axis=axis, dtype=dtype)
    x = np.asarray(a)
    t = np.zeros(x.shape) if a_t is NoTangent else np.asarray(a_t)
    if axis is None:
        x, t, ax = x.ravel(), t.ravel(), 0
    else:
        ax = axis % max(x.ndim, 1)
    xm, tm = np.moveaxis(x, ax, 0), np.moveaxis(t, ax, 0)
    ym = np.moveaxis(np.reshape(y, x.shape), ax, 0)
    if xm.shape[0] == 0:
        return y, np.zeros(np.shape(y))
    parts = [tm[0]]
    for i in range(1, xm.shape[0]):
        parts.append(parts[i - 1] * xm[i] + ym[i - 1] * tm[i])
    return y, np.reshape(np.moveaxis(np.stack(parts), 0, ax), np.shape(y))


with_vjp(np.cumprod, _cumprod_vjp)
with_vjp(np.ndarray.cumprod, _cumprod_vjp)
jvp_defined_by(np.cumprod, _cumprod_jvp)
jvp_defined_by(np.ndarray.cumprod, _cumprod_jvp)


# --------------------------------------------------------------------------------------------
# diff, trapezoid
# --------------------------------------------------------------------------------------------


def _diff_adjoint(g: np.ndarray, axis: int) -> np.ndarray:
    """Adjoint of one ``np.diff`` along ``axis``: (g padded before) - (g padded after)."""
    pad = [(0, 0)] * g.ndim
    pad[axis] = (1, 0)
    before = np.pad(g, pad)
    pad[axis] = (0, 1)
    return before - np.pad(g, pad)


def _diff_pieces(a, axis, prepend, append):
    """The arrays NumPy joins before differencing (scalars broadcast to one slice)."""
    x = as_array(primal(a))
    ax = int(primal(axis)) % x.ndim
    pieces = []
    for arg in (prepend, a, append):
        if primal(arg) is NV:
            pieces.append(None)
            continue
        p = as_array(primal(arg))
        if p.ndim == 0:
            shape = list(x.shape)
            shape[ax] = 1
            p = np.broadcast_to(p, shape)
        pieces.append(p)
    return pieces, ax


@rule(np.diff)
def _diff_rrule(a, n=1, axis=-1, prepend=NV, append=NV):
    result = output(np.diff(primal(a), **given_keywords(n=n, axis=axis, prepend=prepend, append=append)))

    def pullback(dy: Any) -> tuple:
        pieces, ax = _diff_pieces(a, axis, prepend, append)
        g = np.asarray(out_cotangent(result, dy))
        for _ in range(primal(n)):
            g = _diff_adjoint(g, ax)
        rdatas, start = {}, 0
        for arg, piece, key in zip((prepend, a, append), pieces, ("prepend", "a", "append")):
            if piece is None:
                continue
            part = np.take(g, np.arange(start, start + piece.shape[ax]), axis=ax)
            start += piece.shape[ax]
            rdatas[key] = deliver(arg, part)
        return (rdatas["a"], NoRData, NoRData, rdatas.get("prepend", NoRData), rdatas.get("append", NoRData))

    return result, pullback


@forward(np.diff)
def _diff_frule(a, n=1, axis=-1, prepend=NV, append=NV):
    kw = given_keywords(n=n, axis=axis)
    y = np.diff(primal(a), **kw, **given_keywords(prepend=prepend, append=append))
    pieces, ax = _diff_pieces(a, axis, prepend, append)
    tangents = []
    for arg, piece in zip((prepend, a, append), pieces):
        if piece is not None:
            t = dense_tangent(primal(arg), tangent(arg))
            tangents.append(np.broadcast_to(zeros_or(t, piece), piece.shape))
    return Dual(y, fit_tangent(np.diff(np.concatenate(tangents, axis=ax), **kw), y))


linear(np.diff, data=(3, 4, "prepend", "append"))  # int prepend=/append= are values


def _axis_last(v: Any, ax: int) -> Any:
    return v if ax == np.ndim(v) - 1 else np.moveaxis(v, ax, -1)


def _last_axis_to(v: Any, ax: int) -> Any:
    return v if ax == np.ndim(v) - 1 else np.moveaxis(v, -1, ax)


def _trapezoid_vjp(g_, out_, y, x=None, dx=1.0, axis=-1):
    yv = np.asarray(y)
    ax = int(axis) % yv.ndim
    ym = _axis_last(yv, ax)  # the integration axis last
    ge = np.expand_dims(np.asarray(g_), -1)
    if x is None:
        d = np.asarray(dx)
    elif np.ndim(x) == 1:
        d = np.diff(np.asarray(x))
    else:
        d = np.diff(_axis_last(np.asarray(x), ax), axis=-1)
    segments = ym[..., :-1].shape
    half = np.broadcast_to(sum_to_shape(ge * conj_if_complex(d) / 2.0, segments), segments)
    edge = np.zeros(segments[:-1] + (1,))
    gy = _last_axis_to(np.concatenate([half, edge], axis=-1) + np.concatenate([edge, half], axis=-1), ax)
    gd = ge * conj_if_complex(ym[..., :-1] + ym[..., 1:]) / 2.0  # the cotangent of the spacings
    if x is None:
        return (gy, None, gd)
    edge = np.zeros(gd.shape[:-1] + (1,))
    gx = np.concatenate([edge, gd], axis=-1) - np.concatenate([gd, edge], axis=-1)  # adjoint of diff
    # dx is not read when x is given: its cotangent is zero by definition (not a dropped one)
    return (gy, gx if np.ndim(x) == 1 else _last_axis_to(gx, ax), np.zeros(np.shape(dx)))


def _trapezoid_rrule(y, x=None, dx=1.0, axis=-1):
    result = output(_trapezoid(primal(y), x=primal(x), dx=primal(dx), axis=primal(axis)))
    return result, vjp_pullback(_trapezoid_vjp, result, (y, x, dx, axis))


def _spacings(yv: np.ndarray, ax: int, x: Any, dx: Any) -> Any:
    """The spacings ``d``, shaped to broadcast against ``y``'s segments along ``ax``."""
    if x is None:
        return np.asarray(dx)
    x = as_array(x)
    if x.ndim == 1:
        shape = [1] * yv.ndim
        shape[ax] = x.shape[0] - 1
        return np.diff(x).reshape(shape)
    return np.diff(x, axis=ax)


def _halves(y: np.ndarray, ax: int) -> tuple:
    lo = [slice(None)] * y.ndim
    hi = [slice(None)] * y.ndim
    lo[ax], hi[ax] = slice(None, -1), slice(1, None)
    return tuple(lo), tuple(hi)


def _trapezoid_frule(y, x=None, dx=1.0, axis=-1):
    out = _trapezoid(primal(y), x=primal(x), dx=primal(dx), axis=primal(axis))
    yv = as_array(primal(y))
    ax = int(primal(axis)) % yv.ndim
    d = _spacings(yv, ax, primal(x), primal(dx))
    lo, hi = _halves(yv, ax)
    total = 0.0
    ty = dense_tangent(primal(y), tangent(y))
    if ty is not None:
        ty = np.asarray(ty)
        total = total + np.sum(d * (ty[lo] + ty[hi]) / 2.0, axis=ax)
    from_x = primal(x) is not None
    spacing = x if from_x else dx
    ts = dense_tangent(primal(spacing), tangent(spacing))
    if ts is not None:
        dd = np.diff(np.asarray(ts), axis=0 if np.ndim(primal(x)) == 1 else ax) if from_x else np.asarray(ts)
        if from_x and np.ndim(primal(x)) == 1:
            dd = dd.reshape(d.shape)
        total = total + np.sum(dd * (yv[lo] + yv[hi]) / 2.0, axis=ax)
    return Dual(out, fit_tangent(total if ty is not None or ts is not None else NoTangent, out))


_trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")
for _name in ("trapezoid", "trapz"):
    if hasattr(np, _name):
        rule(getattr(np, _name))(_trapezoid_rrule)
        forward(getattr(np, _name))(_trapezoid_frule)
with_vjp(_trapezoid, _trapezoid_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

from .numpy_reductions import _with_zeros  # noqa: E402 - the same inputs with exact zeros


CASES = [
    Case(np.cumsum, randn(), name="numpy.cumsum(float)"),
    Case(np.cumprod, np.array(0.5)),
    # cumsum / cumprod
    Case(np.cumsum, randn(3, 4)),
    Case(np.cumsum, randn(3, 4), kwargs={"axis": -1}),
    Case(np.cumsum, randc(5)),
    Case(np.cumsum, randn(4, dtype=np.float32)),
    Case(np.cumsum, np.zeros((0, 2)), kwargs={"axis": 0}),
    Case(np.ndarray.cumsum, randn(3, 4), 0),
    Case(np.cumprod, randn(3, 4), kwargs={"axis": 1}),
    Case(np.cumprod, randpos(5)),
    Case(np.cumprod, _with_zeros(1), kwargs={"axis": 1}, name="numpy.cumprod(zeros)"),
    Case(np.cumprod, _with_zeros(2), kwargs={"axis": 1}, name="numpy.cumprod(two zeros)"),
    Case(np.cumprod, _with_zeros(2), name="numpy.cumprod(zeros, flattened)"),
    Case(np.cumprod, randc(4)),
    Case(np.ndarray.cumprod, randn(2, 3), kwargs={"axis": 0}),
    # diff / trapezoid
    Case(np.diff, randn(6)),
    Case(np.diff, randn(3, 5), kwargs={"n": 2, "axis": 0}),
    Case(np.diff, randn(3, 5), 2, -1, randn(), randn(3, 2), name="numpy.diff(a, 2, -1, prepend=float, append=array)"),
    Case(np.diff, randn(3, 5), kwargs={"prepend": 0.0, "axis": 0}),
    Case(np.diff, randc(4)),
    Case(np.diff, randn(4, dtype=np.float32)),
    Case(_trapezoid, randn(6)),
    Case(_trapezoid, randn(3, 6), np.cumsum(randpos(6))),
    Case(_trapezoid, randn(4, 3), np.cumsum(randpos(4, 3), axis=0), kwargs={"axis": 0}),
    Case(_trapezoid, randn(3, 6), None, randpos()),
    Case(_trapezoid, randn(3, 6), np.cumsum(randpos(6)), randpos(), name="trapezoid: dx unread when x is given"),
    Case(_trapezoid, randc(5), None, 0.5),
    Case(_trapezoid, randn(5, dtype=np.float32), kwargs={"dx": 0.3}),
]
