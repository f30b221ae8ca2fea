"""SciPy decompositions: ``scipy.linalg.eigh``, ``eig``, ``svd``, ``qr``, ``lu``, ``lu_factor``,
``pinv`` and ``pinvh``. Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

Built on ``linalg/``'s framework (``linalg_rule(f, vjp=...)``, ``with_vjp``); NumPy's cotangent
maps for ``svd`` and ``pinv`` are reused as they are (they take the factorisation as ``y``). The
others are written here because SciPy's keywords change the math: ``eigh`` of a pencil
(``b=``, ``type=1``) and with ``subset_by_index``/``subset_by_value``, ``eig`` (complex
eigenvectors), ``qr`` with ``pivoting=True``, ``lu`` and ``lu_factor`` (not in NumPy).

Gauge conventions (what a derivative of a vector that is only defined up to a factor means):

* ``eigh``, ``svd``: as ``numpy.linalg`` (``rules/linalg/decompositions.py``): real inputs for
  the vectors (eigenvalues/singular values alone also complex), distinct eigen/singular values,
  the tangent of each vector orthogonal to it (``v^T dv = 0``: the sign LAPACK chose is kept).
  Generalised ``eigh(a, b)`` keeps ``V^T B V = I``. ``subset_by_*`` selects rows of the full
  derivative (the set selected is locally constant).
* ``eig`` (vectors): LAPACK normalises each eigenvector to unit 2-norm with its largest
  component real. The tangent keeps both: ``Re(v^H dv) = 0`` and ``Im(dv[k]) = 0`` at the
  component ``k`` of largest modulus (so finite differences of LAPACK's vectors agree; JAX's
  ``eig`` only keeps the norm). Distinct eigenvalues; ``left=True``, ``b=`` and
  ``homogeneous_eigvals=True`` are refused.
* ``qr``: modes 'economic' and 'r' for square or tall, 'full' for square matrices (the extra
  columns of a tall full Q are not unique); real inputs. ``pivoting=True``: the permutation is
  piecewise constant, the derivative is that of ``qr(a[:, P])``.
* ``lu``/``lu_factor``: the permutation held fixed (piecewise constant); ``lu`` of any 2-D
  matrix (a tall or wide one: the leading square block, then the rows or columns past it),
  ``lu_factor`` of square ones.
  ``lu_factor``'s packed matrix carries ``L``'s strict lower triangle and ``U``'s upper one.
* ``pinv``: full-rank matrices (the rank must not change under a perturbation).
* ``pinvh``: NumPy's ``pinv`` map at the Hermitian matrix read from one triangle, so repeated
  eigenvalues are smooth points (through ``eigh`` they were 0/0). A rank-deficient matrix is
  accepted: the derivative is the one along perturbations that keep the rank (``b @ b.T`` moved
  through ``b``, scikit-learn's covariances with fewer samples than features); across a change
  of rank pinvh jumps (docs/limitations.md, known silent cases).

``overwrite_*=True`` is refused (SciPy may destroy the argument); ``check_finite``,
``lapack_driver``, ``driver`` and ``lwork`` do not change the math and are passed through.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, randc, randn
from .linalg import hermitian_from, hermitian_from_adjoint, linalg_rule, mH, mT, refuse
from .linalg.common import as_diag, cotangent_entry, diag_vector
from .linalg.decompositions import _svd_vjp as _numpy_svd_vjp
from .linalg.decompositions import gap_product, singular_values_cotangent, singular_values_jvp
from .linalg.eigh_second_order import scipy_eigh as _eigh_second_order
from .linalg.solves import _pinv_vjp as _numpy_pinv_vjp
from .second_order import with_vjp

try:
    import scipy.linalg as sla
except ImportError:  # pragma: no cover - SciPy is optional
    sla = None


def _matrix(label: str, a: Any, square: bool = True, batch: bool = False) -> np.ndarray:
    """``a`` as an array, refused unless a 2-D (square) matrix, or a stack of them if ``batch``."""
    a = np.asarray(a)
    if a.ndim < 2 or (a.ndim > 2 and not batch) or (square and a.shape[-2] != a.shape[-1]):
        what = "a 2-D matrix or a stack of them" if batch else "a single 2-D matrix"
        refuse(label, f"yuebing differentiates this function for {what} only{' (square)' if square else ''}, "
                      f"got shape {a.shape}")
    return a


def _real_like(a: Any, g: Any) -> Any:
    """A cotangent for ``a``: its real part when ``a`` is real (the real inner product)."""
    return np.real(g) if not np.iscomplexobj(a) else g


# --------------------------------------------------------------------------------------------
# eigh (a, b=None, lower, eigvals_only, ..., type, subset_by_index, subset_by_value)
# --------------------------------------------------------------------------------------------


def _selected(w_full: np.ndarray, subset_by_index: Any, subset_by_value: Any) -> np.ndarray:
    """The indices into the full (ascending) spectrum that a subset keeps."""
    n = w_full.shape[-1]
    if subset_by_index is not None:
        lo, hi = int(subset_by_index[0]), int(subset_by_index[1])
        return np.arange(lo, hi + 1)
    if subset_by_value is not None:
        lo, hi = subset_by_value
        return np.nonzero((w_full > lo) & (w_full <= hi))[0]
    return np.arange(n)


def _eigh_vjp(g, y, a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, kind=1,
              check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    """With ``C = V^T dA V - V^T dB V diag(w)``: ``dw = diag(C)``, ``dV = V X``, ``X = F * C`` off
    the diagonal and ``-(V^T dB V)_ii / 2`` on it (``F[i, j] = 1/(w_j - w_i)``); its adjoint.
    (``kind`` is SciPy's ``type``: the forward transform generated code calls the builtin.)

    Third order (``transform/third_order.py``) refuses a primitive whose cotangent map calls it
    again, as this one may (``_full_eigh``): ``sla.eigh`` is passed from here so that it sees
    that (``numpy.linalg.eigh``'s map, whose third derivatives disagree with finite differences,
    is refused too)."""
    w, v, idx = _full_eigh(y, a, b, lower, eigvals_only, subset_by_index, subset_by_value, driver, sla.eigh)
    gw = g if eigvals_only else cotangent_entry(g, 0)
    gv = None if eigvals_only else cotangent_entry(g, 1)
    n = w.shape[-1]
    whole = subset_by_index is None and subset_by_value is None  # (a stack has no subset)
    m = np.zeros(v.shape, dtype=v.dtype)
    if gw is not None:
        m = m + (as_diag(np.asarray(gw)) if whole else _scatter_diag(np.asarray(gw), idx, n))
    xbar_diag = None
    if gv is not None:
        full_gv = np.asarray(gv) if whole else _scatter_columns(np.asarray(gv), idx, n)
        xbar = mH(v) @ full_gv
        m = m + gap_product(w, xbar)
        xbar_diag = np.eye(n) * xbar
    ga = hermitian_from_adjoint(v @ m @ mH(v), lower)
    if b is None:
        return (_real_like(a, ga),)
    gb_full = -(v @ (m * w[..., None, :]) @ mH(v))
    if xbar_diag is not None:
        gb_full = gb_full - 0.5 * (v @ xbar_diag @ mH(v))
    return _real_like(a, ga), _real_like(b, hermitian_from_adjoint(gb_full, lower))


def _full_eigh(y, a, b, lower, eigvals_only, subset_by_index, subset_by_value, driver, eigh=None) -> tuple:
    """The full spectrum and vectors (the eigenvector derivative needs them all), the indices of
    the ones returned, and the returned vectors in their place (a driver may pick other signs)."""
    if not eigvals_only and subset_by_index is None and subset_by_value is None:
        return y[0], y[1], np.arange(y[0].shape[-1])  # the output is the full decomposition
    if eigvals_only and b is None:  # the vectors' signs do not matter; NumPy's eigh takes stacks
        w, v = np.linalg.eigh(a, UPLO="L" if lower else "U")
    else:
        full_driver = driver if driver in ("ev", "evd", "evr", "evx", "gv", "gvd", "gvx") else None
        w, v = (eigh or sla.eigh)(a, b, lower=lower, driver=full_driver)
    idx = _selected(w, subset_by_index, subset_by_value)
    if eigvals_only:
        return w, v, idx
    n = w.shape[-1]
    return w, v - _scatter_columns(v[:, idx], idx, n) + _scatter_columns(y[1], idx, n), idx


def _scatter_diag(d: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    """A diagonal matrix with ``d`` at the positions ``idx`` of a length-``n`` diagonal."""
    full = np.zeros((len(idx), n))
    full = full + (idx[:, None] == np.arange(n)[None, :])
    return as_diag(d @ full)


def _scatter_columns(gv: np.ndarray, idx: np.ndarray, n: int) -> np.ndarray:
    """The columns of ``gv`` at positions ``idx`` of an ``n``-column matrix (zeros elsewhere)."""
    place = np.zeros((len(idx), n)) + (idx[:, None] == np.arange(n)[None, :])
    return gv @ place


def _register_eigh() -> None:
    @linalg_rule(sla.eigh, diff=(0, 1), vjp=_eigh_vjp)
    def _eigh(a, b=None, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
              check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
        label = "scipy.linalg.eigh"
        a = _matrix(label, a, batch=True)
        if a.ndim > 2 and (not eigvals_only or b is not None or subset_by_index is not None
                           or subset_by_value is not None):
            refuse(label, "yuebing differentiates a stack of matrices for eigvals_only=True without b= or "
                          "subsets only (SciPy returns a list for a stack); use numpy.linalg.eigh, or loop")
        if type != 1:
            refuse(label, f"yuebing differentiates type=1 (a v = w b v) only, not type={type!r}")
        if not eigvals_only and (np.iscomplexobj(a) or np.iscomplexobj(b)):
            refuse(label, "yuebing differentiates complex Hermitian matrices for eigvals_only=True only "
                          "(a complex eigenvector's phase is not unique)")
        if b is not None and np.iscomplexobj(b):
            refuse(label, "yuebing differentiates a real b= only")
        pair = (lambda v: None if v is None else [float(x) for x in np.asarray(v).ravel()])
        y = sla.eigh(a, b, lower=lower, eigvals_only=eigvals_only, type=1, check_finite=check_finite,
                     subset_by_index=subset_by_index, subset_by_value=pair(subset_by_value), driver=driver)

        def jvp(da: Any, db: Any) -> Any:
            w, v, idx = _full_eigh(y, a, b, lower, eigvals_only, subset_by_index, subset_by_value, driver)
            c = np.zeros(v.shape, dtype=v.dtype)
            if da is not None:
                c = c + mH(v) @ hermitian_from(da, lower) @ v
            vbv = None
            if db is not None:
                vbv = mH(v) @ hermitian_from(db, lower) @ v
                c = c - vbv * w[None, :]
            dw = np.real(diag_vector(c))[..., idx]
            if eigvals_only:
                return dw
            x = gap_product(w, c)
            if vbv is not None:
                x = x - 0.5 * np.eye(len(w)) * vbv
            return [dw, (v @ x)[..., idx]]

        return y, jvp


# --------------------------------------------------------------------------------------------
# eig (a, b=None, left=False, right=True, ...): right eigenvectors in LAPACK's gauge
# --------------------------------------------------------------------------------------------


def _largest(v: np.ndarray) -> np.ndarray:
    """Per column, the index of the component of largest modulus (LAPACK makes it real)."""
    return np.argmax(np.abs(v), axis=0)


def _eig_vjp(g, y, a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False, check_finite=True,
             homogeneous_eigvals=False):
    """``dA = V (diag(dw) + F^-1 * dP) V^-1`` read backwards: ``P = V^-1 dA V``, ``dw = diag(P)``,
    ``dv = V (F * P) + v c`` with ``c`` fixing the norm and the phase; the adjoint of each step."""
    if right:
        w, v = y[0], y[1]
        gw, gv = cotangent_entry(g, 0), cotangent_entry(g, 1)
    else:
        w, v = sla.eig(a)
        gw, gv = g, None
    n = w.shape[-1]
    m = np.zeros((n, n), dtype=complex)
    if gw is not None:
        m = m + as_diag(np.asarray(gw))
    if gv is not None:
        gv = np.asarray(gv)
        s = np.sum(np.conj(v) * gv, axis=0)  # v_i^H gv_i
        k = _largest(v)
        vk = np.real(v[k, np.arange(n)])
        picks = (np.arange(n)[:, None] == k[None, :])  # e_k per column
        gp = gv - np.real(s)[None, :] * v - 1j * (np.imag(s) / vk)[None, :] * picks
        m = m + gap_product(np.conj(w), mH(v) @ gp)
    ga = np.linalg.solve(mH(v), m @ mH(v))  # V^-H M V^H
    return (_real_like(a, ga),)


def _register_eig() -> None:
    @linalg_rule(sla.eig, vjp=_eig_vjp)
    def _eig(a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False, check_finite=True,
             homogeneous_eigvals=False):
        label = "scipy.linalg.eig"
        a = _matrix(label, a)
        if b is not None or left or homogeneous_eigvals:
            refuse(label, "yuebing differentiates the standard problem's eigenvalues and right eigenvectors "
                          "only (b=None, left=False, homogeneous_eigvals=False)")
        y = sla.eig(a, left=False, right=right, check_finite=check_finite)

        def jvp(da: Any) -> Any:
            w, v = sla.eig(a)
            p = np.linalg.solve(v, da @ v)
            dw = diag_vector(p)
            if not right:
                return dw
            dv = v @ gap_product(w, p)
            k = _largest(v)
            cols = np.arange(len(w))
            re = -np.real(np.sum(np.conj(v) * dv, axis=0))
            im = -np.imag(dv[k, cols]) / np.real(v[k, cols])
            dv = dv + v * (re + 1j * im)[None, :]
            return [dw, dv if np.iscomplexobj(v) else np.real(dv)]

        return y, jvp


# --------------------------------------------------------------------------------------------
# svd, pinv: NumPy's cotangent maps
# --------------------------------------------------------------------------------------------


def _svd_vjp(g, y, a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True,
             lapack_driver="gesdd"):
    """NumPy's map. It calls ``svd`` again for ``compute_uv=False``; third order refuses such a
    primitive, as it refuses ``numpy.linalg.svd`` (whose vectors' third derivatives through this
    map disagree with finite differences too)."""
    if not compute_uv:
        u, _, vh = np.linalg.svd(a, full_matrices=False)  # (NumPy's takes stacks)
        return (singular_values_cotangent(u, vh, g),)
    return (_numpy_svd_vjp(g, y, a, full_matrices, compute_uv)[0],)


def _pinv_vjp(g, y, a, atol=None, rtol=None, return_rank=False, check_finite=True):
    p, gp = _pseudo_inverse_part(g, y, return_rank)
    if gp is None:
        return (None,)
    return (_numpy_pinv_vjp(gp, p, a)[0],)


def _pseudo_inverse_part(g: Any, y: Any, return_rank: bool) -> tuple:
    """The pseudo-inverse and its cotangent (None for none), out of ``(p, rank)`` if ``return_rank``."""
    return (y[0], cotangent_entry(g, 0)) if return_rank else (y, g)


def _pinvh_vjp(g, y, a, atol=None, rtol=None, lower=True, return_rank=False, check_finite=True):
    """NumPy's ``pinv`` map at the Hermitian matrix ``s`` built from the triangle read: with
    ``p = s+``, ``dp = -p ds p + p p ds (I - s p) + (I - p s) ds p p`` holds wherever the rank is
    constant, repeated eigenvalues included (eigh's map divides by eigenvalue gaps: a NaN at a tie)."""
    p, gp = _pseudo_inverse_part(g, y, return_rank)
    if gp is None:
        return (None,)
    gs = _numpy_pinv_vjp(gp, p, hermitian_from(np.asarray(a), lower))[0]
    return (_real_like(a, hermitian_from_adjoint(gs, lower)),)


def _register_svd_pinv() -> None:
    @linalg_rule(sla.svd, vjp=_svd_vjp)
    def _svd(a, full_matrices=True, compute_uv=True, overwrite_a=False, check_finite=True, lapack_driver="gesdd"):
        label = "scipy.linalg.svd"
        a = _matrix(label, a, square=False, batch=True)
        if a.ndim > 2 and compute_uv:
            refuse(label, "yuebing differentiates a stack of matrices for compute_uv=False only (SciPy returns "
                          "a list for a stack); use numpy.linalg.svd, or loop")
        y = sla.svd(a, full_matrices=full_matrices, compute_uv=compute_uv, check_finite=check_finite,
                    lapack_driver=lapack_driver)
        if not compute_uv:
            return y, lambda da: singular_values_jvp(*_thin_uv(a), da)
        if np.iscomplexobj(a):
            refuse(label, "yuebing differentiates complex matrices for compute_uv=False only (singular "
                          "vectors' phases are not unique)")
        m, n = a.shape[-2:]
        if full_matrices and m != n:
            refuse(label, "yuebing differentiates full_matrices=False (or square matrices) only: the extra "
                          "singular vectors of a full U or Vh are not unique")
        return y, lambda da: _svd_jvp(y, da)

    @linalg_rule(sla.pinv, vjp=_pinv_vjp)
    def _pinv(a, atol=None, rtol=None, return_rank=False, check_finite=True):
        label = "scipy.linalg.pinv"
        a = _matrix(label, a, square=False)
        y = sla.pinv(a, atol=atol, rtol=rtol, return_rank=True, check_finite=check_finite)
        if y[1] < min(a.shape):
            refuse(label, f"yuebing differentiates the pseudo-inverse of full-rank matrices only (rank "
                          f"{y[1]} < {min(a.shape)}): the rank would jump under a perturbation")
        p = y[0]
        m, n = a.shape

        def jvp(da: Any) -> Any:
            left = np.eye(m) - a @ p  # the projector onto the complement of the range of a
            right = np.eye(n) - p @ a
            dp = -(p @ da @ p) + p @ mH(p) @ mH(da) @ left + right @ mH(da) @ mH(p) @ p
            return [dp, None] if return_rank else dp

        return (y if return_rank else p), jvp


def _register_pinvh() -> None:
    @linalg_rule(sla.pinvh, vjp=_pinvh_vjp)
    def _pinvh(a, atol=None, rtol=None, lower=True, return_rank=False, check_finite=True):
        """The derivative along perturbations that keep the rank (a rank-deficient ``b @ b.T``
        moved through ``b``); across a change of rank ``pinvh`` jumps and has none."""
        a = _matrix("scipy.linalg.pinvh", a, batch=True)
        y = sla.pinvh(a, atol=atol, rtol=rtol, lower=lower, return_rank=return_rank, check_finite=check_finite)
        p, _ = _pseudo_inverse_part(None, y, return_rank)
        s = hermitian_from(a, lower)
        eye = np.eye(a.shape[-1])

        def jvp(da: Any) -> Any:
            ds = hermitian_from(da, lower)
            dp = -(p @ ds @ p) + p @ p @ ds @ (eye - s @ p) + (eye - p @ s) @ ds @ p @ p
            return [dp, None] if return_rank else dp

        return y, jvp


def _thin_uv(a: np.ndarray) -> tuple:
    u, _, vh = sla.svd(a, full_matrices=False)
    return u, vh


def _svd_jvp(y: tuple, da: Any) -> list:
    """The tangent of (U, s, Vh), each vector's tangent orthogonal to it (NumPy's convention)."""
    u, s, vh = y
    v = mT(vh)
    dp = mT(u) @ da @ v
    dp_s, s_dp = dp * s[..., None, :], s[..., :, None] * dp
    du = u @ gap_product(s, dp_s + mT(dp_s), squared=True) + (da @ v - u @ dp) / s[..., None, :]
    dv = v @ gap_product(s, s_dp + mT(s_dp), squared=True) + (mT(da) @ u - v @ mT(dp)) / s[..., None, :]
    return [du, diag_vector(dp), mT(dv)]


# --------------------------------------------------------------------------------------------
# qr (a, overwrite_a, lwork, mode, pivoting, check_finite)
# --------------------------------------------------------------------------------------------


def _qr_parts(q: np.ndarray, r: np.ndarray, da: Any) -> tuple:
    """The tangents of Q and R (square or tall ``a``, Q with as many columns as R has rows)."""
    d = da @ np.linalg.inv(r)
    x = mT(q) @ d
    omega = np.tril(x, -1) - mT(np.tril(x, -1))
    return q @ (omega - x) + d, (x - omega) @ r


def _qr_vjp(g, y, a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
    if mode != "r":  # y holds the economic factors ('full' is for square matrices only)
        q, r = y[0], y[1]
    else:
        q, r = sla.qr(a, mode="economic")[:2] if not pivoting else _pivoted_qr(a)[:2]
    if mode == "r":  # SciPy's R is m x n here: its last rows are zero
        gq, gr = None, cotangent_entry(g, 0)
        gr = None if gr is None else gr[:r.shape[0]]
    else:
        gq, gr = cotangent_entry(g, 0), cotangent_entry(g, 1)
    n = r.shape[-1]
    mm = np.zeros((n, n), dtype=r.dtype)
    if gr is not None:
        mm = mm + gr @ mT(r)
    if gq is not None:
        mm = mm - mT(q) @ gq
    nn = np.triu(mm) + mT(np.triu(mm, 1))
    top = q @ nn if gq is None else gq + q @ nn
    ga = top @ mT(np.linalg.inv(r))
    if pivoting:  # the factorisation is of a[:, perm]: send each column back
        perm = y[-1]
        ga = ga @ (perm[:, None] == np.arange(len(perm))[None, :]).astype(float)
    return (ga,)


def _pivoted_qr(a: np.ndarray) -> tuple:
    q, r, perm = sla.qr(a, mode="economic", pivoting=True)
    return q, r, perm


def _register_qr() -> None:
    @linalg_rule(sla.qr, vjp=_qr_vjp)
    def _qr(a, overwrite_a=False, lwork=None, mode="full", pivoting=False, check_finite=True):
        label = "scipy.linalg.qr"
        a = _matrix(label, a, square=False)
        if np.iscomplexobj(a):
            refuse(label, "yuebing differentiates real matrices only")
        m, n = a.shape
        if mode not in ("full", "economic", "r") or m < n or (mode == "full" and m != n):
            refuse(label, "yuebing differentiates modes 'economic' and 'r' for square or tall matrices and "
                          "'full' for square ones (a tall full Q's extra columns are not unique; 'raw' is "
                          "LAPACK's internal form)")
        y = sla.qr(a, lwork=lwork, mode=mode, pivoting=pivoting, check_finite=check_finite)

        def jvp(da: Any) -> Any:
            q, r, *rest = sla.qr(a, mode="economic", pivoting=pivoting)
            dq, dr = _qr_parts(q, r, da[:, rest[0]] if pivoting else da)
            if mode == "r":
                dr = np.concatenate([dr, np.zeros((m - n, n))])
            outs = [dr] if mode == "r" else [dq, dr]
            return outs + [None] if pivoting else outs

        return y, jvp


# --------------------------------------------------------------------------------------------
# lu (a, permute_l, overwrite_a, check_finite, p_indices), lu_factor (a, overwrite_a, check_finite)
# --------------------------------------------------------------------------------------------


def lu_permutation(piv: Any) -> list:
    """The row order ``perm`` with ``a[perm] = L U`` from LAPACK's row interchanges ``piv``."""
    perm = list(range(len(piv)))
    for i in range(len(piv)):  # row i was swapped with row piv[i], in order
        p = int(piv[i])
        perm[i], perm[p] = perm[p], perm[i]
    return perm


def _lu_parts(a: np.ndarray) -> tuple:
    """``perm``, ``L``, ``U`` with ``a[perm] = L U``."""
    p, low, up = sla.lu(a)
    return np.argmax(p, axis=0), low, up


def _lu_tangent(perm: Any, low: np.ndarray, up: np.ndarray, da: Any) -> tuple:
    """``a[perm] = L U``: ``X = L1^-1 dA11 U1^-1``, ``dL1 = L1 tril(X, -1)``, ``dU1 = triu(X) U1``
    on the leading k x k block (k = min(m, n)); below it (a tall ``a``) ``dL2 = (dA21 - L2 dU1)
    U1^-1``, right of it (a wide one) ``dU2 = L1^-1 (dA12 - dL1 U12)`` (triangular solves)."""
    dap = np.asarray(da)[perm]
    k = min(dap.shape)
    l1, u1 = low[:k, :k], up[:k, :k]
    t = sla.solve_triangular(l1, dap[:k, :k], lower=True, unit_diagonal=True, check_finite=False)
    x = mT(sla.solve_triangular(u1, mT(t), trans="T", check_finite=False))  # X U1 = T
    dl, du = l1 @ np.tril(x, -1), np.triu(x) @ u1
    if dap.shape[0] > k:
        below = dap[k:, :k] - low[k:] @ du
        dl = np.vstack([dl, mT(sla.solve_triangular(u1, mT(below), trans="T", check_finite=False))])
    if dap.shape[1] > k:
        right = dap[:k, k:] - dl @ up[:, k:]
        du = np.hstack([du, sla.solve_triangular(l1, right, lower=True, unit_diagonal=True, check_finite=False)])
    return dl, du


def lu_cotangent(perm, low, up, gl, gu):
    """The adjoint of ``_lu_tangent``: the leading block's ``dA11`` gets ``L1^-H (tril(L1^H gL1,
    -1) + triu(gU1 U1^H)) U1^-H``, after a tall matrix's ``gL2`` and a wide one's ``gU2`` are taken
    through their maps (into ``dA21``/``dA12`` and the leading block's ``gU1``/``gL1``); the rows
    are sent back (``[argsort(perm)]``)."""
    m, n = low.shape[0], up.shape[1]
    k = min(m, n)
    l1, u1 = low[:k, :k], up[:k, :k]
    dtype = np.result_type(low, up)
    ga = np.zeros((m, n), dtype=dtype)
    gl1 = None if gl is None else np.asarray(gl)[:k]
    gu1 = None if gu is None else np.asarray(gu)[:, :k]
    if gl is not None and m > k:  # dL2 = (dA21 - L2 dU1) U1^-1
        g21 = mH(sla.solve_triangular(u1, mH(np.asarray(gl)[k:]), check_finite=False))  # gL2 U1^-H
        ga[k:] = g21
        gu1 = (0 if gu1 is None else gu1) - mH(low[k:]) @ g21
    if gu is not None and n > k:  # dU2 = L1^-1 (dA12 - dL1 U12)
        g12 = sla.solve_triangular(l1, np.asarray(gu)[:, k:], lower=True, unit_diagonal=True, trans="C",
                                   check_finite=False)
        ga[:, k:] = g12
        gl1 = (0 if gl1 is None else gl1) - g12 @ mH(up[:, k:])
    xbar = np.zeros((k, k), dtype=dtype)
    if gl1 is not None:
        xbar = xbar + np.tril(mH(l1) @ gl1, -1)
    if gu1 is not None:
        xbar = xbar + np.triu(gu1 @ mH(u1))
    y = sla.solve_triangular(l1, xbar, lower=True, unit_diagonal=True, trans="C", check_finite=False)
    ga[:k, :k] = mH(sla.solve_triangular(u1, mH(y), check_finite=False))  # Z U1^H = Y
    return ga[np.argsort(perm)]


def _lu_vjp(g, y, a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
    if permute_l:  # (P L, U)
        perm, low, up = _lu_parts(a)
        gpl = cotangent_entry(g, 0)
        gl = None if gpl is None else np.asarray(gpl)[perm]
        gu = cotangent_entry(g, 1)
    else:
        perm = np.argsort(y[0]) if p_indices else np.argmax(y[0], axis=0)
        low, up = y[1], y[2]
        gl, gu = cotangent_entry(g, 1), cotangent_entry(g, 2)
    return (_real_like(a, lu_cotangent(perm, low, up, gl, gu)),)


def _lu_factor_vjp(g, y, a, overwrite_a=False, check_finite=True):
    gpacked = cotangent_entry(g, 0)
    if gpacked is None:
        return (None,)
    lu = y[0]
    low = np.tril(lu, -1) + np.eye(lu.shape[0])
    ga = lu_cotangent(lu_permutation(y[1]), low, np.triu(lu), np.tril(gpacked, -1), np.triu(gpacked))
    return (_real_like(a, ga),)


def _refuse_rank_deficient(label: str, up: np.ndarray) -> None:
    """Refuse an ``a`` whose leading k x k block of ``U`` (k = min(m, n)) is singular: the factors
    of a rank-deficient matrix have no derivative (the maps solve with that block), and the
    columns of ``L`` past its rank follow rounding noise (scikit-learn's randomized_svd factors
    a 4 x 12 matrix of rank 2)."""
    k = min(up.shape)
    diagonal = np.abs(np.diagonal(up)[:k])
    tolerance = np.finfo(float).eps * max(up.shape) * (np.max(np.abs(up)) if up.size else 0.0)
    zeros = int(np.sum(diagonal <= tolerance))
    if zeros:
        refuse(label, f"yuebing differentiates the factors of a matrix of full rank only; this one is "
                      f"rank-deficient ({zeros} zero(s) on U's diagonal), where L and U have no derivative")


def _register_lu() -> None:
    @linalg_rule(sla.lu, vjp=_lu_vjp)
    def _lu(a, permute_l=False, overwrite_a=False, check_finite=True, p_indices=False):
        label = "scipy.linalg.lu"
        a = _matrix(label, a, square=False)
        y = sla.lu(a, permute_l=permute_l, check_finite=check_finite, p_indices=p_indices)
        _refuse_rank_deficient(label, y[-1])

        def jvp(da: Any) -> Any:
            perm, low, up = _lu_parts(a)
            dl, du = _lu_tangent(perm, low, up, da)
            return [dl[np.argsort(perm)], du] if permute_l else [None, dl, du]

        return y, jvp

    @linalg_rule(sla.lu_factor, vjp=_lu_factor_vjp)
    def _lu_factor(a, overwrite_a=False, check_finite=True):
        label = "scipy.linalg.lu_factor"
        a = _matrix(label, a)
        y = sla.lu_factor(a, check_finite=check_finite)

        def jvp(da: Any) -> Any:
            lu = y[0]
            low = np.tril(lu, -1) + np.eye(lu.shape[0])
            dl, du = _lu_tangent(lu_permutation(y[1]), low, np.triu(lu), da)
            return [np.tril(dl, -1) + du, None]

        return y, jvp


if sla is not None:
    _register_eigh()
    _register_eig()
    _register_svd_pinv()
    _register_pinvh()
    _register_qr()
    _register_lu()
    with_vjp(sla.eigh, _eigh_vjp, direct=_eigh_second_order)
    with_vjp(sla.eig, _eig_vjp)
    with_vjp(sla.svd, _svd_vjp)
    with_vjp(sla.pinv, _pinv_vjp)
    with_vjp(sla.pinvh, _pinvh_vjp)
    with_vjp(sla.qr, _qr_vjp)
    with_vjp(sla.lu, _lu_vjp)
    with_vjp(sla.lu_factor, _lu_factor_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _sym(n: int, scale: float = 2.0) -> np.ndarray:
    """Symmetric with well-separated eigenvalues."""
    q = np.linalg.qr(randn(n, n))[0]
    return (q * np.arange(1.0, n + 1) * scale) @ q.T


def _spd(n: int, complex_: bool = False) -> np.ndarray:
    b = randc(n, n) if complex_ else randn(n, n)
    return b @ mH(b) + n * np.eye(n)


def _cases() -> list:
    sym4 = _sym(4)
    return [
        Case(sla.eigh, _sym(4)),
        Case(sla.eigh, _sym(3) + np.triu(randn(3, 3), 1), kwargs={"lower": False}),
        Case(sla.eigh, _sym(3, 3.0), kwargs={"eigvals_only": True}),
        Case(sla.eigh, _spd(3, True), kwargs={"eigvals_only": True}),
        Case(sla.eigh, _sym(3), _spd(3)),
        Case(sla.eigh, _sym(3), _spd(3), kwargs={"eigvals_only": True, "lower": False}),
        Case(sla.eigh, sym4, kwargs={"subset_by_index": [1, 2]}),
        Case(sla.eigh, sym4, kwargs={"subset_by_value": [0.0, 5.0], "eigvals_only": True}),
        Case(sla.eigh, _sym(3), kwargs={"driver": "evd"}),
        Case(sla.eigh, np.stack([_sym(3), _sym(3)]), kwargs={"eigvals_only": True, "lower": False}),
        Case(sla.eig, randn(3, 3)),
        Case(sla.eig, np.array([[0.1, -2.0, 0.3], [1.5, 0.2, 0.0], [0.2, 0.4, 1.0]]) + randn(3, 3) / 10,
             name="eig(real, a complex pair)"),
        Case(sla.eig, randn(4, 4), kwargs={"right": False}),
        Case(sla.eig, _sym(3)),
        Case(sla.eig, randc(3, 3)),
        Case(sla.svd, randn(4, 3), kwargs={"full_matrices": False}),
        Case(sla.svd, randn(3, 5), kwargs={"full_matrices": False}),
        Case(sla.svd, randn(3, 3), kwargs={"lapack_driver": "gesvd"}),
        Case(sla.svd, randn(4, 3), kwargs={"compute_uv": False}),
        Case(sla.svd, randn(2, 3, 4), kwargs={"compute_uv": False}),
        Case(sla.svd, randc(3, 4), kwargs={"compute_uv": False}),
        Case(sla.pinv, randn(4, 3)),
        Case(sla.pinv, randn(3, 4), kwargs={"return_rank": True}),
        Case(sla.pinv, randc(4, 2)),
        Case(sla.pinvh, _spd(3)),
        Case(sla.pinvh, _sym(3) + np.triu(randn(3, 3), 1), kwargs={"lower": False, "return_rank": True}),
        Case(sla.pinvh, 2.0 * np.eye(3), name="pinvh(a repeated eigenvalue)"),
        Case(sla.pinvh, _spd(3, True)),
        Case(sla.pinvh, np.stack([_spd(3), _sym(3)])),
        Case(sla.qr, randn(3, 3)),
        Case(sla.qr, randn(5, 3), kwargs={"mode": "economic"}),
        Case(sla.qr, randn(4, 3), kwargs={"mode": "r"}),
        Case(sla.qr, randn(5, 3), kwargs={"mode": "economic", "pivoting": True}),
        Case(sla.qr, randn(3, 3), kwargs={"pivoting": True}),
        Case(sla.lu, randn(3, 3)),
        Case(sla.lu, randn(4, 4), kwargs={"permute_l": True}),
        Case(sla.lu, randn(3, 3), kwargs={"p_indices": True}),
        Case(sla.lu, randn(5, 3), name="lu(tall)"),
        Case(sla.lu, randn(3, 5), name="lu(wide)"),
        Case(sla.lu, randn(6, 4), kwargs={"permute_l": True}, name="lu(tall, permute_l)"),
        Case(sla.lu, randc(3, 4), name="lu(wide, complex)"),
        Case(sla.lu, randc(3, 3)),
        Case(sla.lu_factor, randn(3, 3)),
        Case(sla.lu_factor, randn(4, 4)),
        Case(sla.lu_factor, randc(3, 3)),
    ]


CASES = _cases() if sla is not None else []
