"""NumPy C functions without a derivative of their own, written as plain NumPy over functions that
have rules (``second_order.defined_as``: differentiated like user code in every mode, after the C
function has run on the primals for NumPy's own errors).

* two-output ufuncs: ``modf`` (``x - trunc(x)``, ``trunc(x)``), ``frexp`` (mantissa ``x 2**-e``,
  integer exponent), ``divmod`` (``floor_divide``, ``mod``);
* ``matvec``/``vecmat`` (NumPy 2.2) as ``matmul``;
* the C cores NumPy's own Python calls: ``c_einsum`` (``np.einsum``'s rule), ``interp`` and
  ``interp_complex`` (``np.interp``'s), ``correlate2`` (``np.correlate``'s) and the old
  ``correlate`` of ``np.convolve`` (no conjugation);
* ``ndarray.__array_wrap__`` of a plain ndarray (the array itself), which ``np.linalg``'s helpers
  call on results;
* ``np.linalg.solve``'s gufuncs ``_umath_linalg.solve`` and ``solve1`` (a vector per matrix),
  which the array API's ``xp.linalg.solve`` calls directly (SciPy's ``lfilter_zi``,
  ``sosfilt_zi`` behind ``filtfilt``/``sosfiltfilt``), as ``np.linalg.solve``.

``nextafter`` is elementwise: derivative 1 in ``x``, 0 in the direction. Their ``out=``,
``where=`` and other ufunc keywords are refused (assign the results instead).
"""
from __future__ import annotations

import numpy as np
from numpy._core import _multiarray_umath as _umath
from numpy.linalg import _umath_linalg

from .cases import Case, randn, randpos
from .core import RuleArgumentError
from .debug import ZERO_ARGUMENTS
from .declare import elementwise, nondifferentiable
from .second_order import defined_as


def _no_keywords(name, kwargs):
    if kwargs:
        raise RuleArgumentError(f"numpy.{name}: yuebing does not differentiate it with {sorted(kwargs)}; "
                                "call it without and assign the results")


def _exponent(x):
    """``frexp``'s integer exponent and the power of two ``2**-e`` in ``x``'s dtype."""
    e = np.frexp(x)[1]
    return e, np.ldexp(np.ones_like(x), -e)


nondifferentiable(_no_keywords, _exponent)


def _modf(x, **kwargs):
    _no_keywords("modf", kwargs)
    if np.asarray(x).dtype.kind in "biu":  # modf gives floats of integers (np.trunc keeps them ints)
        x = np.asarray(x, dtype=np.result_type(np.asarray(x).dtype, np.float16))
    whole = np.trunc(x)
    return np.where(np.isinf(x), np.copysign(0.0, x), x - whole) if np.ndim(x) else (
        np.copysign(0.0, x) if np.isinf(x) else x - whole), whole


def _frexp(x, **kwargs):
    _no_keywords("frexp", kwargs)
    e, scale = _exponent(x)
    return x * scale, e


def _divmod(x1, x2, **kwargs):
    _no_keywords("divmod", kwargs)
    return np.floor_divide(x1, x2), np.mod(x1, x2)


def _matvec(x1, x2, **kwargs):
    _no_keywords("matvec", kwargs)
    return np.matmul(x1, np.asarray(x2)[..., None])[..., 0]


def _vecmat(x1, x2, **kwargs):
    _no_keywords("vecmat", kwargs)
    return np.matmul(np.conj(x1)[..., None, :], x2)[..., 0, :]


def _c_einsum(*operands, **kwargs):
    return np.einsum(*operands, **kwargs)


def _interp(x, xp, fp, left=None, right=None):
    return np.interp(x, xp, fp, left, right)


def _correlate2(a, v, mode):
    return np.correlate(a, v, mode)


def _correlate(a, v, mode):
    return np.correlate(a, np.conj(v), mode)  # the old correlate does not conjugate v


def _solve_gufunc(a, b, signature=None, **kwargs):
    _no_keywords("linalg._umath_linalg.solve", kwargs)
    return np.linalg.solve(a, b)  # (the signature, "dd->d" or "DD->D", is the dtypes solve keeps)


def _solve1_gufunc(a, b, signature=None, **kwargs):
    _no_keywords("linalg._umath_linalg.solve1", kwargs)
    return np.linalg.solve(a, np.asarray(b)[..., None])[..., 0]


def _array_wrap(self, array, context=None, return_scalar=False):
    if type(self) is not np.ndarray:
        raise RuleArgumentError(f"ndarray.__array_wrap__: yuebing follows it for a plain ndarray, not a "
                                f"{type(self).__qualname__}; pass plain arrays")
    array = np.asarray(array)  # (a plain ndarray wraps as itself: the same data, the same tangent)
    return array[()] if return_scalar and array.ndim == 0 else array


for _target, _definition in ((np.modf, _modf), (np.frexp, _frexp), (np.divmod, _divmod),
                             (_umath.c_einsum, _c_einsum), (_umath.interp, _interp),
                             (_umath.interp_complex, _interp), (_umath.correlate2, _correlate2),
                             (_umath.correlate, _correlate), (_umath_linalg.solve, _solve_gufunc),
                             (_umath_linalg.solve1, _solve1_gufunc)):
    defined_as(_target, _definition, validate=True)
defined_as((np.ndarray, "__array_wrap__"), _array_wrap)
for _target, _definition in ((getattr(np, "matvec", None), _matvec), (getattr(np, "vecmat", None), _vecmat)):
    if _target is not None:  # NumPy 2.2 and later
        defined_as(_target, _definition, validate=True)

elementwise(np.nextafter, lambda x, y, out: np.ones_like(out), None)
ZERO_ARGUMENTS[np.nextafter] = ("y", 1)  # the direction: zero by definition (debug mode's list)

CASES = [
    Case(np.modf, randn(4) * 3), Case(np.frexp, randn(4) * 3), Case(np.frexp, randn(3, dtype=np.float32) * 3),
    Case(np.divmod, randn(4) * 3, randpos(4)),
    Case(np.nextafter, randn(4), randn(4)),
    Case(_umath.c_einsum, "ij,kj->ik", randn(2, 3), randn(4, 3)),
    Case(_umath.interp, np.array([0.2, 0.7, 1.5]), np.array([0.0, 1.0, 2.0]), randn(3)),
    Case(_umath.correlate2, randn(5), randn(3), 1), Case(_umath.correlate, randn(5), randn(3), 2),
    Case(_umath_linalg.solve1, randn(3, 3) + 3 * np.eye(3), randn(3)),
    Case(_umath_linalg.solve1, randn(2, 3, 3) + 3 * np.eye(3), randn(2, 3)),
    Case(_umath_linalg.solve, randn(3, 3) + 3 * np.eye(3), randn(3, 2)),
    *([Case(np.matvec, randn(2, 3, 4), randn(4)), Case(np.vecmat, randn(3), randn(2, 3, 4))]
      if hasattr(np, "matvec") else []),
]
