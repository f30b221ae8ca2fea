"""NumPy ufuncs given a ``scipy.sparse`` matrix: what NumPy itself runs, differentiated as code.

A sparse matrix has no ``__array_ufunc__``: NumPy holds it in an object array and its object
loop calls Python on it, ``np.abs(A)`` as ``abs(A)``, ``np.square(A)`` as ``A * A``,
``np.sqrt(A)`` as the matrix's own method ``A.sqrt()`` (SciPy's, which applies the function to
the stored entries), ``np.multiply(A, 2.0)`` as ``A * 2.0``. Each call is defined here as that
Python (``DEFINITIONS``, by ufunc), which every mode derives from SciPy's source.

Refused by name: a ufunc NumPy has no such call for (``np.exp(A)``: the matrix has no ``exp``
method; ``np.sign``, ``np.floor``, ``np.maximum``: NumPy's loop fails), a sparse matrix beside a
NumPy array (NumPy makes an object array of matrices) and a ufunc given keywords.
"""
from __future__ import annotations

import operator
import sys
from typing import Any, Callable

import numpy as np

from .core import RuleArgumentError

#: the unary ufuncs NumPy's object loop answers by calling the method of the same name
_BY_METHOD = ("sqrt", "sin", "tan", "arcsin", "arctan", "sinh", "tanh", "arcsinh", "arctanh", "expm1",
              "log1p", "deg2rad", "rad2deg", "rint", "conjugate")


def _method_definition(name: str) -> Callable:
    def by_method(A):
        return getattr(A, name)()

    by_method.__qualname__ = by_method.__name__ = f"sparse_{name}"
    return by_method


def _absolute(A):
    return abs(A)


def _negative(A):
    return -A


def _square(A):
    return A * A  # (NumPy's object loop multiplies: a matrix product for the *_matrix classes)


def _binary_definition(op: Callable, name: str) -> Callable:
    def by_operator(a, b):
        return op(a, b)

    by_operator.__qualname__ = by_operator.__name__ = f"sparse_{name}"
    return by_operator


DEFINITIONS: dict[np.ufunc, Callable] = {
    np.absolute: _absolute, np.negative: _negative, np.square: _square,
    **{getattr(np, name): _method_definition(name) for name in _BY_METHOD},
    **{ufunc: _binary_definition(op, ufunc.__name__) for ufunc, op in (
        (np.add, operator.add), (np.subtract, operator.sub), (np.multiply, operator.mul),
        (np.true_divide, operator.truediv), (np.power, operator.pow))},
}

_PLAIN = frozenset({np.ndarray, float, int, bool, complex, np.float64})


def _is_sparse(value: Any) -> bool:
    sparse = sys.modules.get("scipy.sparse")
    return sparse is not None and sparse.issparse(value)


def sparse_ufunc_form(fn: np.ufunc, args: tuple, kwargs: dict, primal_of: Callable[[Any], Any]) -> Callable | None:
    """The definition a ufunc call with a sparse matrix among its operands runs (what NumPy's
    object loop calls), None when no operand is sparse; refused by name when NumPy has none."""
    for a in args:  # (every ufunc call asks: the common case in one pass without allocations)
        v = primal_of(a)
        if type(v) not in _PLAIN and _is_sparse(v):
            break
    else:
        return None
    values = [primal_of(a) for a in args]
    name = f"numpy.{fn.__name__}"
    found = DEFINITIONS.get(fn)
    if found is None or fn.nin != len(values):
        raise RuleArgumentError(
            f"{name} of a scipy.sparse matrix: yuebing does not differentiate it (NumPy holds the matrix in an "
            "object array and has no call of its own for it). What to do: apply it to a dense copy, "
            f"np.{fn.__name__}(A.toarray()), or use the matrix's own methods (abs(A), A.sqrt(), A.power(2), A.multiply(B))")
    if kwargs or any(isinstance(v, np.ndarray) for v in values):
        raise RuleArgumentError(
            f"{name} of a scipy.sparse matrix beside a NumPy array or with keywords: yuebing does not differentiate "
            "it (NumPy makes an object array of matrices). What to do: use the matrix's own operators and methods "
            "(A * 2.0, A.multiply(B), A + B), or A.toarray()")
    return found
