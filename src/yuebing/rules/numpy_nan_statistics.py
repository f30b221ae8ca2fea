"""NumPy's NaN-ignoring statistics and quantiles: ``nanvar``, ``nanstd``, ``nanprod``, ``nancumsum``,
``nancumprod``, ``nanmedian``, ``quantile``, ``percentile``, ``nanquantile``, ``nanpercentile``.

Each is written here in plain NumPy and differentiated like user code in every mode
(``second_order.defined_as``), after NumPy's own function has run on the primals for its errors
and warnings (a quantile outside [0, 1], complex input to a quantile, an all-NaN slice). NaNs
are masked with ``np.where`` (their cotangent is exactly zero); the sums and counts are NumPy's.

* ``nanvar``/``nanstd``: ``axis`` (an int or a tuple), ``dtype``, ``ddof``/``correction``,
  ``keepdims``, ``where=``, ``mean=`` (differentiated too), complex input (``|x - mean|^2``); a
  slice with no more than ``ddof`` values gives NaN, as NumPy's.
* ``nanprod``/``nancumsum``/``nancumprod``: ``prod``/``cumsum``/``cumprod`` with NaNs as 1 or 0
  (``initial=`` and ``where=`` of ``nanprod`` too).
* Quantiles (``q`` differentiated too): the values sorted along the reduced axes (NaNs last;
  ``np.sort``'s rule), then NumPy's virtual index ``n q + alpha + q (1 - alpha - beta) - 1`` and its
  interpolation ``lerp`` between the neighbours (written as NumPy writes it). Methods:
  ``linear`` (the default), ``hazen``, ``weibull``, ``median_unbiased``, ``normal_unbiased``,
  ``interpolated_inverted_cdf`` (continuous in ``q``), ``lower``, ``higher``, ``nearest``,
  ``midpoint`` (zero derivative in ``q``). ``nanmedian`` is the mean of the two middle values, as
  NumPy's.
* ``out=`` is an assignment ``out[...] = result`` inside the definition (the derived rule restores
  it). Refused with advice: the discontinuous methods ``inverted_cdf``, ``averaged_inverted_cdf``,
  ``closest_observation`` and ``weights=`` (which NumPy allows with those only).

Conventions (docs/conventions.md): ties between equal values send the cotangent to the one a
stable sort puts first (``median``'s); the derivative of a quantile in ``q`` is the slope between
its two neighbours, zero where it is clamped to the smallest or largest value.
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from .cases import Case, randc, randn, randpos
from .core import RuleArgumentError
from .declare import nondifferentiable
from .second_order import defined_as

# --------------------------------------------------------------------------------------------
# Helpers (no derivative: masks, counts, shapes, indices)
# --------------------------------------------------------------------------------------------


def _valid(a: Any, where: Any) -> np.ndarray:
    """The elements a NaN-ignoring reduction reads: not NaN, and selected by ``where``."""
    valid = ~np.isnan(a)
    return valid if where is None or where is np._NoValue else valid & np.broadcast_to(where, np.shape(a))


def _ddof(ddof: Any, correction: Any) -> Any:
    if correction is None or correction is np._NoValue:  # NumPy's own nanstd passes np._NoValue on
        return ddof
    if ddof != 0:
        raise ValueError("ddof and correction can't be provided simultaneously.")
    return correction


def _reals_like(count: np.ndarray, x: Any) -> np.ndarray:
    """``count`` (at least 1, so that an empty slice's 0/0 warns nowhere) in ``x``'s real dtype."""
    return np.maximum(count, 1).astype(np.asarray(x).real.dtype)


def _reduced_layout(shape: tuple, axis: Any) -> tuple:
    """``(order, kept, keep_shape)``: the axes in the order that puts the reduced ones last, the
    kept axes' shape, and the result's shape with keepdims (1 where reduced)."""
    ndim = len(shape)
    axes = tuple(range(ndim)) if axis is None else tuple(a % ndim for a in np.atleast_1d(axis).tolist())
    kept = [i for i in range(ndim) if i not in axes]
    keep_shape = tuple(1 if i in axes else shape[i] for i in range(ndim))
    return tuple(kept) + axes, tuple(shape[i] for i in kept), keep_shape


_CONTINUOUS = {"linear": (1.0, 1.0), "hazen": (0.5, 0.5), "weibull": (0.0, 0.0),
               "median_unbiased": (1 / 3, 1 / 3), "normal_unbiased": (3 / 8, 3 / 8),
               "interpolated_inverted_cdf": (0.0, 1.0)}
_DISCRETE = ("lower", "higher", "nearest", "midpoint")


def _method(name: str, method: str, interpolation: Any, weights: Any) -> str:
    method = interpolation if interpolation is not None else method
    if weights is not None:
        raise RuleArgumentError(f"numpy.{name}: yuebing does not differentiate weights= (NumPy allows it with "
                                "method='inverted_cdf' only, a step function of the data); omit weights, or "
                                "repeat the samples by their counts")
    if method not in _CONTINUOUS and method not in _DISCRETE:
        raise RuleArgumentError(f"numpy.{name}: yuebing does not differentiate method={method!r} (a step function "
                                "of q); use method='linear' (the default), 'hazen', 'weibull', 'median_unbiased', "
                                "'normal_unbiased', 'interpolated_inverted_cdf', 'lower', 'higher', 'nearest' or "
                                "'midpoint'")
    return method


def _virtual_index(n: np.ndarray, q: Any, method: str) -> Any:
    """NumPy's virtual index of quantile ``q`` among ``n`` sorted values (``q`` may move)."""
    if method in _DISCRETE:
        return (n - 1) * q
    alpha, beta = _CONTINUOUS[method]
    return n * q + (alpha + q * (1 - alpha - beta)) - 1


def _neighbours(n: np.ndarray, index: np.ndarray, method: str) -> tuple:
    """The indices below and above each virtual index (clamped to [0, n - 1] as NumPy clamps),
    and for the discrete methods the fixed interpolation weight (None: ``index - below``)."""
    top = np.maximum(n - 1, 0)
    if method in ("lower", "higher", "nearest"):
        rounded = {"lower": np.floor, "higher": np.ceil, "nearest": np.around}[method](index)
        chosen = np.clip(rounded, 0, top).astype(np.intp)
        return chosen, chosen, np.zeros(np.shape(index))
    below = np.clip(np.floor(index), 0, top).astype(np.intp)
    above = np.clip(np.floor(index) + 1, 0, top).astype(np.intp)
    if method == "midpoint":
        return below, above, np.where(index == np.floor(index), 0.0, 0.5)
    return below, above, None


def _quantile_dtype(a: Any, q: Any, method: str) -> Any:
    if method in ("lower", "higher", "nearest"):
        return np.asarray(a).dtype
    return np.result_type(np.asarray(a), q, 1.0)


nondifferentiable(_valid, _ddof, _reals_like, _reduced_layout, _method, _neighbours, _quantile_dtype)


# --------------------------------------------------------------------------------------------
# The definitions (plain NumPy, differentiated like user code)
# --------------------------------------------------------------------------------------------


def _finish(result: Any, out: Any) -> Any:
    """NumPy's result: a 0-d result as a scalar; with ``out=``, assigned into ``out`` (returned)."""
    if out is None:
        return result[()] if isinstance(result, np.ndarray) and result.ndim == 0 else result
    out[...] = result
    return out


def _nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """``np.nanvar``: the mean of ``|x - mean|^2`` over the non-NaN values, divided by ``n - ddof``."""
    a = np.asarray(a)
    ddof = _ddof(ddof, correction)
    valid = _valid(a, where)
    filled = np.where(valid, a, 0)
    if dtype is not None:
        filled = filled.astype(dtype)
    if mean is None or mean is np._NoValue:
        mean = np.sum(filled, axis=axis, keepdims=True) / _reals_like(np.sum(valid, axis=axis, keepdims=True), filled)
    deviation = np.where(valid, filled - mean, 0)
    squares = (deviation * np.conj(deviation)).real if np.iscomplexobj(deviation) else deviation * deviation
    total = np.sum(squares, axis=axis, keepdims=keepdims)
    dof = np.sum(valid, axis=axis, keepdims=keepdims) - ddof
    return _finish(np.where(dof > 0, total / _reals_like(dof, total), np.nan), out)


def _nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, *, where=None, mean=None, correction=None):
    """``np.nanstd``: the square root of ``nanvar``."""
    variance = _nanvar(a, axis, dtype, None, ddof, keepdims, where=where, mean=mean, correction=correction)
    return _finish(np.sqrt(variance), out)


def _nanprod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=None):
    """``np.nanprod``: ``prod`` with NaNs (and unselected elements) as 1."""
    a = np.asarray(a)
    result = np.prod(np.where(_valid(a, where), a, 1), axis=axis, dtype=dtype, keepdims=keepdims)
    if initial is not None and initial is not np._NoValue:
        result = result * initial
    return _finish(result, out)


def _nancumsum(a, axis=None, dtype=None, out=None):
    """``np.nancumsum``: ``cumsum`` with NaNs as 0."""
    a = np.asarray(a)
    return _finish(np.cumsum(np.where(np.isnan(a), 0, a), axis=axis, dtype=dtype), out)


def _nancumprod(a, axis=None, dtype=None, out=None):
    """``np.nancumprod``: ``cumprod`` with NaNs as 1."""
    a = np.asarray(a)
    return _finish(np.cumprod(np.where(np.isnan(a), 1, a), axis=axis, dtype=dtype), out)


def _sorted_slices(a: Any, axis: Any) -> tuple:
    """``a`` with the reduced axes merged into one last axis and sorted along it (NaNs last),
    the kept shape and the keepdims shape."""
    a = np.asarray(a)
    order, kept, keep_shape = _reduced_layout(np.shape(a), axis)
    merged = np.reshape(np.transpose(a, order), kept + (-1,))
    return np.sort(merged, axis=-1), kept, keep_shape


def _gather(s: Any, index: np.ndarray) -> Any:
    """``s[..., index]`` slice by slice: ``index`` has shape ``Q + kept``, ``s`` shape ``kept + (m,)``."""
    full = np.broadcast_to(s, np.shape(index) + np.shape(s)[-1:])
    return np.take_along_axis(full, np.expand_dims(index, -1), axis=-1)[..., 0]


def _quantiles(s: Any, n: Any, q: Any, method: str) -> Any:
    """Quantiles ``q`` (shape ``Q``) of the sorted slices ``s`` with ``n`` values each (shape
    ``kept``), shape ``Q + kept``: NumPy's ``lerp`` between the neighbours of the virtual index."""
    q = np.asarray(q)
    qx = np.reshape(q, np.shape(q) + (1,) * np.ndim(n))
    index = _virtual_index(n, qx, method)
    below, above, fixed = _neighbours(n, index, method)
    low, high = _gather(s, below), _gather(s, above)
    t = index - np.floor(index) if fixed is None else fixed
    step = high - low
    return np.where(t >= 0.5, high - step * (1 - t), low + step * t)


def _shaped(result: Any, q: Any, keep_shape: tuple, keepdims: bool) -> Any:
    return np.reshape(result, np.shape(q) + keep_shape) if keepdims else result


def _quantile_of(name, a, q, axis, out, method, keepdims, weights, interpolation, ignore_nan):
    method = _method(name, method, interpolation, weights)
    dtype = _quantile_dtype(a, q, method)
    s, kept, keep_shape = _sorted_slices(a, axis)
    if ignore_nan:
        n = np.sum(~np.isnan(s), axis=-1)
        empty = n == 0  # an all-NaN slice: NaN (NumPy warns)
    else:
        n = np.full(kept, np.shape(s)[-1])
        empty = np.isnan(s[..., -1])  # a slice holding a NaN: NaN
    result = np.where(empty, np.nan, _quantiles(s, n, q, method)).astype(dtype)
    return _finish(_shaped(result, q, keep_shape, keepdims), out)


def _quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
              interpolation=None):
    """``np.quantile`` (``overwrite_input`` is a permission NumPy may use; the copy here does not)."""
    return _quantile_of("quantile", a, q, axis, out, method, keepdims, weights, interpolation, False)


def _percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *, weights=None,
                interpolation=None):
    """``np.percentile``: ``quantile`` at ``q / 100``."""
    result = _quantile_of("percentile", a, np.true_divide(q, 100), axis, None, method, keepdims, weights,
                          interpolation, False)
    return _finish(np.asarray(result).astype(_quantile_dtype(a, q, method)), out)  # a scalar too


def _nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                 weights=None, interpolation=None):
    """``np.nanquantile``: each slice's quantiles among its non-NaN values."""
    return _quantile_of("nanquantile", a, q, axis, out, method, keepdims, weights, interpolation, True)


def _nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False, *,
                   weights=None, interpolation=None):
    """``np.nanpercentile``: ``nanquantile`` at ``q / 100``."""
    result = _quantile_of("nanpercentile", a, np.true_divide(q, 100), axis, None, method, keepdims, weights,
                          interpolation, True)
    return _finish(np.asarray(result).astype(_quantile_dtype(a, q, method)), out)  # a scalar too


def _nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """``np.nanmedian``: the mean of the two middle non-NaN values (the middle one, twice)."""
    s, kept, keep_shape = _sorted_slices(a, axis)
    n = np.sum(~np.isnan(s), axis=-1)
    below, above = np.maximum((n - 1) // 2, 0), np.maximum(n // 2, 0)
    middle = (_gather(s, below) + _gather(s, above)) / 2
    result = np.where(n == 0, np.nan, middle).astype(np.result_type(np.asarray(a), 1.0))
    return _finish(np.reshape(result, keep_shape) if keepdims else result, out)


def _side_effect_free(target: Any) -> Any:
    """``target`` called for its errors and warnings only: without ``out=`` (a write, perhaps into
    an input) and without ``overwrite_input`` (a partial sort of the input)."""
    signature = inspect.signature(target)

    def check(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.arguments.pop("out", None)
        bound.arguments.pop("overwrite_input", None)
        target(*bound.args, **bound.kwargs)

    return check


for _target, _definition in ((np.nanvar, _nanvar), (np.nanstd, _nanstd), (np.nanprod, _nanprod),
                             (np.nancumsum, _nancumsum), (np.nancumprod, _nancumprod), (np.nanmedian, _nanmedian),
                             (np.quantile, _quantile), (np.percentile, _percentile),
                             (np.nanquantile, _nanquantile), (np.nanpercentile, _nanpercentile)):
    defined_as(_target, _definition, validate=_side_effect_free(_target))


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _mask(shape: tuple, flat_positions: tuple) -> np.ndarray:
    mask = np.zeros(shape, dtype=bool)
    mask.flat[list(flat_positions)] = True
    return mask


nondifferentiable(_mask)


def _nans_at(*flat_positions: int) -> Any:
    """``f`` applied after NaNs are put at ``flat_positions`` (inside the function: finite
    differences of an argument holding NaN would be NaN)."""
    def wrap(f: Any, **kwargs: Any) -> Any:
        def with_nans(a: Any, *rest: Any) -> Any:
            return f(np.where(_mask(np.shape(a), flat_positions), np.nan, a), *rest, **kwargs)

        with_nans.__qualname__ = f"{f.__name__}(NaNs at {list(flat_positions)}, {kwargs})"
        return with_nans

    return wrap


def _nanvar_about(a: Any, mean: Any) -> Any:
    """``nanvar`` about a given ``mean`` (differentiated in both)."""
    return np.nanvar(np.where(_mask(np.shape(a), (5,)), np.nan, a), axis=0, mean=mean)


CASES = [
    Case(_nans_at(1, 6)(np.nanvar), randn(3, 4)),
    Case(_nans_at(1, 6, 10)(np.nanvar, axis=1, ddof=1), randn(3, 4)),
    Case(_nans_at(3)(np.nanvar, axis=(0, 2), keepdims=True), randn(3, 4, 2)),
    Case(_nans_at(2)(np.nanvar), randc(5), name="nanvar(complex)"),
    Case(_nans_at(4)(np.nanvar, axis=0), randn(4, 3, dtype=np.float32), rtol=1e-3, atol=1e-4),
    Case(_nanvar_about, randn(4, 3), randn(1, 3), name="nanvar(mean=)"),
    Case(_nans_at(0, 7)(np.nanstd, axis=1), randpos(3, 5)),
    Case(_nans_at(2)(np.nanstd, correction=1), randn(6)),
    Case(_nans_at(6)(np.nanstd, axis=0, where=np.array([[1, 0, 1], [1, 1, 1], [0, 1, 1], [1, 1, 0]], dtype=bool)),
         randn(4, 3), name="nanstd(where=)"),
    Case(_nans_at(2, 5)(np.nanprod), randpos(3, 4)),
    Case(_nans_at(2)(np.nanprod, axis=0, keepdims=True), randn(3, 4)),
    Case(_nans_at(1)(np.nanprod), randc(4), name="nanprod(complex)"),
    Case(_nans_at(0, 5)(np.nancumsum, axis=1), randn(3, 4)),
    Case(_nans_at(3)(np.nancumsum), randn(5)),
    Case(_nans_at(2, 9)(np.nancumprod, axis=0), randpos(3, 4)),
    Case(_nans_at(2)(np.nancumprod), randc(4), name="nancumprod(complex)"),
    Case(_nans_at(1, 2, 9)(np.nanmedian, axis=0), randn(5, 4)),
    Case(_nans_at(3)(np.nanmedian), randn(7)),
    Case(_nans_at(5)(np.nanmedian, axis=(1, 2), keepdims=True), randn(3, 4, 2)),
    Case(np.quantile, randn(9), 0.3),
    Case(np.quantile, randn(4, 6), np.array([0.15, 0.5, 0.92]), kwargs={"axis": 1}),
    Case(np.quantile, randn(3, 5, 2), 0.7, kwargs={"axis": (0, 2), "keepdims": True}),
    Case(np.quantile, randn(8, dtype=np.float32), 0.4, rtol=1e-3, atol=1e-4),
    Case(np.quantile, randn(6), 0.95, kwargs={"method": "hazen"}, name="quantile(clamped to the largest)"),
    *(Case(np.quantile, randn(2, 7), 0.37, kwargs={"axis": 1, "method": m}, name=f"quantile(method={m})")
      for m in ("hazen", "weibull", "median_unbiased", "normal_unbiased", "interpolated_inverted_cdf", "lower",
                "higher", "nearest", "midpoint")),
    Case(np.percentile, randn(3, 6), 62.5, kwargs={"axis": 0}),
    Case(np.percentile, randn(10), np.array([5.0, 50.0, 99.0])),
    Case(np.percentile, randn(5), 30.0, name="percentile(1-D, one q: a scalar)"),
    Case(np.nanpercentile, randn(5), 30.0, name="nanpercentile(1-D, one q: a scalar)"),
    Case(_nans_at(1, 7, 8)(np.nanquantile, axis=1), randn(4, 6), np.array([0.23, 0.85])),
    Case(_nans_at(4)(np.nanquantile, method="hazen"), randn(9), 0.55),
    Case(_nans_at(0, 4)(np.nanpercentile, axis=0, keepdims=True), randn(5, 3), 33.0),
    Case(lambda a, q: np.quantile(a, q, axis=1, out=np.zeros(3)), randn(3, 5), 0.4, name="quantile(out=)"),
    Case(lambda a: np.nanvar(a, axis=0, out=a[0]), randn(3, 4), name="nanvar(out= a view of its input)"),
]
