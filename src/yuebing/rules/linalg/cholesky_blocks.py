"""The Cholesky factor of one real float64 matrix by BLAS kernels along the factorisation's own
2x2 block recursion (Murray, "Differentiation of the Cholesky decomposition", 2016): its tangent
(``real_cholesky_jvp``), its cotangent (``real_cholesky_vjp``), and for second order the
cotangent together with its tangent (``cholesky_cotangent_and_tangent``). ``decompositions``'
rules and ``direct_second_order``'s formulas call them; each of the first two returns None where
it does not apply (then the general formulas run).

Conventions: ``L`` lower, ``G`` the cotangent of ``L`` (only its lower triangle acts), a tangent
``H`` of ``a`` read in its lower triangle, the cotangent of ``a``'s lower triangle returned as
``tril(S + S^T)`` with ``S``'s own diagonal; C-ordered arrays, BLAS on their Fortran views.

Second order. The dense formula's, ``dS = L^-T (Phi(dL^T G + L^T dG) - Q^T P - P Q) L^-1`` with
``P = Phi(L^T G)``, ``Q = L^-1 dL``, costs 12 n^3 flops after the tangent's 3 n^3 (36 and 9
times the factorisation's n^3 / 3). ``cholesky_cotangent_and_tangent`` differentiates the
cotangent's block recursion line by line instead, with the dense formula at the leaves, where
``L^-1`` is formed once (LAPACK's ``dtrtri``, m^3 / 3) so every solve of the leaf is a matrix
product, BLAS's fastest kernel at these orders. A leaf of order m costs 21 m^3 (ten products, a
triangular inverse), a split of order n seven products and two triangular solves of order n / 2
(16 (n/2)^3); at n = 128 with leaves of 32 that is 4 x 21 + 2 x 16 + 16 x 8 = 244 (n/4)^3 ~
3.8 n^3, plus the tangent's block recursion (~1.25 n^3). Measured at n = 128, the tangent and
the pullback together: 10.6 -> 6.8 times the factorisation (same process).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

# --------------------------------------------------------------------------------------------
# First order
# --------------------------------------------------------------------------------------------

_DENSE_CHOLESKY_VJP_SIZE = 64  # at most this order, one dense formula; above, split in two


def _real_blas_dtrsm(low: np.ndarray, other: Any) -> Callable | None:
    """BLAS's ``dtrsm`` when the factor ``low`` and ``other`` (a cotangent or a tangent) are real
    float64 matrices of one shape, the kernels' case; None otherwise (or without SciPy)."""
    if not (low.ndim == 2 and low.dtype == np.float64 and isinstance(other, np.ndarray)
            and other.dtype == np.float64 and other.shape == low.shape):
        return None
    try:
        from scipy.linalg.blas import dtrsm
    except ImportError:
        return None
    return dtrsm


def real_cholesky_vjp(low: np.ndarray, g: Any) -> np.ndarray | None:
    """``lower_cholesky_cotangent`` for one real float64 matrix by BLAS kernels, None if it does
    not apply: ``_dense_cholesky_vjp`` up to order 64, ``_split_cholesky_vjp`` above."""
    dtrsm = _real_blas_dtrsm(low, g)
    return None if dtrsm is None else _split_cholesky_vjp(low, g, dtrsm)


def _split_cholesky_vjp(low: np.ndarray, g: np.ndarray, dtrsm: Callable) -> np.ndarray:
    """The cotangent of ``a``'s lower triangle by the Cholesky factorisation's own 2x2 block
    recursion run backwards (Murray, "Differentiation of the Cholesky decomposition", 2016):
    ``L11 = chol(A11)``, ``L21 = A21 L11^-T``, ``L22 = chol(A22 - L21 L21^T)``, so, from the last
    step to the first, ``A22' = vjp(L22, G22)``, ``G21 -= (A22' + A22'^T) L21``,
    ``A21' = G21 L11^-1``, ``G11 -= A21'^T L21``, ``A11' = vjp(L11, G11)``. About n^3 flops where
    the dense formula takes 3 n^3: measured 2x faster at n = 128, 3.6x at n = 512."""
    n = low.shape[0]
    if n <= _DENSE_CHOLESKY_VJP_SIZE:
        return _dense_cholesky_vjp(low, g)
    k = n // 2
    l11, l21 = low[:k, :k], low[k:, :k]
    out = np.empty((n, n))
    out[:k, k:] = 0.0
    a22_bar = out[k:, k:] = _split_cholesky_vjp(low[k:, k:], g[k:, k:], dtrsm)
    g21 = g[k:, :k] - (a22_bar + a22_bar.T) @ l21
    a21_bar = out[k:, :k] = dtrsm(1.0, l11.T, g21.T, lower=0).T  # L11^T X^T = G21^T
    out[:k, :k] = _split_cholesky_vjp(l11, g[:k, :k] - a21_bar.T @ l21, dtrsm)
    return out


def _dense_cholesky_vjp(low: np.ndarray, g: np.ndarray) -> np.ndarray:
    """``lower_cholesky_cotangent`` for one real float64 matrix with BLAS triangular kernels:
    ``S = L^-T Phi(L^T G) L^-1`` as a triangular product and two triangular solves (3 n^3 flops
    instead of 6 n^3 for an explicit inverse and three dense products), returned as
    ``tril(S + S^T)`` with ``S``'s own diagonal.

    BLAS wants Fortran order, and ``L.T`` and ``G.T`` are Fortran views of C-ordered ``L`` and
    ``G``, so the work is done on transposes (no copies): ``M^T = G^T L``, then
    ``Phi(M)^T = M^T * W`` (``W`` upper triangular with 0.5 on its diagonal), ``X^T`` from
    ``L^T X^T = Phi^T`` and ``S^T`` from ``S^T L = X^T``."""
    from scipy.linalg.blas import dtrmm, dtrsm  # there: real_cholesky_vjp checked
    up = low.T  # the upper factor U = L^T
    weights = _halved_upper(low.shape[0])
    m_t = dtrmm(1.0, up, g.T, side=1, lower=0, trans_a=1)  # G^T U^T = G^T L
    np.multiply(m_t, weights, out=m_t)  # Phi(L^T G)^T
    x_t = dtrsm(1.0, up, m_t, lower=0, overwrite_b=1)  # U X^T = Phi^T
    s_t = dtrsm(1.0, up, x_t, side=1, lower=0, trans_a=1, overwrite_b=1)  # S^T U^T = X^T
    out = s_t.T + s_t
    np.multiply(out, weights.T, out=out)  # tril(S + S^T), S's diagonal
    return out


def real_cholesky_jvp(low: np.ndarray, da: Any) -> np.ndarray | None:
    """The tangent of the lower Cholesky factor ``L`` of one real float64 matrix along the
    symmetric ``H`` whose lower triangle ``da`` holds (the triangle LAPACK read; the other one is
    never read) by BLAS kernels (``_split_cholesky_jvp``), None if it does not apply."""
    dtrsm = _real_blas_dtrsm(low, da)
    return None if dtrsm is None else _split_cholesky_jvp(low, da, False)[0]


def cholesky_tangent_and_inverse(low: np.ndarray, da: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(dL, L^-1)``: ``real_cholesky_jvp``'s tangent and the factor's inverse, which its
    recursion forms block by block (two products more at each level), for second order's
    cotangent (``cholesky_cotangent_and_tangent``). The caller checked SciPy and the arrays."""
    return _split_cholesky_jvp(low, da, True)


_CHOLESKY_JVP_LEAF = 32  # measured at n = 128 (same process, interleaved): leaves of 32 take 0.96
#                          of the time of leaves of 64, 0.7 of leaves of 16


def _split_cholesky_jvp(low: np.ndarray, h: np.ndarray, need_inverse: bool) -> tuple:
    """``(dL, L^-1 or None)``: the tangent of the lower Cholesky factor ``low`` (zeros above its
    diagonal, as every caller's factor) along the symmetric matrix whose lower triangle ``h``
    holds, by the factorisation's own 2x2 block recursion run forwards (Murray,
    "Differentiation of the Cholesky decomposition", 2016): ``L11 = chol(A11)``,
    ``L21 = A21 L11^-T``, ``L22 = chol(A22 - L21 L21^T)``, so ``dL11 = jvp(L11, H11)``,
    ``dL21 = (H21 - L21 dL11^T) L11^-T`` and ``dL22 = jvp(L22, H22 - dL21 L21^T - L21 dL21^T)``.

    This OpenBLAS's triangular solves run at a fifth of its matrix products' speed at these
    orders (dtrsm 10 GFlop/s at 64, dgemm 57), so every solve is a product with an inverse the
    recursion forms anyway: each leaf inverts its diagonal block (LAPACK's ``dtrtri``), and
    ``L11^-1`` is the first half's. Each level costs three products of order n / 2 (and two
    more to join the halves' inverses, ``L^-1 = [[L11^-1, 0], [-L22^-1 L21 L11^-1, L22^-1]]``,
    where the caller wants it: the first half always). Measured at n = 128 against the
    triangular solves' recursion with dense leaves of 64: 268 -> 223 us (the factorisation
    itself: 131 us). Only the lower triangle of ``h`` is read."""
    n = low.shape[0]
    if n <= _CHOLESKY_JVP_LEAF:
        return _leaf_cholesky_jvp(low, h)
    k = n // 2
    l21 = low[k:, :k]
    d11, inv11 = _split_cholesky_jvp(low[:k, :k], h[:k, :k], True)
    out = np.empty((n, n))
    out[:k, k:] = 0.0
    out[:k, :k] = d11
    d21 = out[k:, :k] = (h[k:, :k] - l21 @ d11.T) @ inv11.T
    cross = d21 @ l21.T
    h22 = h[k:, k:] - cross
    h22 -= cross.T
    out[k:, k:], inv22 = _split_cholesky_jvp(low[k:, k:], h22, need_inverse)
    if not need_inverse:
        return out, None
    inverse = np.empty((n, n))
    inverse[:k, k:] = 0.0
    inverse[:k, :k] = inv11
    inverse[k:, k:] = inv22
    inverse[k:, :k] = -((inv22 @ l21) @ inv11)
    return out, inverse


def _leaf_cholesky_jvp(low: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(L Phi(L^-1 H L^-T), L^-1)`` for a small lower factor ``L`` and the symmetric ``H``
    whose lower triangle ``h`` holds: LAPACK's triangular inverse, two products for ``X``, and
    ``dL = L Phi(X)`` by BLAS's triangular product on the Fortran views (``(L Phi)^T = Phi^T U``)."""
    from scipy.linalg.blas import dtrmm  # there: real_cholesky_jvp checked
    from scipy.linalg.lapack import dtrtri

    inverse_t, info = dtrtri(low.T, lower=0)  # U^-1 (Fortran), the transpose of C-ordered L^-1
    if info != 0:  # a singular factor: cholesky raised before this could run
        raise np.linalg.LinAlgError("singular Cholesky factor")
    inverse = inverse_t.T
    x = (inverse @ _symmetric_from_lower(h)) @ inverse_t
    np.multiply(x, _halved_upper(low.shape[0]).T, out=x)  # Phi(X): lower triangle, half diagonal
    return dtrmm(1.0, low.T, x.T, side=1, lower=0).T, inverse


def _symmetric_from_lower(h: np.ndarray) -> np.ndarray:
    """The real symmetric matrix whose lower triangle is ``h``'s (a new C-ordered array)."""
    low = np.multiply(h, _halved_upper(h.shape[0]).T, order="C")  # tril(h) with a halved diagonal
    return low + low.T


@functools.lru_cache(maxsize=16)
def _halved_upper(n: int) -> np.ndarray:
    """Ones on and above the diagonal, 0.5 on it (Fortran order, read-only: shared)."""
    weights = np.asfortranarray(np.triu(np.ones((n, n))))
    weights[np.diag_indices(n)] = 0.5
    weights.flags.writeable = False
    return weights


# --------------------------------------------------------------------------------------------
# Second order: the cotangent's block recursion and its tangent
# --------------------------------------------------------------------------------------------

_LEAF = 32  # at most this order, the dense formula (measured at n = 128: leaves of 32 take 0.9 of
#             the time of leaves of 64, leaves of 16 1.2)


def cholesky_cotangent_and_tangent(low: np.ndarray, d_low: np.ndarray, g: np.ndarray, dg: np.ndarray,
                                   inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(gA, dgA)``: the cotangent of ``a`` given ``G`` (that of its lower factor ``low``) and
    its tangent along ``d_low`` (the factor's tangent) and ``dg`` (``G``'s); ``inverse`` is
    ``L^-1`` (``cholesky_tangent_and_inverse``), whose diagonal blocks are the inverses of
    ``L``'s, so every solve of the recursion is a matrix product (5 times faster than this
    OpenBLAS's triangular solves at order 64)."""
    n = low.shape[0]
    if n <= _LEAF:
        return _dense_cotangent_and_tangent(low, d_low, g, dg, inverse)
    k = n // 2
    l11, l21, l22 = low[:k, :k], low[k:, :k], low[k:, k:]
    d11, d21 = d_low[:k, :k], d_low[k:, :k]
    inv11 = inverse[:k, :k]
    out, d_out = np.empty((n, n)), np.empty((n, n))
    out[:k, k:] = d_out[:k, k:] = 0.0
    a22, da22 = cholesky_cotangent_and_tangent(l22, d_low[k:, k:], g[k:, k:], dg[k:, k:], inverse[k:, k:])
    out[k:, k:], d_out[k:, k:] = a22, da22
    both22, d_both22 = a22 + a22.T, da22 + da22.T
    g21 = g[k:, :k] - both22 @ l21
    dg21 = dg[k:, :k] - d_both22 @ l21 - both22 @ d21
    a21 = out[k:, :k] = g21 @ inv11  # A21' L11 = G21
    da21 = d_out[k:, :k] = (dg21 - a21 @ d11) @ inv11  # dA21' L11 + A21' dL11 = dG21
    g11 = g[:k, :k] - a21.T @ l21
    dg11 = dg[:k, :k] - da21.T @ l21 - a21.T @ d21
    out[:k, :k], d_out[:k, :k] = cholesky_cotangent_and_tangent(l11, d11, g11, dg11, inv11)
    return out, d_out


def _dense_cotangent_and_tangent(low: np.ndarray, d_low: np.ndarray, g: np.ndarray, dg: np.ndarray,
                                 inv: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dense formula and its tangent at a leaf (``inv``: ``L^-1``): ``S = L^-T P L^-1``,
    ``P = Phi(L^T G)``; ``dS = L^-T R L^-1``, ``R = Phi(dL^T G + L^T dG) - Q^T P - P Q``,
    ``Q = L^-1 dL``; both sandwiches in one pair of products (``[P | R]`` stacked)."""
    m = low.shape[0]
    weights = _halved_upper(m).T  # C-ordered: ones below the diagonal, 0.5 on it
    p = (low.T @ g) * weights
    q = inv @ d_low
    r = (d_low.T @ g + low.T @ dg) * weights - q.T @ p - p @ q
    left = inv.T @ np.concatenate((p, r), axis=1)  # L^-T [P | R]
    s = np.concatenate((left[:, :m], left[:, m:]), axis=0) @ inv  # [S; dS]
    s_p, s_r = s[:m], s[m:]
    return (s_p + s_p.T) * weights, (s_r + s_r.T) * weights
