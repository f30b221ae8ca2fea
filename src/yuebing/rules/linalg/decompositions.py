"""Matrix decompositions: ``np.linalg.cholesky``, ``qr``, ``eigh``, ``eigvalsh`` and ``svd``.

Conventions and limits (everything else raises ``RuleArgumentError``): ``cholesky`` and ``eigh``
read one triangle of their argument and are differentiated as functions of the Hermitian matrix
built from it (``common.hermitian_from``). ``eigh``/``svd`` (with vectors) and ``qr``: real
inputs, distinct eigen/singular values, ``qr`` for square or tall matrices; eigen/singular values
alone (``eigvalsh``, ``svd(compute_uv=False)``) also for complex inputs.

Each primitive's cotangent map is one plain-NumPy function ``_f_vjp(g, y, *args)`` (no
try/except, no ``out=``/``where=``: the forward transform differentiates it for second order,
``with_vjp`` at the end of the file). The reverse rule calls it; only ``cholesky`` of one real
float64 matrix takes a faster route (BLAS triangular kernels, ``_cholesky_blas_vjp``). The forward
rules are their own formulas (``jvp``), written once too.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..cases import Case, randc, randn
from ..second_order import with_vjp
from .common import (as_diag, cotangent_entry, diag_vector, hermitian_from, hermitian_from_adjoint,
                     linalg_rule, mH, mT, real_diag, real_only, refuse)

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


def _real_cholesky_vjp(low: np.ndarray, g: Any) -> np.ndarray | None:
    """``lower_cholesky_cotangent`` for one real float64 matrix with BLAS triangular kernels:
    ``S = L^-T Phi(L^T G) L^-1`` as a triangular product and two triangular solves (3 n^3 flops
    instead of 6 n^3 for an explicit inverse and three dense products), returned as
    ``tril(S + S^T)`` with ``S``'s own diagonal. None if it does not apply.

    BLAS wants Fortran order, and ``L.T`` and ``G.T`` are Fortran views of C-ordered ``L`` and
    ``G``, so the work is done on transposes (no copies): ``M^T = G^T L``, then
    ``Phi(M)^T = M^T * W`` (``W`` upper triangular with 0.5 on its diagonal), ``X^T`` from
    ``L^T X^T = Phi^T`` and ``S^T`` from ``S^T L = X^T``."""
    if not (low.ndim == 2 and low.dtype == np.float64 and isinstance(g, np.ndarray) and g.dtype == np.float64
            and g.shape == low.shape):
        return None
    try:
        from scipy.linalg.blas import dtrmm, dtrsm
    except ImportError:
        return None
    up = low.T  # the upper factor U = L^T
    weights = _halved_upper(low.shape[0])
    m_t = dtrmm(1.0, up, g.T, side=1, lower=0, trans_a=1)  # G^T U^T = G^T L
    np.multiply(m_t, weights, out=m_t)  # Phi(L^T G)^T
    x_t = dtrsm(1.0, up, m_t, lower=0, overwrite_b=1)  # U X^T = Phi^T
    s_t = dtrsm(1.0, up, x_t, side=1, lower=0, trans_a=1, overwrite_b=1)  # S^T U^T = X^T
    out = s_t.T + s_t
    np.multiply(out, weights.T, out=out)  # tril(S + S^T), S's diagonal
    return out


@functools.lru_cache(maxsize=16)
def _halved_upper(n: int) -> np.ndarray:
    """Ones on and above the diagonal, 0.5 on it (Fortran order, read-only: shared)."""
    weights = np.asfortranarray(np.triu(np.ones((n, n))))
    weights[np.diag_indices(n)] = 0.5
    weights.flags.writeable = False
    return weights


def cholesky_parts(a: np.ndarray, low: np.ndarray) -> tuple[Callable, Callable]:
    """jvp and vjp of the lower Cholesky factor ``low`` of the Hermitian matrix read from tril(a)."""

    def jvp(da: Any) -> Any:
        low_inv = _lower_inverse(low)
        x = low_inv @ hermitian_from(da, lower=True) @ mH(low_inv)
        return low @ _phi(x)

    def vjp(g: Any, need: tuple) -> tuple:
        fast = _real_cholesky_vjp(low, g)
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
    """``_cholesky_vjp`` for one real float64 matrix by ``_real_cholesky_vjp`` (measured 1.4x to
    7x faster, single-threaded, for n = 8 to 512); None where that does not apply."""
    low, g_low = (mH(y), mH(g)) if upper else (y, g)
    ga = _real_cholesky_vjp(low, g_low)
    return None if ga is None else ((mH(ga) if upper else ga), None)


@linalg_rule(np.linalg.cholesky, vjp=_cholesky_vjp, fast_vjp=_cholesky_blas_vjp)
def _cholesky(a, upper=False):
    y = np.linalg.cholesky(a, upper=upper)
    a = np.asarray(a)
    return y, (upper_cholesky_parts(a, y) if upper else cholesky_parts(a, y))[0]


# --------------------------------------------------------------------------------------------
# qr
# --------------------------------------------------------------------------------------------


def _qr_vjp(g, y, a, mode="reduced"):
    if mode == "r":
        q, r = np.linalg.qr(a)
        gq, gr = None, g
    else:
        q, r = y[0], y[1]
        gq, gr = cotangent_entry(g, 0), cotangent_entry(g, 1)
    n = r.shape[-1]
    mm = np.zeros(r.shape[:-2] + (n, n), dtype=r.dtype)
    if gr is not None:
        mm = mm + gr @ mT(r)
    if gq is not None:
        mm = mm - mT(q) @ gq
    nn = np.triu(mm) + mT(np.triu(mm, 1))
    top = q @ nn if gq is None else gq + q @ nn
    return top @ mT(np.linalg.inv(r)), None


@linalg_rule(np.linalg.qr, vjp=_qr_vjp)
def _qr(a, mode="reduced"):
    label = "numpy.linalg.qr"
    y = np.linalg.qr(a, mode=mode)
    a = np.asarray(a)
    real_only(label, a)
    m, n = a.shape[-2:]
    if mode not in ("reduced", "complete", "r") or m < n or (mode == "complete" and m != n):
        refuse(label, "yuebing differentiates modes 'reduced' and 'r' for square or tall matrices "
                      "(and 'complete' for square ones)")

    def jvp(da: Any) -> Any:
        q, r = np.linalg.qr(a) if mode == "r" else y
        d = da @ np.linalg.inv(r)
        x = mT(q) @ d
        omega = np.tril(x, -1) - mT(np.tril(x, -1))
        dq, dr = q @ (omega - x) + d, (x - omega) @ r
        return dr if mode == "r" else [dq, dr]

    return y, jvp


# --------------------------------------------------------------------------------------------
# eigh, eigvalsh
# --------------------------------------------------------------------------------------------


def eigen_gaps(w: Any, squared: bool = False) -> Any:
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (of ``w**2`` if ``squared``)."""
    v = w * w if squared else w
    diff = v[..., None, :] - v[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool)
    return np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)


def _eigh_vjp(g, y, a, UPLO="L"):
    w, v = y[0], y[1]
    gw, gv = cotangent_entry(g, 0), cotangent_entry(g, 1)
    xbar = np.zeros(v.shape, dtype=v.dtype)
    if gw is not None:
        xbar = xbar + as_diag(np.asarray(gw))
    if gv is not None:
        xbar = xbar + eigen_gaps(w) * (mT(v) @ gv)
    return hermitian_from_adjoint(v @ xbar @ mT(v), UPLO.upper() == "L"), None


@linalg_rule(np.linalg.eigh, vjp=_eigh_vjp)
def _eigh(a, UPLO="L"):
    y = np.linalg.eigh(a, UPLO=UPLO)
    real_only("numpy.linalg.eigh", a)

    def jvp(da: Any) -> Any:
        w, v = y
        x = mT(v) @ hermitian_from(da, UPLO.upper() == "L") @ v
        return [diag_vector(x), v @ (eigen_gaps(w) * x)]

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


def _svd_vjp(g, y, a, full_matrices=True, compute_uv=True, hermitian=False):
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        return singular_values_cotangent(u, vh, g), None, None, None
    u, s, vh = y[0], y[1], y[2]
    gu, gs, gvh = cotangent_entry(g, 0), cotangent_entry(g, 1), cotangent_entry(g, 2)
    v = mT(vh)
    gaps = eigen_gaps(s, squared=True)
    s_inv = 1.0 / s
    inner = np.zeros(s.shape[:-1] + (s.shape[-1], s.shape[-1]), dtype=s.dtype)
    ga = np.zeros(a.shape, dtype=u.dtype)
    if gs is not None:
        inner = inner + as_diag(np.asarray(gs))
    if gu is not None:
        ut_gu = mT(u) @ gu
        inner = inner + (gaps * (ut_gu - mT(ut_gu))) * s[..., None, :]
        ga = ga + ((gu - u @ ut_gu) * s_inv[..., None, :]) @ vh
    if gvh is not None:
        gv = mT(gvh)
        vt_gv = mT(v) @ gv
        inner = inner + s[..., :, None] * (gaps * (vt_gv - mT(vt_gv)))
        ga = ga + u @ (s_inv[..., :, None] * (mT(gv) - mT(vt_gv) @ vh))
    return ga + u @ inner @ vh, None, None, None


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
    real_only(label, a)
    m, n = a.shape[-2:]
    if full_matrices and m != n:
        refuse(label, "yuebing differentiates full_matrices=False (or square matrices) only")

    def jvp(da: Any) -> Any:
        u, s, vh = y
        v = mT(vh)
        gaps = eigen_gaps(s, squared=True)
        s_inv = 1.0 / s
        dp = mT(u) @ da @ v
        ds = diag_vector(dp)
        dp_s, s_dp = dp * s[..., None, :], s[..., :, None] * dp
        du = u @ (gaps * (dp_s + mT(dp_s))) + (da @ v - u @ dp) * s_inv[..., None, :]
        dv = v @ (gaps * (s_dp + mT(s_dp))) + (mT(da) @ u - v @ mT(dp)) * s_inv[..., None, :]
        return [du, ds, mT(dv)]

    return y, jvp


# --------------------------------------------------------------------------------------------
# Second order: each primitive's cotangent map above, differentiated by the forward transform. A
# tuple output's cotangent ``g`` is then a tuple (an ``EighResult``...) whose entries are
# ``NoRData`` for outputs nobody used: ``cotangent_entry`` reads them.
# --------------------------------------------------------------------------------------------

with_vjp(np.linalg.cholesky, _cholesky_vjp)
with_vjp(np.linalg.qr, _qr_vjp)
with_vjp(np.linalg.eigh, _eigh_vjp)
with_vjp(np.linalg.eigvalsh, _eigvalsh_vjp)
with_vjp(np.linalg.svd, _svd_vjp)


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
    Case(np.linalg.eigh, _sym(4)),
    Case(np.linalg.eigh, _sym(3) + np.triu(randn(3, 3), 1), kwargs={"UPLO": "U"}),
    Case(np.linalg.eigh, np.stack([_sym(3), _sym(3)])),
    Case(np.linalg.eigvalsh, _sym(4)),
    Case(np.linalg.eigvalsh, _spd(3, complex_=True)),
    Case(np.linalg.eigvalsh, _sym(3), kwargs={"UPLO": "U"}),
    Case(np.linalg.svd, randn(4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(3, 5), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(3, 3)),
    Case(np.linalg.svd, randn(2, 4, 3), kwargs={"full_matrices": False}),
    Case(np.linalg.svd, randn(4, 3), kwargs={"compute_uv": False}),
    Case(np.linalg.svd, randc(3, 4), kwargs={"compute_uv": False}),
]
