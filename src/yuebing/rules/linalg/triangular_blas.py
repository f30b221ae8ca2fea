"""BLAS and LAPACK kernels for ``solve_triangular``'s derivatives on real float64 matrices:
products with the triangle a solver reads (``dtrmm``, no ``tril`` copy), solves with it
(``dtrtrs`` without SciPy's wrapper and its finiteness checks: the primal call validated ``a``),
the cotangent of that triangle (an outer product, masked) and a cached mask of it. ``scipy_rules``'
rules and ``direct_second_order``'s formula use them; the callers check SciPy is there and the
arrays are real float64.

``T`` is the triangle of ``a`` the solver reads (``lower``, ``unit``: a unit diagonal, whose
entries of ``a`` are not read) and ``op(T)`` is ``T`` (``code`` 0) or ``T^T`` (1). The kernels
work on the Fortran view ``a.T`` of a C-ordered ``a``, whose lower triangle is ``a``'s upper one.
"""
from __future__ import annotations

import functools

import numpy as np


def triangle_times(t: np.ndarray, x: np.ndarray, code: int, lower: bool, unit: bool,
                   alpha: float = 1.0) -> np.ndarray:
    """``alpha op(part(t)) x`` for a 2-D ``x``, ``part`` keeping the entries the solver reads
    (a zero diagonal if ``unit``)."""
    from scipy.linalg.blas import dtrmm

    out = dtrmm(alpha, t.T, x, lower=int(not lower), trans_a=int(code == 0), diag=int(unit))
    if unit:  # BLAS's unit diagonal is part of its product; part's diagonal is zero
        out -= alpha * x
    return out


def triangular_solve(a: np.ndarray, rhs: np.ndarray, code: int, lower: bool, unit: bool,
                     overwrite: bool = False) -> np.ndarray | None:
    """``op(T)^-1 rhs`` (2-D ``rhs``, overwritten if ``overwrite`` and it is Fortran-ordered),
    None if LAPACK reports ``T`` singular (the primal call raised for it already)."""
    from scipy.linalg.lapack import dtrtrs

    x, info = dtrtrs(a.T, rhs, lower=int(not lower), trans=int(code == 0), unitdiag=int(unit),
                     overwrite_b=int(overwrite))
    return x if info == 0 else None


def negated_read_outer(gb: np.ndarray, x: np.ndarray, code: int, lower: bool, unit: bool) -> np.ndarray:
    """``-part(op(gb x^T))`` for 2-D ``gb`` and ``x`` (the cotangent of ``a`` given the solution
    ``x`` and the solve's adjoint ``gb``), a new C-ordered array. One column (a vector ``b``): BLAS's
    rank-1 update into a zeroed array, 3 us at n = 128 where NumPy's broadcast outer product takes
    12 (one thread, CPU time); then one multiply by the cached mask, in place."""
    first, second = (gb, x) if code == 0 else (x, gb)
    if x.shape[1] == 1:
        from scipy.linalg.blas import dger

        # the Fortran view out.T is the matrix out^T, which dger updates by x_ y_^T
        out = dger(1.0, second[:, 0], first[:, 0], a=np.zeros((x.shape[0],) * 2).T, overwrite_a=1).T
    else:
        out = first @ second.T
    return np.multiply(out, negated_read_mask(out.shape[0], lower, unit), out=out)


@functools.lru_cache(maxsize=16)
def negated_read_mask(n: int, lower: bool, unit: bool) -> np.ndarray:
    """-1 on the entries of an n x n ``a`` the solver reads, 0 elsewhere (read-only: shared)."""
    mask = -(np.tril if lower else np.triu)(np.ones((n, n)), (-1 if lower else 1) if unit else 0)
    mask.flags.writeable = False
    return mask
