"""``scipy.ndimage``: the linear filters (``correlate``, ``convolve``, ``correlate1d``,
``convolve1d``, ``uniform_filter``, ``uniform_filter1d``, ``gaussian_filter``,
``gaussian_filter1d``) in every ``mode=``, the rank filters (``median_filter``, ``rank_filter``,
``minimum_filter``, ``maximum_filter`` with ``size=``: the ranked element of each neighbourhood,
extended as the linear filters are, selected by ``np.sort``), and ``map_coordinates`` (``order <= 3``) in the image
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
* ``zoom``: linear in the image and in ``cval`` for a fixed zoom, and separable: the image times
  one matrix per axis (SciPy's zoom of the identity along that axis, cached), plus ``cval`` times
  the zoom of a zero image; the result is checked against SciPy's and refused if it differs.
* An integer result (an integer input with no ``output=`` dtype) has no derivative (NumPy's
  rule: integer arrays have ``NoTangent``): SciPy computes it and nothing flows back. ``output=``
  an array is refused (assign the result instead); ``output=`` a float dtype is honoured.

Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.
"""
from __future__ import annotations

import functools
import inspect
import itertools
from typing import Any, Callable

import numpy as np

from . import core
from ..tangents import NoFData, NoRData, NoTangent
from .cases import Case, randc, randn, randu
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .numpy_arguments import deliver, dense_tangent, forward, rule
from .declare import nondifferentiable
from .second_order import defined_by, linear
from .util import call_on_primals, defined_rrule, fit_tangent, out_cotangent, output, tangent

try:
    import scipy.ndimage as ndi
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
        result = call_on_primals(target, args, kwargs)
        return result if result.dtype.kind not in "fc" else None

    def rrule_(*args: Any, **kwargs: Any) -> Any:
        integer = plain(args, kwargs)
        if integer is not None:
            return CoDual(integer, NoFData), lambda dy: (NoRData,) * (1 + len(args) + len(kwargs))
        return defined_rrule(definition, *args, **kwargs)

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
    import scipy.signal as ss  # here, not at the top: loading these rules must not import scipy.signal (and with
    # it scipy.stats and the rules of both), which a user of scipy.ndimage has not asked for
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



# --------------------------------------------------------------------------------------------
# map_coordinates: spline coefficients (a linear primitive), B-spline weights in NumPy
# --------------------------------------------------------------------------------------------

#: how ndimage's geometric_transform reads each mode: whether an outside coordinate is mapped
#: back inside (and how), and how indices beyond the edge are read ('mirror' whole-sample,
#: 'reflect' half-sample, 'wrap', 'nearest' clamped, 'cval'); checked against SciPy in the tests
_INTERPOLATION = {"constant": ("cval", "mirror"), "grid-constant": (None, "cval"), "nearest": (None, "nearest"),
                  "reflect": ("reflect", "reflect"), "grid-mirror": ("reflect", "reflect"),
                  "mirror": ("mirror", "mirror"), "wrap": ("wrap", "mirror"), "grid-wrap": ("grid-wrap", "wrap")}


@functools.lru_cache(maxsize=64)
def _spline_matrix(size: int, order: int, mode: str) -> np.ndarray:
    """The matrix of ``spline_filter1d`` on lines of ``size`` samples (column j: the filter of e_j)."""
    matrix = ndi.spline_filter1d(np.eye(size), order, axis=0, output=np.float64, mode=mode)
    matrix.flags.writeable = False
    return matrix


def _spline_filter1d(x, order, axis, mode):
    """``ndimage.spline_filter1d`` in float64 (complex: the real and imaginary parts)."""
    if np.iscomplexobj(x):
        return (ndi.spline_filter1d(np.real(x), order, axis, np.float64, mode)
                + 1j * ndi.spline_filter1d(np.imag(x), order, axis, np.float64, mode))
    return ndi.spline_filter1d(x, order, axis, np.float64, mode)


def _spline_filter_rules() -> None:
    @rule(_spline_filter1d)
    def _rrule(x, order, axis, mode):
        xs, o, ax, md = primal(x), primal(order), primal(axis), primal(mode)
        out = output(_spline_filter1d(xs, o, ax, md))

        def pullback(dy: Any) -> tuple:
            g = np.moveaxis(out_cotangent(out, dy), ax, 0)
            matrix = _spline_matrix(g.shape[0], o, md)
            return (deliver(x, np.moveaxis(np.tensordot(matrix.T, g, axes=1), 0, ax)),)

        return out, pullback

    @forward(_spline_filter1d)
    def _frule(x, order, axis, mode):
        y = _spline_filter1d(primal(x), primal(order), primal(axis), primal(mode))
        t = dense_tangent(primal(x), tangent(x))
        ty = NoTangent if t is None else _spline_filter1d(t, primal(order), primal(axis), primal(mode))
        return Dual(y, fit_tangent(ty, y))

    linear(_spline_filter1d)


def _map_inside(c, size, how):
    """ndimage's ``map_coordinate``: an outside coordinate mapped back into ``[0, size - 1]``
    (slope +-1), or -1 for 'cval' (the constant is returned there)."""
    below, above = c < 0, c > size - 1
    if how is None:
        return c
    if how == "cval":
        return np.where(below | above, -1.0, c)
    if size <= 1:
        return np.where(below | above, 0.0, c)
    if how == "mirror":
        period = 2 * size - 2
        low = period * np.trunc(-c / period) + c
        low = np.where(low <= 1 - size, low + period, -low)
        high = c - period * np.trunc(c / period)
        high = np.where(high >= size, period - high, high)
    elif how == "reflect":
        period = 2 * size
        low = np.where(c < -period, period * np.trunc(-c / period) + c, c)
        low = np.where(low < -size, low + period, -low - 1)
        high = c - period * np.trunc(c / period)
        high = np.where(high >= size, period - high - 1, high)
    elif how == "wrap":
        period = size - 1
        low = c + period * (np.trunc(-c / period) + 1)
        high = c - period * np.trunc(c / period)
    else:  # grid-wrap
        low = c + size * (np.trunc((-1 - c) / size) + 1)
        high = c - size * np.trunc(c / size)
    return np.where(below, low, np.where(above, high, c))


def _edge_index(index, size, how):
    """Indices beyond the edge read as ndimage reads them ('cval': clamped, masked by the caller)."""
    if size <= 1:
        return np.zeros_like(index)
    if how == "mirror":
        period = 2 * size - 2
        folded = np.abs(index) % period
        return np.where(folded >= size, period - folded, folded)
    if how == "reflect":
        period = 2 * size
        folded = np.where(index < 0, -index - 1, index) % period
        return np.where(folded >= size, period - folded - 1, folded)
    if how == "wrap":
        return index % size
    return np.clip(index, 0, size - 1)


def _bspline(t, order):
    """The centred B-spline of ``order`` at ``t``."""
    a = np.abs(t)
    if order == 1:
        return np.maximum(1.0 - a, 0.0)
    if order == 2:
        return np.where(a < 0.5, 0.75 - a * a, np.where(a < 1.5, 0.5 * (1.5 - a) ** 2, 0.0))
    return np.where(a < 1.0, 2.0 / 3.0 - a * a + 0.5 * a ** 3, np.where(a < 2.0, (2.0 - a) ** 3 / 6.0, 0.0))


def _interpolate(c, coordinates, order, mode, cval):
    """``sum_k c[k] prod_d B(x_d - k_d)`` over the ``(order + 1) ** ndim`` nearest nodes."""
    how_map, how_edge = _INTERPOLATION[mode]
    outside = np.zeros(np.shape(coordinates)[1:], dtype=bool)
    nodes, weights = [], []
    for d in range(c.ndim):
        x = _map_inside(coordinates[d], c.shape[d], how_map)
        if how_map == "cval":
            outside = outside | (x <= -1.0)
        start = (np.floor(x) if order % 2 else np.floor(x + 0.5)).astype(np.intp) - order // 2
        nodes.append([start + j for j in range(order + 1)])
        weights.append([np.ones(np.shape(x)) if order == 0 else _bspline(x - (start + j), order)
                        for j in range(order + 1)])
    total = 0.0
    for combo in itertools.product(range(order + 1), repeat=c.ndim):
        raw = [nodes[d][combo[d]] for d in range(c.ndim)]
        value = c[tuple(_edge_index(raw[d], c.shape[d], how_edge) for d in range(c.ndim))]
        if how_edge == "cval":
            inside = np.ones(np.shape(value), dtype=bool)
            for d in range(c.ndim):
                inside = inside & (raw[d] >= 0) & (raw[d] < c.shape[d])
            value = np.where(inside, value, cval)
        for d in range(c.ndim):
            value = value * weights[d][combo[d]]
        total = total + value
    return np.where(outside, cval, total) if how_map == "cval" else total


def _map_coordinates(input, coordinates, output=None, order=3, mode="constant", cval=0.0, prefilter=True):
    """``scipy.ndimage.map_coordinates`` for ``order <= 3``."""
    if int(order) > 3:
        raise RuleArgumentError(f"scipy.ndimage.map_coordinates: yuebing differentiates order <= 3, not order={order}; "
                                "use order=3 (cubic splines)")
    if mode not in _INTERPOLATION:
        raise RuleArgumentError(f"scipy.ndimage.map_coordinates: unknown mode={mode!r}; use one of {sorted(_INTERPOLATION)}")
    x = np.asarray(input)
    coords = np.asarray(coordinates)
    c = x
    if prefilter and order > 1:
        pad = 12 if mode in ("nearest", "grid-constant") else 0  # SciPy's pre-padding for these modes
        if pad and mode == "nearest":
            c = np.pad(c, pad, mode="edge")
        elif pad:
            c = np.pad(c, pad, mode="constant", constant_values=cval)
        for axis in range(c.ndim):
            c = _spline_filter1d(c, order, axis, mode)
        coords = coords + pad
    y = _interpolate(c, coords, int(order), mode, cval)
    return _cast(np.asarray(y), x, output)


def _windows(x, sizes, axes, modes, cval, origins):
    """Each element's neighbourhood (``size // 2 + origin`` before it on each filtered axis), ``x``
    extended by ``mode``, flattened on a last axis."""
    shape = [1] * x.ndim
    y = x
    for ax, n, mode, origin in zip(axes, sizes, modes, origins):
        _check_mode("rank filters", mode)
        widths = [(0, 0)] * x.ndim
        widths[ax] = (int(n) // 2 + int(origin), int(n) - 1 - int(n) // 2 - int(origin))
        y = _extend(y, widths, mode, cval)
        shape[ax] = int(n)
    windows = np.lib.stride_tricks.sliding_window_view(y, shape)
    return np.reshape(windows, x.shape + (-1,))


def _ranked(name, input, rank, size, footprint, output, mode, cval, origin, axes):
    """The element of rank ``rank`` (negative: from the top) of each neighbourhood: a selection,
    whose derivative is that element's."""
    if footprint is not None:
        raise RuleArgumentError(f"scipy.ndimage.{name}: yuebing differentiates the filter with size=, not "
                                "footprint=; pass size= (a box)")
    x = np.asarray(input)
    ax = _axes(axes, x.ndim)
    w = _windows(x, _sequence(size, len(ax)), ax, _sequence(mode, len(ax)), cval, _sequence(origin, len(ax)))
    return _cast(np.sort(w, axis=-1)[..., int(rank)], x, output)


def _box(size, x, axes):
    """The number of elements of a neighbourhood (0 without ``size``: a footprint, refused)."""
    if size is None:
        return 0
    return int(np.prod(_sequence(size, len(_axes(axes, np.ndim(x))))))


def _median_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *, axes=None):
    rank = _box(size, input, axes) // 2
    return _ranked("median_filter", input, rank, size, footprint, output, mode, cval, origin, axes)


def _rank_filter(input, rank, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *,
                 axes=None):
    return _ranked("rank_filter", input, rank, size, footprint, output, mode, cval, origin, axes)


def _minimum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *,
                    axes=None):
    return _ranked("minimum_filter", input, 0, size, footprint, output, mode, cval, origin, axes)


def _maximum_filter(input, size=None, footprint=None, output=None, mode="reflect", cval=0.0, origin=0, *,
                    axes=None):
    return _ranked("maximum_filter", input, -1, size, footprint, output, mode, cval, origin, axes)


# --------------------------------------------------------------------------------------------
# zoom: linear in the image and in cval for a fixed zoom, one matrix per axis
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=64)
def _axis_matrix(n: int, factor: float, order: int, mode: str, prefilter: bool, grid_mode: bool) -> np.ndarray:
    """The matrix of ``zoom`` along one axis of length ``n``: SciPy's zoom of the identity along it
    (the other axis kept by a factor of 1), read-only (shared by every call)."""
    w = ndi.zoom(np.eye(n), (factor, 1.0), order=order, mode=mode, cval=0.0, prefilter=prefilter, grid_mode=grid_mode)
    w.setflags(write=False)
    return w


def _zoom_matrices(shape: tuple, zoom: Any, order: int, mode: str, prefilter: bool, grid_mode: bool) -> list:
    factors = np.broadcast_to(np.asarray(zoom, dtype=float), (len(shape),))
    return [_axis_matrix(int(n), float(z), int(order), mode, bool(prefilter), bool(grid_mode))
            for n, z in zip(shape, factors)]


def _zoom_of_cval(shape: tuple, zoom: Any, order: int, mode: str, prefilter: bool, grid_mode: bool) -> np.ndarray:
    """``zoom`` of a zero image with ``cval=1``: where ``cval`` enters the result (zero when every
    output point lies inside the input)."""
    return ndi.zoom(np.zeros(shape), zoom, order=order, mode=mode, cval=1.0, prefilter=prefilter, grid_mode=grid_mode)


def _check_separable(y: Any, args: tuple, kwargs: dict) -> None:
    """Refuse a result the per-axis matrices do not reproduce (SciPy's own ``zoom`` is the
    reference): a derivative is never taken of a different map."""
    reference = ndi.zoom(*args, **kwargs)
    scale = max(1.0, float(np.max(np.abs(reference), initial=0.0)))
    tol = max(1e-9, 1e3 * np.finfo(reference.dtype).eps) if reference.dtype.kind in "fc" else 1e-9  # (float32: SciPy's rounding)
    if np.shape(y) != reference.shape or not np.allclose(y, reference, rtol=tol, atol=tol * scale):
        raise RuleArgumentError("scipy.ndimage.zoom: yuebing differentiates zoom as one linear map per axis, "
                                f"which does not reproduce SciPy's result for {kwargs}; interpolate with "
                                "scipy.ndimage.map_coordinates at the zoomed grid's coordinates instead")


def _zoom(input, zoom, output=None, order=3, mode="constant", cval=0.0, prefilter=True, *, grid_mode=False):
    """``scipy.ndimage.zoom``: linear in the image and in ``cval`` for a fixed zoom (SciPy's
    spline filter and interpolation are per axis): the image multiplied along each axis by that
    axis's matrix, plus ``cval`` times the zoom of a zero image."""
    x = np.asarray(input)
    y = x
    for axis, w in enumerate(_zoom_matrices(x.shape, zoom, order, mode, prefilter, grid_mode)):
        y = np.moveaxis(np.tensordot(w, y, axes=(1, axis)), 0, axis)
    y = y + cval * _zoom_of_cval(x.shape, zoom, order, mode, prefilter, grid_mode)
    keywords = {"order": order, "mode": mode, "cval": cval, "prefilter": prefilter, "grid_mode": grid_mode}
    _check_separable(y, (x, zoom), keywords)
    return y.astype(x.dtype if output is None else np.dtype(output), copy=False)


if ndi is not None:
    for _target, _definition in ((ndi.median_filter, _median_filter), (ndi.rank_filter, _rank_filter),
                                 (ndi.minimum_filter, _minimum_filter), (ndi.maximum_filter, _maximum_filter)):
        _derived(_target, _definition)
    for _target, _definition in ((ndi.correlate, _correlate), (ndi.convolve, _convolve), (ndi.correlate1d, _correlate1d),
                                 (ndi.convolve1d, _convolve1d), (ndi.uniform_filter1d, _uniform_filter1d),
                                 (ndi.uniform_filter, _uniform_filter), (ndi.gaussian_filter1d, _gaussian_filter1d),
                                 (ndi.gaussian_filter, _gaussian_filter), (ndi.map_coordinates, _map_coordinates),
                                 (ndi.zoom, _zoom)):
        _derived(_target, _definition)
    nondifferentiable(_zoom_matrices, _zoom_of_cval, _check_separable)  # (constants of a fixed zoom, and a check)
    _spline_filter_rules()


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
        Case(ndi.median_filter, randn(5, 6), 3), Case(ndi.median_filter, randn(7), 4, kwargs={"mode": "nearest"}),
        Case(ndi.rank_filter, randn(5, 4), -2, (2, 3), kwargs={"mode": "wrap", "origin": (0, 1)}),
        Case(ndi.minimum_filter, randn(6, 5), 3, kwargs={"mode": "constant", "cval": 0.4}),
        Case(ndi.maximum_filter, randn(6, 5), (3, 2), kwargs={"mode": "mirror", "origin": -1}),
    ]


def _inside(*shape: int, points: int = 5) -> np.ndarray:
    """Coordinates inside an image of ``shape``, away from the nodes (where the spline's pieces meet)."""
    return np.stack([np.round(randu(points, low=0.0, high=n - 1.0)) + randu(points, low=0.15, high=0.85) - 0.5
                     for n in shape]).clip(0.1, None)


def _map_cases() -> list:
    cases = []
    for mode in _INTERPOLATION:
        coords = np.concatenate([_inside(4, 5), np.array([[-0.6, 4.3], [5.2, 1.7]])], axis=1)
        cases.append(Case(ndi.map_coordinates, randn(4, 5), coords, kwargs={"mode": mode, "cval": 0.5},
                          name=f"map_coordinates(mode={mode!r})"))
    return cases + [
        Case(ndi.map_coordinates, randn(5, 4), _inside(5, 4), kwargs={"order": 1}),
        Case(ndi.map_coordinates, randn(6), _inside(6), kwargs={"order": 2, "mode": "reflect"}),
        Case(ndi.map_coordinates, randn(3, 4, 3), _inside(3, 4, 3, points=3), kwargs={"mode": "nearest"}),
        Case(ndi.map_coordinates, randn(4, 4), _inside(4, 4), kwargs={"prefilter": False, "mode": "mirror"}),
        Case(ndi.map_coordinates, randn(4, 4), _inside(4, 4), kwargs={"order": 0}, name="map_coordinates(order=0)"),
        Case(ndi.map_coordinates, randc(4, 5), _inside(4, 5), kwargs={"mode": "wrap"}),
        Case(ndi.map_coordinates, [[0.5, 1.0, 2.0], [1.5, -1.0, 0.0]], _inside(2, 3), kwargs={"order": 1},
             name="map_coordinates(list image)"),
    ]


def _zoom_cases() -> list:
    # (the zoom by keyword: a float positional argument is perturbed, and changes the output's shape)
    return [Case(ndi.zoom, randn(4, 5), kwargs={"zoom": 1.5}), Case(ndi.zoom, randn(3, 4), kwargs={"zoom": (2.0, 0.75), "order": 1}),
            Case(ndi.zoom, randn(5), kwargs={"zoom": 1.6, "mode": "nearest", "order": 2}, name="zoom(nearest, order=2)"),
            Case(ndi.zoom, randn(4, 3), kwargs={"zoom": 2.0, "mode": "grid-constant", "grid_mode": True, "cval": 0.3},
                 name="zoom(grid-constant, cval)")]


CASES = _filter_cases() + _map_cases() + _zoom_cases() if ndi is not None else []
