"""``scipy.signal``: the convolutions (``convolve``, ``correlate``, ``fftconvolve``, ``oaconvolve``,
``convolve2d``, ``correlate2d``) and the linear filters (``lfilter`` in ``b``, ``a``, ``x`` and
``zi``; ``sosfilt`` in ``sos``, ``x`` and ``zi``; ``filtfilt`` with ``method='pad'``).

* ``convolve``/``correlate``/``fftconvolve``/``oaconvolve``: rules. Each result is a window
  (``mode``) of the full N-d convolution of ``in1`` with the kernel ``in2`` (``convolve``) or
  ``conj(flip(in2))`` (``correlate``); the windows are SciPy's ``_centered`` ones (checked against
  SciPy for every method, mode and length order in tests/test_scipy_signal.py). The tangent is the
  function applied to one tangent at a time; the cotangents are ``valid`` correlations of the
  zero-padded output cotangent with the other factor (``_convolution_vjp``), summed back over the
  axes ``fftconvolve(axes=)`` broadcasts. Every ``method=`` computes the same function (SciPy
  checks its value). Second order: multilinear.
* ``convolve2d``/``correlate2d``: *derived* from a definition in covered functions: the input
  extended by ``boundary`` (``np.pad``: 'fill' is constant ``fillvalue``, 'wrap', 'symm' is
  symmetric), a ``valid`` convolution, SciPy's window (``correlate2d``'s 'same' window starts at
  ``n // 2``, and its swapped 'valid' case conjugates ``in1``, as SciPy's code does).
* ``lfilter``: derived from ``A(z) y = B(z) x + zi`` (``zi`` feeds the first outputs unscaled;
  ``b`` and ``a`` are normalised by ``a[0]``): the moving-average part and the final state are
  full convolutions along the filtered axis, the recursive part one primitive, ``_all_pole``
  (``y`` with ``sum_k c[k] y[n - k] = u[n]``), with its own rule (tangent: the same filter of
  ``du - dc * y``; cotangent: the time-reversed filter, ``conj(c)``) and cotangent map for second
  order. ``sosfilt`` is its sections' ``lfilter`` in turn; ``filtfilt`` (``method='pad'``) is
  SciPy's algorithm (odd/even/constant extension, ``lfilter_zi`` by a linear solve, a forward and a
  backward pass) in the same functions. ``filtfilt(method='gust')`` is refused.

The derived functions return their definition's values: equal to SciPy's up to rounding. Nothing
is registered, and ``CASES`` is empty, when SciPy is not installed.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoTangent
from .cases import Case, randc, randn, randu
from . import core
from .core import Dual, RuleArgumentError, primal, register_frule, register_rrule
from .numpy_arguments import dense_tangent, deliver, forward, rule, sum_to_shape, vjp_pullback
from .second_order import defined_by, multilinear, with_vjp
from .util import call_on_primals, defined_rrule, fit_tangent, out_cotangent, output, tangent

try:
    import scipy.signal as ss
except ImportError:  # pragma: no cover - SciPy is optional
    ss = None


# --------------------------------------------------------------------------------------------
# convolve, correlate, fftconvolve, oaconvolve: windows of a full convolution
# --------------------------------------------------------------------------------------------


def _window(mode: str, m: tuple, n: tuple, axes: tuple) -> tuple:
    """The slices of the full convolution (sizes ``m + n - 1`` along ``axes``) that ``mode`` keeps
    (SciPy's ``_centered``: 'same' keeps ``m`` from ``(n - 1) // 2``, 'valid' ``|m - n| + 1`` from
    ``min(m, n) - 1``)."""
    slices = []
    for ax in range(len(m)):
        if ax not in axes or mode == "full":
            slices.append(slice(None))
        elif mode == "same":
            start = (n[ax] - 1) // 2
            slices.append(slice(start, start + m[ax]))
        else:
            start = min(m[ax], n[ax]) - 1
            slices.append(slice(start, start + abs(m[ax] - n[ax]) + 1))
    return tuple(slices)


def _axes_of(axes: Any, ndim: int) -> tuple:
    if axes is None:
        return tuple(range(ndim))
    if np.ndim(axes) == 0:
        return (int(axes) % ndim,)
    return tuple(sorted(int(a) % ndim for a in axes))


def _flip_conj(k: np.ndarray, axes: tuple) -> np.ndarray:
    return np.conj(np.flip(k, axis=axes)) if axes else np.conj(k)


def _valid_correlation(p: np.ndarray, q: np.ndarray, axes: tuple) -> np.ndarray:
    """``sum_j p[i + j] conj(q[j])`` along ``axes`` (``p`` at least as long), broadcasting the others."""
    if len(axes) == p.ndim and p.shape != () and q.shape != ():
        return ss.correlate(p, q, mode="valid")
    return ss.fftconvolve(p, _flip_conj(q, axes), mode="valid", axes=list(axes)) if axes else p * np.conj(q)


def _convolution_vjp(g: Any, x: np.ndarray, k: np.ndarray, mode: str, axes: tuple, correlate: bool) -> tuple:
    """Cotangents of ``in1`` and ``in2`` for the window ``mode`` of the full convolution of ``x``
    with ``k`` (``conj(flip(k))`` when ``correlate``) along ``axes``."""
    x1, k1 = np.atleast_1d(x), np.atleast_1d(k)
    kernel = _flip_conj(k1, axes) if correlate else k1
    g = np.asarray(g)
    shape = tuple(x1.shape[a] + k1.shape[a] - 1 if a in axes else max(x1.shape[a], k1.shape[a])
                  for a in range(x1.ndim))
    full = np.zeros(shape, dtype=np.result_type(g, x1, k1, np.float64))
    if full.size and g.size:
        full[_window(mode, x1.shape, k1.shape, axes)] = np.reshape(g, full[_window(mode, x1.shape, k1.shape, axes)].shape)
    gx = sum_to_shape(_valid_correlation(full, kernel, axes), x1.shape)
    gk = sum_to_shape(_valid_correlation(full, x1, axes), k1.shape)
    if correlate:
        gk = _flip_conj(gk, axes)
    return np.reshape(gx, np.shape(x)), np.reshape(gk, np.shape(k))


def _convolution_rules(fn: Callable, correlate: bool, last: str) -> None:
    """Rules for ``fn(in1, in2, mode='full', <last>)``: ``last`` is 'method' (convolve,
    correlate: any method gives the same function) or 'axes' (fftconvolve, oaconvolve)."""
    name = f"scipy.signal.{fn.__name__}"

    def call(x: Any, k: Any, mode: Any, extra: Any) -> Any:
        return fn(x, k, mode=mode, **{last: extra}) if extra is not None else fn(x, k, mode=mode)

    def axes_for(x: Any, extra: Any) -> tuple:
        return _axes_of(extra if last == "axes" else None, max(np.ndim(x), 1))

    def unpack(args: tuple) -> tuple:
        full = (*args, *(("full", None)[len(args) - 2:]))
        return full[0], full[1], primal(full[2]), primal(full[3])

    def rrule_(*args: Any) -> tuple:
        in1, in2, md, ex = unpack(args)
        x, k = primal(in1), primal(in2)
        out = output(call(x, k, md, ex))

        def pullback(dy: Any) -> tuple:
            if not isinstance(out.fdata, np.ndarray):
                return ()
            g = out_cotangent(out, dy)
            gx, gk = _convolution_vjp(g, np.asarray(x), np.asarray(k), md, axes_for(x, ex), correlate)
            return deliver(in1, gx), deliver(in2, gk)

        return out, pullback

    def frule_(*args: Any) -> Dual:
        in1, in2, md, ex = unpack(args)
        x, k = primal(in1), primal(in2)
        y = call(x, k, md, ex)
        tx, tk = dense_tangent(x, tangent(in1)), dense_tangent(k, tangent(in2))
        if tx is None and tk is None:
            return Dual(y, fit_tangent(NoTangent, y))
        ty = 0.0
        if tx is not None:
            ty = ty + call(tx, k, md, ex)
        if tk is not None:
            ty = ty + call(x, tk, md, ex)
        return Dual(y, fit_tangent(ty, y))

    P = inspect.Parameter
    signature = inspect.Signature([P("in1", P.POSITIONAL_OR_KEYWORD), P("in2", P.POSITIONAL_OR_KEYWORD),
                                   P("mode", P.POSITIONAL_OR_KEYWORD, default="full"),
                                   P(last, P.POSITIONAL_OR_KEYWORD, default=None)])
    for f in (rrule_, frule_):  # the parameter names SciPy's keywords bind to
        f.__signature__ = signature  # type: ignore[attr-defined]
        f.__qualname__ = f"{name} rule"
    rule(fn)(rrule_)
    forward(fn)(frule_)
    multilinear(fn)


# --------------------------------------------------------------------------------------------
# convolve2d, correlate2d: derived (boundary extension, a valid convolution, SciPy's window)
# --------------------------------------------------------------------------------------------

_BOUNDARY_PAD = {"fill": "constant", "pad": "constant", "wrap": "wrap", "circular": "wrap",
                 "symm": "symmetric", "symmetric": "symmetric"}


def _check_2d(name: str, mode: Any, boundary: Any, fillvalue: Any) -> None:
    """Refuse unknown modes and boundaries (``fillvalue`` is passed so that a mode that does not read
    it gives it a zero cotangent, not none)."""
    if boundary not in _BOUNDARY_PAD:
        raise RuleArgumentError(f"scipy.signal.{name}: unknown boundary={boundary!r}; use 'fill', 'wrap' or 'symm'")
    if mode not in ("full", "same", "valid"):
        raise RuleArgumentError(f"scipy.signal.{name}: unknown mode={mode!r}; use 'full', 'same' or 'valid'")


def _swap_needed(mode: str, m: tuple, n: tuple) -> bool:
    return mode == "valid" and not all(a >= b for a, b in zip(m, n))


def _full_2d(x, k, boundary, fillvalue):
    """The full 2-D convolution of ``x`` extended by ``boundary`` with ``k``."""
    widths = [(k.shape[0] - 1, k.shape[0] - 1), (k.shape[1] - 1, k.shape[1] - 1)]
    if _BOUNDARY_PAD[boundary] == "constant":
        extended = np.pad(x, widths, mode="constant", constant_values=fillvalue)
    else:
        extended = np.pad(x, widths, mode=_BOUNDARY_PAD[boundary])
    return ss.convolve(extended, k, mode="valid")


def _convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """``scipy.signal.convolve2d``."""
    x, k = np.asarray(in1), np.asarray(in2)
    if mode == "valid":  # no boundary is read; SciPy swaps the inputs when in1 is the smaller
        return ss.convolve(x, k, mode="valid")
    full = _full_2d(x, k, boundary, fillvalue)
    if mode == "full":
        return full
    i, j = (k.shape[0] - 1) // 2, (k.shape[1] - 1) // 2
    return full[i:i + x.shape[0], j:j + x.shape[1]]


def _correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """``scipy.signal.correlate2d``: SciPy's window ('same' from ``n // 2``) and its swap."""
    x, k = np.asarray(in1), np.asarray(in2)
    if mode == "valid":
        if _swap_needed(mode, x.shape, k.shape):  # SciPy: flip(correlate(in2, conj(in1))) without conj
            return np.flip(ss.convolve(k, np.flip(np.conj(x)), mode="valid"))
        return ss.convolve(x, np.conj(np.flip(k)), mode="valid")
    full = _full_2d(x, np.conj(np.flip(k)), boundary, fillvalue)
    if mode == "full":
        return full
    i, j = k.shape[0] // 2, k.shape[1] // 2
    return full[i:i + x.shape[0], j:j + x.shape[1]]


def _derived_2d(target: Callable, definition: Callable) -> None:
    def checked(in1, in2, mode="full", boundary="fill", fillvalue=0):
        _check_2d(target.__name__, mode, boundary, fillvalue)
        return definition(in1, in2, mode, boundary, fillvalue)

    checked.__name__ = checked.__qualname__ = definition.__name__
    derived(target, checked)


# --------------------------------------------------------------------------------------------
# lfilter, sosfilt, filtfilt: one recursive primitive, the rest full convolutions
# --------------------------------------------------------------------------------------------


def _all_pole(c, u):
    """``y`` along the last axis with ``sum_k c[k] y[n - k] = u[n]`` (zero initial state)."""
    return ss.lfilter(np.ones(1, dtype=np.result_type(c)), c, u, axis=-1)


def _delayed_products(c_size: int, g: Any, y: Any) -> Any:
    """``[sum_n g[..., n] conj(y[..., n - k]) for k < c_size]``: a cotangent of the coefficients."""
    n = np.shape(g)[-1]
    parts = []
    for k in range(c_size):
        parts.append(np.sum(g[..., k:] * np.conj(y[..., :n - k])) if k < n else np.sum(g[..., :0]))
    return np.stack(parts)


def _all_pole_vjp(g, y, c, u):
    """Cotangents of ``c`` and ``u``: ``u``'s is the time-reversed filter with ``conj(c)``;
    ``c``'s is ``-sum_n gu[n] conj(y[n - k])`` (from ``C dy = -dC y``)."""
    gu = np.flip(_all_pole(np.conj(c), np.flip(g, axis=-1)), axis=-1)
    return -_delayed_products(np.size(c), gu, y), gu


def _all_pole_rules() -> None:
    @rule(_all_pole)
    def _rrule(c, u):
        out = output(_all_pole(primal(c), primal(u)))
        return out, vjp_pullback(_all_pole_vjp, out, (c, u))

    @forward(_all_pole)
    def _frule(c, u):
        cs, us = np.asarray(primal(c)), primal(u)
        y = _all_pole(cs, us)
        tc, tu = dense_tangent(cs, tangent(c)), dense_tangent(us, tangent(u))
        if tc is None and tu is None:
            return Dual(y, fit_tangent(NoTangent, y))
        rhs = np.zeros_like(y) if tu is None else np.asarray(tu)
        if tc is not None:
            n = y.shape[-1]
            rhs = rhs - ss.convolve(y, np.reshape(tc, (1,) * (y.ndim - 1) + (-1,)))[..., :n]
        return Dual(y, fit_tangent(_all_pole(cs, rhs), y))

    with_vjp(_all_pole, _all_pole_vjp)


def _full_along_last(c, s, length):
    """The full convolution of 1-D ``c`` with ``s`` along its last axis, cut or zero-padded to
    ``length``."""
    full = ss.convolve(s, np.reshape(c, (1,) * (np.ndim(s) - 1) + (-1,)))
    have = full.shape[-1]
    if have >= length:
        return full[..., :length]
    return np.pad(full, [(0, 0)] * (full.ndim - 1) + [(0, length - have)])


def _lfilter(b, a, x, axis=-1, zi=None):
    """``scipy.signal.lfilter``: ``A(z) y = B(z) x + zi`` with ``b`` and ``a`` normalised by ``a[0]``."""
    b, a = np.atleast_1d(b), np.atleast_1d(a)
    b, a = b / a[0], a / a[0]
    order = max(b.size, a.size) - 1
    xm = np.moveaxis(np.asarray(x), axis, -1)
    n = xm.shape[-1]
    moving = _full_along_last(b, xm, n + order)
    if zi is None:
        u = moving[..., :n]
    else:
        state = np.broadcast_to(np.moveaxis(np.asarray(zi), axis, -1), xm.shape[:-1] + (order,))
        state = np.pad(state, [(0, 0)] * (xm.ndim - 1) + [(0, n)])
        u = moving[..., :n] + state[..., :n]
    if a.size == 1 and zi is not None:  # SciPy's FIR path: y and zf are two views of one array
        both = np.moveaxis(moving + state, -1, axis).copy()
        cut = [slice(None)] * both.ndim
        cut[axis] = slice(0, n)
        y = both[tuple(cut)]
        cut[axis] = slice(n, None)
        return y, both[tuple(cut)]
    y = _all_pole(a, u) if a.size > 1 else u
    if zi is None:
        return np.moveaxis(y, -1, axis)
    final = moving[..., n:] - _full_along_last(a, y, n + order)[..., n:] + state[..., n:]
    return np.moveaxis(y, -1, axis), np.moveaxis(final, -1, axis)


def _sosfilt(sos, x, axis=-1, zi=None):
    """``scipy.signal.sosfilt``: each section's ``lfilter`` in turn."""
    sos = np.asarray(sos)
    if zi is None:
        for s in range(sos.shape[0]):
            x = _lfilter(sos[s, :3], sos[s, 3:], x, axis)
        return x
    finals = []
    for s in range(sos.shape[0]):
        x, final = _lfilter(sos[s, :3], sos[s, 3:], x, axis, zi[s])
        finals.append(final)
    return x, np.stack(finals)


def _lfilter_zi(b, a):
    """``scipy.signal.lfilter_zi``: the steady state of a unit step, ``(I - A^T) zi = b[1:] - a[1:] b[0]``."""
    b, a = np.atleast_1d(b), np.atleast_1d(a)
    b, a = b / a[0], a / a[0]
    n = max(a.size, b.size)
    if a.size < n:
        a = np.concatenate([a, np.zeros(n - a.size)])
    if b.size < n:
        b = np.concatenate([b, np.zeros(n - b.size)])
    shift = np.eye(n - 1, k=1)  # the companion matrix's transpose: ones above the diagonal,
    first = np.eye(n - 1)[:, :1]  # -a[1:] in the first column
    matrix = np.eye(n - 1) - shift + np.reshape(a[1:], (-1, 1)) * first.T
    return np.linalg.solve(matrix, b[1:] - a[1:] * b[0])


def _extend(x, edge, padtype):
    """SciPy's ``odd_ext``/``even_ext``/``const_ext`` along the last axis."""
    if padtype is None or edge == 0:
        return x
    first, last = x[..., :1], x[..., -1:]
    left = np.flip(x[..., 1:edge + 1], axis=-1)
    right = np.flip(x[..., -edge - 1:-1], axis=-1)
    if padtype == "odd":
        return np.concatenate([2 * first - left, x, 2 * last - right], axis=-1)
    if padtype == "even":
        return np.concatenate([left, x, right], axis=-1)
    return np.concatenate([np.repeat(first, edge, axis=-1), x, np.repeat(last, edge, axis=-1)], axis=-1)


def _filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None):
    """``scipy.signal.filtfilt`` with ``method='pad'``."""
    if method != "pad":
        raise RuleArgumentError(f"scipy.signal.filtfilt: yuebing differentiates method='pad' only, not method={method!r}; "
                                "call filtfilt(b, a, x) with method='pad' (the default)")
    b, a = np.atleast_1d(b), np.atleast_1d(a)
    xm = np.moveaxis(np.asarray(x), axis, -1)
    edge = 3 * max(a.size, b.size) if padlen is None else int(padlen)
    if padtype is None:
        edge = 0
    ext = _extend(xm, edge, padtype)
    zi = np.reshape(_lfilter_zi(b, a), (1,) * (xm.ndim - 1) + (-1,))
    y, _ = _lfilter(b, a, ext, -1, zi * ext[..., :1])
    y0 = y[..., -1:]
    y, _ = _lfilter(b, a, np.flip(y, axis=-1), -1, zi * y0)
    y = np.flip(y, axis=-1)
    if edge > 0:
        y = y[..., edge:-edge]
    return np.moveaxis(y, -1, axis)


def derived(target: Callable, definition: Callable, check: Callable | None = None) -> None:
    """``target`` differentiated as ``definition`` in every mode (``defined_as``), with
    ``check(*primals, **keywords)`` run first (default: ``target`` itself, for SciPy's errors);
    numbers the definition did not read get zero cotangents (``util.defined_rrule``)."""

    def checked(args: tuple, kwargs: dict) -> None:
        call_on_primals(check or target, args, kwargs)  # writable copies where SciPy needs them (sosfilt)

    def rrule_(*args: Any, **kwargs: Any) -> Any:
        checked(args, kwargs)
        return defined_rrule(definition, *args, **kwargs)

    def frule_(*args: Any, **kwargs: Any) -> Any:
        checked(args, kwargs)
        return core.frule(definition, *args, **kwargs)

    rrule_.__qualname__ = frule_.__qualname__ = f"{target.__qualname__} as {definition.__qualname__}"
    register_rrule(target, rrule_)
    register_frule(target, frule_)
    defined_by(target, definition)


if ss is not None:
    _convolution_rules(ss.convolve, False, "method")
    _convolution_rules(ss.correlate, True, "method")
    _convolution_rules(ss.fftconvolve, False, "axes")
    _convolution_rules(ss.oaconvolve, False, "axes")
    _derived_2d(ss.convolve2d, _convolve2d)
    _derived_2d(ss.correlate2d, _correlate2d)
    _all_pole_rules()
    derived(ss.lfilter, _lfilter)
    derived(ss.sosfilt, _sosfilt)
    derived(ss.filtfilt, _filtfilt)


# --------------------------------------------------------------------------------------------
# Cases (values against SciPy, windows, user functions and refusals in tests/test_scipy_signal.py)
# --------------------------------------------------------------------------------------------


def _sections(coefficients, x, zi=None, axis=-1):
    """``sosfilt`` of sections ``[b0, b1, b2, 1, a1, a2]`` built from 5 free coefficients each
    (SciPy refuses any other ``sos[:, 3]``, so finite differences must not move it)."""
    c = np.reshape(coefficients, (-1, 5))
    sos = np.concatenate([c[:, :3], np.ones((c.shape[0], 1)), c[:, 3:]], axis=1)
    return ss.sosfilt(sos, x, axis=axis) if zi is None else ss.sosfilt(sos, x, axis=axis, zi=zi)


def _stable_a(*roots: float) -> np.ndarray:
    """Denominator coefficients with the given poles (inside the unit circle: a stable filter)."""
    return np.poly(roots)


def _cases() -> list:
    b, a = np.array([0.3, 0.2, -0.1]), _stable_a(0.5, -0.3)
    bb, ab = ss.butter(2, 0.3)
    sections = ss.butter(4, 0.25, output="sos")
    free = np.concatenate([sections[:, :3], sections[:, 4:]], axis=1).ravel()
    return [
        Case(ss.convolve, randn(5), randn(3)),
        Case(ss.convolve, randn(4, 3), randn(2, 2), "same"),
        Case(ss.convolve, randn(3), randn(6), "valid", name="convolve(valid, in1 shorter)"),
        Case(ss.convolve, randc(4), randn(3), "same", "direct"),
        Case(ss.convolve, [0.5, -1.0, 2.0], randn(2), kwargs={"method": "fft"}, name="convolve(list, fft)"),
        Case(ss.convolve, randn(6, dtype=np.float32), randn(3, dtype=np.float32)),
        Case(ss.correlate, randn(5), randn(3)),
        Case(ss.correlate, randc(3, 4), randc(2, 3), "valid"),
        Case(ss.correlate, randn(2, 2), randn(3, 4), "valid", name="correlate(valid, in1 smaller)"),
        Case(ss.correlate, randn(5), randc(2), "same", "direct"),
        Case(ss.fftconvolve, randn(4, 5), randn(3, 2), "same"),
        Case(ss.fftconvolve, randn(3, 6), randn(1, 3), kwargs={"axes": 1}, name="fftconvolve(axes=1, broadcast)"),
        Case(ss.fftconvolve, randc(6), randn(4), "valid"),
        Case(ss.oaconvolve, randn(20), randn(5), "valid"),
        Case(ss.oaconvolve, randn(4, 12), randn(4, 3), kwargs={"axes": -1, "mode": "same"}),
        Case(ss.convolve2d, randn(4, 5), randn(2, 3)),
        Case(ss.convolve2d, randn(4, 5), randn(3, 2), "same", "wrap"),
        Case(ss.convolve2d, randn(3, 4), randn(2, 2), "same", "symm"),
        Case(ss.convolve2d, randn(3, 3), randn(2, 3), "full", "fill", 0.5),
        Case(ss.convolve2d, randn(2, 3), randn(4, 4), "valid", name="convolve2d(valid, in1 smaller)"),
        Case(ss.convolve2d, [[1.0, 2.0], [0.5, -1.0]], randn(2, 2), kwargs={"boundary": "symm"}),
        Case(ss.correlate2d, randn(4, 5), randn(2, 3), "same"),
        Case(ss.correlate2d, randc(4, 4), randc(3, 2), "same", "wrap"),
        Case(ss.correlate2d, randc(2, 2), randc(3, 4), "valid", name="correlate2d(valid, in1 smaller)"),
        Case(ss.correlate2d, randn(3, 4), randn(2, 2), "full", "symm"),
        Case(ss.lfilter, b, a, randn(8)),
        Case(ss.lfilter, bb, ab, randn(3, 6), kwargs={"axis": 0}, name="lfilter(axis=0)"),
        Case(ss.lfilter, [0.5, 0.25], [2.0, -0.4, 0.1], randn(2, 7), -1, randn(2, 2), name="lfilter(zi, a[0] = 2)"),
        Case(ss.lfilter, randn(4), [1.0], randn(6), kwargs={"zi": randn(3)}, name="lfilter(FIR, zi)"),
        Case(ss.lfilter, b, a, randn(2), kwargs={"zi": randn(2)}, name="lfilter(x shorter than the state)"),
        Case(ss.lfilter, b, a, randc(6)),
        Case(_sections, free, randn(10), name="sosfilt(sos, x)"),
        Case(_sections, free, randn(3, 6), randn(2, 3, 2) * 0.1, name="sosfilt(zi, 2-D)"),
        Case(_sections, free, randn(4, 5), None, 0, name="sosfilt(axis=0)"),
        Case(_sections, free, [0.5, 1.0, -0.5, 2.0], name="sosfilt(x a list)"),
        Case(ss.filtfilt, bb, ab, randn(12)),
        Case(ss.filtfilt, b, a, randn(2, 11), kwargs={"padtype": "even", "padlen": 4}, name="filtfilt(even)"),
        Case(ss.filtfilt, b, a, randn(10, 2), kwargs={"axis": 0, "padtype": "constant"}, name="filtfilt(constant)"),
        Case(ss.filtfilt, b, a, randn(9), kwargs={"padtype": None}, name="filtfilt(no padding)"),
    ]


CASES = _cases() if ss is not None else []
