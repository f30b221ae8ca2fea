"""Second-order rules of matrix products of two float64 matrices, written out in NumPy.

The multilinear class (``lifting._multilinear``) runs the first-order rule once per factor with
that factor's tangent, plus once more on the primals with the fdata tangents to get a pullback
for the cotangent's tangent: every run computes its product and zero-fills an output fdata, so
``kron(x, y)`` is computed four times and its 640 000-element fdata zero-filled four times. For
``a @ b``, ``np.matmul`` and ``np.dot`` of two float64 matrices, and ``np.kron`` of two float64
arrays of one number of axes, this module computes what is needed once:

* forward: ``y = a . b`` and ``y_d = a_d . b + a . b_d`` (for ``kron`` both into buffers of the
  pool, ``transform/buffers.py``, ``y_d`` as one batched matrix product summing the two products
  per element), the output's fdata and fdata tangent from the pool too (a fresh 640k-element
  array costs more in page faults than the product);
* dual pullback, with ``g`` the output's cotangent and ``g_d`` its tangent: ``a`` gets
  ``vjp_a(g, b)`` and its tangent ``vjp_a(g_d, b) + vjp_a(g, b_d)`` (``b`` likewise), delivered
  into the fdata and fdata tangents.

Other arguments (vectors, stacks, other dtypes, keywords) return None: the generic class.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ..rules.core import CoDual
from ..rules.linalg.products import kron_cotangent_of_first, kron_cotangent_of_second, kron_product, kron_sum_of_two
from ..rules.util import out_cotangent
from ..tangents import NoFData, NoRData, NoTangent
from . import buffers

_ND, _F64 = np.ndarray, np.dtype(np.float64)


def _matmul_cotangents(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple:
    """Adders of the cotangents of ``a`` and ``b`` in ``a @ b`` from the output's ``g`` into a
    buffer (each needs only the other factor: ``g @ b.T`` and ``a.T @ g``), by gemm
    accumulating in place (``buffers.add_matmul``: no temporary product, no addition pass)."""
    return (lambda other, into: buffers.add_matmul(into, g, other.T),
            lambda other, into: buffers.add_matmul(into, other.T, g))


def _kron_cotangents(g: np.ndarray, a: np.ndarray, b: np.ndarray) -> tuple:
    """Adders of the cotangents of ``a`` and ``b`` in ``kron(a, b)`` into a buffer: ``g``
    contracted with the other factor (one pass over ``g`` each, ``rules/linalg/products.py``)."""
    return (lambda other, into: into.__iadd__(kron_cotangent_of_first(g, other, a.shape)),
            lambda other, into: into.__iadd__(kron_cotangent_of_second(g, other, b.shape)))


#: product -> (the product of two matrices, its cotangent maps)
PRODUCTS: dict[Any, tuple[Callable, Callable]] = {
    operator.matmul: (np.matmul, _matmul_cotangents), np.matmul: (np.matmul, _matmul_cotangents),
    np.dot: (np.matmul, _matmul_cotangents), np.kron: (kron_product, _kron_cotangents),
}


def _kron_tangent(a: np.ndarray, a_d: Any, b: np.ndarray, b_d: Any, y: np.ndarray) -> np.ndarray:
    """``kron(a_d, b) + kron(a, b_d)`` (None: zero) in one pass into a pooled buffer shaped like
    ``y``, with no temporaries."""
    if a_d is not None and b_d is not None:
        return kron_sum_of_two(a_d, b, a, b_d)
    if a_d is not None or b_d is not None:
        return kron_product(a if a_d is None else a_d, b if b_d is None else b_d)
    y_d = buffers.scratch(y)
    y_d.fill(0.0)
    return y_d


def _matmul_tangent(a: np.ndarray, a_d: Any, b: np.ndarray, b_d: Any, y: np.ndarray) -> np.ndarray:
    """``a_d @ b + a @ b_d`` (None: zero), the second product added by gemm into the first."""
    if a_d is None:
        return np.zeros(y.shape) if b_d is None else a @ b_d
    y_d = a_d @ b
    if b_d is not None:
        buffers.add_matmul(y_d, a, b_d)
    return y_d


def _factor(a: tuple, any_rank: bool) -> tuple | None:
    """``(matrix, tangent or None)`` of a 4-tuple argument this module handles, else None;
    ``any_rank``: an array of any number of axes (kron's formulas hold for every rank)."""
    x, t = a[0], a[2]
    if type(x) is not _ND or x.dtype != _F64 or (x.ndim < 1 if any_rank else x.ndim != 2):
        return None
    if t is NoTangent:
        return x, None
    if type(t) is _ND and t.shape == x.shape and t.dtype == _F64:
        return x, t
    return None


def fast_product(f: Any, args: tuple, kwargs: dict) -> tuple | None:
    """The dual rule's ``(output 4-tuple, dual pullback)`` of a product of two float64 matrices, or None."""
    try:
        found = PRODUCTS.get(f)
    except TypeError:  # an unhashable callable
        return None
    if found is None or kwargs or len(args) != 2:
        return None
    product, cotangents = found
    any_rank = product is kron_product
    fa, fb = _factor(args[0], any_rank), _factor(args[1], any_rank)
    if fa is None or fb is None or fa[0].ndim != fb[0].ndim:
        return None
    (a, a_d), (b, b_d) = fa, fb
    y = product(a, b)
    if product is kron_product:
        y_d = _kron_tangent(a, a_d, b, b_d, y)
    else:
        y_d = _matmul_tangent(a, a_d, b, b_d, y)
    # large outputs' fdata from the buffer pool (their page faults cost more than the product)
    out = (y, buffers.zeros_like(y), y_d, buffers.zeros_like(y))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g, g_d = out_cotangent(CoDual(y, out[1]), dy), out_cotangent(CoDual(y, out[3]), dy_d)
        to_a, to_b = cotangents(g, a, b)
        tangent_to_a, tangent_to_b = cotangents(g_d, a, b)
        # a zero cotangent tangent (a sum's, in an HVP) takes no products: a pass to find out
        # (stopping at the first nonzero) against two contractions
        zero_d = type(g_d) is _ND and not g_d.any()
        # a's cotangent needs b (and its tangent b's tangent); b's needs a
        for arg, to, tangent_to, other, other_d in ((args[0], to_a, tangent_to_a, b, b_d),
                                                    (args[1], to_b, tangent_to_b, a, a_d)):
            fdata, fdata_d = arg[1], arg[3]
            if type(fdata) is _ND:
                to(other, fdata)
            if type(fdata_d) is _ND:
                if not zero_d:
                    tangent_to(other, fdata_d)
                if other_d is not None:
                    to(other_d, fdata_d)
        return (NoRData, NoRData, NoRData), (NoRData, NoRData, NoRData)

    return out, pullback
