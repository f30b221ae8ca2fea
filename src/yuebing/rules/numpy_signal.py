"""NumPy's signal and polynomial functions: ``convolve`` and ``correlate`` (bilinear, every mode),
``polyval``, ``polyfit`` (in ``x``, ``y`` and ``w``), ``roots`` (simple roots), ``gradient`` (in the
values and the spacings) and ``cross``.

* ``convolve``/``correlate``: the result is a window (``mode``) of the full convolution of ``a``
  with the kernel ``v`` (``convolve``) or ``conj(v[::-1])`` (``correlate``); the window's offset is
  read from NumPy itself (``_window``). The cotangents are correlations of the zero-padded output
  cotangent with the other factor. Second order: multilinear.
* ``polyval``, ``gradient``, ``cross``: *derived*: each has a definition in plain NumPy here (NumPy's
  own ``polyval``; the formulas of ``np.gradient`` and ``np.cross``) that yuebing differentiates
  like user code in every mode (``_derived``), after NumPy's function has checked the arguments;
  the value is the definition's, written with NumPy's expressions. ``gradient`` with coordinate
  arrays always uses the non-uniform formula (NumPy switches to the uniform one when the spacings
  are exactly equal: the values agree up to rounding), so the derivative in the coordinates is
  that of the smooth formula, as finite differences see it.
* ``polyfit``: ``c`` solves the normal equations ``A^T W^2 A c = A^T W^2 y`` (``A = vander(x)``,
  ``W = diag(w)``), differentiated in ``x``, ``y`` and ``w`` (cotangent map ``_polyfit_vjp``).
  Refused: ``full=True``, ``cov=True``, complex data, rank-deficient fits.
* ``roots``: a simple root ``r`` of ``P`` moves by ``dr = -dP(r) / P'(r)``. Refused (when a
  derivative is asked for): repeated roots (``P'(r) = 0``) and leading zero coefficients (a root
  at infinity).

``np.trapezoid`` and ``np.diff`` are derived from NumPy's Python already (tests/test_numpy_signal.py).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from . import core
from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn
from . import array_like
from .core import Dual, RuleArgumentError, primal, register_frule, register_rrule
from .numpy_arguments import dense_tangent, deliver, forward, rule, vjp_pullback
from .second_order import defined_by, multilinear, with_vjp
from .util import call_on_primals, defined_rrule, fit_tangent, out_cotangent, output, tangent


# --------------------------------------------------------------------------------------------
# convolve, correlate
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=256)
def _window(fn: Callable, m: int, n: int, mode: Any) -> int:
    """Where ``fn(a, v, mode)`` (lengths ``m``, ``n``) starts in the full convolution of ``a``
    with its kernel, read from NumPy: a unit impulse against the marks ``1..n``."""
    impulse = np.zeros(m)
    impulse[0] = 1.0
    first = int(round(float(np.real(fn(impulse, np.arange(1.0, n + 1), mode=mode)[0]))))
    return first - 1 if fn is np.convolve else n - first


def _kernel(fn: Callable, v: np.ndarray) -> np.ndarray:
    return v if fn is np.convolve else np.conj(v[::-1])


def _conv_rule(fn: Callable) -> None:
    name = f"numpy.{fn.__name__}"

    @rule(fn)
    def _rrule(a, v, mode="full" if fn is np.convolve else "valid"):
        x, k0, md = np.atleast_1d(primal(a)), np.atleast_1d(primal(v)), primal(mode)
        out = output(fn(primal(a), primal(v), mode=md))

        def pullback(dy: Any) -> tuple:
            g = np.asarray(out_cotangent(out, dy))
            full = np.zeros(x.size + k0.size - 1, dtype=np.result_type(g, x, k0, np.float64))
            start = _window(fn, x.size, k0.size, md)
            full[start:start + g.size] = g
            kernel = _kernel(fn, k0)
            ga = np.correlate(full, kernel, mode="valid")
            gk = np.correlate(full, x, mode="valid")
            gv = gk if fn is np.convolve else np.conj(gk[::-1])
            return deliver(a, ga.reshape(np.shape(primal(a)))), deliver(v, gv.reshape(np.shape(primal(v)))), NoRData

        return out, pullback

    @forward(fn)
    def _frule(a, v, mode="full" if fn is np.convolve else "valid"):
        x, k, md = primal(a), primal(v), primal(mode)
        y = fn(x, k, mode=md)
        ta, tv = dense_tangent(x, tangent(a)), dense_tangent(k, tangent(v))
        ty = 0.0
        if ta is not None:
            ty = ty + fn(ta, k, mode=md)
        if tv is not None:
            ty = ty + fn(x, tv, mode=md)
        return Dual(y, fit_tangent(NoTangent if ta is None and tv is None else ty, y))

    _rrule.__qualname__ = _frule.__qualname__ = f"{name} rule"


_conv_rule(np.convolve)
_conv_rule(np.correlate)
multilinear(np.convolve, np.correlate)


# --------------------------------------------------------------------------------------------
# Derived from a definition in plain NumPy: polyval, gradient, cross
# --------------------------------------------------------------------------------------------


def _derived(target: Any, definition: Callable, validate: bool = True) -> None:
    """Rules for ``target`` that differentiate ``definition`` (same arguments, same values) like
    user code, in every mode. ``validate``: run NumPy's function on the primals first, for its
    own errors and warnings on bad arguments."""

    def check(args: tuple, kwargs: dict) -> None:
        if validate:
            call_on_primals(target, args, kwargs)

    def rrule_(*args, **kwargs):
        check(args, kwargs)
        return defined_rrule(definition, *args, **kwargs)

    def frule_(*args, **kwargs):
        check(args, kwargs)
        return core.frule(definition, *args, **kwargs)

    register_rrule(target, rrule_)
    register_frule(target, frule_)
    defined_by(target, definition)


def _polyval(p, x):
    """``np.polyval`` (NumPy's own code: Horner's scheme). A ``np.poly1d`` ``p`` is read as its
    coefficients (NumPy's ``__array__`` returns that array); a ``np.poly1d`` ``x`` gives the
    composition, a ``np.poly1d`` (poly1d arithmetic, derived from its source)."""
    if isinstance(p, np.poly1d):
        p = p.coeffs
    p = np.asarray(p)
    if isinstance(x, np.poly1d):
        y = 0
    else:
        x = np.asanyarray(x)
        y = np.zeros_like(x)
    for pv in p:
        y = y * x + pv
    return y


def _gradient_axes(axis: Any, ndim: int) -> list:
    if axis is None:
        return list(range(ndim))
    if isinstance(axis, (tuple, list)):
        return [int(a) % ndim for a in axis]
    return [int(axis) % ndim]


def _uniform(y, h, edge_order):
    """``np.gradient`` along axis 0 with scalar spacing ``h``."""
    interior = (y[2:] - y[:-2]) / (2.0 * h)
    if edge_order == 1:
        first = (y[1] - y[0]) / h
        last = (y[-1] - y[-2]) / h
    else:
        first = -1.5 / h * y[0] + 2.0 / h * y[1] + -0.5 / h * y[2]  # NumPy's expressions, for its rounding
        last = 0.5 / h * y[-3] + -2.0 / h * y[-2] + 1.5 / h * y[-1]
    return np.concatenate([np.expand_dims(first, 0), interior, np.expand_dims(last, 0)], axis=0)


def _nonuniform(y, coords, edge_order):
    """``np.gradient`` along axis 0 at coordinates ``coords`` (NumPy's second-order formulas)."""
    dx = np.diff(coords)
    shape = (-1,) + (1,) * (y.ndim - 1)
    dx1 = np.reshape(dx[:-1], shape)
    dx2 = np.reshape(dx[1:], shape)
    a = -dx2 / (dx1 * (dx1 + dx2))
    b = (dx2 - dx1) / (dx1 * dx2)
    c = dx1 / (dx2 * (dx1 + dx2))
    interior = a * y[:-2] + b * y[1:-1] + c * y[2:]
    if edge_order == 1:
        first = (y[1] - y[0]) / dx[0]
        last = (y[-1] - y[-2]) / dx[-1]
    else:
        d1, d2 = dx[0], dx[1]
        first = -(2.0 * d1 + d2) / (d1 * (d1 + d2)) * y[0] + (d1 + d2) / (d1 * d2) * y[1] \
            - d1 / (d2 * (d1 + d2)) * y[2]
        d1, d2 = dx[-2], dx[-1]
        last = d2 / (d1 * (d1 + d2)) * y[-3] - (d2 + d1) / (d1 * d2) * y[-2] \
            + (2.0 * d2 + d1) / (d2 * (d1 + d2)) * y[-1]
    return np.concatenate([np.expand_dims(first, 0), interior, np.expand_dims(last, 0)], axis=0)


def _gradient(f, *varargs, axis=None, edge_order=1):
    """``np.gradient``: second-order central differences inside, one-sided at the edges."""
    f = np.asanyarray(f)
    axes = _gradient_axes(axis, f.ndim)
    if len(varargs) == 0:
        spacings = [1.0] * len(axes)
    elif len(varargs) == 1 and np.ndim(varargs[0]) == 0:
        spacings = [varargs[0]] * len(axes)
    else:
        spacings = list(varargs)
    outs = []
    for k in range(len(axes)):
        y = np.moveaxis(f, axes[k], 0)
        h = spacings[k]
        if np.ndim(h) == 0:
            out = _uniform(y, h, edge_order)
        else:
            out = _nonuniform(y, h, edge_order)
        outs.append(np.moveaxis(out, 0, axes[k]))
    if len(outs) == 1:
        return outs[0]
    return tuple(outs)


def _cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """``np.cross`` of 2- or 3-vectors (a missing z component is 0; two 2-vectors give the z
    component only)."""
    if axis is not None:
        axisa, axisb, axisc = axis, axis, axis
    a = np.moveaxis(np.asarray(a), axisa, -1)
    b = np.moveaxis(np.asarray(b), axisb, -1)
    a0, a1 = a[..., 0], a[..., 1]
    b0, b1 = b[..., 0], b[..., 1]
    z = a0 * b1 - a1 * b0
    if a.shape[-1] == 2 and b.shape[-1] == 2:
        return z
    a2 = a[..., 2] if a.shape[-1] == 3 else 0.0
    b2 = b[..., 2] if b.shape[-1] == 3 else 0.0
    # each component mixes a batch of a with a batch of b, so all three have the broadcast shape
    c = np.stack([a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, z], axis=-1)
    return np.moveaxis(c, -1, axisc)


_derived(np.polyval, _polyval, validate=False)
array_like.TAKES_ARRAY_OBJECTS.add(np.polyval)  # a np.poly1d reaches _polyval as it is
_derived(np.gradient, _gradient)
_derived(np.cross, _cross)


# --------------------------------------------------------------------------------------------
# polyfit: the least-squares solution, differentiated through the normal equations
# --------------------------------------------------------------------------------------------


def _polyfit_check(x: Any, y: Any, deg: Any, full: Any, w: Any, cov: Any) -> None:
    if full or (cov is not False and cov is not None):
        raise RuleArgumentError("numpy.polyfit: yuebing differentiates the coefficients only; call it "
                                "without full=True and cov= (compute residuals from np.polyval)")
    if any(np.iscomplexobj(v) for v in (x, y, w)):
        raise RuleArgumentError("numpy.polyfit: complex data is not supported; fit real and imaginary parts")
    design = np.vander(np.asarray(x, dtype=float), int(deg) + 1)
    if w is not None:
        design = design * np.asarray(w, dtype=float)[:, None]
    rank = np.linalg.matrix_rank(design)
    if rank < int(deg) + 1:
        raise RuleArgumentError(f"numpy.polyfit: the fit is rank deficient (rank {rank} for {int(deg) + 1} "
                                "coefficients): its least-squares solution is not differentiable; lower deg")


def _design(x, deg):
    powers = np.arange(deg, -1, -1)
    return np.reshape(x, (-1, 1)) ** powers, powers


def _polyfit_vjp(g, c, x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Cotangents of ``x``, ``y`` and ``w`` for cotangent ``g`` of the coefficients ``c``."""
    # lists and integer points alike: float arrays (float powers do not overflow)
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    w = None if w is None else np.asarray(w, dtype=float)
    A, powers = _design(x, deg)
    m, n = A.shape
    ww = np.ones(m) if w is None else w
    w2 = ww * ww
    B = A * np.reshape(ww, (-1, 1))
    scale = np.sqrt(np.sum(B * B, axis=0))
    Bs = B / scale
    g2 = np.reshape(g, (n, -1))
    z = np.linalg.solve(Bs.T @ Bs, g2 / np.reshape(scale, (-1, 1))) / np.reshape(scale, (-1, 1))
    c2 = np.reshape(c, (n, -1))
    r = np.reshape(y, (m, -1)) - A @ c2
    Az = A @ z
    gy = np.reshape(np.reshape(w2, (-1, 1)) * Az, np.shape(y))
    gA = np.reshape(w2, (-1, 1)) * (r @ z.T - Az @ c2.T)
    dA = powers * np.reshape(x, (-1, 1)) ** np.maximum(powers - 1, 0)
    gx = np.sum(gA * dA, axis=1)
    gw = None if w is None else 2.0 * ww * np.sum(Az * r, axis=1)
    return gx, gy, None, None, None, gw, None


@rule(np.polyfit)
def _polyfit_rrule(x, y, deg, rcond=None, full=False, w=None, cov=False):
    args = (x, y, deg, rcond, full, w, cov)
    _polyfit_check(*(primal(v) for v in (x, y, deg, full, w, cov)))
    out = output(np.polyfit(*(primal(v) for v in args)))
    return out, vjp_pullback(_polyfit_vjp, out, args)


@forward(np.polyfit)
def _polyfit_frule(x, y, deg, rcond=None, full=False, w=None, cov=False):
    xs, ys, d, ws = primal(x), primal(y), primal(deg), primal(w)
    _polyfit_check(xs, ys, d, primal(full), ws, primal(cov))
    c = np.polyfit(xs, ys, d, primal(rcond), w=ws)
    tx, ty, tw = (dense_tangent(v, tangent(a)) for v, a in ((xs, x), (ys, y), (ws, w)))
    if tx is None and ty is None and tw is None:
        return Dual(c, fit_tangent(NoTangent, c))
    A, powers = _design(np.asarray(xs, dtype=float), int(d))
    m, n = A.shape
    ww = np.ones(m) if ws is None else np.asarray(ws, dtype=float)
    c2, y2 = np.reshape(c, (n, -1)), np.reshape(np.asarray(ys, dtype=float), (m, -1))
    r = y2 - A @ c2
    rhs = np.zeros_like(c2)
    W2A = A * (ww * ww)[:, None]
    if ty is not None:
        rhs = rhs + W2A.T @ np.reshape(ty, (m, -1))
    if tx is not None:
        dA = powers * np.asarray(xs, dtype=float)[:, None] ** np.maximum(powers - 1, 0) * np.asarray(tx)[:, None]
        rhs = rhs - W2A.T @ (dA @ c2) + (dA * (ww * ww)[:, None]).T @ r
    if tw is not None:
        rhs = rhs + A.T @ ((2.0 * ww * np.asarray(tw))[:, None] * r)
    dc = np.linalg.solve(W2A.T @ A, rhs)
    return Dual(c, fit_tangent(np.reshape(dc, np.shape(c)), c))


with_vjp(np.polyfit, _polyfit_vjp)


# --------------------------------------------------------------------------------------------
# roots: simple roots move by -dP(r) / P'(r)
# --------------------------------------------------------------------------------------------


def _roots_check(p: np.ndarray, r: np.ndarray) -> None:
    """Refuse a derivative that does not exist: leading zeros, repeated roots."""
    if p.size and p[0] == 0:
        raise RuleArgumentError("numpy.roots: the coefficients start with 0, so a perturbation adds a root "
                                "at infinity (not differentiable); strip leading zeros (np.trim_zeros(p, 'f'))")
    n = p.size - 1
    if r.size == 0:
        return
    powers = np.arange(n, -1, -1)
    dp = np.polyval(p[:-1] * powers[:-1], r)
    size = np.abs(r[:, None]) ** powers @ np.abs(p)
    if np.any(np.abs(dp) * np.maximum(1.0, np.abs(r)) <= 1e-10 * size):
        raise RuleArgumentError("numpy.roots: a repeated root is not differentiable in the coefficients "
                                "(P'(r) = 0 there)")


def _roots_vjp(g, r, p):
    """``p``'s cotangent: ``-V^H (g / conj(P'(r)))`` with ``V[j, i] = r_j^(n-i)``."""
    n = np.size(p) - 1
    powers = np.arange(n, -1, -1)
    dp = np.polyval(p[:-1] * powers[:-1], r)
    V = np.reshape(r, (-1, 1)) ** powers
    return (-(np.conj(V).T @ (g / np.conj(dp))),)


@rule(np.roots)
def _roots_rrule(p):
    coefficients = np.atleast_1d(primal(p))
    out = output(np.roots(coefficients))

    def pullback(dy: Any) -> tuple:
        g = np.asarray(out_cotangent(out, dy))
        if not np.any(g):
            return ()
        _roots_check(coefficients, out.primal)
        return (deliver(p, np.reshape(_roots_vjp(g, out.primal, coefficients)[0], np.shape(primal(p)))),)

    return out, pullback


@forward(np.roots)
def _roots_frule(p):
    coefficients = np.atleast_1d(primal(p))
    r = np.roots(coefficients)
    t = dense_tangent(primal(p), tangent(p))
    if t is None or not np.any(t):
        return Dual(r, fit_tangent(NoTangent, r))
    _roots_check(coefficients, r)
    n = coefficients.size - 1
    powers = np.arange(n, -1, -1)
    dr = -(r[:, None] ** powers @ np.ravel(t)) / np.polyval(coefficients[:-1] * powers[:-1], r)
    return Dual(r, fit_tangent(dr, r))


with_vjp(np.roots, _roots_vjp)


# --------------------------------------------------------------------------------------------
# Cases (modes, windows, spacings and refusals in tests/test_numpy_signal.py)
# --------------------------------------------------------------------------------------------


def _coords(n: int) -> np.ndarray:
    return np.cumsum(0.5 + np.abs(randn(n)))


CASES = [
    Case(np.convolve, randn(5), randn(3)),
    Case(np.convolve, randn(2), randn(4), "same"),
    Case(np.convolve, randn(6), randn(3), "valid"),
    Case(np.convolve, randc(4), randn(3), "same"),
    Case(np.correlate, randn(5), randn(3)),
    Case(np.correlate, randn(3), randn(5), "full"),
    Case(np.correlate, randn(2), randn(3), "same"),
    Case(np.correlate, randc(4), randc(3), "same"),
    Case(np.polyval, randn(4), randn(5)),
    Case(np.polyval, randn(3), randn(2, 3)),
    Case(np.polyval, randn(3), randn()),
    Case(np.polyfit, np.linspace(-1, 1, 7) + 0.05 * randn(7), randn(7), 2),
    Case(np.polyfit, np.linspace(0, 2, 6), randn(6, 2), 3),
    Case(np.polyfit, np.linspace(-1, 1, 6), randn(6), 1, None, False, randn(6) ** 2 + 0.5),
    Case(np.roots, np.array([1.0, -6.0, 11.0, -6.0]) + 0.01 * randn(4)),
    Case(np.roots, randn(4)),
    Case(np.roots, np.array([2.0, -3.0, 1.0, 0.0])),
    Case(np.gradient, randn(6)),
    Case(np.gradient, randn(5), 0.3),
    Case(np.gradient, randn(5), _coords(5)),
    Case(np.gradient, randn(6), _coords(6), kwargs={"edge_order": 2}),
    Case(np.gradient, randn(4, 3), 0.5, _coords(3)),
    Case(np.gradient, randn(4, 5), kwargs={"axis": 1, "edge_order": 2}),
    Case(np.gradient, randc(5), 2.0),
    Case(np.cross, randn(3), randn(3)),
    Case(np.cross, randn(4, 3), randn(3)),
    Case(np.cross, randn(3, 2), randn(2, 3), kwargs={"axisa": 0}),
    Case(np.cross, randn(2, 3), randn(2, 3), kwargs={"axis": 0}),
    Case(np.cross, randc(3), randn(3)),
]
