"""Second order of ``np.linalg.eigh``, ``eigvalsh``, ``scipy.linalg.eigh`` (standard problem,
whole spectrum) and ``np.linalg.svd`` written out (``with_vjp(..., direct=...)``),
for real matrices and stacks of them.

Why not the forward transform of the cotangent map: at a repeated eigenvalue split by the
perturbation the tangent of the tied vectors is infinite, and the map's tangent multiplies it by
the cotangent's entries even where these are zero (``v_t @ xbar`` when nobody reads the vectors:
inf * 0 = NaN in hvp, fuzz seed 95157). Here the tangent of the cotangent never reads the vectors'
tangent: it is ``V T V^T`` with ``T`` written in the eigenbasis, where every product meeting an
inverse gap is taken by the strong-zero rule (``gaps.gap_product``), so an output
nobody reads contributes exactly zero and says nothing.

Derivation (real symmetric ``A = V diag(w) V^T``; ``F[i, j] = 1 / (w_j - w_i)``, 0 on the
diagonal; ``X = V^T dA V``; ``Om = F o X``; ``K = V^T gv``; ``P = F o K``): the cotangent is
``V (diag(gw) + P) V^T`` and its tangent ``V T V^T`` with

    T = Om D - D Om                       (D = diag(gw): Om[i, j] (gw_j - gw_i))
      + Om P - F o (Om K)                 (k = i, j apart: F[i, j] (X P - diag(X) P)[i, j]
                                           - F[i, j]^2 X[i, j] K[j, j]; on the diagonal (Om P)[i, i])
      - P Om + dF o K + F o (V^T dgv) + diag(dgw),     dF[i, j] = -F[i, j]^2 (X_jj - X_ii)

using ``F[i, k] (F[k, j] - F[i, j]) = F[i, j] F[k, j]``, which takes out the products of two
inverse gaps of one tied pair. ``Om D - D Om`` at a split tie is not finite even where ``gw``
ties too: its limit needs the second derivative of the function of the eigenvalues
(``sum(w**2)`` and ``sum(w)`` read equal ``gw`` at an exact tie and differ there), which the rule
cannot see, so it is NaN with a warning, never a number; only a zero ``gw`` (values computed and
not used: a zero cotangent) contributes zero there, as the strong-zero rule has it elsewhere.
"""
from __future__ import annotations

import warnings
from typing import Any, Callable

import numpy as np

from ...tangents import NoRData, NoTangent
from ..core import Dual, NoDerivativeWarning, frule
from .common import cotangent_entry, diag_vector, hermitian_from, hermitian_from_adjoint, mT
from .gaps import eigen_gaps, gap_product, rounding_ties, warn_no_derivative


def numpy_eigh(xs: tuple, x_ds: tuple) -> tuple | None:
    """``np.linalg.eigh(a, UPLO='L')`` of a real float64 matrix or stack; None elsewhere."""
    if not 1 <= len(xs) <= 2 or not _real_square(xs[0], x_ds[0]):
        return None
    uplo = xs[1] if len(xs) > 1 else "L"
    if not isinstance(uplo, str) or uplo.upper() not in ("L", "U"):
        return None
    y = np.linalg.eigh(xs[0], UPLO=uplo)
    dw, dv, pullback = _eigh_parts(y[0], y[1], x_ds[0], uplo.upper() == "L")
    return y, type(y)(dw, dv), _pullback_of_first(pullback, len(xs), 0, 1)


def numpy_eigvalsh(xs: tuple, x_ds: tuple) -> tuple | None:
    """``np.linalg.eigvalsh(a, UPLO='L')``: eigh's formula with the vectors unread."""
    made = numpy_eigh(xs, x_ds)
    if made is None:
        return None
    y, y_d, pullback = made
    return np.linalg.eigvalsh(xs[0], UPLO=xs[1] if len(xs) > 1 else "L"), y_d[0], (
        lambda g, g_d: pullback((g, None), (g_d, None)))


_SCIPY_EIGH = ("a", "b", "lower", "eigvals_only", "overwrite_a", "overwrite_b", "type", "check_finite",
               "subset_by_index", "subset_by_value", "driver")


def scipy_eigh(xs: tuple, x_ds: tuple) -> tuple | None:
    """``scipy.linalg.eigh(a, lower=..., eigvals_only=..., check_finite=..., driver=...)`` of a real
    float64 matrix or stack, the whole spectrum of a standard problem; None elsewhere (``b``, a subset)."""
    import scipy.linalg

    given = dict(zip(_SCIPY_EIGH, xs))
    if len(xs) > len(_SCIPY_EIGH) or not _real_square(xs[0], x_ds[0]):
        return None
    if any(given.get(name) is not None for name in ("b", "subset_by_index", "subset_by_value")):
        return None
    lower, values_only = bool(given.get("lower", True)), bool(given.get("eigvals_only", False))
    w, v = scipy.linalg.eigh(xs[0], lower=lower, check_finite=given.get("check_finite", True),
                             driver=given.get("driver"))
    dw, dv, pullback = _eigh_parts(w, v, x_ds[0], lower)
    if values_only:
        y = scipy.linalg.eigh(xs[0], lower=lower, eigvals_only=True, driver=given.get("driver"))
        return y, dw, lambda g, g_d: _padded(pullback(g, None, g_d, None), len(xs))
    return (w, v), (dw, dv), _pullback_of_first(pullback, len(xs), 0, 1)


def _pullback_of_first(pullback, n: int, w_at: int, v_at: int):
    """The direct pullback ``(g, g_d) -> (cotangents, their tangents)`` of a call on ``n``
    arguments, the first the matrix, from ``pullback(gw, gv, dgw, dgv)``."""
    def tuple_pullback(g: Any, g_d: Any) -> tuple:
        return _padded(pullback(cotangent_entry(g, w_at), cotangent_entry(g, v_at),
                                cotangent_entry(g_d, w_at), cotangent_entry(g_d, v_at)), n)

    return tuple_pullback


def _padded(made: tuple, n: int) -> tuple:
    rest = (None,) * (n - 1)
    return (made[0],) + rest, (made[1],) + rest


def _eigh_parts(w: np.ndarray, v: np.ndarray, da: Any, lower: bool) -> tuple:
    """The tangents of ``w`` and ``v`` (zero for no ``da``) and ``pullback(gw, gv, dgw, dgv) ->
    (ga, its tangent)``, None for none, for the matrix whose triangle (``lower``) was read."""
    x = None if da is NoTangent else mT(v) @ hermitian_from(da, lower) @ v
    split = None if x is None else _split_gaps(w, x)
    dw = np.zeros_like(w) if x is None else diag_vector(x)
    dv = np.zeros_like(v) if x is None else _quiet_tangent(v, split)

    def pullback(gw: Any, gv: Any, dgw: Any, dgv: Any) -> tuple:
        gw, gv, dgw, dgv = (None if c is None or c is NoRData or c is NoTangent else c for c in (gw, gv, dgw, dgv))
        if gw is None and gv is None and dgw is None and dgv is None:
            return None, None
        with np.errstate(invalid="ignore", divide="ignore"):  # (a tied pair read: NaN, said by gap_product)
            k = None if gv is None else mT(v) @ gv
            p = None if k is None else gap_product(w, k)
            xbar = _diag(gw, w) + (0.0 if p is None else p)
            t = _tangent_in_eigenbasis(w, v, x, split, gw, k, p, dgw, dgv)
            return _to_matrix(v, xbar, lower), _to_matrix(v, t, lower)

    return dw, dv, pullback


def _to_matrix(v: np.ndarray, m: Any, lower: bool) -> np.ndarray:
    """The cotangent of the matrix (its triangle read) given ``m`` in the eigenbasis."""
    return hermitian_from_adjoint(v @ m @ mT(v), lower)


def _real_square(a: Any, da: Any) -> bool:
    """A real float64 square matrix (or stack) whose tangent is one too, or zero."""
    return _real_matrix(a, da) and a.shape[-1] == a.shape[-2]


def _real_matrix(a: Any, da: Any) -> bool:
    """A real float64 matrix (or stack) whose tangent is one too, or zero."""
    if not (type(a) is np.ndarray and a.ndim >= 2 and a.dtype == np.float64):
        return False
    return da is NoTangent or (type(da) is np.ndarray and da.shape == a.shape and da.dtype == np.float64)


def _diag(d: Any, w: np.ndarray) -> Any:
    """``diag(d)`` as a matrix (stack) of ``w``'s eigenbasis; 0 for None."""
    if d is None:
        return np.zeros(w.shape + w.shape[-1:])
    return np.asarray(d, dtype=float)[..., :, None] * np.eye(w.shape[-1])


def _split_gaps(w: np.ndarray, x: np.ndarray) -> tuple:
    """``Om = F o X`` as its finite part (0 at tied pairs) and the mask of the tied pairs whose
    entry of ``X`` is not negligible (there ``Om`` is infinite: the perturbation splits the tie)."""
    tied, negligible = rounding_ties(w, x, x)
    with np.errstate(divide="ignore", invalid="ignore"):
        finite = np.where(tied, 0.0, eigen_gaps(w) * x)
    return finite, tied & ~negligible


def _quiet_tangent(v: np.ndarray, split: tuple) -> np.ndarray:
    """``dV = V Om``, infinite in the columns of a split tie, without a warning: whether anything
    reads those columns shows in the cotangent, where ``gap_product`` says it."""
    finite, infinite = split
    with np.errstate(invalid="ignore"):
        return v @ np.where(infinite, np.inf, finite)


def _strong_matmul(left: Any, right: Any, left_infinite: Any = None, right_infinite: Any = None) -> Any:
    """``left @ right`` where one factor is a split ``Om`` (finite part, mask of its infinite
    entries): an infinite entry times an exact zero adds zero, times anything else NaN."""
    if left_infinite is not None:
        spoiled = left_infinite.astype(float) @ (right != 0).astype(float)
    else:
        spoiled = (left != 0).astype(float) @ right_infinite.astype(float)
    return np.where(spoiled > 0, np.nan, left @ right)


def _tangent_in_eigenbasis(w, v, x, split, gw, k, p, dgw, dgv) -> Any:
    """``T`` of the module docstring (each term present when what it reads is)."""
    t = _diag(dgw, w)
    if dgv is not None:
        t = t + gap_product(w, mT(v) @ dgv)
    if x is None:
        return t
    finite, infinite = split
    if gw is not None:  # Om D - D Om, gw_j Om[i, j] - gw_i Om[i, j] each by the strong-zero rule
        gw = np.asarray(gw, dtype=float)
        read = infinite & ((gw[..., None, :] != 0) | (gw[..., :, None] != 0))
        if np.any(read):
            warn_no_derivative(w, read, values=True)
        t = t + np.where(read, np.nan, finite * (gw[..., None, :] - gw[..., :, None]))
    if k is None:
        return t
    x_diag = diag_vector(x)
    eye = np.eye(w.shape[-1], dtype=bool)
    inner = x @ p - x_diag[..., :, None] * p  # (X P - diag(X) P): no gap of the pair (i, k) left
    t = t + gap_product(w, inner, reference=np.abs(x) @ np.abs(p))
    k_diag = diag_vector(k)
    t = t - _twice_gapped(w, x * k_diag[..., None, :])  # - F^2 X[i, j] K[j, j]
    t = t + np.where(eye, _strong_matmul(finite, p, left_infinite=infinite), 0.0)  # (Om P)[i, i]
    t = t - _strong_matmul(p, finite, right_infinite=infinite)  # - P Om
    return t - _twice_gapped(w, (x_diag[..., None, :] - x_diag[..., :, None]) * k)  # dF o K


def _twice_gapped(w: np.ndarray, y: Any) -> Any:
    """``F o F o y`` by the strong-zero rule: 0 where a tied pair's entry of ``y`` is negligible,
    NaN (said) where it is not."""
    tied, negligible = rounding_ties(w, y, y)
    if np.any(tied & ~negligible):
        warn_no_derivative(w, tied & ~negligible)
    gaps = eigen_gaps(w)
    return np.where(tied, np.where(negligible, 0.0, np.nan), gaps * gaps * y)


# --------------------------------------------------------------------------------------------
# np.linalg.svd(a, compute_uv=False): the same mechanism (the vectors' infinite tangent at a split
# tie met a zero cotangent of the values in the map's tangent: NaN for values nobody used)
# --------------------------------------------------------------------------------------------


def numpy_singular_values(xs: tuple, x_ds: tuple) -> tuple | None:
    """``np.linalg.svd(a, full_matrices, compute_uv=False)`` of a real float64 matrix or stack; None
    elsewhere. Wide matrices as their transposes. With ``dP = U^T dA V`` (reduced, tall ``a``),
    ``U^T dU = Fs o (dP S + S dP^T)``, ``V^T dV = Fs o (S dP + dP^T S)`` (``Fs[i, j] = 1 / (s_j^2 -
    s_i^2)``), the cotangent ``U diag(gs) V^T`` has the tangent ``U (Ou D - D Ov + diag(dgs)) V^T +
    (I - U U^T) dA V diag(gs / s) V^T``; ``Ou D - D Ov`` by the strong-zero rule as eigh's ``Om D - D Om``."""
    given = _real_svd_call(xs, x_ds, compute_uv=False)
    if given is None:
        return None
    a, da = xs[0], x_ds[0]
    wide = a.shape[-1] > a.shape[-2]
    a_t, da_t = (mT(a), None if da is NoTangent else mT(da)) if wide else (a, None if da is NoTangent else da)
    u, s, vh = np.linalg.svd(a_t, full_matrices=False)
    dp = None if da_t is None else mT(u) @ da_t @ mT(vh)
    y_d = np.zeros_like(s) if dp is None else diag_vector(dp)

    def pullback(g: Any, g_d: Any) -> tuple:
        gs, dgs = (None if c is None or c is NoRData or c is NoTangent else np.asarray(c, dtype=float) for c in (g, g_d))
        if gs is None and dgs is None:
            return (None,) * len(xs), (None,) * len(xs)
        with np.errstate(invalid="ignore", divide="ignore"):
            ga = (u * (0.0 if gs is None else gs)[..., None, :]) @ vh
            dga = _singular_values_cotangent_tangent(u, s, vh, da_t, dp, gs, dgs)
        ga, dga = (mT(ga), mT(dga)) if wide else (ga, dga)
        return (ga,) + (None,) * (len(xs) - 1), (dga,) + (None,) * (len(xs) - 1)

    return np.linalg.svd(a, compute_uv=False), y_d, pullback


def _real_svd_call(xs: tuple, x_ds: tuple, compute_uv: bool) -> dict | None:
    """The arguments of an ``np.linalg.svd`` call by name, if it is one of a real float64 matrix
    (or stack) with this ``compute_uv`` and ``hermitian=False``; None otherwise."""
    given = dict(zip(("a", "full_matrices", "compute_uv", "hermitian"), xs))
    if given.get("compute_uv", True) is not compute_uv or given.get("hermitian", False) is not False:
        return None
    return given if _real_matrix(xs[0], x_ds[0]) else None


def _singular_values_cotangent_tangent(u, s, vh, da, dp, gs, dgs) -> Any:
    """The tangent of ``U diag(gs) V^T`` (tall ``a``; see ``numpy_singular_values``)."""
    t = _diag(dgs, s)
    if dp is not None and gs is not None:
        dp_s, s_dp = dp * s[..., None, :], s[..., :, None] * dp
        turn_u, split_u = _split_squared_gaps(s, dp_s + mT(dp_s), dp_s)
        turn_v, split_v = _split_squared_gaps(s, s_dp + mT(s_dp), s_dp)
        read = (split_u & (gs[..., None, :] != 0)) | (split_v & (gs[..., :, None] != 0))
        if np.any(read):
            warn_no_derivative(s, read, values=True)
        t = t + np.where(read, np.nan, turn_u * gs[..., None, :] - gs[..., :, None] * turn_v)
    dga = u @ t @ vh
    if dp is not None and gs is not None and u.shape[-2] > u.shape[-1]:  # (I - U U^T) dA V diag(gs / s) V^T
        weight = np.where(gs == 0, 0.0, gs / s)
        dga = dga + ((da @ mT(vh) - u @ dp) * weight[..., None, :]) @ vh
    return dga


def _split_squared_gaps(s: np.ndarray, x: np.ndarray, reference: np.ndarray) -> tuple:
    """``Fs o x`` as its finite part (0 at tied pairs) and the mask of tied pairs ``x`` splits."""
    tied, negligible = rounding_ties(s, x, reference)
    with np.errstate(divide="ignore", invalid="ignore"):
        finite = np.where(tied, 0.0, eigen_gaps(s, squared=True) * x)
    return finite, tied & ~negligible


def numpy_svd(xs: tuple, x_ds: tuple, svd_jvp: Callable, svd_vjp: Callable) -> tuple | None:
    """``np.linalg.svd(a, full_matrices, compute_uv=True)`` of a real float64 matrix or stack: where
    the vectors' cotangents are absent or exactly zero (computed, not used) the values' formula above,
    which never meets the vectors' infinite tangent at a split tie; otherwise the forward transform
    of the cotangent map ``svd_vjp``, as the ``with_vjp`` class runs it (``svd_jvp``: the first-order
    forward rule, ``decompositions._svd``, which imports this module). None elsewhere."""
    given = _real_svd_call(xs, x_ds, compute_uv=True)
    if given is None:
        return None
    a, da = xs[0], x_ds[0]
    y, jvp = svd_jvp(a, given.get("full_matrices", True), True, False)
    with warnings.catch_warnings(), np.errstate(invalid="ignore", divide="ignore"):
        warnings.simplefilter("ignore", NoDerivativeWarning)  # (said by the cotangent, where read)
        y_d = type(y)(*(np.zeros_like(part) for part in y)) if da is NoTangent else type(y)(*jvp(da))
    values = numpy_singular_values((a, True, False, False), (da, NoTangent, NoTangent, NoTangent))

    def pullback(g: Any, g_d: Any) -> tuple:
        vectors = [cotangent_entry(c, k) for c in (g, g_d) for k in (0, 2)]
        if all(c is None or not np.any(c) for c in vectors):
            cotangents, tangents = values[2](cotangent_entry(g, 1), cotangent_entry(g_d, 1))
            return _padded((cotangents[0], tangents[0]), len(xs))
        cot = frule(Dual(svd_vjp, NoTangent), Dual(g, g_d), Dual(y, y_d),
                    *(Dual(x, t) for x, t in zip(xs, x_ds)))
        tangent = cot.tangent[0] if isinstance(cot.tangent, tuple) else None
        return _padded((cot.primal[0], None if tangent is NoTangent else tangent), len(xs))

    return y, y_d, pullback
