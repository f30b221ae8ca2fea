"""General (non-Hermitian) eigenproblems: ``np.linalg.eig`` and ``eigvals``, real and complex,
batched, in every mode.

Eigenvalues must be distinct: at a repeated eigenvalue neither it nor its eigenvectors have a
derivative (a perturbation splits it by the eigenvalues of its projection onto the eigenspace),
so there (relative gap below 1e-12) forward mode refuses a nonzero tangent and reverse mode gives
the matrix a NaN cotangent: reverse mode cannot tell a constant matrix built inside the function
(whose eigen-decomposition is fine, and which discards the NaN) from a differentiated one. With ``a = V diag(w) V^-1`` and ``X = V^-1 da V``: ``dw = diag(X)`` and
``dV = V (F o X)`` (``F[i, j] = 1 / (w_j - w_i)``, 0 on the diagonal), then the gauge NumPy (LAPACK's
``geev``) fixes is kept:

* every eigenvector has unit Euclidean norm: ``Re(v_k^H dv_k) = 0``;
* its component of largest modulus is real (LAPACK rotates it onto the real axis): the imaginary
  part of that component's tangent is 0.

So the derivative of the eigenvectors is the derivative of what NumPy returns (finite differences
of ``np.linalg.eig`` agree), not only of gauge-invariant quantities. For real input with real
eigenvalues the vectors are real and only the norm constraint acts (the sign is locally
constant). The cotangent map applies the adjoints of the two gauge projections, then
``a_bar = V^-H (diag(w_bar) + conj(F) o (V^H V_bar)) V^H``; real input takes its real part.

Second order (``with_vjp``): the cotangent map differentiated; that is complex arithmetic
whenever ``V`` is complex, which the second-order machinery refuses for now (clear error).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..cases import Case, randc, randn
from ..second_order import with_vjp
from .common import cotangent_entry, diag_vector, linalg_rule, mH, refuse


def _gaps(w):
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (and at exactly repeated eigenvalues)."""
    diff = w[..., None, :] - w[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool) & (diff != 0)  # a repeated pair: refused or NaN (below)
    return np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)


def _repeated(w):
    """Per matrix of a stack: whether two eigenvalues coincide (relative gap below 1e-12)."""
    diff = np.abs(w[..., None, :] - w[..., :, None]) + np.eye(w.shape[-1])
    scale = np.maximum(np.max(np.abs(w), axis=-1, initial=0.0), 1.0)
    return np.min(diff, axis=(-2, -1), initial=np.inf) <= 1e-12 * scale


def _check_distinct(w, da, label):
    """Forward mode: refuse a nonzero tangent at repeated eigenvalues."""
    if np.any(_repeated(w)) and np.any(da != 0):
        refuse(label, "the eigenvalues are repeated: they (and the eigenvectors) have no derivative there "
                      "(a perturbation splits them along the eigenvalues of its projection)")


def _nan_where_repeated(ga, w):
    """Reverse mode: a NaN cotangent for the matrices with repeated eigenvalues (a constant
    matrix discards it; a differentiated one gets a NaN gradient, never a wrong number)."""
    repeated = _repeated(w)
    return np.where(np.reshape(repeated, np.shape(repeated) + (1, 1)), np.nan, ga)


def _pivot(v):
    """The row index of each eigenvector's largest component (LAPACK makes it real), and that
    component (..., 1, n)."""
    rows = np.argmax(np.abs(v), axis=-2)[..., None, :]
    return rows, np.take_along_axis(v, rows, axis=-2)


def _gauge(v, dv):
    """Project ``dv`` onto NumPy's gauge: unit norm, largest component real."""
    dv = dv - v * np.real(np.sum(np.conj(v) * dv, axis=-2, keepdims=True))
    if not np.iscomplexobj(v):
        return dv
    rows, p = _pivot(v)
    theta = np.imag(np.take_along_axis(dv, rows, axis=-2) / p)
    return dv - 1j * v * theta


def _gauge_adjoint(v, gv):
    """The adjoint of ``_gauge`` (real inner product)."""
    if np.iscomplexobj(v):
        rows, p = _pivot(v)
        weight = np.imag(np.sum(np.conj(gv) * v, axis=-2, keepdims=True)) / np.real(p)
        extra = np.zeros(np.shape(gv), dtype=np.result_type(gv, v))
        np.put_along_axis(extra, rows, 1j * weight, axis=-2)
        gv = gv + extra
    return gv - v * np.real(np.sum(np.conj(gv) * v, axis=-2, keepdims=True))


def _eig_vjp(g, y, a):
    w, v = y[0], y[1]
    gw, gv = cotangent_entry(g, 0), cotangent_entry(g, 1)
    inner = np.zeros(np.shape(v), dtype=np.result_type(v, w, 1j))
    if gw is not None:
        inner = inner + np.asarray(gw)[..., :, None] * np.eye(w.shape[-1])
    if gv is not None:
        inner = inner + np.conj(_gaps(w)) * (mH(v) @ _gauge_adjoint(v, np.asarray(gv)))
    ga = _nan_where_repeated(np.linalg.solve(mH(v), inner @ mH(v)), w)
    return (ga if np.iscomplexobj(a) else np.real(ga)),


@linalg_rule(np.linalg.eig, vjp=_eig_vjp)
def _eig(a):
    y = np.linalg.eig(a)

    def jvp(da: Any) -> Any:
        w, v = y
        _check_distinct(w, da, "numpy.linalg.eig")
        x = np.linalg.solve(v, da @ v)
        return [diag_vector(x), _gauge(v, v @ (_gaps(w) * x))]

    return y, jvp


def _eigvals_vjp(g, y, a):
    v = np.linalg.eig(a)[1]
    ga = _nan_where_repeated(np.linalg.solve(mH(v), np.asarray(g)[..., :, None] * mH(v)), y)
    return (ga if np.iscomplexobj(a) else np.real(ga)),


@linalg_rule(np.linalg.eigvals, vjp=_eigvals_vjp)
def _eigvals(a):
    y = np.linalg.eigvals(a)

    def jvp(da: Any) -> Any:
        _check_distinct(y, da, "numpy.linalg.eigvals")
        v = np.linalg.eig(a)[1]
        return diag_vector(np.linalg.solve(v, da @ v))

    return y, jvp


with_vjp(np.linalg.eig, _eig_vjp)
with_vjp(np.linalg.eigvals, _eigvals_vjp)


def _real_spectrum(n: int, *batch: int) -> np.ndarray:
    """A real matrix with real, well-separated eigenvalues."""
    p = randn(*batch, n, n) + n * np.eye(n)
    return (p * np.arange(1.0, n + 1)) @ np.linalg.inv(p)


CASES = [
    Case(np.linalg.eig, _real_spectrum(3)),
    Case(np.linalg.eig, randn(3, 3)),
    Case(np.linalg.eig, randn(2, 3, 3)),
    Case(np.linalg.eig, randc(3, 3)),
    Case(np.linalg.eig, randc(2, 2, 2)),
    Case(np.linalg.eigvals, randn(3, 3)),
    Case(np.linalg.eigvals, _real_spectrum(3, 2)),
    Case(np.linalg.eigvals, randc(2, 3, 3)),
]
