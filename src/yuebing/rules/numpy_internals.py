"""The C helpers NumPy's own Python calls, so that NumPy functions without a rule are derived from
their source (``np.ediff1d``, ``np.cov``, ``np.vander``: ``transform/protocols.python_implementation``
finds the Python function behind each C dispatcher).

``_array_converter`` (NumPy 2) converts a function's inputs to arrays and wraps its result back
(a scalar for scalar inputs); ``ArrayConverter`` is the same in Python, so the conversion is the
``np.asarray`` rule (the cotangent flows back to lists and floats) and the wrap a view or an
element read. Array subclasses are refused: their ``__array_wrap__`` is not followed.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, randn
from .core import RuleArgumentError
from .declare import nondifferentiable
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
]
