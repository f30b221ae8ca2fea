"""Second-order formulas written out (``with_vjp(f, vjp, direct=...)``) for the linear-algebra
primitives programs use most: ``cholesky``, ``solve`` and ``inv`` (NumPy's and SciPy's),
``solve_triangular``, ``det`` and ``slogdet``, on real float64 matrices.

The ``with_vjp`` class otherwise runs a primitive's first-order work twice: its forward rule for
the output tangent, then the forward transform of its cotangent map, which factorises, inverts or
solves again, and pays the forward transform's dispatch on each of the map's dozen NumPy calls.
Each formula here computes the primal once, keeps what the tangent needed (the factor, ``L^-1
dL``, the LU factors), and its pullback computes the cotangent and its tangent from them in
straight NumPy/BLAS. Each returns None where it does not apply (complex, float32, stacks, lists),
and the cotangent map's forward transform runs as before. The derivations are in the docstrings;
``check_rule``'s second-order check (central differences of the gradient) runs through them on
each real float64 case of the domains' ``CASES``.

Interface (``rules/second_order.with_vjp``): ``direct(xs, x_ds)`` with the call's positional
primals and tangents (``NoTangent`` for none) returns ``(y, y_d, pullback)``, ``pullback(g, g_d) ->
(cotangents, cotangent tangents)``, one entry per argument of ``xs``, None for none.
"""
from __future__ import annotations

import functools
from typing import Any

import numpy as np

from ...tangents import NoRData, NoTangent
from .cholesky_blocks import cholesky_cotangent_and_tangent, cholesky_tangent_and_inverse, real_lower_cholesky
from .common import cotangent_entry
from .triangular_blas import negated_read_outer, triangle_times, triangular_solve

sla: Any = None  # scipy.linalg and its kernels, imported by _have_scipy the first time a rule runs
dtrmm = dtrsm = dgetrf = dgetrs = None
_LOOKED_FOR_SCIPY = [False]


def _have_scipy() -> bool:
    """Whether SciPy's LAPACK and BLAS wrappers are there, importing them on first use (not with
    yuebing: ``import scipy.linalg`` costs a third of a second). Without SciPy these rules decline
    and the cotangent maps' forward transform takes over."""
    global sla, dtrmm, dtrsm, dgetrf, dgetrs
    if not _LOOKED_FOR_SCIPY[0]:
        try:
            import scipy.linalg
            from scipy.linalg.blas import dtrmm, dtrsm
            from scipy.linalg.lapack import dgetrf, dgetrs
        except ImportError:  # pragma: no cover - SciPy is optional
            pass
        else:
            sla = scipy.linalg
        _LOOKED_FOR_SCIPY[0] = True
    return sla is not None

Direct = tuple  # (y, y_d, pullback)


def _real_matrix(x: Any) -> bool:
    return type(x) is np.ndarray and x.ndim == 2 and x.dtype == np.float64 and x.shape[0] == x.shape[1]


def _real_rhs(x: Any, n: int) -> bool:
    return type(x) is np.ndarray and x.ndim in (1, 2) and x.dtype == np.float64 and x.shape[0] == n


def _tangent(t: Any, like: np.ndarray) -> np.ndarray | None | bool:
    """A tangent as a float64 array of ``like``'s shape, None for zero, False if it is neither."""
    if t is NoTangent:
        return None
    if type(t) is np.ndarray and t.shape == like.shape and t.dtype == np.float64:
        return t
    return False


def _one_real_matrix(xs: tuple, x_ds: tuple) -> tuple | None:
    """``(a, da)`` of a call on one real matrix ``a`` whose tangent is an array or zero (None)."""
    if len(xs) != 1 or not _real_matrix(xs[0]):
        return None
    da = _tangent(x_ds[0], xs[0])
    return None if da is False else (xs[0], da)


def _cotangent(g: Any, like: np.ndarray) -> np.ndarray | None:
    """An output cotangent (or its tangent) as an array of ``like``'s shape, None for zero."""
    if type(g) is np.ndarray and g.shape == like.shape:
        return g
    if isinstance(g, (float, int, np.floating)) and g == 0:
        return None
    return np.broadcast_to(np.asarray(g, dtype=np.float64), like.shape) if np.ndim(g) == 0 else None


# --------------------------------------------------------------------------------------------
# cholesky
# --------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=16)
def _halved_lower(n: int) -> np.ndarray:
    """Ones below the diagonal, 0.5 on it, 0 above (read-only: shared). ``x * w`` is ``Phi(x)``;
    ``(s + s^T) * w`` is ``tril(s + s^T)`` with ``s``'s own diagonal."""
    weights = np.tril(np.ones((n, n)))
    weights[np.diag_indices(n)] = 0.5
    weights.flags.writeable = False
    return weights


def _cholesky_lower(low: np.ndarray, da: np.ndarray | None) -> tuple:
    """Second order of ``L = cholesky(A)``, ``A`` the symmetric matrix read from ``tril(a)``.

    Forward: ``X = L^-1 H L^-T`` (``H`` the tangent of ``A``), ``Q = Phi(X)`` (its lower triangle,
    diagonal halved), ``dL = L Q``. Cotangent: ``M = L^T G``, ``P = Phi(M)``, ``S = L^-T P L^-1``,
    ``gA = tril(S + S^T)`` with ``S``'s diagonal. Its tangent, as ``d(L^-1) = -Q L^-1``:
    ``dS = L^-T (Phi(dL^T G + L^T dG) - Q^T P - P Q) L^-1``, delivered the same way.
    BLAS works on ``U = L^T`` (a Fortran view of C-ordered ``L``). Above order 64, with a
    tangent, both the tangent and the pullback follow the factorisation's block recursion instead
    (``_blocked_cholesky_lower``: 5 n^3 flops where this takes 15 n^3)."""
    n = low.shape[0]
    if da is not None and n > _BLOCKED_CHOLESKY_ORDER:
        return _blocked_cholesky_lower(low, da)
    up = low.T
    w = _halved_lower(n)
    q = None
    d_low = np.zeros((n, n))
    if da is not None:
        t = np.tril(da, -1)
        h = t + t.T + np.diag(np.diagonal(da))
        y = dtrsm(1.0, up, h, lower=0, trans_a=1)  # L Y = H
        x = dtrsm(1.0, up, y, side=1, lower=0, overwrite_b=1)  # X L^T = Y
        q = np.multiply(x, w)  # Phi(X)
        d_low = dtrmm(1.0, up, q, lower=0, trans_a=1)  # L Q

    def between(r: np.ndarray) -> np.ndarray:
        """``tril(S + S^T)`` (``S``'s diagonal) of ``S = L^-T R L^-1``."""
        z = dtrsm(1.0, up, r, lower=0)  # L^T Z = R
        s = dtrsm(1.0, up, z, side=1, lower=0, trans_a=1, overwrite_b=1)  # S L = Z
        return np.multiply(s + s.T, w)

    def pullback(g: Any, g_d: Any) -> tuple:
        g = _cotangent(g, low)
        g_d = _cotangent(g_d, low)
        if g is None and g_d is None:
            return (None,), (None,)
        p = np.zeros((n, n)) if g is None else np.multiply(dtrmm(1.0, up, g, lower=0), w)  # Phi(L^T G)
        dm = None
        if g is not None and q is not None:
            dm = d_low.T @ g
        if g_d is not None:
            term = dtrmm(1.0, up, g_d, lower=0)
            dm = term if dm is None else dm + term
        r = np.zeros((n, n)) if dm is None else np.multiply(dm, w)
        if q is not None and g is not None:
            r -= q.T @ p + p @ q
        return (between(p),), (between(r),)

    return d_low, pullback


_BLOCKED_CHOLESKY_ORDER = 64


def _blocked_cholesky_lower(low: np.ndarray, da: np.ndarray) -> tuple:
    """``_cholesky_lower`` by block recursions: the factor's tangent as ``np.linalg.cholesky``'s
    forward rule computes it, the cotangent and its tangent together (``cholesky_blocks``)."""
    n = low.shape[0]
    d_low, inverse = cholesky_tangent_and_inverse(low, da, blocks=True)

    def pullback(g: Any, g_d: Any) -> tuple:
        g, g_d = _cotangent(g, low), _cotangent(g_d, low)
        if g is None and g_d is None:
            return (None,), (None,)
        zero = np.zeros((n, n))
        ga, dga = cholesky_cotangent_and_tangent(low, d_low, zero if g is None else g,
                                                 zero if g_d is None else g_d, inverse)
        return (ga,), (dga,)

    return d_low, pullback


def _cholesky_of_read_triangle(y: np.ndarray, da: Any, upper: bool) -> Direct:
    """``_cholesky_lower`` for a lower factor, or for an upper one as the lower factor of ``a^T``."""
    if not upper:
        d_low, pullback = _cholesky_lower(y, da)
        return y, d_low, pullback
    d_low, low_pullback = _cholesky_lower(y.T, None if da is None else da.T)

    def pullback(g: Any, g_d: Any) -> tuple:
        (c,), (c_d,) = low_pullback(_transposed(g), _transposed(g_d))
        return (_transposed(c),), (_transposed(c_d),)

    return y, d_low.T, pullback


def _transposed(x: Any) -> Any:
    return x.T if type(x) is np.ndarray else x


def numpy_cholesky(xs: tuple, x_ds: tuple) -> Direct | None:
    """``np.linalg.cholesky(a, upper=False)``."""
    if not _have_scipy() or not 1 <= len(xs) <= 2 or not _real_matrix(xs[0]):
        return None
    a, upper = xs[0], (xs[1] if len(xs) > 1 else False)
    da = _tangent(x_ds[0], a)
    if da is False or not isinstance(upper, (bool, np.bool_)):
        return None
    low = None if upper else real_lower_cholesky(a)  # (NumPy's copies cost half its time at n = 128)
    return _cholesky_of_read_triangle(np.linalg.cholesky(a, upper=upper) if low is None else low, da, bool(upper))


def scipy_cholesky(xs: tuple, x_ds: tuple) -> Direct | None:
    """``scipy.linalg.cholesky(a, lower=False, overwrite_a=False, check_finite=True)`` (computed
    without ``overwrite_a``, as the first-order rule does)."""
    if not _have_scipy() or not 1 <= len(xs) <= 4 or not _real_matrix(xs[0]):
        return None
    a = xs[0]
    lower, check_finite = (xs[1] if len(xs) > 1 else False), (xs[3] if len(xs) > 3 else True)
    da = _tangent(x_ds[0], a)
    if da is False or not isinstance(lower, (bool, np.bool_, int)):
        return None
    y = sla.cholesky(a, lower=lower, check_finite=check_finite)
    out = _cholesky_of_read_triangle(y, da, not lower)
    pullback = out[2]
    return out[0], out[1], lambda g, g_d: _padded(pullback(g, g_d), len(xs))


def _padded(cotangents: tuple, n: int) -> tuple:
    """Cotangents of the first arguments, None for the rest (flags, options)."""
    cs, c_ds = cotangents
    return cs + (None,) * (n - len(cs)), c_ds + (None,) * (n - len(c_ds))


# --------------------------------------------------------------------------------------------
# solve_triangular
# --------------------------------------------------------------------------------------------

_TRANS_CODES = {0: 0, "N": 0, 1: 1, "T": 1, 2: 1, "C": 1}  # real: op(T) = T or T^T


def _solve_triangular_parts(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                            check_finite=True) -> tuple:
    return a, b, trans, lower, unit_diagonal, check_finite


def scipy_solve_triangular(xs: tuple, x_ds: tuple) -> Direct | None:
    """``x = op(T)^-1 b`` (``op(T) = T`` or ``T^T``, ``T`` the triangle read from ``a``).

    ``dx = op(T)^-1 (db - op(dT) x)``; cotangents ``gb = op(T)^-T g``, ``ga = -part(op'(gb x^T))``
    (``op'`` transposes when ``op`` does); their tangents ``dgb = op(T)^-T (dg - op(dT)^T gb)``,
    ``dga = -part(op'(dgb x^T + gb dx^T))``. Products with the triangle and solves by BLAS and
    LAPACK straight (``triangular_blas``), the two outer products of ``dga`` as one."""
    if not _have_scipy() or not 2 <= len(xs) <= 7:
        return None
    a, b, trans, lower, unit, check_finite = _solve_triangular_parts(*xs)
    if not (_real_matrix(a) and _real_rhs(b, a.shape[0])) or trans not in _TRANS_CODES:
        return None
    code = _TRANS_CODES[trans]
    da, db = _tangent(x_ds[0], a), _tangent(x_ds[1], b)
    if da is False or db is False:
        return None
    x = sla.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit, check_finite=check_finite)
    vector = b.ndim == 1
    x2 = x[:, None] if vector else x
    rhs = None if db is None else (db[:, None] if vector else db)
    if da is not None:
        term = triangle_times(da, x2, code, lower, unit, alpha=-1.0)
        rhs = term if rhs is None else np.add(term, rhs, out=term)
    dx2 = np.zeros(x2.shape) if rhs is None else triangular_solve(a, rhs, code, lower, unit)
    if dx2 is None:
        return None

    def outer(us: tuple, vs: tuple) -> np.ndarray:
        """``-part(op'(sum of u v^T))``: one product of the stacked columns."""
        u, v = (np.concatenate(us, axis=1), np.concatenate(vs, axis=1)) if len(us) > 1 else (us[0], vs[0])
        return negated_read_outer(u, v, code, lower, unit)

    def pullback(g: Any, g_d: Any) -> tuple:
        g, g_d = _cotangent(g, x), _cotangent(g_d, x)
        if g is None and g_d is None:
            return (None,) * len(xs), (None,) * len(xs)
        g2 = np.zeros(x2.shape) if g is None else (g[:, None] if vector else g)
        gb = triangular_solve(a, g2, 1 - code, lower, unit)
        rhs = None if g_d is None else (g_d[:, None] if vector else g_d)
        if da is not None:
            term = triangle_times(da, gb, 1 - code, lower, unit, alpha=-1.0)
            rhs = term if rhs is None else np.add(term, rhs, out=term)
        dgb = np.zeros(gb.shape) if rhs is None else triangular_solve(a, rhs, 1 - code, lower, unit)
        ga, dga = outer((gb,), (x2,)), outer((dgb, gb), (x2, dx2))
        if vector:
            gb, dgb = gb[:, 0], dgb[:, 0]
        return _padded(((ga, gb), (dga, dgb)), len(xs))

    return x, (dx2[:, 0] if vector else dx2), pullback


# --------------------------------------------------------------------------------------------
# solve, inv
# --------------------------------------------------------------------------------------------


def numpy_solve(xs: tuple, x_ds: tuple) -> Direct | None:
    """``x = a^-1 b`` for one matrix ``a``, by one LU factorisation for every solve after the
    primal's: ``dx = a^-1 (db - da x)``, ``gb = a^-T g``, ``ga = -gb x^T``,
    ``dgb = a^-T (dg - da^T gb)``, ``dga = -(dgb x^T + gb dx^T)``."""
    if not _have_scipy() or len(xs) != 2 or not (_real_matrix(xs[0]) and _real_rhs(xs[1], xs[0].shape[0])):
        return None
    return _solve(xs, x_ds, lambda a, b: np.linalg.solve(a, b))


def scipy_solve(xs: tuple, x_ds: tuple) -> Direct | None:
    """``scipy.linalg.solve`` of a general matrix (``assume_a`` None or 'gen', not transposed): as
    ``numpy_solve``, the primal by SciPy."""
    if not _have_scipy() or not 2 <= len(xs) <= 8 or not (_real_matrix(xs[0]) and _real_rhs(xs[1], xs[0].shape[0])):
        return None
    lower, _, _, check_finite, assume_a, transposed = (xs[2:] + (False, False, False, True, None, False)[len(xs) - 2:])
    if assume_a not in (None, "gen", "general") or transposed is not False:
        return None
    return _solve(xs, x_ds, lambda a, b: sla.solve(a, b, lower=lower, check_finite=check_finite, assume_a=assume_a),
                  len(xs))


def _solve(xs: tuple, x_ds: tuple, primal: Any, n_args: int = 2) -> Direct | None:
    a, b = xs[:2]
    da, db = _tangent(x_ds[0], a), _tangent(x_ds[1], b)
    if da is False or db is False:
        return None
    x = primal(a, b)
    lu, piv, info = dgetrf(a)
    if info != 0:
        return None
    vector = b.ndim == 1
    x2 = x[:, None] if vector else x

    def solve(rhs: np.ndarray | None, trans: int, like: np.ndarray) -> np.ndarray:
        if rhs is None:
            return np.zeros(like.shape)
        out, _ = dgetrs(lu, piv, rhs, trans=trans)
        return out

    rhs = None if db is None else (db[:, None] if vector else db)
    if da is not None:
        rhs = -(da @ x2) if rhs is None else rhs - da @ x2
    dx2 = solve(rhs, 0, x2)

    def pullback(g: Any, g_d: Any) -> tuple:
        g, g_d = _cotangent(g, x), _cotangent(g_d, x)
        if g is None and g_d is None:
            return (None,) * n_args, (None,) * n_args
        gb = solve(None if g is None else (g[:, None] if vector else g), 1, x2)
        rhs = None if g_d is None else (g_d[:, None] if vector else g_d)
        if da is not None:
            rhs = -(da.T @ gb) if rhs is None else rhs - da.T @ gb
        dgb = solve(rhs, 1, x2)
        ga, dga = -(gb @ x2.T), -(dgb @ x2.T + gb @ dx2.T)
        return _padded(((ga, gb[:, 0] if vector else gb), (dga, dgb[:, 0] if vector else dgb)), n_args)

    return x, (dx2[:, 0] if vector else dx2), pullback


def numpy_inv(xs: tuple, x_ds: tuple) -> Direct | None:
    """``y = a^-1``: ``dy = -y da y``; ``ga = -y^T g y^T``, its tangent
    ``-(dy^T g y^T + y^T dg y^T + y^T g dy^T)``."""
    if len(xs) != 1 or not _real_matrix(xs[0]):
        return None
    return _inverse(xs, x_ds, np.linalg.inv)


def scipy_inv(xs: tuple, x_ds: tuple) -> Direct | None:
    """``scipy.linalg.inv`` of a general matrix (``assume_a`` None or 'gen'): as ``numpy_inv``,
    the primal by SciPy."""
    if not _have_scipy() or not 1 <= len(xs) <= 5 or not _real_matrix(xs[0]):
        return None
    _, check_finite, assume_a, lower = (xs[1:] + (False, True, None, False)[len(xs) - 1:])
    if assume_a not in (None, "gen", "general"):
        return None
    return _inverse(xs, x_ds, lambda a: sla.inv(a, check_finite=check_finite, assume_a=assume_a, lower=lower))


def _inverse(xs: tuple, x_ds: tuple, primal: Any) -> Direct | None:
    a = xs[0]
    da = _tangent(x_ds[0], a)
    if da is False:
        return None
    y = primal(a)
    dy = np.zeros(y.shape) if da is None else -(y @ da @ y)

    def pullback(g: Any, g_d: Any) -> tuple:
        g, g_d = _cotangent(g, y), _cotangent(g_d, y)
        if g is None and g_d is None:
            return (None,) * len(xs), (None,) * len(xs)
        yt, dyt = y.T, dy.T
        left = None if g is None else yt @ g  # y^T g
        ga = np.zeros(y.shape) if left is None else -(left @ yt)
        dga = np.zeros(y.shape) if g_d is None else -(yt @ g_d @ yt)
        if left is not None and da is not None:
            dga -= dyt @ (g @ yt) + left @ dyt
        return _padded(((ga,), (dga,)), len(xs))

    return y, dy, pullback



# --------------------------------------------------------------------------------------------
# det, slogdet
# --------------------------------------------------------------------------------------------


def _scalar(g: Any) -> float | None:
    """A number output's cotangent (or its tangent) as a float, None for zero."""
    if g is None or g is NoRData or g is NoTangent:
        return None
    g = float(g)
    return g if g else None


def _log_determinant_parts(a: np.ndarray, da: np.ndarray | None) -> tuple:
    """``a^-T``, ``d log|det a| = tr(a^-1 da)`` and ``d(a^-T) = -(a^-1 da a^-1)^T``, the inverse
    computed once for the tangent, the cotangent and its tangent."""
    inv_t = np.linalg.inv(a).T
    if da is None:
        return inv_t, 0.0, None
    return inv_t, float(np.vdot(inv_t, da)), -(inv_t @ da.T @ inv_t)


def numpy_slogdet(xs: tuple, x_ds: tuple) -> Direct | None:
    """``(sign, log|det a|)`` of one real matrix, not singular: the sign is piecewise constant;
    ``d log|det| = tr(a^-1 da)``; ``ga = g a^-T``, its tangent ``dg a^-T + g d(a^-T)``."""
    matrix = _one_real_matrix(xs, x_ds)
    if matrix is None:
        return None
    a, da = matrix
    y = np.linalg.slogdet(a)
    if y[0] == 0:
        return None  # (the general path refuses it, naming the singular matrix)
    inv_t, t, d_inv_t = _log_determinant_parts(a, da)
    y_d = type(y)(0.0, t)

    def pullback(g: Any, g_d: Any) -> tuple:
        g, g_d = _scalar(cotangent_entry(g, 1)), _scalar(cotangent_entry(g_d, 1))
        if g is None and g_d is None:
            return (None,), (None,)
        ga = np.zeros(a.shape) if g is None else g * inv_t
        dga = np.zeros(a.shape) if g_d is None else g_d * inv_t
        if g is not None and d_inv_t is not None:
            dga += g * d_inv_t
        return (ga,), (dga,)

    return y, y_d, pullback


def numpy_det(xs: tuple, x_ds: tuple) -> Direct | None:
    """``y = det a`` of one real matrix, not singular (the adjugate's general path otherwise):
    ``dy = y tr(a^-1 da)``; ``ga = g y a^-T``, its tangent ``(dg y + g dy) a^-T + g y d(a^-T)``."""
    matrix = _one_real_matrix(xs, x_ds)
    if matrix is None:
        return None
    a, da = matrix
    y = np.linalg.det(a)
    if not (y != 0 and np.isfinite(y)):
        return None
    inv_t, t, d_inv_t = _log_determinant_parts(a, da)
    y_d = float(y * t)

    def pullback(g: Any, g_d: Any) -> tuple:
        g, g_d = _scalar(g), _scalar(g_d)
        if g is None and g_d is None:
            return (None,), (None,)
        ga = np.zeros(a.shape) if g is None else (g * y) * inv_t
        dga = ((0.0 if g_d is None else g_d * y) + (0.0 if g is None else g * y_d)) * inv_t
        if g is not None and d_inv_t is not None:
            dga += (g * y) * d_inv_t
        return (ga,), (dga,)

    return y, y_d, pullback
