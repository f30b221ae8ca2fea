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
import types
from typing import Any

import numpy as np

# --------------------------------------------------------------------------------------------
# First order
# --------------------------------------------------------------------------------------------

# This OpenBLAS's triangular solves run at a seventh of its matrix products' speed at these
# orders (order 64, one thread: dtrsm 24 us, 11 GFlop/s; dgemm 7 us, 77 GFlop/s), and LAPACK's
# triangular inverse (dtrtri, 14 us) serves several products: both recursions solve by
# multiplying with inverses, each leaf inverting its diagonal block.

_CHOLESKY_VJP_LEAF = 64  # at most this order, one dense formula; above, split in two


def _real_blas_applies(low: np.ndarray, other: Any) -> bool:
    """Whether the factor ``low`` and ``other`` (a cotangent or a tangent) are real float64
    matrices of one shape, the kernels' case, and SciPy's BLAS is there."""
    return low.ndim == 2 and low.dtype == np.float64 and isinstance(other, np.ndarray) \
        and other.dtype == np.float64 and other.shape == low.shape and _blas() is not None


@functools.lru_cache(maxsize=1)
def _blas() -> Any:
    """SciPy's BLAS and LAPACK kernels the recursions call (found once: each call of the
    recursions' many small steps would otherwise pay an import statement), None without SciPy."""
    try:
        from scipy.linalg.blas import dgemm, dsymm, dsyr2k, dtrmm
        from scipy.linalg.lapack import dpotrf, dtrtri
    except ImportError:
        return None
    return types.SimpleNamespace(dgemm=dgemm, dsymm=dsymm, dsyr2k=dsyr2k, dtrmm=dtrmm, dtrtri=dtrtri, dpotrf=dpotrf)


def real_lower_cholesky(a: Any) -> np.ndarray | None:
    """``np.linalg.cholesky(a)`` (the lower factor of the matrix read from ``tril(a)``) for one
    real float64 matrix by LAPACK's ``dpotrf`` on its Fortran view ``a^T``, whose upper factor is
    ``L^T``; None where that does not apply (another dtype, a stack, no SciPy). NumPy's own call
    copies the matrix into Fortran order and the factor back, element by element along strides:
    at n = 128 (one thread, CPU time) 94 us against 48 here, a saving every derivative of a
    Cholesky makes. The factor agrees with NumPy's to rounding (LAPACK's upper variant orders
    the sums differently), not bit for bit; it is C-ordered, zero above the diagonal, as NumPy's."""
    if type(a) is not np.ndarray or a.ndim != 2 or a.dtype != np.float64 or a.shape[0] != a.shape[1] \
            or a.shape[0] == 0 or _blas() is None:
        return None
    up, info = _blas().dpotrf(a.T, lower=0)  # copies a^T (contiguous: a plain copy), cleans below
    if info > 0:
        raise np.linalg.LinAlgError("Matrix is not positive definite")  # NumPy's words
    return None if info < 0 else up.T


def real_cholesky_vjp(low: np.ndarray, g: Any) -> np.ndarray | None:
    """``lower_cholesky_cotangent`` for one real float64 matrix by BLAS kernels, None if it does
    not apply: ``_leaf_cholesky_vjp`` up to order 64, ``_split_cholesky_vjp`` above."""
    return _split_cholesky_vjp(low, g, None) if _real_blas_applies(low, g) else None


def _split_cholesky_vjp(low: np.ndarray, g: np.ndarray, inverse: np.ndarray | None) -> np.ndarray:
    """The cotangent of ``a``'s lower triangle by the Cholesky factorisation's own 2x2 block
    recursion run backwards (Murray, "Differentiation of the Cholesky decomposition", 2016):
    ``L11 = chol(A11)``, ``L21 = A21 L11^-T``, ``L22 = chol(A22 - L21 L21^T)``, so, from the last
    step to the first, ``A22' = vjp(L22, G22)``, ``G21 -= (A22' + A22'^T) L21``,
    ``A21' = G21 L11^-1``, ``G11 -= A21'^T L21``, ``A11' = vjp(L11, G11)``. About n^3 flops where
    the dense formula takes 3 n^3. ``inverse``: ``L^-1`` when the caller has it (the diagonal
    blocks of ``L^-1`` are the inverses of ``L``'s), None otherwise. The solve is a product with
    ``L11^-1``, formed before ``L11``'s own step, which reuses it. Measured at n = 128 (one
    thread, CPU time, medians, interleaved) against the same recursion solving by ``dtrsm``:
    198 -> 157 us (the factorisation: 109 us); n = 200: 469 -> 354."""
    n = low.shape[0]
    if n <= _CHOLESKY_VJP_LEAF:
        return _leaf_cholesky_vjp(low, g, inverse)
    # (each block is written into ``out`` and read back from there, and ``L11^-1`` formed once
    # ``A22'`` is done: the peak memory stays that of the dtrsm recursion's)
    k = n // 2
    l21 = low[k:, :k]
    out = np.empty((n, n))
    out[:k, k:] = 0.0
    out[k:, k:] = _split_cholesky_vjp(low[k:, k:], g[k:, k:], None if inverse is None else inverse[k:, k:])
    a22_bar = out[k:, k:]
    inv11 = _lower_inverse(low[:k, :k]) if inverse is None else inverse[:k, :k]
    out[k:, :k] = (g[k:, :k] - (a22_bar + a22_bar.T) @ l21) @ inv11  # A21' L11 = G21
    out[:k, :k] = _split_cholesky_vjp(low[:k, :k], g[:k, :k] - out[k:, :k].T @ l21, inv11)
    return out


def _leaf_cholesky_vjp(low: np.ndarray, g: np.ndarray, inverse: np.ndarray | None) -> np.ndarray:
    """``S = L^-T Phi(L^T G) L^-1`` (``L^-1`` given, or LAPACK's triangular inverse), returned as
    ``tril(S + S^T)`` with ``S``'s own diagonal, which is ``Phi(L^-T M L^-1)`` for the symmetric
    ``M`` whose lower triangle is ``L^T G``'s (``Phi(P) + Phi(P)^T``): three products, the
    middle one BLAS's symmetric product reading that triangle, and one mask. Only ``G``'s lower
    triangle acts: the lower triangle of ``L^T G`` reads no other."""
    if inverse is None:
        inverse = _leaf_lower_inverse(low)
    p = low.T @ g  # its upper triangle is not read
    left_t = _blas().dsymm(1.0, p.T, inverse.T, side=1, lower=0)  # L^-T M (p.T's upper: p's lower)
    out = left_t @ inverse
    return np.multiply(out, _halved_upper(low.shape[0]).T, out=out)  # lower triangle, half diagonal


def _lower_inverse(low: np.ndarray) -> np.ndarray:
    """``L^-1`` of a lower factor by the same recursion: the halves' inverses (LAPACK's ``dtrtri``
    up to order 64) joined, ``[[L11^-1, 0], [-L22^-1 L21 L11^-1, L22^-1]]``."""
    n = low.shape[0]
    if n <= _CHOLESKY_VJP_LEAF:
        return _leaf_lower_inverse(low)
    k = n // 2
    inv11, inv22 = _lower_inverse(low[:k, :k]), _lower_inverse(low[k:, k:])
    return _joined_inverse(inv11, inv22, low[k:, :k])


def _joined_inverse(inv11: np.ndarray, inv22: np.ndarray, l21: np.ndarray | None) -> np.ndarray:
    """The inverse of ``[[L11, 0], [L21, L22]]`` from the inverses of its diagonal blocks (its
    lower left block NaN for ``l21`` None: not wanted)."""
    k, n = inv11.shape[0], inv11.shape[0] + inv22.shape[0]
    inverse = np.empty((n, n))
    inverse[:k, k:] = 0.0
    inverse[:k, :k] = inv11
    inverse[k:, k:] = inv22
    inverse[k:, :k] = np.nan if l21 is None else -((inv22 @ l21) @ inv11)
    return inverse


def _leaf_lower_inverse(low: np.ndarray) -> np.ndarray:
    """LAPACK's inverse of a lower factor, C-ordered (the transpose of ``dtrtri``'s result on the
    Fortran view ``low.T``, the upper factor), exactly zero above the diagonal as ``low`` is."""
    inverse_t, info = _blas().dtrtri(low.T, lower=0)
    if info != 0:  # a singular factor: cholesky raised before this could run
        raise np.linalg.LinAlgError("singular Cholesky factor")
    return inverse_t.T


def real_cholesky_jvp(low: np.ndarray, da: Any) -> np.ndarray | None:
    """The tangent of the lower Cholesky factor ``L`` of one real float64 matrix along the
    symmetric ``H`` whose lower triangle ``da`` holds (the triangle LAPACK read; the other one is
    never read) by BLAS kernels (``_split_cholesky_jvp``), None if it does not apply."""
    return _split_cholesky_jvp(low, da, False)[0] if _real_blas_applies(low, da) else None


def cholesky_tangent_and_inverse(low: np.ndarray, da: np.ndarray, *, blocks: bool = False) -> tuple:
    """``(dL, L^-1)``: ``real_cholesky_jvp``'s tangent and the factor's inverse, which its
    recursion forms block by block (two products more at each level). ``blocks``: only the
    blocks of ``L^-1`` second order's cotangent recursion reads (``cholesky_cotangent_and_tangent``:
    the first half's whole inverse, the second half's own such blocks), the lower left block of
    each second half's inverse left NaN (never read; at n = 128 that spares three products of
    the four). The caller checked SciPy and the arrays."""
    return _split_cholesky_jvp(low, da, _READ_BLOCKS if blocks else True)


_READ_BLOCKS = "read blocks"  # _split_cholesky_jvp's need_inverse for cholesky_tangent_and_inverse(blocks=True)


_CHOLESKY_JVP_LEAF = 64  # measured at n = 40 to 256 (one thread, CPU time, interleaved): leaves of 48
#                          and 64 take 0.7 to 1 of the time of leaves of 32 (128: 0.96)


def _split_cholesky_jvp(low: np.ndarray, h: np.ndarray, need_inverse: bool) -> tuple:
    """``(dL, L^-1 or None)``: the tangent of the lower Cholesky factor ``low`` (zeros above its
    diagonal, as every caller's factor) along the symmetric matrix whose lower triangle ``h``
    holds, by the factorisation's own 2x2 block recursion run forwards (Murray,
    "Differentiation of the Cholesky decomposition", 2016): ``L11 = chol(A11)``,
    ``L21 = A21 L11^-T``, ``L22 = chol(A22 - L21 L21^T)``, so ``dL11 = jvp(L11, H11)``,
    ``dL21 = (H21 - L21 dL11^T) L11^-T`` and ``dL22 = jvp(L22, H22 - dL21 L21^T - L21 dL21^T)``.

    The work is on Fortran views (BLAS's order): ``dL21^T = L11^-1 (H21^T - dL11 L21^T)`` by two
    triangular products (``dL11`` and ``L11^-1`` are triangular), the lower triangle of ``H22``'s
    update by one symmetric rank-2k update (``dsyr2k``), and ``L11^-1`` is the first half's,
    formed by its leaves; where the caller wants ``L^-1`` the halves' inverses are joined (two
    products more). Only the lower triangle of ``h`` is read. Measured at n = 128 (one thread,
    CPU time, medians, interleaved) against products by NumPy with a symmetrised copy at each
    leaf of 32: 189 -> 150 us (the factorisation: 109 us); n = 200: 523 -> 369."""
    n = low.shape[0]
    if n <= _CHOLESKY_JVP_LEAF:
        return _leaf_cholesky_jvp(low, h)
    blas = _blas()
    k = n // 2
    l21_t = np.asfortranarray(low[k:, :k].T)  # L21^T, copied once for two BLAS calls
    d11, inv11 = _split_cholesky_jvp(low[:k, :k], h[:k, :k], True)
    out = np.empty((n, n))
    out[:k, k:] = 0.0
    out[:k, :k] = d11
    t_t = blas.dgemm(-1.0, d11.T, l21_t, beta=1.0, c=h[k:, :k].T, trans_a=1)  # H21^T - dL11 L21^T
    d21_t = blas.dtrmm(1.0, inv11.T, t_t, lower=0, trans_a=1, overwrite_b=1)  # dL21^T = L11^-1 (...)
    out[k:, :k] = d21_t.T
    h22_t = blas.dsyr2k(-1.0, d21_t, l21_t, beta=1.0, c=h[k:, k:].T, trans=1, lower=0)  # upper: H22's update
    out[k:, k:], inv22 = _split_cholesky_jvp(low[k:, k:], h22_t.T, need_inverse)
    if need_inverse == _READ_BLOCKS:
        return out, _joined_inverse(inv11, inv22, None)
    return out, (_joined_inverse(inv11, inv22, low[k:, :k]) if need_inverse else None)


def _leaf_cholesky_jvp(low: np.ndarray, h: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(L Phi(X), L^-1)`` with ``X = L^-1 H L^-T`` for a small lower factor ``L`` and the
    symmetric ``H`` whose lower triangle ``h`` holds, on Fortran views: LAPACK's triangular
    inverse, ``H L^-T`` by BLAS's symmetric product (it reads the one triangle: no symmetrised
    copy), then two triangular products; ``X`` is symmetric, so ``Phi(X)^T`` is its upper
    triangle and ``dL^T = Phi(X)^T L^T``."""
    blas = _blas()
    inverse = _leaf_lower_inverse(low)
    inverse_t = inverse.T  # Fortran: L^-T, upper
    w = blas.dsymm(1.0, h.T, inverse_t, side=0, lower=0)  # H L^-T (h.T's upper triangle: h's lower)
    x = blas.dtrmm(1.0, inverse_t, w, lower=0, trans_a=1, overwrite_b=1)  # X = L^-1 H L^-T
    np.multiply(x, _halved_upper(low.shape[0]), out=x)  # Phi(X)^T: upper triangle, half diagonal
    d_low_t = blas.dtrmm(1.0, low.T, x, side=1, lower=0, overwrite_b=1)  # Phi(X)^T L^T
    return d_low_t.T, inverse


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

# At most this order, the dense formula (measured at n = 128: leaves of 32 take 0.9 of the time of
# leaves of 64, leaves of 16 1.2). At most _CHOLESKY_JVP_LEAF: a leaf reads its block's whole
# inverse, which cholesky_tangent_and_inverse(blocks=True) leaves NaN in part above that order.
_LEAF = 32


def cholesky_cotangent_and_tangent(low: np.ndarray, d_low: np.ndarray, g: np.ndarray, dg: np.ndarray,
                                   inverse: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``(gA, dgA)``: the cotangent of ``a`` given ``G`` (that of its lower factor ``low``) and
    its tangent along ``d_low`` (the factor's tangent) and ``dg`` (``G``'s); ``inverse`` is
    ``L^-1`` or the blocks of it this recursion reads (``cholesky_tangent_and_inverse``), whose
    diagonal blocks are the inverses of
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
