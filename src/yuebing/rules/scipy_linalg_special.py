"""SciPy's special matrices: ``scipy.linalg.block_diag``, ``toeplitz`` and ``circulant``.

They are plain Python around NumPy, but yuebing cannot derive through that Python (SciPy's
array-API dispatch has a try/except, ``circulant`` reads ``__array_interface__`` through
``as_strided``), so each gets rules. All three are linear (``toeplitz(c)`` with ``r=None`` reads
``conj(c)``: real-linear) and copy each input entry to fixed output positions: the output is a
gather ``vals[..., idx]`` and the cotangent a scatter-add of the output cotangent over ``idx``.
Inputs may be numbers, lists or arrays, with batch dimensions where SciPy takes them
(``block_diag`` broadcasts leading dimensions, ``toeplitz``/``circulant`` treat leading dimensions
as a batch); cotangents of broadcast inputs are summed back. Second order: declared linear.

``scipy.linalg.norm`` is ``numpy.linalg.norm`` (its rules and conventions: gradient 0 at the
zero vector) after SciPy has checked the call on the primals: for a vector SciPy calls BLAS's
``nrm2``, which its Python cannot reach without writing attributes of a Fortran object.

``scipy.linalg.lstsq`` is ``numpy.linalg.lstsq`` the same way (SciPy's Python calls LAPACK
routines through ``get_lapack_funcs``).

``scipy.linalg.kron`` was removed in SciPy 1.17 (``numpy.kron`` has its rule).
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ..tangents import NoRData
from .cases import Case, randc, randn
from .core import Dual, frule_for, primal, rrule_for
from .numpy_creation import deliver, dense
from .second_order import defined_as, linear
from .util import fit_tangent, out_cotangent, output, unbroadcast

try:
    import scipy.linalg as sla
except ImportError:  # pragma: no cover - SciPy is optional
    sla = None


def _scatter(g: np.ndarray, idx: np.ndarray, size: int) -> np.ndarray:
    """``out[..., k] = sum of g[..., i, j] over idx[i, j] == k`` (the adjoint of ``vals[..., idx]``)."""
    batch = g.shape[:-2]
    flat = np.reshape(g, (-1, idx.size)).T  # (entries, batch)
    out = np.zeros((size, flat.shape[1]), dtype=g.dtype)
    np.add.at(out, idx.ravel(), flat)
    return np.reshape(out.T, batch + (size,))


def _to_arg(arg: Any, g: np.ndarray, shape: tuple) -> Any:
    """Deliver ``g`` (shaped like the broadcast, at-least-1-D/2-D input) to an argument."""
    return deliver(arg, np.reshape(unbroadcast(g, shape), np.shape(primal(arg))))


# --------------------------------------------------------------------------------------------
# block_diag (*arrs)
# --------------------------------------------------------------------------------------------


def _shape2(x: Any) -> tuple:
    """SciPy's view of a block: at least 2-D, dimensions prepended."""
    shape = np.shape(x)
    return (1,) * (2 - len(shape)) + shape


def _register_block_diag() -> None:
    @rrule_for(sla.block_diag)
    def _block_diag_rrule(*arrs: Any) -> tuple:
        xs = [primal(a) for a in arrs]
        result = output(sla.block_diag(*xs))

        def pullback(dy: Any) -> tuple:
            rdatas = [NoRData] * (len(arrs) + 1)
            if result.primal.dtype.kind not in "fc":
                return tuple(rdatas)
            g = out_cotangent(result, dy)
            r = c = 0
            for k, (arg, x) in enumerate(zip(arrs, xs)):
                shape = _shape2(x)
                rr, cc = shape[-2:]
                rdatas[k + 1] = _to_arg(arg, g[..., r:r + rr, c:c + cc], shape)
                r, c = r + rr, c + cc
            return tuple(rdatas)

        return result, pullback

    @frule_for(sla.block_diag)
    def _block_diag_frule(*arrs: Any) -> Dual:
        y = sla.block_diag(*(primal(a) for a in arrs))
        if y.dtype.kind not in "fc":
            return Dual(y, fit_tangent(sla.block_diag(*(np.zeros(np.shape(primal(a))) for a in arrs)), y))
        return Dual(y, fit_tangent(sla.block_diag(*(dense(a) for a in arrs)), y))


# --------------------------------------------------------------------------------------------
# toeplitz (c, r=None), circulant (c)
# --------------------------------------------------------------------------------------------


def _toeplitz_index(m: int, n: int) -> np.ndarray:
    """``toeplitz(c, r) = vals[..., idx]`` with ``vals = [c, r[1:]]``."""
    i, j = np.arange(m)[:, None], np.arange(n)[None, :]
    return np.where(i >= j, i - j, m + j - i - 1)


def _circulant_index(n: int) -> np.ndarray:
    return (np.arange(n)[:, None] - np.arange(n)[None, :]) % n


def _toeplitz_parameters(c: Any, r: Any = None) -> None:
    """``toeplitz``'s parameters, for the reverse rule's binder."""


def _register_toeplitz_circulant() -> None:
    def _toeplitz_rrule(*args: Any) -> tuple:
        c, r = args[0], (args[1] if len(args) > 1 else None)
        cx, rx = primal(c), primal(r)
        trim = len(args) + 1  # an rdata for f and each argument received
        result = output(sla.toeplitz(cx, rx))

        def pullback(dy: Any) -> tuple:
            y = result.primal
            if y.dtype.kind not in "fc":
                return (NoRData,) * trim
            g = out_cotangent(result, dy)
            m, n = y.shape[-2:]
            gvals = _scatter(g, _toeplitz_index(m, n), m + n - 1)
            gc, gr = gvals[..., :m], gvals[..., m:]
            shape_c = np.shape(np.atleast_1d(cx))
            if rx is None:  # r = conj(c): r[1:] gets gr, so c[1:] gets conj(gr)
                gc = np.concatenate([gc[..., :1], gc[..., 1:] + np.conj(gr)], axis=-1)
                return (NoRData, _to_arg(c, gc, shape_c), NoRData)[:trim]
            gr = np.concatenate([np.zeros(gr.shape[:-1] + (1,), dtype=gr.dtype), gr], axis=-1)  # r[0] is not read
            return NoRData, _to_arg(c, gc, shape_c), _to_arg(r, gr, np.shape(np.atleast_1d(rx)))

        return result, pullback

    _toeplitz_rrule.__signature__ = inspect.signature(_toeplitz_parameters)  # type: ignore[attr-defined]
    rrule_for(sla.toeplitz)(_toeplitz_rrule)

    @frule_for(sla.toeplitz)
    def _toeplitz_frule(c: Any, r: Any = None) -> Dual:
        y = sla.toeplitz(primal(c), primal(r))
        if y.dtype.kind not in "fc":
            return Dual(y, fit_tangent(np.zeros(y.shape), y))
        dr = None if primal(r) is None else dense(r)
        return Dual(y, fit_tangent(sla.toeplitz(dense(c), dr), y))  # r=None: conj(dc), as y reads conj(c)

    @rrule_for(sla.circulant)
    def _circulant_rrule(c: Any) -> tuple:
        cx = primal(c)
        result = output(sla.circulant(cx))

        def pullback(dy: Any) -> tuple:
            y = result.primal
            if y.dtype.kind not in "fc":
                return NoRData, NoRData
            n = y.shape[-1]
            gc = _scatter(out_cotangent(result, dy), _circulant_index(n), n)
            return NoRData, _to_arg(c, gc, np.shape(np.atleast_1d(cx)))

        return result, pullback

    @frule_for(sla.circulant)
    def _circulant_frule(c: Any) -> Dual:
        y = sla.circulant(primal(c))
        if y.dtype.kind not in "fc":
            return Dual(y, fit_tangent(np.zeros(y.shape), y))
        return Dual(y, fit_tangent(sla.circulant(dense(c)), y))


def _norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """``scipy.linalg.norm`` (``check_finite`` was applied by SciPy's own call); a Python float
    where SciPy calls BLAS (a non-empty float vector, the 2-norm)."""
    a = np.asarray(a)
    value = np.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)
    if a.ndim == 1 and a.size and a.dtype.char in "fdFD" and ord in (None, 2) and axis is None and not keepdims:
        return float(value)
    return value


def _lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True, lapack_driver=None):
    """``scipy.linalg.lstsq`` as ``numpy.linalg.lstsq`` (the same LAPACK solve, its rules and
    limits), after SciPy has checked the call on the primals; SciPy gives a 1-D ``b``'s residual
    as a number where NumPy gives it as a 1-element array, and the rank as a Python int."""
    x, residues, rank, s = np.linalg.lstsq(a, b, rcond=cond)
    if np.ndim(b) == 1 and np.size(residues):
        residues = residues[0]
    return x, residues, int(rank), s


if sla is not None:
    defined_as(sla.lstsq, _lstsq, validate=True)
    _register_block_diag()
    _register_toeplitz_circulant()
    linear(sla.block_diag, sla.toeplitz, sla.circulant)
    defined_as(sla.norm, _norm, validate=True)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _cases() -> list:
    return [
        Case(sla.block_diag, randn(2, 2), randn(1, 3), randn(2)),
        Case(sla.block_diag, randn(2, 3)),
        Case(sla.block_diag, randn(2, 2), 1.5, [[2.0, 3.0]]),
        Case(sla.block_diag, randn(2, 1, 2), randn(3, 3), name="block_diag(batched, broadcast)"),
        Case(sla.block_diag, randc(2, 2), randn(1, 1)),
        Case(sla.toeplitz, randn(3), randn(4)),
        Case(sla.toeplitz, randn(4)),
        Case(sla.toeplitz, randn(2, 3), randn(2, 2), name="toeplitz(batched)"),
        Case(sla.toeplitz, randc(3)),
        Case(sla.toeplitz, randc(3), randc(2)),
        Case(sla.toeplitz, [1.0, 2.0, 3.0], randn(3)),
        Case(sla.circulant, randn(4)),
        Case(sla.circulant, randn(2, 3), name="circulant(batched)"),
        Case(sla.circulant, randc(3)),
        Case(sla.norm, randn(4)), Case(sla.norm, randn(3, 2)), Case(sla.norm, randn(4), 1),
        Case(sla.norm, randn(3, 4), kwargs={"axis": 1}), Case(sla.norm, randn(3, 3), "fro"),
        Case(sla.norm, randc(3)),
        Case(sla.lstsq, randn(5, 3), randn(5)), Case(sla.lstsq, randn(4, 2), randn(4, 3)),
    ]


CASES = _cases() if sla is not None else []
