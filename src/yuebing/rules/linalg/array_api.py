"""The array-API members of ``numpy.linalg`` (and their ``numpy`` twins), derived from a plain
NumPy definition each: ``cross``, ``outer``, ``trace``, ``vecdot`` (also ``np.vecdot``),
``matmul``, ``matrix_transpose`` (also ``np.matrix_transpose``), ``diagonal``, ``tensordot``,
``svdvals``, ``matrix_norm``, ``vector_norm``; and the Python-level functions ``cond``,
``tensorsolve``, ``tensorinv`` and (second order) ``multi_dot``. ``matrix_rank`` has zero
derivative (an integer).

Each definition computes the same value with functions that have rules (``np.cross``,
``np.trace``, ``np.linalg.svd``, ``solve``, ``inv``, ``norm``...), and yuebing differentiates it
like user code in every mode (``common.derived``), after NumPy's own function has checked the
arguments. So each inherits the conventions and refusals of the rules it is written with
(``cond`` with ``p = None/2/-2`` those of the singular values: distinct ones).
"""
from __future__ import annotations

import math
import numpy as np

from ..cases import Case, randc, randn
from ..declare import nondifferentiable
from ..second_order import defined_by
from .common import derived, refuse, well_conditioned

L = np.linalg


def _conj(x):
    return np.conj(x) if np.iscomplexobj(x) else x


def _cross(x1, x2, /, *, axis=-1):
    return np.cross(x1, x2, axis=axis)


def _outer(x1, x2, /):
    return np.outer(x1, x2)


def _trace(x, /, *, offset=0, dtype=None):
    return np.trace(x, offset, -2, -1, dtype=dtype)


def _vecdot(x1, x2, /, *, axis=-1):
    return np.sum(_conj(x1) * x2, axis=axis)


def _np_vecdot(x1, x2, /, *, axis=-1):
    return np.sum(_conj(x1) * x2, axis=axis)


def _matmul(x1, x2, /):
    return np.matmul(x1, x2)


def _matrix_transpose(x, /):
    return np.swapaxes(x, -1, -2)


def _diagonal(x, /, *, offset=0):
    n1, n2 = np.shape(x)[-2:]
    if offset >= 0:
        m = max(0, min(n1, n2 - offset))
        return np.einsum("...ii->...i", x[..., :m, offset:offset + m])
    m = max(0, min(n1 + offset, n2))
    return np.einsum("...ii->...i", x[..., -offset:m - offset, :m])


def _tensordot(x1, x2, /, *, axes=2):
    return np.tensordot(x1, x2, axes)


def _svdvals(x, /):
    return np.linalg.svd(x, compute_uv=False)


def _matrix_norm(x, /, *, keepdims=False, ord="fro"):
    return np.linalg.norm(x, ord, (-2, -1), keepdims)


def _vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    shape = np.shape(x)
    if axis is None:
        y = np.linalg.norm(np.ravel(x), ord, 0)
        return np.reshape(y, (1,) * len(shape)) if keepdims else y
    if isinstance(axis, tuple) and len(axis) > 1:  # NumPy's way: the axes moved last, flattened
        axes = [a % len(shape) for a in axis]
        rest = [k for k in range(len(shape)) if k not in axes]
        moved = np.transpose(x, rest + axes)
        flat = np.reshape(moved, tuple(shape[k] for k in rest) + (math.prod(shape[k] for k in axes),))
        y = np.linalg.norm(flat, ord, -1)
        if keepdims:
            y = np.reshape(y, tuple(1 if k in axes else shape[k] for k in range(len(shape))))
        return y
    return np.linalg.norm(x, ord, axis, keepdims)


def _cond(x, p=None):
    if p is None or p == 2 or p == -2:
        s = np.linalg.svd(x, compute_uv=False)
        if p == -2:
            return s[..., -1] / s[..., 0]
        return s[..., 0] / s[..., -1]
    return np.linalg.norm(x, p, (-2, -1)) * np.linalg.norm(np.linalg.inv(x), p, (-2, -1))


def _tensorsolve(a, b, axes=None):
    nd = np.ndim(a)
    if axes is not None:
        order = [k for k in range(nd) if k not in [ax % nd for ax in axes]] + [ax % nd for ax in axes]
        a = np.transpose(a, order)
    shape = np.shape(a)[np.ndim(b):]
    n = math.prod(shape)
    return np.reshape(np.linalg.solve(np.reshape(a, (n, n)), np.ravel(b)), shape)


def _tensorinv(a, ind=2):
    shape = np.shape(a)
    n = math.prod(shape[:ind])
    return np.reshape(np.linalg.inv(np.reshape(a, (n, -1))), shape[ind:] + shape[:ind])


for _target, _definition in [
    (L.cross, _cross), (L.outer, _outer), (L.trace, _trace), (L.vecdot, _vecdot), (np.vecdot, _np_vecdot),
    (L.matmul, _matmul), (L.matrix_transpose, _matrix_transpose), (np.matrix_transpose, _matrix_transpose),
    (L.diagonal, _diagonal), (L.tensordot, _tensordot), (L.svdvals, _svdvals), (L.matrix_norm, _matrix_norm),
    (L.vector_norm, _vector_norm), (L.cond, _cond), (L.tensorsolve, _tensorsolve), (L.tensorinv, _tensorinv),
]:
    derived(_target, _definition)

nondifferentiable(L.matrix_rank)


def _multi_dot(arrays, *, out=None):
    """``multi_dot`` as a left-to-right chain of ``@`` (second order; the first-order rules are in
    ``products``). The same product; NumPy picks the cheapest association, so rounding differs."""
    if out is not None:
        refuse("numpy.linalg.multi_dot", "yuebing does not support out= here; assign the result instead")
    result = arrays[0]
    for m in arrays[1:]:
        result = result @ m
    return result


defined_by(L.multi_dot, _multi_dot)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

CASES = [
    Case(L.cross, randn(3), randn(3)),
    Case(L.cross, randn(2, 3), randn(3)),
    Case(L.cross, randc(2, 3), randc(2, 3)),
    Case(L.outer, randn(3), randn(2)),
    Case(L.outer, randc(2), randc(3)),
    Case(L.trace, randn(3, 3)),
    Case(L.trace, randn(2, 3, 4), kwargs={"offset": 1}),
    Case(L.trace, randc(2, 3, 3)),
    Case(L.vecdot, randn(3), randn(3)),
    Case(L.vecdot, randn(2, 3), randn(3)),
    Case(L.vecdot, randc(2, 3), randc(2, 3)),
    Case(L.vecdot, randn(3, 2), randn(3, 2), kwargs={"axis": 0}),
    Case(np.vecdot, randc(2, 3), randc(3)),
    Case(L.matmul, randn(2, 3), randn(3, 4)),
    Case(L.matmul, randc(2, 2, 3), randc(3)),
    Case(L.matrix_transpose, randn(2, 3)),
    Case(L.matrix_transpose, randc(2, 2, 3)),
    Case(np.matrix_transpose, randn(4, 2, 3)),
    Case(L.diagonal, randn(3, 3)),
    Case(L.diagonal, randc(2, 3, 4), kwargs={"offset": -1}),
    Case(L.tensordot, randn(2, 3, 4), randn(3, 4, 2)),
    Case(L.tensordot, randc(2, 3), randc(3, 2), kwargs={"axes": 1}),
    Case(L.svdvals, randn(4, 3)),
    Case(L.svdvals, randc(2, 3, 4)),
    Case(L.matrix_norm, randn(3, 4)),
    Case(L.matrix_norm, randn(2, 3, 4), kwargs={"ord": "nuc", "keepdims": True}),
    Case(L.matrix_norm, randc(3, 3), kwargs={"ord": 1}),
    Case(L.vector_norm, randn(3, 4)),
    Case(L.vector_norm, randn(3, 4), kwargs={"axis": 1, "ord": 3}),
    Case(L.vector_norm, randn(2, 3, 4), kwargs={"axis": (0, 2), "keepdims": True}),
    Case(L.vector_norm, randc(4), kwargs={"ord": 1}),
    Case(L.vector_norm, randn(2, 3, 4), kwargs={"axis": (2, 0), "ord": 1.5}),
    Case(L.matrix_norm, randn(2, 3, 4), kwargs={"ord": -np.inf}),
    Case(L.cond, well_conditioned(3)),
    Case(L.cond, well_conditioned(3, 2), kwargs={"p": -2}),
    Case(L.cond, well_conditioned(3), kwargs={"p": "fro"}),
    Case(L.cond, well_conditioned(3, complex_=True), kwargs={"p": 1}),
    Case(L.cond, well_conditioned(3), kwargs={"p": "nuc"}),
    Case(L.tensorsolve, well_conditioned(6).reshape(2, 3, 2, 3), randn(2, 3)),
    Case(L.tensorsolve, well_conditioned(6, complex_=True).reshape(2, 3, 6), randc(2, 3)),
    Case(L.tensorsolve, np.moveaxis(well_conditioned(6).reshape(2, 3, 6), 2, 0).copy(), randn(2, 3),
         kwargs={"axes": (0,)}),
    Case(L.tensorinv, well_conditioned(6).reshape(2, 3, 6)),
    Case(L.tensorinv, well_conditioned(6, complex_=True).reshape(6, 2, 3), kwargs={"ind": 1}),
    Case(L.matrix_rank, randn(3, 3)),
]
