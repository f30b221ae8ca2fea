"""``scipy.ndimage``: the linear filters (``correlate``, ``convolve``, ``correlate1d``,
``convolve1d``, ``uniform_filter``, ``uniform_filter1d``, ``gaussian_filter``,
``gaussian_filter1d``) in every ``mode=``, and ``map_coordinates`` (``order <= 3``) in the image
and in the coordinates.

* The filters are *derived* from definitions in covered functions: the input extended along each
  filtered axis by ``np.pad`` (ndimage's 'reflect'/'grid-mirror' is NumPy's 'symmetric', 'mirror'
  is 'reflect', 'nearest' is 'edge', 'wrap'/'grid-wrap' is 'wrap', 'constant'/'grid-constant' is
  constant ``cval``), by ``size // 2 + origin`` before and the rest after, then a ``valid``
  ``scipy.signal.convolve`` with the flipped weights (``correlate`` conjugates complex weights,
  ``convolve`` does not: SciPy's conventions). So they are differentiable in the input, the
  weights, ``cval`` and, for the Gaussian filters, in ``sigma`` (SciPy's kernel formula, the
  radius ``int(truncate * sigma + 0.5)`` held fixed), in every mode and at second order.
  Checked value for value against SciPy in tests/test_scipy_ndimage.py.
* ``map_coordinates``: the spline coefficients (``prefilter``: ``spline_filter1d`` along each axis,
  a linear map with its own rule whose transpose is the dense per-axis matrix, after SciPy's
  12-sample padding for 'nearest' and 'grid-constant') interpolated at the coordinates by B-spline
  weights written in NumPy, with ndimage's mapping of outside coordinates for each mode
  (``_mapped``) and its edge indexing (``_edge_index``). Differentiable in the image, in the
  coordinates (the weights' derivative; 0 for ``order=0`` and where a mode clamps) and in ``cval``.
  ``order`` 4 and 5 are refused.
* An integer result (an integer input with no ``output=`` dtype) has no derivative (NumPy's
  rule: integer arrays have ``NoTangent``): SciPy computes it and nothing flows back. ``output=``
  an array is refused (assign the result instead); ``output=`` a float dtype is honoured.

Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from . import core
from ..tangents import NoFData, NoRData, NoTangent
from .cases import Case, randc, randn, randu
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .second_order import defined_by

try:
    import scipy.ndimage as ndi
    import scipy.signal as ss
except ImportError:  # pragma: no cover - SciPy is optional
    ndi = None

_PAD = {"reflect": "symmetric", "grid-mirror": "symmetric", "mirror": "reflect", "nearest": "edge",
        "wrap": "wrap", "grid-wrap": "wrap", "constant": "constant", "grid-constant": "constant"}


# --------------------------------------------------------------------------------------------
# Registering: a definition, SciPy's own checks, integer results without a derivative
# --------------------------------------------------------------------------------------------


def _check_output(name: str, target: Callable, values: list, keywords: dict) -> None:
    output = inspect.signature(target).bind(*values, **keywords).arguments.get("output")
    if isinstance(output, np.ndarray):
        raise RuleArgumentError(f"scipy.ndimage.{name}: yuebing does not differentiate output= an array (a write "
                                "into it); assign the result instead (out[...] = f(x)), or pass output= a dtype")


def _derived(target: Callable, definition: Callable) -> None:
    """``target`` differentiated as ``definition`` in every mode, after SciPy's own call on the
    primals (its errors; an integer result is returned as SciPy computed it, with no derivative)."""
    name = target.__name__

    def plain(args: tuple, kwargs: dict) -> Any:
        values = [primal(a) for a in args]
        keywords = {k: primal(v) for k, v in kwargs.items()}
        _check_output(name, target, values, keywords)
        result = target(*values, **keywords)
        return result if result.dtype.kind not in "fc" else None

    def rrule_(*args: Any, **kwargs: Any) -> Any:
        integer = plain(args, kwargs)
        if integer is not None:
            return CoDual(integer, NoFData), lambda dy: (NoRData,) * (1 + len(args) + len(kwargs))
        return core.rrule(definition, *args, **kwargs)

    def frule_(*args: Any, **kwargs: Any) -> Any:
        integer = plain(args, kwargs)
        if integer is not None:
            return Dual(integer, NoTangent)
        return core.frule(definition, *args, **kwargs)

    rrule_.__qualname__ = frule_.__qualname__ = f"scipy.ndimage.{name} as {definition.__qualname__}"
    register_rrule(target, rrule_)
    register_frule(target, frule_)
    defined_by(target, definition)


# --------------------------------------------------------------------------------------------
# The filters: pad, then a valid convolution
# --------------------------------------------------------------------------------------------


def _sequence(value: Any, n: int) -> list:
    """ndimage's ``_normalize_sequence``: a scalar (or a string) repeated, a sequence as given."""
    if isinstance(value, str) or np.ndim(value) == 0:
        return [value] * n
    return list(value)


def _axes(axes: Any, ndim: int) -> list:
    if axes is None:
        return list(range(ndim))
    if np.ndim(axes) == 0:
        return [int(axes) % ndim]
    return [int(a) % ndim for a in axes]


def _extend(x, widths, mode, cval):
    """``x`` extended by ``widths`` (one pair per axis) as ndimage's filters extend it."""
    if _PAD[mode] == "constant":
        return np.pad(x, widths, mode="constant", constant_values=cval)
    return np.pad(x, widths, mode=_PAD[mode])


def _correlate_axes(x, w, axes, mode, cval, origins, conjugate):
    """``sum_j w[j] x[i + j - (size // 2 + origin)]`` over the filtered ``axes`` (``w`` has one
    dimension per filtered axis), ``x`` extended by ``mode``."""
    widths = [(0, 0)] * x.ndim
    shape = [1] * x.ndim
    for ax, n, origin in zip(axes, np.shape(w), origins):
        left = n // 2 + int(origin)
        widths[ax] = (left, n - 1 - left)
        shape[ax] = n
    kernel = np.conj(w) if conjugate and np.iscomplexobj(w) else w
    kernel = np.reshape(np.flip(kernel), shape)
    return ss.convolve(_extend(x, widths, mode, cval), kernel, mode="valid")


def _cast(y, x, output):
    """The result in ndimage's output dtype (``output`` a dtype, else the input's float dtype)."""
    if output is not None:
        return y.astype(output)
    if np.asarray(x).dtype.kind in "fc" and y.dtype != np.asarray(x).dtype and np.asarray(x).dtype.kind == y.dtype.kind:
        return y.astype(np.asarray(x).dtype)
    return y


def _check_mode(name: str, mode: Any) -> None:
    if mode not in _PAD:
        raise RuleArgumentError(f"scipy.ndimage.{name}: unknown mode={mode!r}; use one of {sorted(_PAD)}")


def _correlate(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """``scipy.ndimage.correlate`` (complex weights conjugated, as SciPy does)."""
    x, w = np.asarray(input), np.asarray(weights)
    ax = _axes(axes, x.ndim)
    _check_mode("correlate", mode)
    y = _correlate_axes(x, w, ax, mode, cval, _sequence(origin, len(ax)), True)
    return _cast(y, x, output)


def _convolve(input, weights, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    """``scipy.ndimage.convolve``: correlation with the flipped weights, origins mirrored."""
    x, w = np.asarray(input), np.asarray(weights)
    ax = _axes(axes, x.ndim)
    _check_mode("convolve", mode)
    origins = [-int(o) - (1 - n % 2) for o, n in zip(_sequence(origin, len(ax)), np.shape(w))]
    y = _correlate_axes(x, np.conj(np.flip(w)) if np.iscomplexobj(w) else np.flip(w), ax, mode, cval, origins, True)
    return _cast(y, x, output)


def _correlate1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    x = np.asarray(input)
    _check_mode("correlate1d", mode)
    y = _correlate_axes(x, np.asarray(weights), [int(axis) % x.ndim], mode, cval, [origin], True)
    return _cast(y, x, output)


def _convolve1d(input, weights, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    w = np.asarray(weights)
    origin = -int(origin) - (1 - w.shape[0] % 2)
    x = np.asarray(input)
    _check_mode("convolve1d", mode)
    y = _correlate_axes(x, np.flip(w), [int(axis) % x.ndim], mode, cval, [origin], False)
    return _cast(y, x, output)


def _uniform_filter1d(input, size, axis=-1, output=None, mode="reflect", cval=0.0, origin=0):
    x = np.asarray(input)
    _check_mode("uniform_filter1d", mode)
    weights = np.ones(int(size)) / int(size)
    return _cast(_correlate_axes(x, weights, [int(axis) % x.ndim], mode, cval, [origin], False), x, output)


def _uniform_filter(input, size=3, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    x = np.asarray(input)
    ax = _axes(axes, x.ndim)
    sizes, modes, origins = _sequence(size, len(ax)), _sequence(mode, len(ax)), _sequence(origin, len(ax))
    y = x
    for a, s, m, o in zip(ax, sizes, modes, origins):
        if int(s) > 1:
            _check_mode("uniform_filter", m)
            y = _cast(_correlate_axes(y, np.ones(int(s)) / int(s), [a], m, cval, [o], False), x, output)
    return y.copy() if y is x else y


def _gaussian_kernel1d(sigma, order, radius):
    """SciPy's ``_gaussian_kernel1d``: the sampled Gaussian, normalised, times the polynomial of
    its ``order``-th derivative."""
    exponents = np.arange(order + 1)
    sigma2 = sigma * sigma
    x = np.arange(-radius, radius + 1)
    phi = np.exp(-0.5 / sigma2 * x ** 2)
    phi = phi / phi.sum()
    if order == 0:
        return phi
    q = np.zeros(order + 1)
    q[0] = 1.0
    derivative = np.eye(order + 1, k=1) * exponents  # D @ q(x) = q'(x): D[i, i + 1] = i + 1
    product = np.eye(order + 1, k=-1) * (-1.0 / sigma2)  # P @ q(x) = q(x) * p'(x)
    step = derivative + product
    for _ in range(order):
        q = step @ q
    return (x[:, None] ** exponents) @ q * phi


def _gaussian_weights(sigma, order, truncate, radius):
    lw = int(truncate * sigma + 0.5) if radius is None else int(radius)
    if lw < 0:
        raise RuleArgumentError("scipy.ndimage.gaussian_filter: radius must be a nonnegative integer")
    return np.flip(_gaussian_kernel1d(sigma, int(order), lw))


def _gaussian_filter1d(input, sigma, axis=-1, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *,
                       radius=None):
    x = np.asarray(input)
    _check_mode("gaussian_filter1d", mode)
    weights = _gaussian_weights(sigma, order, truncate, radius)
    return _cast(_correlate_axes(x, weights, [int(axis) % x.ndim], mode, cval, [0], False), x, output)


def _gaussian_filter(input, sigma, order=0, output=None, mode="reflect", cval=0.0, truncate=4.0, *, radius=None,
                     axes=None):
    x = np.asarray(input)
    ax = _axes(axes, x.ndim)
    n = len(ax)
    sigmas = [sigma] * n if np.ndim(sigma) == 0 else [sigma[i] for i in range(n)]
    orders, modes, radii = _sequence(order, n), _sequence(mode, n), _sequence(radius, n)
    y = x
    for a, s, o, m, r in zip(ax, sigmas, orders, modes, radii):
        if s > 1e-15:
            _check_mode("gaussian_filter", m)
            weights = _gaussian_weights(s, o, truncate, r)
            y = _cast(_correlate_axes(y, weights, [a], m, cval, [0], False), x, output)
    return y.copy() if y is x else y


if ndi is not None:
    for _target, _definition in ((ndi.correlate, _correlate), (ndi.convolve, _convolve), (ndi.correlate1d, _correlate1d),
                                 (ndi.convolve1d, _convolve1d), (ndi.uniform_filter1d, _uniform_filter1d),
                                 (ndi.uniform_filter, _uniform_filter), (ndi.gaussian_filter1d, _gaussian_filter1d),
                                 (ndi.gaussian_filter, _gaussian_filter)):
        _derived(_target, _definition)


# --------------------------------------------------------------------------------------------
# Cases (values against SciPy in every mode, user functions and refusals in tests/test_scipy_ndimage.py)
# --------------------------------------------------------------------------------------------


def _filter_cases() -> list:
    cases = []
    for mode in _PAD:
        cases.append(Case(ndi.correlate, randn(4, 5), randn(3, 2), kwargs={"mode": mode, "cval": 0.5},
                          name=f"correlate(mode={mode!r})"))
    for mode in ("reflect", "mirror", "nearest", "wrap", "constant"):
        cases.append(Case(ndi.gaussian_filter, randn(5, 4), 0.8, kwargs={"mode": mode}, name=f"gaussian_filter(mode={mode!r})"))
    return cases + [
        Case(ndi.correlate, randc(4, 4), randc(2, 3), kwargs={"origin": (0, -1)}),
        Case(ndi.correlate, randn(3, 4, 2), randn(2, 2, 2), kwargs={"mode": "mirror"}),
        Case(ndi.correlate, randn(6, 3), randn(3), kwargs={"axes": 0, "mode": "wrap"}, name="correlate(axes=0)"),
        Case(ndi.convolve, randn(5, 5), randn(2, 3)),
        Case(ndi.convolve, randn(5, 4), randn(3, 3), None, "constant", 0.7, (1, -1), name="convolve(cval positional)"),
        Case(ndi.convolve, [[1.0, 2.0, 0.5], [0.0, -1.0, 3.0]], randn(2, 2), kwargs={"mode": "nearest"}),
        Case(ndi.correlate1d, randn(5, 4), randn(4), 0, kwargs={"origin": -1, "mode": "grid-wrap"}),
        Case(ndi.convolve1d, randn(7), randn(3), kwargs={"mode": "mirror"}),
        Case(ndi.uniform_filter, randn(5, 6), 3),
        Case(ndi.uniform_filter, randn(5, 6), (2, 4), kwargs={"mode": ["wrap", "constant"], "cval": 0.3}),
        Case(ndi.uniform_filter1d, randn(4, 7), 4, kwargs={"axis": 1, "origin": -2, "mode": "nearest"}),
        Case(ndi.uniform_filter, randn(6, dtype=np.float32), 3),
        Case(ndi.gaussian_filter, randn(6, 5), (0.6, 1.4), kwargs={"order": (0, 1), "mode": "nearest"}),
        Case(ndi.gaussian_filter, randn(4, 6), 1.1, kwargs={"axes": (1,), "radius": 2}),
        Case(ndi.gaussian_filter, randn(3, 4, 5), 0.7, kwargs={"order": 2, "truncate": 3.0}),
        Case(ndi.gaussian_filter, [0.5, 1.5, -1.0, 2.0, 0.0], 1.0, name="gaussian_filter(list)"),
        Case(ndi.gaussian_filter1d, randn(8), 1.3),
        Case(ndi.gaussian_filter1d, randn(6, 4), randu(low=0.7, high=1.5), 0, 1, kwargs={"mode": "wrap"},
             name="gaussian_filter1d(in sigma, order 1)"),
        Case(ndi.gaussian_filter1d, randc(7), 0.9, kwargs={"mode": "constant", "cval": 0.2}),
    ]


CASES = _filter_cases() if ndi is not None else []
