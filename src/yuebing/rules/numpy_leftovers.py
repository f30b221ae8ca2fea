"""NumPy names that reuse another name's rule (issue 14's leftovers).

* ``np.astype(x, dtype)`` (NumPy 2) is ``x.astype(dtype)``: float and complex dtypes keep the
  derivative (a float32 result has a float32 tangent), int and bool dtypes give zero;
* ``x.compress(condition, axis)`` is ``np.compress(condition, x, axis)``;
* ``x.choose(choices)`` is ``np.choose(x, choices)`` (``x`` holds the integer selectors);
* ``x.to_device("cpu")`` returns ``x`` itself (NumPy arrays live on the CPU): the same array and
  the same tangent;
* ``np.poly1d`` is derived from NumPy's source (construction, ``p(x)``, ``p.c``, ``+``, ``*``,
  ``**``, ``deriv``, ``integ``, ``roots``); its division, whose source converts the poly1d objects
  through ``__array__`` (refused by name, ``array_like.py``), is written out on the coefficients.

Second order: linear (the tangent call redoes them on tangents); ``x.choose`` as ``np.choose``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoRData
from . import array_like
from .cases import Case, randc, randn
from .core import CoDual, Dual, primal
from .indexing.common import _register
from .indexing.gather_scatter import _choose_frule, _choose_rrule, _compress_frule, _compress_rrule
from .numpy_shape import _astype_frule, _astype_rrule
from .second_order import defined_as, defined_by, linear


def _np_astype_rrule(x, dtype, copy=True, device=None):
    _check_astype(x, device)
    out, pullback = _astype_rrule(x, dtype, copy=copy)
    return out, lambda dy: (NoRData, *pullback(dy), NoRData, NoRData, NoRData)


def _np_astype_frule(x, dtype, copy=True, device=None):
    _check_astype(x, device)
    return _astype_frule(x, dtype, copy=copy)


def _check_astype(x: Any, device: Any) -> None:
    """NumPy's own errors: ``np.astype`` takes arrays only, and the CPU device only."""
    np.astype(np.zeros(0, dtype=primal(x).dtype) if isinstance(primal(x), np.ndarray) else primal(x), np.float64,
              device=primal(device))


def _compress_method_rrule(a, condition, axis=None, out=None):
    result, pullback = _compress_rrule(condition, a, axis, out)

    def reordered(dy: Any) -> tuple:
        pullback(dy)  # scatters into a's fdata; every rdata is NoRData (a is an array)
        return (NoRData,) * 5

    return result, reordered


def _compress_method_frule(a, condition, axis=None, out=None):
    return _compress_frule(condition, a, axis, out)


def _choose_method_rrule(a, choices, out=None, mode="raise"):
    return _choose_rrule(a, choices, out, mode)  # the same parameters in the same order


def _choose_method_frule(a, choices, out=None, mode="raise"):
    return _choose_frule(a, choices, out, mode)


def _choose_as_function(a, choices, out=None, mode="raise"):
    return np.choose(a, choices, out=out, mode=mode)


def _poly1d_divide(u, v):
    """``poly1d.__truediv__`` (``u / v``) on coefficients: a scalar divides them, a polynomial
    gives ``(quotient, remainder)`` as poly1d objects, as NumPy's ``polydiv`` of poly1d."""
    if np.isscalar(v):
        return np.poly1d(u.coeffs / v)
    quotient, remainder = np.polydiv(u.coeffs, np.poly1d(v).coeffs)
    return np.poly1d(quotient), np.poly1d(remainder)


def _poly1d_divide_into(v, u):
    """``poly1d.__rtruediv__`` (``u / v`` with ``v`` the poly1d): a scalar is divided by each
    coefficient (NumPy's own), a polynomial by ``v``."""
    if np.isscalar(u):
        return np.poly1d(u / v.coeffs)
    quotient, remainder = np.polydiv(np.poly1d(u).coeffs, v.coeffs)
    return np.poly1d(quotient), np.poly1d(remainder)


def _to_device_rrule(a, device, stream=None):
    y = primal(a).to_device(primal(device), stream=primal(stream))  # NumPy's errors (a device other than cpu)
    return CoDual(y, a.fdata), lambda dy: (NoRData,) * 4  # y is a: its cotangent is a's fdata


def _to_device_frule(a, device, stream=None):
    return Dual(primal(a).to_device(primal(device), stream=primal(stream)), a.tangent)


_register((np.astype,), _np_astype_rrule, _np_astype_frule)
_register(((np.ndarray, "compress"),), _compress_method_rrule, _compress_method_frule)
_register(((np.ndarray, "choose"),), _choose_method_rrule, _choose_method_frule)
_register(((np.ndarray, "to_device"),), _to_device_rrule, _to_device_frule)
defined_as(np.poly1d.__truediv__, _poly1d_divide)
defined_as(np.poly1d.__rtruediv__, _poly1d_divide_into)
array_like.TAKES_ARRAY_OBJECTS.update((np.poly1d.__truediv__, np.poly1d.__rtruediv__))  # poly1d objects, as they are
linear(np.astype, (np.ndarray, "compress"), (np.ndarray, "to_device"))
# x.choose's self holds integers: the linear class would read the method as a write into them
defined_by((np.ndarray, "choose"), _choose_as_function)

CASES = [
    Case(np.astype, randn(3, 2), np.float32, name="astype float32"),
    Case(np.astype, randn(3, dtype=np.float32), np.float64, name="astype float32 -> float64"),
    Case(np.astype, randn(4), np.complex128, name="astype complex"),
    Case(np.astype, randn(4), np.int64, name="astype int: zero"),
    Case(np.astype, randn(4), np.float64, kwargs={"copy": False}, name="astype same dtype, no copy: the array"),
    Case(np.ndarray.compress, randn(3, 2), [True, False, True], kwargs={"axis": 0}, name="ndarray.compress axis=0"),
    Case(np.ndarray.compress, randn(2, 2), [False, True, True], name="ndarray.compress flat"),
    Case(np.ndarray.choose, np.array([0, 2, 1, 2]), [randn(4), randn(4), randn(1)], name="ndarray.choose"),
    Case(np.ndarray.choose, np.array([3, -1, 1]), randn(2, 3), kwargs={"mode": "wrap"}, name="ndarray.choose wrap"),
    Case(np.ndarray.choose, np.array([0, 1]), [randc(2), 1.5], name="ndarray.choose complex"),
    Case(np.ndarray.to_device, randn(3, 2), "cpu", name="ndarray.to_device"),
    # zero-derivative functions writing into out= (rules/declare.py): its old cotangent is dropped
    Case(np.round, randn(4) * 3, 2, randn(4), name="round out= positional"),
    Case(np.around, randn(3, 2) * 3, 1, kwargs={"out": randn(3, 2)}, name="around out="),
    Case(np.rint, randn(4) * 3, randn(4), name="rint out="),
    Case(np.floor, randn(2, 3) * 3, kwargs={"out": randn(2, 3)}, name="floor out="),
    Case(np.ceil, randn(4, dtype=np.float32) * 3, kwargs={"out": randn(4, dtype=np.float32)}, name="ceil out= float32"),
    Case(np.trunc, randn(4) * 3, kwargs={"out": randn(4), "where": np.array([True, False, True, False])},
         name="trunc out= where="),
    Case(np.fix, randn(4) * 3, randn(4), name="fix out="),
    Case(np.ndarray.round, randn(4) * 3, 1, randn(4), name="ndarray.round out="),
]
