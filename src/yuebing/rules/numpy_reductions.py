"""NumPy reductions and scans: sum, mean, prod, max/min (amax/amin), nansum/nanmean/nanmax/nanmin,
std, var, ptp, cumsum, cumprod, diff, trapezoid (and trapz where NumPy has it), average, median;
and the ``ndarray`` methods sum, mean, prod, max, min, std, var, cumsum, cumprod.

Every reduction takes ``axis`` (None, int, negative, tuple) and ``keepdims``; ``where=`` is
supported by sum/mean/prod/max/min/std/var and the nan-variants, ``initial=`` by sum/prod/max/min,
``dtype=`` where NumPy has it. ``out=`` is refused (assign the result instead). Inputs may be
arrays, Python or NumPy numbers, or (nested) lists and tuples of numbers and arrays.

Conventions at non-smooth points (docs/conventions.md):

* ``max``/``min``/``nanmax``/``nanmin``/``ptp``: ties split the cotangent evenly among the tied
  extrema (Mooncake's convention). An ``initial=`` value counts as one more candidate of every
  output: when it beats every element it receives the whole cotangent, when it ties with ``k``
  elements each of the ``k + 1`` gets ``1/(k + 1)``.
* ``initial=`` is differentiated: ``sum``/``nansum`` send it the sum of the output cotangent,
  ``prod`` the cotangent times the product of the elements (the other factors).
* ``prod``/``cumprod`` are exact with zeros in the input (no division by the input): the partial
  of a product with respect to one factor is the product of the others.
* ``median`` sends the cotangent to the middle element (odd count) or half to each of the two
  middle elements (even count), chosen by a stable sort (ties: the earlier index).
* ``std`` at zero spread: NumPy's arithmetic (0/0 = nan), as ``sqrt'(0)``.

Internal convention: the pullbacks below return the rdata of the *arguments only* (as many as
they have something for); ``_rule`` prepends ``f``'s rdata and pads with ``NoRData`` up to the
number of arguments the call passed. ``deliver``/``dense_tangent`` (also used by
``numpy_shape``) move cotangents and tangents between arrays and array-like inputs.
"""
from __future__ import annotations

import functools
import math
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from .cases import Case, Expect, randc, randn, randpos
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .second_order import linear, with_vjp
from .util import accumulate, fit_tangent, out_cotangent, output, tangent, unbroadcast

NV = np._NoValue  # NumPy's "argument not given" marker: the default of keepdims, where, initial...


# --------------------------------------------------------------------------------------------
# Shared helpers (also imported by numpy_shape)
# --------------------------------------------------------------------------------------------


def rule(*targets: Any) -> Callable:
    """Register a reverse rule whose pullback returns rdata for the arguments only.

    The wrapper adds ``f``'s rdata and pads to one entry per argument the call passed (defaults
    the call left out are not counted), so a rule can be written with NumPy's full signature.
    A rule taking ``**kwargs`` (keywords passed through) may end its tuple with a dict of
    keyword rdata by name.
    """

    def decorate(fn: Callable) -> Callable:
        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> tuple:
            out, inner = fn(*args, **kwargs)
            n = len(args)

            def pullback(dy: Any) -> tuple:
                rs = inner(dy)
                named = rs[-1] if rs and isinstance(rs[-1], dict) else {}
                rs = rs[:-1] if named else rs
                positional = (*rs[:n], *(NoRData,) * (n - len(rs)))
                return (NoRData, *positional, *(named.get(k, NoRData) for k in kwargs))

            return out, pullback

        for target in targets:
            register_rrule(target, wrapped)
        return fn

    return decorate


def forward(*targets: Any) -> Callable:
    def decorate(fn: Callable) -> Callable:
        for target in targets:
            register_frule(target, fn)
        return fn

    return decorate


def refuse(name: str, what: str, value: Any, default: Any = None, fix: str = "") -> None:
    """Raise ``RuleArgumentError`` unless argument ``what`` has its default value."""
    v = primal(value)
    if v is not default and not (default is None and v is None):
        raise RuleArgumentError(f"{name}: yuebing does not differentiate calls with {what}={v!r:.40}; {fix}")


def no_out(name: str, out: Any) -> None:
    refuse(name, "out", out, None, "assign the result instead (y[...] = f(x))")


def as_array(x: Any) -> np.ndarray:
    """The primal as an array (no copy for arrays)."""
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def deliver(arg: Any, g: Any) -> Any:
    """Give cotangent ``g`` (shaped like ``np.asarray(primal(arg))``, or broadcast to a larger
    shape) to argument ``arg``: arrays are incremented in place, numbers give rdata, (nested)
    lists are incremented element by element in their fdata, tuples give tuple rdata."""
    if not isinstance(arg, CoDual):
        return NoRData
    return deliver_value(arg.primal, arg.fdata, g)


def deliver_value(x: Any, fd: Any, g: Any) -> Any:
    if isinstance(x, (list, tuple)):
        g = unbroadcast(np.asarray(g), np.shape(x))
        g = np.broadcast_to(g, np.shape(x))
        if isinstance(x, list):
            for i, xi in enumerate(x):
                fi = fd[i] if isinstance(fd, list) else NoFData
                r = deliver_value(xi, fi if isinstance(fi, np.ndarray) or isinstance(xi, (list, tuple)) else NoFData, g[i])
                if r is not NoRData and isinstance(fd, list) and not isinstance(xi, (list, tuple)):
                    fd[i] = fd[i] + r  # a number inside a list: its cotangent lives in the list's fdata
            return NoRData
        rs = [deliver_value(xi, fd[i] if isinstance(fd, tuple) else NoFData, g[i]) for i, xi in enumerate(x)]
        return NoRData if all(r is NoRData for r in rs) else tuple(rs)
    return accumulate(CoDual(x, fd), g)


def dense_tangent(x: Any, t: Any) -> np.ndarray | None:
    """The forward tangent of array-like primal ``x`` as an array (None when it is zero)."""
    if t is NoTangent:
        return None
    if isinstance(x, (list, tuple)):
        parts = [dense_tangent(xi, ti) for xi, ti in zip(x, t)]
        if all(p is None for p in parts):
            return None
        return np.asarray([np.zeros(np.shape(xi)) if p is None else p for xi, p in zip(x, parts)])
    return t


def zeros_or(t: np.ndarray | None, x: Any) -> np.ndarray:
    return np.zeros(np.shape(x), dtype=np.result_type(as_array(x), np.float64)) if t is None else np.asarray(t)


def axes_of(axis: Any, ndim: int) -> tuple:
    """``axis`` (None, int, negative, tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if isinstance(axis, (tuple, list)):
        return tuple(sorted(int(a) % ndim for a in axis)) if ndim else ()
    return (int(axis) % ndim,) if ndim else ()


def expand(g: Any, shape: tuple, axes: tuple, keepdims: bool) -> np.ndarray:
    """The cotangent of a reduction over ``axes``, broadcast back to the input ``shape``."""
    g = np.asarray(g)
    if not keepdims and axes:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, shape)


def _keep(keepdims: Any) -> bool:
    k = primal(keepdims)
    return False if k is NV else bool(k)


def _kw(**pairs: Any) -> dict:
    """Keyword arguments for the NumPy call, leaving out the ones that were not given."""
    return {k: primal(v) for k, v in pairs.items() if primal(v) is not NV and not (k == "dtype" and primal(v) is None)}


def _mask(where: Any, shape: tuple) -> np.ndarray | None:
    w = primal(where)
    return None if w is NV or w is True else np.broadcast_to(np.asarray(w, dtype=bool), shape)


def _initial_tangent(initial: Any) -> Any:
    """The forward tangent of ``initial=`` (None when it is a constant or not given)."""
    t = tangent(initial)
    return None if t is NoTangent or not np.any(t) else t


def _conj(x: Any) -> Any:
    return np.conj(x) if np.iscomplexobj(x) else x


def _count(mask: np.ndarray | None, shape: tuple, axes: tuple) -> Any:
    """Number of elements reduced into each output (keepdims shape when masked)."""
    if mask is None:
        return math.prod(shape[a] for a in axes)
    return np.sum(mask, axis=axes, keepdims=True)


# --------------------------------------------------------------------------------------------
# sum, nansum, mean, nanmean
# --------------------------------------------------------------------------------------------


def _linear_reduction(fn: Callable, name: str, mean: bool, nan: bool) -> None:
    """sum / mean and their nan-variants: the cotangent is spread (divided by the count for means)."""

    def weights(x: np.ndarray, axes: tuple, where: Any) -> Any:
        mask = _mask(where, x.shape)
        if nan:
            finite = ~np.isnan(x)
            mask = finite if mask is None else mask & finite
        if not mean:
            return mask
        count = _count(mask, x.shape, axes)
        return (1.0 / max(count, 1)) if mask is None else mask / np.maximum(count, 1)  # empty: no elements

    def rrule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
        no_out(name, out)
        x = as_array(primal(a))
        result = output(fn(primal(a), **_kw(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)))

        def pullback(dy: Any) -> tuple:
            axes = axes_of(primal(axis), x.ndim)
            g = expand(out_cotangent(result, dy), x.shape, axes, _keep(keepdims))
            w = weights(x, axes, where)
            # initial= is added to every output: its cotangent is the sum of the output's
            r_initial = deliver(initial, out_cotangent(result, dy))
            return (deliver(a, g if w is None else g * w), NoRData, NoRData, NoRData, NoRData, r_initial)

        return result, pullback

    def frule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
        no_out(name, out)
        x = primal(a)
        y = fn(x, **_kw(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where))
        dx = dense_tangent(x, tangent(a))
        d_initial = _initial_tangent(initial)
        if dx is None and d_initial is None:
            return Dual(y, fit_tangent(NoTangent, y))
        dy = 0.0
        if dx is not None:
            xa = as_array(x)
            axes = axes_of(primal(axis), xa.ndim)
            w = weights(xa, axes, where)
            dx = np.asarray(dx) if w is None else np.where(w != 0, dx, 0) * w  # nan-safe masking
            dy = np.sum(dx, axis=axes, keepdims=_keep(keepdims))
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
    mask = _mask(where, x.shape)
    factors = x if mask is None else np.where(mask, x, 1)  # masked-out elements act as 1
    partial = prod_partials(factors, axes)
    return x, axes, partial if mask is None else partial * mask


def _product_of_elements(a, axis, keepdims, where) -> np.ndarray:
    """``prod`` without ``initial=``: the partial of ``initial * prod(x)`` in ``initial``."""
    x = as_array(primal(a))
    mask = _mask(where, x.shape)
    factors = x if mask is None else np.where(mask, x, 1)
    return np.prod(factors, axis=axes_of(primal(axis), x.ndim), keepdims=_keep(keepdims))


@rule(np.prod, (np.ndarray, "prod"))
def _prod_rrule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    no_out("numpy.prod", out)
    result = output(np.prod(primal(a), **_kw(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where)))

    def pullback(dy: Any) -> tuple:
        x, axes, partial = _prod_setup(a, axis, where)
        if primal(initial) is not NV:
            partial = partial * primal(initial)
        g_out = out_cotangent(result, dy)
        g = expand(g_out, x.shape, axes, _keep(keepdims))
        r_initial = NoRData
        if isinstance(initial, CoDual):
            r_initial = deliver(initial, g_out * _conj(_product_of_elements(a, axis, keepdims, where)))
        return (deliver(a, g * _conj(partial)), NoRData, NoRData, NoRData, NoRData, r_initial)

    return result, pullback


@forward(np.prod, (np.ndarray, "prod"))
def _prod_frule(a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    no_out("numpy.prod", out)
    y = np.prod(primal(a), **_kw(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial, where=where))
    dx = dense_tangent(primal(a), tangent(a))
    d_initial = _initial_tangent(initial)
    if dx is None and d_initial is None:
        return Dual(y, fit_tangent(NoTangent, y))
    dy = 0.0
    if dx is not None:
        x, axes, partial = _prod_setup(a, axis, where)
        if primal(initial) is not NV:
            partial = partial * primal(initial)
        dy = np.sum(dx * partial, axis=axes, keepdims=_keep(keepdims))
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
    mask = _mask(where, x.shape)
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
        y = fn(primal(a), **_kw(axis=axis, keepdims=keepdims, initial=initial, where=where))
        return y

    def weights(a, axis, keepdims, y, where, initial):
        """``(x, axes, shares of the elements, share of initial= per output (keepdims))``."""
        x = as_array(primal(a))
        axes = axes_of(primal(axis), x.ndim)
        kept = np.asarray(y) if _keep(keepdims) else np.expand_dims(np.asarray(y), axes)
        return (x, axes, *extremum_shares(x, kept, axes, where, nan, primal(initial)))

    def rrule(a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
        y = setup(a, axis, out, keepdims, initial, where)
        result = output(y)

        def pullback(dy: Any) -> tuple:
            x, axes, w, w_initial = weights(a, axis, keepdims, y, where, initial)
            g = expand(out_cotangent(result, dy), x.shape, axes, _keep(keepdims))
            r_initial = NoRData
            if isinstance(initial, CoDual):  # its share of every output's cotangent
                g_kept = np.asarray(out_cotangent(result, dy))
                g_kept = g_kept if _keep(keepdims) else np.expand_dims(g_kept, axes)
                r_initial = deliver(initial, g_kept * w_initial)
            return (deliver(a, g * w), NoRData, NoRData, NoRData, r_initial)

        return result, pullback

    def frule(a, axis=None, out=None, keepdims=NV, initial=NV, where=NV):
        y = setup(a, axis, out, keepdims, initial, where)
        dx = dense_tangent(primal(a), tangent(a))
        d_initial = _initial_tangent(initial)
        if dx is None and d_initial is None:
            return Dual(y, fit_tangent(NoTangent, y))
        x, axes, w, w_initial = weights(a, axis, keepdims, y, where, initial)
        dy = 0.0
        if dx is not None:
            dy = np.sum(np.where(w != 0, dx, 0) * w, axis=axes, keepdims=_keep(keepdims))
        if d_initial is not None:  # the share array summed over its length-1 axes: y's shape
            dy = dy + d_initial * np.sum(w_initial, axis=axes, keepdims=_keep(keepdims))
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
    result = output(np.ptp(primal(a), **_kw(axis=axis, keepdims=keepdims)))

    def pullback(dy: Any) -> tuple:
        x, axes, w = _ptp_weights(a, axis, keepdims)
        return (deliver(a, expand(out_cotangent(result, dy), x.shape, axes, _keep(keepdims)) * w),)

    return result, pullback


@forward(np.ptp)
def _ptp_frule(a, axis=None, out=None, keepdims=NV):
    no_out("numpy.ptp", out)
    y = np.ptp(primal(a), **_kw(axis=axis, keepdims=keepdims))
    dx = dense_tangent(primal(a), tangent(a))
    if dx is None:
        return Dual(y, fit_tangent(NoTangent, y))
    x, axes, w = _ptp_weights(a, axis, keepdims)
    return Dual(y, fit_tangent(np.sum(dx * w, axis=axes, keepdims=_keep(keepdims)), y))


# --------------------------------------------------------------------------------------------
# var, std
# --------------------------------------------------------------------------------------------


def _var_setup(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction):
    no_out(name, out)
    refuse(name, "mean", mean, NV, "let NumPy compute the mean (a given mean is not differentiated)")
    kw = _kw(axis=axis, dtype=dtype, keepdims=keepdims, where=where, correction=correction)
    if primal(ddof) != 0:
        kw["ddof"] = primal(ddof)
    return kw


def _var_parts(a, axis, ddof, where, correction):
    """``(x, axes, d, n_eff)``: deviations ``x - mean`` (masked) and the divisor ``N - ddof``."""
    x = as_array(primal(a))
    axes = axes_of(primal(axis), x.ndim)
    mask = _mask(where, x.shape)
    m = np.mean(x, axis=axes, keepdims=True, **({} if mask is None else {"where": mask}))
    d = x - m
    if mask is not None:
        d = np.where(mask, d, 0)
    corr = primal(correction)
    # a float array: N - ddof = 0 gives inf/nan with a warning, as NumPy's own var does
    n_eff = np.asarray(_count(mask, x.shape, axes) - (primal(ddof) if corr is NV else corr), dtype=float)
    return x, axes, d, n_eff


def _variance(std: bool) -> tuple[Callable, Callable]:
    fn = np.std if std else np.var
    name = f"numpy.{fn.__name__}"

    def rrule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
        y = fn(primal(a), **_var_setup(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction))
        result = output(y)

        def pullback(dy: Any) -> tuple:
            x, axes, d, n_eff = _var_parts(a, axis, ddof, where, correction)
            g = expand(out_cotangent(result, dy), x.shape, axes, _keep(keepdims))
            scale = 1.0 / (n_eff * expand(y, x.shape, axes, _keep(keepdims))) if std else 2.0 / n_eff
            return (deliver(a, g * d * scale),)

        return result, pullback

    def frule(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NV, where=NV, mean=NV, correction=NV):
        y = fn(primal(a), **_var_setup(name, a, axis, dtype, out, ddof, keepdims, where, mean, correction))
        dx = dense_tangent(primal(a), tangent(a))
        if dx is None:
            return Dual(y, fit_tangent(NoTangent, y))
        x, axes, d, n_eff = _var_parts(a, axis, ddof, where, correction)
        dvar = np.sum(2.0 * np.real(np.conj(d) * dx) / n_eff, axis=axes, keepdims=_keep(keepdims))
        return Dual(y, fit_tangent(dvar / (2.0 * np.asarray(y)) if std else dvar, y))

    return rrule, frule


for _std, _method in ((False, "var"), (True, "std")):
    _r, _f = _variance(_std)
    rule(getattr(np, _method), (np.ndarray, _method))(_r)
    forward(getattr(np, _method), (np.ndarray, _method))(_f)


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


@rule(np.cumprod, (np.ndarray, "cumprod"))
def _cumprod_rrule(a, axis=None, dtype=None, out=None):
    no_out("numpy.cumprod", out)
    result = output(np.cumprod(primal(a), axis=primal(axis), dtype=primal(dtype)))

    def pullback(dy: Any) -> tuple:
        x, ax = _scan_input(a, axis)
        x = _conj(x)  # holomorphic: the adjoint uses conjugate partials
        g = np.asarray(out_cotangent(result, dy)).reshape(x.shape)
        y = np.cumprod(x, axis=ax)
        clean, first, y_skip, safe = _first_zero_parts(x, ax)
        # before the first zero: sum_{k>=i} g_k y_k / x_i; at it: sum_{k>=i} g_k y_skip_k; after: 0
        gx = np.where(clean, _reverse_cumsum(g * y, ax) / safe, np.where(first, _reverse_cumsum(g * y_skip, ax), 0))
        return (deliver(a, gx.reshape(np.shape(primal(a)))),)

    return result, pullback


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
    result = output(np.diff(primal(a), **_kw(n=n, axis=axis, prepend=prepend, append=append)))

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
    kw = _kw(n=n, axis=axis)
    y = np.diff(primal(a), **kw, **_kw(prepend=prepend, append=append))
    pieces, ax = _diff_pieces(a, axis, prepend, append)
    tangents = []
    for arg, piece in zip((prepend, a, append), pieces):
        if piece is not None:
            t = dense_tangent(primal(arg), tangent(arg))
            tangents.append(np.broadcast_to(zeros_or(t, piece), piece.shape))
    return Dual(y, fit_tangent(np.diff(np.concatenate(tangents, axis=ax), **kw), y))


def _trapezoid_parts(y_arg, x_arg, dx_arg, axis):
    """``(y, ax, d, d_shape_fn)``: spacings ``d`` broadcast along ``axis`` and the map that
    takes a cotangent of ``d`` back to ``x`` (or None when spacing is ``dx``)."""
    y = as_array(primal(y_arg))
    ax = int(primal(axis)) % y.ndim
    x = primal(x_arg)
    if x is None:
        return y, ax, np.asarray(primal(dx_arg)), None
    x = as_array(x)
    if x.ndim == 1:
        shape = [1] * y.ndim
        shape[ax] = x.shape[0] - 1
        return y, ax, np.diff(x).reshape(shape), lambda gd: _diff_adjoint(unbroadcast(gd, tuple(shape)).reshape(-1), 0)
    return y, ax, np.diff(x, axis=ax), lambda gd: _diff_adjoint(unbroadcast(gd, x.shape[:ax] + (x.shape[ax] - 1,) + x.shape[ax + 1:]), ax)


def _halves(y: np.ndarray, ax: int) -> tuple:
    lo = [slice(None)] * y.ndim
    hi = [slice(None)] * y.ndim
    lo[ax], hi[ax] = slice(None, -1), slice(1, None)
    return tuple(lo), tuple(hi)


def _trapezoid_rrule(y, x=None, dx=1.0, axis=-1):
    result = output(_trapezoid(primal(y), x=primal(x), dx=primal(dx), axis=primal(axis)))

    def pullback(dout: Any) -> tuple:
        yv, ax, d, to_x = _trapezoid_parts(y, x, dx, axis)
        g = np.expand_dims(np.asarray(out_cotangent(result, dout)), ax)
        lo, hi = _halves(yv, ax)
        t = unbroadcast(g * _conj(d) / 2.0, yv[lo].shape)
        gy = np.zeros(yv.shape, dtype=np.result_type(t, yv))
        gy[lo] += t
        gy[hi] += t
        gd = g * _conj(yv[lo] + yv[hi]) / 2.0
        r_y = deliver(y, gy)
        if to_x is None:
            return r_y, NoRData, deliver(dx, gd)
        return r_y, deliver(x, to_x(gd)), NoRData

    return result, pullback


def _trapezoid_frule(y, x=None, dx=1.0, axis=-1):
    out = _trapezoid(primal(y), x=primal(x), dx=primal(dx), axis=primal(axis))
    yv, ax, d, to_x = _trapezoid_parts(y, x, dx, axis)
    lo, hi = _halves(yv, ax)
    total = 0.0
    ty = dense_tangent(primal(y), tangent(y))
    if ty is not None:
        ty = np.asarray(ty)
        total = total + np.sum(d * (ty[lo] + ty[hi]) / 2.0, axis=ax)
    spacing = x if to_x is not None else dx
    ts = dense_tangent(primal(spacing), tangent(spacing))
    if ts is not None:
        dd = np.diff(np.asarray(ts), axis=0 if np.ndim(primal(x)) == 1 else ax) if to_x is not None else np.asarray(ts)
        if to_x is not None and np.ndim(primal(x)) == 1:
            dd = dd.reshape(d.shape)
        total = total + np.sum(dd * (yv[lo] + yv[hi]) / 2.0, axis=ax)
    return Dual(out, fit_tangent(total if ty is not None or ts is not None else NoTangent, out))


_trapezoid = getattr(np, "trapezoid", None) or getattr(np, "trapz")
for _name in ("trapezoid", "trapz"):
    if hasattr(np, _name):
        rule(getattr(np, _name))(_trapezoid_rrule)
        forward(getattr(np, _name))(_trapezoid_frule)


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
    result = output(np.average(primal(a), **_kw(axis=axis, weights=weights, keepdims=keepdims)))

    def pullback(dy: Any) -> tuple:
        if primal(weights) is None:
            x = as_array(primal(a))
            axes = axes_of(primal(axis), x.ndim)
            g = expand(out_cotangent(result, dy), x.shape, axes, _keep(keepdims))
            return (deliver(a, g / max(_count(None, x.shape, axes), 1)),)
        x, axes, wb, sw = _average_weights(a, axis, weights)
        g = expand(out_cotangent(result, dy), x.shape, axes, _keep(keepdims))
        avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
        r_a = deliver(a, g * _conj(wb / sw))
        gw = unbroadcast(g * _conj((x - avg) / sw), wb.shape).reshape(np.shape(primal(weights)))
        return r_a, NoRData, deliver(weights, gw)

    return result, pullback


@forward(np.average)
def _average_frule(a, axis=None, weights=None, returned=False, keepdims=NV):
    refuse("numpy.average", "returned", returned, False, "compute the sum of weights separately")
    y = np.average(primal(a), **_kw(axis=axis, weights=weights, keepdims=keepdims))
    da = dense_tangent(primal(a), tangent(a))
    if primal(weights) is None:
        dy = NoTangent if da is None else np.average(da, **_kw(axis=axis, keepdims=keepdims))
        return Dual(y, fit_tangent(dy, y))
    x, axes, wb, sw = _average_weights(a, axis, weights)
    dw = dense_tangent(primal(weights), tangent(weights))
    avg = np.sum(x * wb, axis=axes, keepdims=True) / sw
    num = 0.0
    if da is not None:
        num = num + da * wb
    if dw is not None:
        num = num + np.reshape(dw, wb.shape) * (x - avg)
    dy = np.sum(np.broadcast_to(num, x.shape) / sw, axis=axes, keepdims=_keep(keepdims))
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
# Second order
# --------------------------------------------------------------------------------------------
# The vjps are plain NumPy code that yuebing differentiates in forward mode; each gives the
# cotangent the pullback above gives (same ties, zeros and masks). ``keepdims``/``where``/
# ``initial`` arrive as constants (NumPy's "not given" marker when left out).


def _so_axes(axis: Any, ndim: int) -> tuple:
    """``axis`` as a sorted tuple of non-negative axes (``axes_of`` without a generator)."""
    if axis is None:
        return tuple(range(ndim))
    if ndim == 0:
        return ()
    if not isinstance(axis, (tuple, list)):
        return (int(axis) % ndim,)
    axes = []
    for a in axis:
        axes.append(int(a) % ndim)
    return tuple(sorted(axes))


def _so_keep(keepdims: Any) -> bool:
    return keepdims is not NV and bool(keepdims)


def _so_mask(where: Any, shape: tuple) -> Any:
    if where is NV or where is True:
        return None
    return np.broadcast_to(np.asarray(where, dtype=bool), shape)


def _so_expand(g: Any, shape: tuple, axes: tuple, keep: bool) -> Any:
    g = np.asarray(g)
    if not keep and axes:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, shape)


def _so_count(shape: tuple, axes: tuple) -> int:
    count = 1
    for ax in axes:
        count = count * shape[ax]
    return count


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
    axes = _so_axes(axis, x.ndim)
    keep = _so_keep(keepdims)
    y_kept = np.asarray(y) if keep else np.expand_dims(np.asarray(y), axes)
    hit = _so_equal(x, y_kept, nan)
    mask = _so_mask(where, x.shape)
    if mask is not None:
        hit = hit & mask
    count = np.sum(hit, axis=axes, keepdims=True)
    g_kept = np.asarray(g) if keep else np.expand_dims(np.asarray(g), axes)
    if initial is NV:
        return (_so_expand(g, x.shape, axes, keep) * (hit / np.maximum(count, 1)),)
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
    axes = _so_axes(axis, x.ndim)
    hi = np.max(x, axis=axes, keepdims=True)
    lo = np.min(x, axis=axes, keepdims=True)
    shares = _so_shares(x, hi, axes, None, False) - _so_shares(x, lo, axes, None, False)
    return (_so_expand(g, x.shape, axes, _so_keep(keepdims)) * shares,)


def _nan_reduction(g: Any, a: Any, axis: Any, keepdims: Any, where: Any, mean: bool) -> tuple:
    x = np.asarray(a)
    axes = _so_axes(axis, x.ndim)
    finite = ~np.isnan(x)
    mask = _so_mask(where, x.shape)
    if mask is not None:
        finite = finite & mask
    w = finite / np.maximum(np.sum(finite, axis=axes, keepdims=True), 1) if mean else finite
    return (_so_expand(g, x.shape, axes, _so_keep(keepdims)) * w,)


def _nansum_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    if initial is NV:
        return _nan_reduction(g, a, axis, keepdims, where, False)
    return (*_nan_reduction(g, a, axis, keepdims, where, False), None, None, None, None, np.sum(g))


def _nanmean_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, where=NV):
    return _nan_reduction(g, a, axis, keepdims, where, True)


def _prod_vjp(g, y, a, axis=None, dtype=None, out=None, keepdims=NV, initial=NV, where=NV):
    x = np.asarray(a)
    axes = _so_axes(axis, x.ndim)
    mask = _so_mask(where, x.shape)
    factors = x if mask is None else np.where(mask, x, 1)
    partial = prod_partials(factors, axes)  # products of the others: no division, exact at zeros
    if mask is not None:
        partial = partial * mask
    ge = _so_expand(g, x.shape, axes, _so_keep(keepdims))
    if initial is NV:
        return (ge * partial,)
    return (ge * (partial * initial), None, None, None, None, _so_initial_of_prod(g, factors, axes, keepdims))


def _so_initial_of_prod(g: Any, factors: Any, axes: tuple, keepdims: Any) -> Any:
    """The cotangent of ``prod``'s ``initial=``: ``g`` times the product of the elements. (Its own
    function: third order refuses a cotangent map that names its primitive.)"""
    return np.sum(g * np.prod(factors, axis=axes, keepdims=_so_keep(keepdims)))


def _cumprod_vjp(g, y, a, axis=None, dtype=None, out=None):
    x0 = np.asarray(a)
    if axis is None:
        x = x0.ravel()
        ax = 0
    else:
        x = x0
        ax = int(axis) % max(x0.ndim, 1)
    gs = np.asarray(g).reshape(x.shape)
    if np.all(x != 0):
        gx = _reverse_cumsum(gs * np.cumprod(x, axis=ax), ax) / x
    else:
        # exact at zeros: gx_i = (prod_{j<i} x_j) * s_i, s_i = g_i + x_{i+1} s_{i+1}
        xm = np.moveaxis(x, ax, -1)
        gm = np.moveaxis(gs, ax, -1)
        n = xm.shape[-1]
        left = np.cumprod(np.concatenate([np.ones_like(xm[..., :1]), xm[..., :-1]], axis=-1), axis=-1)
        s = gm[..., n - 1]
        parts = [s]
        for i in range(n - 2, -1, -1):
            s = gm[..., i] + xm[..., i + 1] * s
            parts.append(s)
        parts.reverse()
        gx = np.moveaxis(left * np.stack(parts, axis=-1), -1, ax)
    return (gx.reshape(x0.shape),)


def _variance_cotangent(g: Any, y: Any, a: Any, axis: Any, ddof: Any, keepdims: Any, where: Any,
                        correction: Any, std: bool) -> tuple:
    x = np.asarray(a)
    axes = _so_axes(axis, x.ndim)
    keep = _so_keep(keepdims)
    mask = _so_mask(where, x.shape)
    if mask is None:
        d = x - np.mean(x, axis=axes, keepdims=True)
        count = _so_count(x.shape, axes)
    else:
        d = np.where(mask, x - np.mean(x, axis=axes, keepdims=True, where=mask), 0)
        count = np.sum(mask, axis=axes, keepdims=True)
    n_eff = np.asarray(count - (ddof if correction is NV else correction), dtype=float)
    ge = _so_expand(g, x.shape, axes, keep)
    if std:
        return (ge * d / (n_eff * _so_expand(y, x.shape, axes, keep)),)
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
    axes = _so_axes(axis, x.ndim)
    return (_so_expand(g, x.shape, axes, bool(keepdims)) * _median_shares(x, axes),)


def _average_vjp(g, y, a, axis=None, weights=None, returned=False, keepdims=NV):
    x = np.asarray(a)
    axes = _so_axes(axis, x.ndim)
    ge = _so_expand(g, x.shape, axes, _so_keep(keepdims))
    if weights is None:
        return (ge / max(_so_count(x.shape, axes), 1), None, None)
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


def _trapezoid_vjp(g_, out_, y, x=None, dx=1.0, axis=-1):
    yv = np.asarray(y)
    ax = int(axis) % yv.ndim
    ym = np.moveaxis(yv, ax, -1)  # the integration axis last
    ge = np.expand_dims(np.asarray(g_), -1)
    if x is None:
        d = np.asarray(dx)
    elif np.ndim(x) == 1:
        d = np.diff(np.asarray(x))
    else:
        d = np.diff(np.moveaxis(np.asarray(x), ax, -1), axis=-1)
    half = np.broadcast_to(ge * d / 2.0, ym[..., :-1].shape)
    edge = np.zeros_like(half[..., :1])
    gy = np.moveaxis(np.concatenate([half, edge], axis=-1) + np.concatenate([edge, half], axis=-1), -1, ax)
    gd = ge * (ym[..., :-1] + ym[..., 1:]) / 2.0  # the cotangent of the spacings
    if x is None:
        return (gy, None, gd)
    edge = np.zeros_like(gd[..., :1])
    gx = np.concatenate([edge, gd], axis=-1) - np.concatenate([gd, edge], axis=-1)  # adjoint of diff
    return (gy, gx if np.ndim(x) == 1 else np.moveaxis(gx, -1, ax), None)


for _fn in (np.max, np.min, np.amax, np.amin, np.ndarray.max, np.ndarray.min):
    with_vjp(_fn, _max_vjp)
with_vjp(np.nanmax, _nanmax_vjp)
with_vjp(np.nanmin, _nanmax_vjp)
with_vjp(np.ptp, _ptp_vjp)
with_vjp(np.nansum, _nansum_vjp)
with_vjp(np.nanmean, _nanmean_vjp)
with_vjp(np.prod, _prod_vjp)
with_vjp(np.ndarray.prod, _prod_vjp)
with_vjp(np.cumprod, _cumprod_vjp)
with_vjp(np.ndarray.cumprod, _cumprod_vjp)
with_vjp(np.var, _var_vjp)
with_vjp(np.ndarray.var, _var_vjp)
with_vjp(np.std, _std_vjp)
with_vjp(np.ndarray.std, _std_vjp)
with_vjp(np.median, _median_vjp)
with_vjp(np.average, _average_vjp)
with_vjp(_trapezoid, _trapezoid_vjp)
linear(np.sum, (np.ndarray, "sum"), data=(5, "initial"))  # an int initial= is a value
linear(np.mean, np.cumsum, np.trace, (np.ndarray, "mean"), (np.ndarray, "cumsum"), (np.ndarray, "trace"))
linear(np.diff, data=(3, 4, "prepend", "append"))  # int prepend=/append= are values


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _with_ties() -> np.ndarray:
    x = randn(3, 4)
    x[1, 2] = x[1, 0] = x[1].max() + 1.0  # a tie for the max of row 1
    return x


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
    Case(np.cumsum, randn(), name="numpy.cumsum(float)"),
    Case(np.cumprod, np.array(0.5)),
    Case(np.var, np.array([randn(), randn()], dtype=np.float32)),
    Case(np.median, randn(), name="numpy.median(float)"),
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
    Expect(np.median, np.array([3.0, 1.0, 2.0, 2.0]), expected=[0, 0, 0.5, 0.5], name="numpy.median(tied middle)"),
    Expect(np.max, np.array([np.nan, 1.0]), expected=[1.0, 0.0], name="numpy.max(nan propagates: gradient to the nan)"),
    Case(np.ptp, randn(3, 4), kwargs={"axis": 1}),
    # logsumexp's shift m = np.max(x, keepdims=True): its cotangent cancels exactly in
    # m + log(sum(exp(x - m))), so composition needs no rule; this checks the max it uses.
    Case(np.max, randn(4, 6), kwargs={"axis": 1, "keepdims": True}, name="numpy.max(logsumexp shift)"),
    # var / std
    Case(np.var, randn(3, 4)),
    Case(np.var, randn(3, 4), kwargs={"axis": 0, "ddof": 1}),
    Case(np.std, randn(3, 4), kwargs={"axis": (0, 1), "keepdims": True}),
    Case(np.std, randn(5, dtype=np.float32), kwargs={"correction": 1}),
    Case(np.var, randc(4)),
    Case(np.std, randn(3, 4), kwargs={"axis": 1, "where": _MASK}),
    Case(np.ndarray.std, randn(3, 4), kwargs={"axis": 1}),
    Case(np.ndarray.var, randn(3, 4), kwargs={"ddof": 1}),
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
    Case(_trapezoid, randc(5), None, 0.5),
    Case(_trapezoid, randn(5, dtype=np.float32), kwargs={"dx": 0.3}),
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
