"""Matrix decompositions: ``np.linalg.cholesky``, ``qr``, ``eigh``, ``eigvalsh`` and ``svd``, real
and complex, batched (``eig``/``eigvals``: ``eigen.py``).

Conventions and limits (everything else raises ``RuleArgumentError``; docs/linalg.md):

* ``cholesky`` and ``eigh`` read one triangle of their argument and are differentiated as
  functions of the Hermitian matrix built from it (``common.hermitian_from``).
* Eigen- and singular vectors: distinct eigen/singular values (a repeated one's vectors, where
  read along a change splitting the tie, give inf/NaN with a ``NoDerivativeWarning``; vectors nobody
  reads add exactly zero: ``gap_product``, and ``eigh_second_order`` for eigh's second order). Their derivative keeps the gauge LAPACK fixed, so it is the derivative of what
  NumPy returns: unit norm, and for complex vectors the phase LAPACK makes real (``eigh``: the
  first component of each eigenvector for ``UPLO='L'``, the last for ``'U'``; ``svd``: the first
  component of each right singular vector, for square and tall matrices), found at run time as
  the first exactly real nonzero component (``common.real_pivot``). A wide complex ``svd`` has no
  such component: there ``v^H dv`` has a zero diagonal (a derivative of *a* gauge: use
  phase-invariant functions of the vectors).
* The completions of ``svd(full_matrices=True)`` of a non-square matrix (the last ``m - n``
  columns of ``u``, or rows of ``vh``) and of ``qr(mode='complete')`` of a tall one are not
  unique: their derivative turns them with the first columns and no more (``du2 = -u1 du1^H
  u2``, so ``u2^H du2 = 0``); LAPACK's completion moves otherwise, so only functions of them
  that are invariant under a unitary change of the completion (``u2 @ u2^H``) are meaningful.
  One real completing column is unique up to its sign, and there this is its exact derivative.
* ``qr``: every shape, modes ``'reduced'``, ``'complete'`` and ``'r'``; complex ``r`` has
  LAPACK's real diagonal. ``mode='raw'`` (Householder reflectors) is refused.

Each primitive's cotangent map is one plain-NumPy function ``_f_vjp(g, y, *args)`` (no
try/except, no ``out=``/``where=``: the forward transform differentiates it for second order,
``with_vjp`` at the end of the file). The reverse rule calls it; only ``cholesky`` of one real
float64 matrix takes a faster route (BLAS triangular kernels, ``_cholesky_blas_vjp``). The forward
rules are their own formulas (``jvp``), written once too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..cases import Case, randc, randn
from ..second_order import with_vjp
from . import direct_second_order
from .eigh_second_order import numpy_eigh, numpy_eigvalsh, numpy_singular_values, numpy_svd
from .gaps import gap_product
from .cholesky_blocks import real_cholesky_jvp, real_cholesky_vjp, real_lower_cholesky
from .common import (as_diag, cotangent_entry, diag_vector, hermitian_from, hermitian_from_adjoint,
                     linalg_rule, mH, phase_turn, phase_turn_adjoint, real_diag, real_pivot, refuse)

# --------------------------------------------------------------------------------------------
# cholesky
# --------------------------------------------------------------------------------------------


def _phi(x: np.ndarray) -> np.ndarray:
    """Lower triangle with the (real part of the) diagonal halved."""
    return np.tril(x, -1) + 0.5 * real_diag(x)


def _lower_inverse(low: np.ndarray) -> np.ndarray:
    """The inverse of a lower-triangular matrix: LAPACK's triangular inverse (a third of a general
    inverse's work) when SciPy is there and ``low`` is one real float64 matrix."""
    if low.ndim == 2 and low.dtype == np.float64:
        try:
            from scipy.linalg.lapack import dtrtri
        except ImportError:
            pass
        else:
            inverse, info = dtrtri(low, lower=1)
            if info == 0:
                return inverse
    return np.linalg.inv(low)


def lower_cholesky_cotangent(low, g):
    """The cotangent of ``a`` (its lower triangle read) given that of its lower Cholesky factor
    ``low``: ``S = L^-H Phi(L^H G) L^-1``, delivered to the triangle (plain NumPy)."""
    low_inv = np.linalg.inv(low)
    return hermitian_from_adjoint(mH(low_inv) @ _phi(mH(low) @ g) @ low_inv, lower=True)


def lower_cholesky(a: Any) -> np.ndarray:
    """``np.linalg.cholesky(a)``, by LAPACK on the Fortran view for one real float64 matrix
    (``cholesky_blocks.real_lower_cholesky``: half NumPy's time at n = 128)."""
    low = real_lower_cholesky(a)
    return np.linalg.cholesky(a) if low is None else low


def cholesky_parts(a: np.ndarray, low: np.ndarray) -> tuple[Callable, Callable]:
    """jvp and vjp of the lower Cholesky factor ``low`` of the Hermitian matrix read from tril(a)."""

    def jvp(da: Any) -> Any:
        fast = real_cholesky_jvp(low, da)
        if fast is not None:
            return fast
        h = hermitian_from(da, lower=True)
        low_inv = _lower_inverse(low)
        return low @ _phi(low_inv @ h @ mH(low_inv))

    def vjp(g: Any, need: tuple) -> tuple:
        fast = real_cholesky_vjp(low, g)
        return (lower_cholesky_cotangent(low, g) if fast is None else fast,)

    return jvp, vjp


def upper_cholesky_parts(a: np.ndarray, up: np.ndarray) -> tuple[Callable, Callable]:
    """The same for the upper factor of the matrix read from triu(a): ``up = lower(a^H)^H``."""
    jvp_low, vjp_low = cholesky_parts(mH(a), mH(up))
    return (lambda da: mH(jvp_low(mH(da))),
            lambda g, need: (mH(vjp_low(mH(g), need)[0]),))


def _cholesky_vjp(g, y, a, upper=False):
    low, g_low = (mH(y), mH(g)) if upper else (y, g)  # upper: the lower factor of a^H
    ga = lower_cholesky_cotangent(low, g_low)
    return (mH(ga) if upper else ga), None


def _cholesky_blas_vjp(g, y, a, upper=False):
    """``_cholesky_vjp`` for one real float64 matrix by ``cholesky_blocks.real_cholesky_vjp`` (measured 1.4x to
    7x faster, single-threaded, for n = 8 to 512); None where that does not apply."""
    low, g_low = (mH(y), mH(g)) if upper else (y, g)
    ga = real_cholesky_vjp(low, g_low)
    return None if ga is None else ((mH(ga) if upper else ga), None)


@linalg_rule(np.linalg.cholesky, vjp=_cholesky_vjp, fast_vjp=_cholesky_blas_vjp)
def _cholesky(a, upper=False):
    y = lower_cholesky(a) if upper is False else np.linalg.cholesky(a, upper=upper)
    a = np.asarray(a)
    return y, (upper_cholesky_parts(a, y) if upper else cholesky_parts(a, y))[0]


# --------------------------------------------------------------------------------------------
# qr
# --------------------------------------------------------------------------------------------


def _qr_square_tall_jvp(q, r, da):
    """Tangents of the reduced ``q, r`` of a square or tall matrix (complex: LAPACK's real
    diagonal of ``r`` kept real, so ``q^H dq`` has an imaginary diagonal)."""
    d = da @ np.linalg.inv(r)
    x = mH(q) @ d
    low = np.tril(x, -1)
    omega = low - mH(low)
    if np.iscomplexobj(x):
        omega = omega + 1j * as_diag(np.imag(diag_vector(x)))
    return q @ (omega - x) + d, (x - omega) @ r


def _qr_square_tall_vjp(q, r, gq, gr):
    """The cotangent of ``a`` from those of its reduced ``q, r`` (None: zero)."""
    n = r.shape[-1]
    mm = np.zeros(r.shape[:-2] + (n, n), dtype=np.result_type(q, r))
    if gr is not None:
        mm = mm + gr @ mH(r)
    if gq is not None:
        mm = mm - mH(q) @ gq
    nn = np.triu(mm) + mH(np.triu(mm, 1))
    if np.iscomplexobj(nn):  # the diagonal of r is real: only Re of mm's diagonal acts
        nn = nn - 1j * as_diag(np.imag(diag_vector(mm)))
    top = q @ nn if gq is None else gq + q @ nn
    return mH(np.linalg.solve(r, mH(top)))  # top @ r^-H


def _qr_vjp(g, y, a, mode="reduced"):
    a = np.asarray(a)
    m, n = a.shape[-2:]
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = None, g
    else:
        q, r = y[0], y[1]
        gq, gr = cotangent_entry(g, 0), cotangent_entry(g, 1)
    if m >= n:
        if mode == "complete" and m > n:  # the completion's columns: dq2 = -q1 dq1^H q2
            q1, q2 = q[..., :, :n], q[..., :, n:]
            if gq is not None:
                gq = gq[..., :, :n] - q2 @ mH(gq[..., :, n:]) @ q1
            q, r, gr = q1, r[..., :n, :], None if gr is None else gr[..., :n, :]
        return _qr_square_tall_vjp(q, r, gq, gr), None
    # wide: a = [x, y] with x = q r1 square and r2 = q^H y
    y2 = a[..., :, m:]
    gr1 = None if gr is None else gr[..., :, :m]
    if gr is not None:
        gq = (0 if gq is None else gq) + y2 @ mH(gr[..., :, m:])
    gx = _qr_square_tall_vjp(q, r[..., :, :m], gq, gr1)
    gy = np.zeros(y2.shape, dtype=gx.dtype) if gr is None else q @ gr[..., :, m:]
    return np.concatenate([gx, np.broadcast_to(gy, gx.shape[:-1] + (n - m,))], axis=-1), None


@linalg_rule(np.linalg.qr, vjp=_qr_vjp)
def _qr(a, mode="reduced"):
    label = "numpy.linalg.qr"
    y = np.linalg.qr(a, mode=mode)
    a = np.asarray(a)
    m, n = a.shape[-2:]
    if mode not in ("reduced", "complete", "r"):
        refuse(label, "yuebing does not differentiate mode='raw' (LAPACK's Householder reflectors); "
                      "use mode='reduced', 'complete' or 'r'")

    def jvp(da: Any) -> Any:
        q, r = np.linalg.qr(a) if mode == "r" else y
        if m >= n:
            q1, r1 = q[..., :, :n], r[..., :n, :]
            dq, dr = _qr_square_tall_jvp(q1, r1, da)
            if q.shape[-1] > n:  # complete: the completion turns with q1
                q2 = q[..., :, n:]
                dq = np.concatenate([dq, -q1 @ (mH(dq) @ q2)], axis=-1)
                dr = np.concatenate([dr, np.zeros(dr.shape[:-2] + (m - n, n), dtype=dr.dtype)], axis=-2)
        else:
            dq, dr1 = _qr_square_tall_jvp(q, r[..., :, :m], da[..., :, :m])
            dr = np.concatenate([dr1, mH(dq) @ a[..., :, m:] + mH(q) @ da[..., :, m:]], axis=-1)
        return dr if mode == "r" else [dq, dr]

    return y, jvp


# --------------------------------------------------------------------------------------------
# eigh, eigvalsh
# --------------------------------------------------------------------------------------------


def _phase_cotangent(gs: list, vs: list) -> Any:
    """``c`` of ``phase_turn_adjoint``: the cotangent of a common phase turn of the columns of
    the ``vs`` (their cotangents ``gs``, None for none)."""
    return sum(-np.imag(np.sum(np.conj(g) * v, axis=-2, keepdims=True)) for g, v in zip(gs, vs) if g is not None)


def _eigh_vjp(g, y, a, UPLO="L"):
    """At a tie (judged to rounding: ``gap_product``) a pair's weight is not determined by ``gw``
    and ``gv``: along a perturbation splitting the tie a matrix function ``v f(w) v^H`` needs
    ``f'(w)`` there, a function of the tied eigenspace's projector 0, and the rule sees neither
    ``f`` nor which one it is. So a tied pair with a nonzero entry of ``v^H gv`` gives a gradient that
    is not finite, as JAX's and PyTorch's do, never a number: weighing only the anti-Hermitian part
    (zero for both) gave the projector's right gradient and a matrix function's wrong one (expm
    through eigh at ``2 I + c t t^T``: ``tests/test_linalg_batched.py``)."""
    w, v = y[0], y[1]
    gw, gv = cotangent_entry(g, 0), cotangent_entry(g, 1)
    xbar = np.zeros(v.shape, dtype=v.dtype)
    if gw is not None:
        xbar = xbar + as_diag(np.real(np.asarray(gw)))
    if gv is not None:
        if np.iscomplexobj(v):  # the phase LAPACK fixed (a real component)
            gv = gv + phase_turn_adjoint(_phase_cotangent([gv], [v]), real_pivot(v))
        x = mH(v) @ gv
        xbar = xbar + gap_product(w, x)
    return hermitian_from_adjoint(v @ xbar @ mH(v), UPLO.upper() == "L"), None


@linalg_rule(np.linalg.eigh, vjp=_eigh_vjp)
def _eigh(a, UPLO="L"):
    y = np.linalg.eigh(a, UPLO=UPLO)

    def jvp(da: Any) -> Any:
        w, v = y
        x = mH(v) @ hermitian_from(da, UPLO.upper() == "L") @ v
        dv = v @ gap_product(w, x)
        if np.iscomplexobj(v):
            dv = dv + 1j * v * phase_turn(dv, real_pivot(v))
        return [np.real(diag_vector(x)), dv]

    return y, jvp


def _eigvalsh_vjp(g, y, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO=UPLO)[1]
    return hermitian_from_adjoint((v * np.asarray(g)[..., None, :]) @ mH(v), UPLO.upper() == "L"), None


@linalg_rule(np.linalg.eigvalsh, vjp=_eigvalsh_vjp)
def _eigvalsh(a, UPLO="L"):
    y = np.linalg.eigvalsh(a, UPLO=UPLO)

    def jvp(da: Any) -> Any:
        v = np.linalg.eigh(a, UPLO=UPLO)[1]
        return np.real(diag_vector(mH(v) @ hermitian_from(da, UPLO.upper() == "L") @ v))

    return y, jvp


# --------------------------------------------------------------------------------------------
# svd
# --------------------------------------------------------------------------------------------


def singular_values_jvp(u: np.ndarray, vh: np.ndarray, da: Any) -> Any:
    """The tangent of the singular values given the reduced singular vectors."""
    return np.real(diag_vector(mH(u) @ da @ mH(vh)))


def singular_values_cotangent(u, vh, gs):
    """The cotangent of the matrix given that of its singular values (plain NumPy)."""
    return (u * np.asarray(gs)[..., None, :]) @ vh


def _svd_reduced_vjp(u, s, vh, gu, gs, gv):
    """The cotangent of ``a`` from those of its reduced ``u, s, v`` (``gv`` of ``v = vh^H``)."""
    v = mH(vh)
    s_inv = 1.0 / s
    complex_ = np.iscomplexobj(u)
    if complex_ and (gu is not None or gv is not None):  # the phase LAPACK fixed, on v
        c = _phase_cotangent([gu, gv], [u, v])
        gv = phase_turn_adjoint(c, real_pivot(v)) + (0 if gv is None else gv)
    inner = np.zeros(s.shape[:-1] + (s.shape[-1], s.shape[-1]), dtype=u.dtype)
    ga = np.zeros(u.shape[:-1] + vh.shape[-1:], dtype=u.dtype)
    if gs is not None:
        inner = inner + as_diag(np.asarray(gs))
    # u's and v's turns meet the inverse gaps apart: at a repeated singular value their sum can vanish
    # (polar's u @ vh) where its limit over the gap does not (polar's p = v s v^H): NaN, never a guess
    if gu is not None:
        j = mH(u) @ gu
        inner = inner + gap_product(s, j - mH(j), squared=True) * s[..., None, :]
        if complex_:
            inner = inner + 1j * as_diag(np.imag(diag_vector(j)) * s_inv)
        ga = ga + ((gu - u @ j) * s_inv[..., None, :]) @ vh
    if gv is not None:
        k = mH(v) @ gv
        inner = inner + s[..., :, None] * gap_product(s, k - mH(k), squared=True)
        ga = ga + u @ (s_inv[..., :, None] * (mH(gv) - mH(k) @ vh))
    return ga + u @ inner @ vh


def _svd_vjp(g, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return singular_values_cotangent(u, vh, g), None, None, None
    u, s, vh = y[0], y[1], y[2]
    gu, gs, gvh = cotangent_entry(g, 0), cotangent_entry(g, 1), cotangent_entry(g, 2)
    gv = None if gvh is None else mH(gvh)
    k = s.shape[-1]
    if u.shape[-1] > k:  # full_matrices, tall: the completion u2 turns with u1 (du2 = -u1 du1^H u2)
        u1, u2 = u[..., :, :k], u[..., :, k:]
        gu = None if gu is None else gu[..., :, :k] - u2 @ mH(gu[..., :, k:]) @ u1
        u = u1
    if vh.shape[-2] > k:  # full_matrices, wide: the same for v
        v = mH(vh)
        v1, v2 = v[..., :, :k], v[..., :, k:]
        gv = None if gv is None else gv[..., :, :k] - v2 @ mH(gv[..., :, k:]) @ v1
        vh = mH(v1)
    return _svd_reduced_vjp(u, s, vh, gu, gs, gv), None, None, None


def _svd_reduced_jvp(u, s, vh, da):
    v = mH(vh)
    s_inv = 1.0 / s
    dp = mH(u) @ da @ v
    ds = np.real(diag_vector(dp))
    dp_s, s_dp = dp * s[..., None, :], s[..., :, None] * dp
    du = u @ gap_product(s, dp_s + mH(dp_s), squared=True, reference=dp_s) + (da @ v - u @ dp) * s_inv[..., None, :]
    dv = v @ gap_product(s, s_dp + mH(s_dp), squared=True, reference=s_dp) + (mH(da) @ u - v @ mH(dp)) * s_inv[..., None, :]
    if np.iscomplexobj(dp):  # u^H du gets Im(dp_kk) / s_k; then the phase LAPACK fixed, on v
        du = du + u * (1j * np.imag(diag_vector(dp)) * s_inv)[..., None, :]
        beta = phase_turn(dv, real_pivot(v))
        du, dv = du + 1j * u * beta, dv + 1j * v * beta
    return du, ds, dv


@linalg_rule(np.linalg.svd, vjp=_svd_vjp)
def _svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    label = "numpy.linalg.svd"
    y = np.linalg.svd(a, full_matrices, compute_uv, hermitian)
    a = np.asarray(a)
    if hermitian:
        refuse(label, "yuebing does not differentiate hermitian=True; use the default")
    if not compute_uv:
        def values_jvp(da: Any) -> Any:
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            return singular_values_jvp(u, vh, da)

        return y, values_jvp

    def jvp(da: Any) -> Any:
        u, s, vh = y
        k = s.shape[-1]
        du, ds, dv = _svd_reduced_jvp(u[..., :, :k], s, vh[..., :k, :], da)
        if u.shape[-1] > k:  # full_matrices, tall: du2 = -u1 du1^H u2
            du = np.concatenate([du, -u[..., :, :k] @ (mH(du) @ u[..., :, k:])], axis=-1)
        if vh.shape[-2] > k:
            v = mH(vh)
            dv = np.concatenate([dv, -v[..., :, :k] @ (mH(dv) @ v[..., :, k:])], axis=-1)
        return [du, ds, mH(dv)]

    return y, jvp


def _svd_second_order(xs: tuple, x_ds: tuple) -> Any:
    made = numpy_singular_values(xs, x_ds)
    return numpy_svd(xs, x_ds, _svd, _svd_vjp) if made is None else made


# --------------------------------------------------------------------------------------------
# Second order: each primitive's cotangent map above, differentiated by the forward transform. A
# tuple output's cotangent ``g`` is then a tuple (an ``EighResult``...) whose entries are
# ``NoRData`` for outputs nobody used: ``cotangent_entry`` reads them.
# --------------------------------------------------------------------------------------------

with_vjp(np.linalg.cholesky, _cholesky_vjp, direct=direct_second_order.numpy_cholesky)
with_vjp(np.linalg.qr, _qr_vjp)
with_vjp(np.linalg.eigh, _eigh_vjp, direct=numpy_eigh)
with_vjp(np.linalg.eigvalsh, _eigvalsh_vjp, direct=numpy_eigvalsh)
with_vjp(np.linalg.svd, _svd_vjp, direct=_svd_second_order)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _spd(n: int, *batch: int, dtype: Any = np.float64, complex_: bool = False) -> np.ndarray:
    """Symmetric (Hermitian) positive definite: B B^H + n I."""
    b = randc(*batch, n, n) if complex_ else randn(*batch, n, n).astype(dtype)
    return b @ mH(b) + np.asarray(n * np.eye(n), dtype=b.dtype)


def _sym(n: int) -> np.ndarray:
    """Symmetric with well-separated eigenvalues."""
    q = np.linalg.qr(randn(n, n))[0]
    return (q * np.arange(1.0, n + 1) * 2) @ q.T


f32 = np.float32

CASES = [
    Case(np.linalg.cholesky, _spd(3)),
    Case(np.linalg.cholesky, _spd(3, 2)),
    Case(np.linalg.cholesky, _spd(3), kwargs={"upper": True}),
    Case(np.linalg.cholesky, _spd(3, complex_=True)),
    Case(np.linalg.cholesky, _spd(3, complex_=True), kwargs={"upper": True}),
    Case(np.linalg.cholesky, _spd(3, dtype=f32)),
    Case(np.linalg.qr, randn(3, 3)),
    Case(np.linalg.qr, randn(5, 3)),
    Case(np.linalg.qr, randn(2, 4, 3)),
    Case(np.linalg.qr, randn(4, 3), kwargs={"mode": "r"}),
    Case(np.linalg.qr, randn(3, 3), kwargs={"mode": "complete"}),
    Case(np.linalg.qr, randn(3, 5)),
    Case(np.linalg.qr, randn(2, 2, 4), kwargs={"mode": "r"}),
    Case(np.linalg.qr, randn(4, 3), kwargs={"mode": "complete"}),  # one completing column: its sign is locally fixed
    Case(np.linalg.qr, randc(4, 3)),
    Case(np.linalg.qr, randc(2, 3, 3), kwargs={"mode": "complete"}),
    Case(np.linalg.qr, randc(2, 4)),
    Case(np.linalg.qr, randc(4, 2), kwargs={"mode": "r"}),
    Case(np.linalg.eigh, _sym(4)),
    Case(np.linalg.eigh, _sym(3) + np.triu(randn(3, 3), 1), kwargs={"UPLO": "U"}),
    Case(np.linalg.eigh, np.stack([_sym(3), _sym(3)])),
    Case(np.linalg.eigh, _spd(3, complex_=True)),
    Case(np.linalg.eigh, _spd(3, 2, complex_=True), kwargs={"UPLO": "U"}),
    Case(np.linalg.eigvalsh, _sym(4)),
    Case(np.linalg.eigvalsh, _spd(3, complex_=True)),
    Case(np.linalg.eigvalsh, _sym(3), kwargs={"UPLO": "U"}),
    Case(np.linalg.svd, randn(4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(3, 5), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(3, 3)),
    Case(np.linalg.svd, randn(2, 4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(4, 3), kwargs={"compute_uv": False}),
    Case(np.linalg.svd, randc(3, 4), kwargs={"compute_uv": False}),
    Case(np.linalg.svd, randn(4, 3)),  # full_matrices: one completing column (sign locally fixed)
    Case(np.linalg.svd, randn(2, 3)),
    Case(np.linalg.svd, randc(4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randc(2, 3, 3)),
]
