"""The C helpers NumPy's own Python calls, so that NumPy functions without a rule are derived from
their source (``np.ediff1d``, ``np.cov``, ``np.vander``: ``transform/protocols.python_implementation``
finds the Python function behind each C dispatcher).

``_array_converter`` (NumPy 2) converts a function's inputs to arrays and wraps its result back
(a scalar for scalar inputs); ``ArrayConverter`` is the same in Python, so the conversion is the
``np.asarray`` rule (the cotangent flows back to lists and floats) and the wrap a view or an
element read. Array subclasses are refused: their ``__array_wrap__`` is not followed.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np
from numpy.lib import _nanfunctions_impl as _nanfunctions, _stride_tricks_impl as _stride_tricks

from .cases import Case, randn
from .core import RuleArgumentError
from .declare import nondifferentiable, nondifferentiable_methods
from .second_order import defined_as

try:  # NumPy 2; NumPy 1 has no converter, and its Python does not call one
    from numpy._core._multiarray_umath import _array_converter
except ImportError:  # pragma: no cover - NumPy 1
    _array_converter = None


def _is_python_scalar(value: Any) -> bool:
    return isinstance(value, (int, float, complex)) and not isinstance(value, np.generic)


def _scalar_inputs(values: tuple) -> tuple:
    """Which inputs were scalars (Python's or NumPy's), as the converter's ``scalar_input``."""
    for value in values:
        if isinstance(value, np.ndarray) and type(value) is not np.ndarray:
            raise RuleArgumentError(
                f"yuebing differentiates NumPy's own code for plain ndarrays; a {type(value).__qualname__} "
                "(an ndarray subclass) would be wrapped by its __array_wrap__, which is not followed: "
                "pass np.asarray(x)")
    return tuple(_is_python_scalar(v) or isinstance(v, np.generic) for v in values)


def _keeps_python_scalars(values: tuple, pyscalars: str) -> bool:
    """Whether ``as_arrays(pyscalars=...)`` returns Python scalars as they are."""
    if pyscalars == "preserve":
        return True
    if pyscalars == "convert_if_no_array":
        return not all(_is_python_scalar(v) for v in values)
    if pyscalars == "convert":
        return False
    raise ValueError(f"invalid pyscalars {pyscalars!r}")


def _result_type(values: tuple, extra_dtype: Any, ensure_inexact: bool) -> Any:
    """NumPy's own answer (weak promotion of Python scalars)."""
    return _array_converter(*values).result_type(extra_dtype=extra_dtype, ensure_inexact=ensure_inexact)


nondifferentiable(_is_python_scalar, _scalar_inputs, _keeps_python_scalars, _result_type)


class ArrayConverter:
    """``numpy._core._multiarray_umath._array_converter`` in Python, for plain ndarrays."""

    def __init__(self, *values):
        self.scalar_input = _scalar_inputs(values)
        self.values = values
        self.arrays = tuple([np.asarray(v) for v in values])

    def __getitem__(self, i):
        return self.arrays[i]

    def __len__(self):
        return len(self.arrays)

    def as_arrays(self, subok=True, pyscalars="convert_if_no_array"):
        keep = _keeps_python_scalars(self.values, pyscalars)
        out = []
        for value, array in zip(self.values, self.arrays):
            if keep and _is_python_scalar(value):
                out.append(value)
            else:
                out.append(array)
        return tuple(out)

    def result_type(self, extra_dtype=None, ensure_inexact=False):
        return _result_type(self.values, extra_dtype, ensure_inexact)

    def wrap(self, arr, to_scalar=None):
        if isinstance(arr, np.generic):
            return arr  # a NumPy scalar stays one
        if to_scalar is None:
            to_scalar = all(self.scalar_input)
        if to_scalar and np.ndim(arr) == 0:
            return arr[()]
        return arr


def _convert(*values):
    return ArrayConverter(*values)


if _array_converter is not None:
    defined_as(_array_converter, _convert)


def ufunc_as_array(ufunc, *args, out=None, **kwargs):
    """``ufunc(*args, out=...)`` (NumPy 2): the result as an array, a 0-d one for scalars
    (``transform/protocols.dispatch`` sends such calls here, ``out`` being ``...``)."""
    return np.asarray(ufunc(*args, **kwargs))


def _check_casting(ufunc: np.ufunc, args: tuple, kwargs: dict, casting: str) -> None:
    """NumPy's own check of ``casting=`` (its errors), and a refusal where the cast changes a
    float result's dtype (the rules compute in the operands' dtype)."""
    out = kwargs.get("out")
    out = out[0] if isinstance(out, tuple) else out
    if not isinstance(out, np.ndarray):
        return  # without out= a cast is only of the inputs, to the dtype the rules compute in
    others = {k: v for k, v in kwargs.items() if k not in ("out", "where")}
    ufunc(*args, out=out.copy(), casting=casting, where=kwargs.get("where", True), **others)  # its errors
    natural = np.result_type(ufunc(*args, **others))
    if natural != out.dtype and out.dtype.kind in "fc":
        raise RuleArgumentError(f"numpy.{ufunc.__name__} with casting={casting!r}: yuebing does not "
                                f"differentiate a cast of its {natural} result into a {out.dtype} out=; "
                                "assign out[...] = result.astype(out.dtype)")


def _check_subok(ufunc: np.ufunc, args: tuple) -> None:
    """``subok=`` changes nothing for plain arrays and numbers; array subclasses are refused."""
    _scalar_inputs(args)


nondifferentiable(_check_subok)


def ufunc_with_casting(ufunc, *args, casting="same_kind", subok=True, **kwargs):
    """``ufunc(*args, casting=..., subok=...)``: the same call without ``casting=`` once NumPy
    accepts it (it only governs casts, none of which a float result into a float ``out=`` of its
    dtype makes) and without ``subok=`` (it only concerns array subclasses, which are refused)."""
    _check_subok(ufunc, args)
    _check_casting(ufunc, args, kwargs, casting)
    if "out" in kwargs and kwargs["out"] is Ellipsis:
        return ufunc_as_array(ufunc, *args, **kwargs)
    return ufunc(*args, **kwargs)


_UFUNC_CALLS: dict = {}


def ufunc_call_definition(ufunc: np.ufunc, kind: str) -> Any:
    """``ufunc`` called with ``casting=`` (``kind="casting"``) or ``out=...`` (``"as_array"``),
    as a Python function the modes derive (a closure per ufunc: second order takes no partials)."""
    key = (ufunc, kind)
    found = _UFUNC_CALLS.get(key)
    if found is None:
        found = _UFUNC_CALLS[key] = _with_casting(ufunc) if kind == "casting" else _as_array(ufunc)
    return found


def _with_casting(ufunc):
    def call(*args, **kwargs):
        return ufunc_with_casting(ufunc, *args, **kwargs)

    return call


def _as_array(ufunc):
    def call(*args, **kwargs):
        return ufunc_as_array(ufunc, *args, **kwargs)

    return call


def _broadcast_to(array, shape, subok=False, readonly=True):
    """``numpy.lib._stride_tricks_impl._broadcast_to`` (np.broadcast_arrays's) as ``np.broadcast_to``
    (its views are read-only here: a write raises NumPy's error rather than reach every element)."""
    return np.broadcast_to(array, shape, subok=subok)


defined_as(_stride_tricks._broadcast_to, _broadcast_to)
nondifferentiable(_check_casting)


def _divide_by_count(a, b, out=None):
    """``numpy.lib._nanfunctions_impl._divide_by_count`` without ``casting="unsafe"`` (its
    operands are inexact: the cast changes nothing): ``a / b`` in place in ``a`` or ``out``."""
    with np.errstate(invalid="ignore", divide="ignore"):
        if isinstance(a, np.ndarray):
            if out is None:
                return np.divide(a, b, out=a)
            return np.divide(a, b, out=out)
        if out is None:
            return a.dtype.type(a / b)
        out[...] = a / b
        return out


defined_as(_nanfunctions._divide_by_count, _divide_by_count)
nondifferentiable(_stride_tricks._broadcast_shape)  # a shape
nondifferentiable(np.lib.array_utils.normalize_axis_index)  # an axis number (C)
nondifferentiable_methods(np.bool_, "any", "all")  # np.True_.any(): NumPy's Python tests its masks so
nondifferentiable_methods(np.generic, "any", "all")


def _ndarray_operator(op):
    def method(self, *other):
        return op(self, *other)

    return method


def _reflected(op):
    def method(self, other):
        return op(other, self)

    return method


# x.__truediv__(y), as np.polyint writes it: the operator itself
for _name, _op in (("add", operator.add), ("sub", operator.sub), ("mul", operator.mul),
                   ("truediv", operator.truediv), ("pow", operator.pow), ("matmul", operator.matmul)):
    defined_as((np.ndarray, f"__{_name}__"), _ndarray_operator(_op))
    defined_as((np.ndarray, f"__r{_name}__"), _reflected(_op))
defined_as((np.ndarray, "__neg__"), _ndarray_operator(operator.neg))


def _leading_nonzero(c: np.ndarray) -> int:
    nonzero = np.flatnonzero(c)
    return int(nonzero[0]) if nonzero.size else c.size


nondifferentiable(_leading_nonzero)


def _poly_coefficients(p):
    """``np.poly1d(p).coeffs`` of an array: 1-d, leading zeros dropped (``[0.]`` if all are)."""
    if isinstance(p, np.poly1d):
        raise RuleArgumentError("yuebing differentiates polynomial coefficient arrays, not poly1d objects "
                                "(its __array__ is not followed); pass p.coeffs")
    c = np.atleast_1d(p)
    c = c[_leading_nonzero(c):]
    if c.size == 0:
        return np.zeros(1, dtype=np.result_type(c.dtype, np.float64))
    return c


def _polymul(a1, a2):
    """``np.polymul`` of coefficient arrays: NumPy's own makes ``poly1d`` objects and convolves them."""
    return np.convolve(_poly_coefficients(a1), _poly_coefficients(a2))


defined_as(np.polymul, _polymul)


def _ediff1d_of_list(x):
    return np.ediff1d([x[0], x[1] * x[2], 2.0], to_begin=x[1])


def _vander(x):
    return np.vander(x, 3)


def _polysub(p, q):
    return np.polysub(p, q)


CASES = [
    Case(np.ediff1d, randn(5), name="ediff1d (derived from NumPy's source)"),
    Case(_ediff1d_of_list, randn(3), name="ediff1d of a list, to_begin"),
    Case(_vander, randn(4), name="vander (derived)"),
    Case(_polysub, randn(3), randn(2), name="polysub (derived)"),
    Case(np.polymul, randn(3), randn(2), name="polymul (coefficient arrays)"),
    Case(np.polyint, randn(3), name="polyint (derived; ndarray.__truediv__)"),
    Case(np.ndarray.__rsub__, randn(3), randn(3), name="ndarray.__rsub__"),
]
