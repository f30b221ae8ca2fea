"""Second order of the Cholesky factor of one real float64 matrix by the factorisation's own 2x2
block recursion: the cotangent of ``a`` and its tangent in one pass (``direct_second_order``'s
``cholesky`` rules call it).

The dense formula's second order, ``dS = L^-T (Phi(dL^T G + L^T dG) - Q^T P - P Q) L^-1`` with
``P = Phi(L^T G)``, ``Q = L^-1 dL``, costs 12 n^3 flops after the tangent's 3 n^3 (36 and 9
times the factorisation's n^3 / 3). Here the cotangent's block recursion (``decompositions.
_split_cholesky_vjp``: ``A22' = vjp(L22, G22)``, ``G21 -= (A22' + A22'^T) L21``, ``A21' = G21
L11^-1``, ``G11 -= A21'^T L21``, ``A11' = vjp(L11, G11)``) is differentiated line by line, with
the dense formula at the leaves, where ``L^-1`` is formed once (LAPACK's ``dtrtri``, m^3 / 3) so
every solve of the leaf is a matrix product, BLAS's fastest kernel at these orders.

Flops: a leaf of order m costs 21 m^3 (ten products, a triangular inverse), a split of order n
seven products and two triangular solves of order n / 2 (16 (n/2)^3); at n = 128 with leaves
of 32 that is 4 x 21 + 2 x 16 + 16 x 8 = 244 (n/4)^3 ~ 3.8 n^3 (the dense formula: 12 n^3), plus
the tangent's block recursion (``_split_cholesky_jvp``, ~1.25 n^3). Measured at n = 128, the
tangent and the pullback together: 10.6 -> 6.8 times the factorisation (same process).

Conventions (``decompositions``): ``L`` lower, ``G`` the cotangent of ``L`` (only its lower
triangle acts), the result the cotangent of ``a``'s lower triangle (``tril(S + S^T)`` with
``S``'s own diagonal); C-ordered arrays, BLAS on their Fortran views.
"""
from __future__ import annotations

import functools

import numpy as np

_LEAF = 32  # at most this order, the dense formula (measured at n = 128: leaves of 32 take 0.9 of
#             the time of leaves of 64, leaves of 16 1.2)


def cholesky_cotangent_and_tangent(low: np.ndarray, d_low: np.ndarray, g: np.ndarray,
                                   dg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(gA, dgA)``: the cotangent of ``a`` given ``G`` (that of its lower factor ``low``) and
    its tangent along ``d_low`` (the factor's tangent) and ``dg`` (``G``'s)."""
    from scipy.linalg.blas import dtrsm  # there: the caller checked SciPy

    n = low.shape[0]
    if n <= _LEAF:
        return _dense(low, d_low, g, dg)
    k = n // 2
    l11, l21, l22 = low[:k, :k], low[k:, :k], low[k:, k:]
    d11, d21 = d_low[:k, :k], d_low[k:, :k]
    out, d_out = np.empty((n, n)), np.empty((n, n))
    out[:k, k:] = d_out[:k, k:] = 0.0
    a22, da22 = cholesky_cotangent_and_tangent(l22, d_low[k:, k:], g[k:, k:], dg[k:, k:])
    out[k:, k:], d_out[k:, k:] = a22, da22
    both22, d_both22 = a22 + a22.T, da22 + da22.T
    g21 = g[k:, :k] - both22 @ l21
    dg21 = dg[k:, :k] - d_both22 @ l21 - both22 @ d21
    a21 = out[k:, :k] = _times_inverse(l11, g21, dtrsm)  # A21' L11 = G21
    da21 = d_out[k:, :k] = _times_inverse(l11, dg21 - a21 @ d11, dtrsm)  # dA21' L11 + A21' dL11 = dG21
    g11 = g[:k, :k] - a21.T @ l21
    dg11 = dg[:k, :k] - da21.T @ l21 - a21.T @ d21
    out[:k, :k], d_out[:k, :k] = cholesky_cotangent_and_tangent(l11, d11, g11, dg11)
    return out, d_out


def _times_inverse(low: np.ndarray, rhs: np.ndarray, dtrsm) -> np.ndarray:
    """``rhs L^-1`` for lower ``L``, on Fortran views: ``L^T X^T = rhs^T``."""
    return dtrsm(1.0, low.T, rhs.T, lower=0).T


def _dense(low: np.ndarray, d_low: np.ndarray, g: np.ndarray, dg: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dense formula and its tangent at a leaf: ``S = L^-T P L^-1``, ``P = Phi(L^T G)``;
    ``dS = L^-T R L^-1``, ``R = Phi(dL^T G + L^T dG) - Q^T P - P Q``, ``Q = L^-1 dL``; both
    sandwiches in one pair of products (``[P | R]`` stacked)."""
    from scipy.linalg.lapack import dtrtri  # there: the caller checked SciPy

    m = low.shape[0]
    inv, info = dtrtri(low, lower=1)
    if info != 0:  # a singular factor: cholesky raised before this could run
        raise np.linalg.LinAlgError("singular Cholesky factor")
    weights = _halved_lower(m)
    p = (low.T @ g) * weights
    q = inv @ d_low
    r = (d_low.T @ g + low.T @ dg) * weights - q.T @ p - p @ q
    left = inv.T @ np.concatenate((p, r), axis=1)  # L^-T [P | R]
    s = np.concatenate((left[:, :m], left[:, m:]), axis=0) @ inv  # [S; dS]
    s_p, s_r = s[:m], s[m:]
    return (s_p + s_p.T) * weights, (s_r + s_r.T) * weights


@functools.lru_cache(maxsize=16)
def _halved_lower(n: int) -> np.ndarray:
    """Ones below the diagonal, 0.5 on it, 0 above (read-only: shared): ``x * w`` is ``Phi(x)``,
    ``(s + s^T) * w`` is ``tril(s + s^T)`` with ``s``'s own diagonal."""
    weights = np.tril(np.ones((n, n)))
    weights[np.diag_indices(n)] = 0.5
    weights.flags.writeable = False
    return weights
