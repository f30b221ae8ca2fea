"""BLAS and LAPACK kernels for ``solve_triangular``'s derivatives on real float64 matrices:
products with the triangle a solver reads (``dtrmm``, no ``tril`` copy), solves with it
(``dtrtrs`` without SciPy's wrapper and its finiteness checks: the primal call validated ``a``)
and a cached mask of that triangle. ``scipy_rules``' forward rule and ``direct_second_order``'s
formula use them; the callers check SciPy is there and the arrays are real float64.

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


@functools.lru_cache(maxsize=16)
def negated_read_mask(n: int, lower: bool, unit: bool) -> np.ndarray:
    """-1 on the entries of an n x n ``a`` the solver reads, 0 elsewhere (read-only: shared)."""
    mask = -(np.tril if lower else np.triu)(np.ones((n, n)), (-1 if lower else 1) if unit else 0)
    mask.flags.writeable = False
    return mask
