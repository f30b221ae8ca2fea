"""Third order of ``scipy.linalg``'s factorisations, solvers and matrix functions: their forward
derivatives written as NumPy code (``jvp_defined_by``).

Third order (``transform/third_order.py``) differentiates a primitive inside a function under
``yb.grad`` through its cotangent map, which it refuses when the map calls the primitive again
(``expm``'s map is an ``expm``, a triangular solve's a triangular solve: their third derivatives
would need the map's own again, without end) or when the result is a tuple (``cho_factor``). Each
is given here its value and tangent, each argument followed by its tangent (``NoTangent`` for
none), the formulas of the first-order rules (``scipy_rules``, ``scipy_linalg_solvers``). Third
order takes their second order like user code's: it needs the primitive's second derivatives
only. The value is the primitive's own call, so it is exactly what the primitive returns.
Loaded when ``scipy.linalg`` is (``rules/__init__.SCIPY_RULES``).
"""
from __future__ import annotations

import numpy as np

from ..tangents import NoTangent
from .core import RuleArgumentError
from .linalg.common import diag_vector, hermitian_from, mH, mT
from .linalg.decompositions import _phi, gap_product
from .linalg.third_order import tangent_or_zeros
from .second_order import jvp_defined_by

try:
    import scipy.linalg as sla
except ImportError:  # pragma: no cover - SciPy is optional
    sla = None

if sla is not None:
    from .scipy_linalg_solvers import _as_columns, _band_matvec, _block, _hermitian_band_matvec
    from .scipy_rules import _TRANS_CODES


def _columns_or_zeros(t, like2):
    """A right-hand side's tangent as columns, zeros like ``like2`` (the solution's columns) for none."""
    return np.zeros(np.shape(like2), dtype=np.result_type(like2, 0.0)) if t is NoTangent else _as_columns(t)[0]


# --------------------------------------------------------------------------------------------
# cho_factor, solve_triangular, eigh
# --------------------------------------------------------------------------------------------


def _triangular_inverse(factor, lower):
    return sla.solve_triangular(factor, np.eye(factor.shape[-1], dtype=factor.dtype), lower=lower)


def _cholesky_tangent(factor, da, lower):
    """``dL = L phi(L^-1 dA L^-H)`` for ``A = L L^H``; ``dU = phi(U^-H dA U^-1)^H U`` for ``A = U^H U``,
    ``dA`` the Hermitian matrix read from the factor's triangle."""
    h = hermitian_from(da, lower)
    inverse = _triangular_inverse(factor, lower)
    if lower:
        return factor @ _phi(inverse @ h @ mH(inverse))
    return mH(_phi(mH(inverse) @ h @ inverse)) @ factor


def _cho_factor_jvp(a, a_t, lower=False, lower_t=NoTangent, overwrite_a=False, overwrite_a_t=NoTangent,
                    check_finite=True, check_finite_t=NoTangent):
    """The factor's triangle is ``cholesky``'s; the other triangle holds a copy of ``a``."""
    y = sla.cho_factor(a, lower=lower, check_finite=check_finite)
    da = tangent_or_zeros(a_t, a)
    factor = np.tril(y[0]) if lower else np.triu(y[0])
    copied = np.triu(da, 1) if lower else np.tril(da, -1)
    return y, (_cholesky_tangent(factor, da, lower) + copied, NoTangent)


def _solve_triangular_jvp(a, a_t, b, b_t, trans=0, trans_t=NoTangent, lower=False, lower_t=NoTangent,
                          unit_diagonal=False, unit_diagonal_t=NoTangent, overwrite_b=False,
                          overwrite_b_t=NoTangent, check_finite=True, check_finite_t=NoTangent):
    """``dx = op(T)^-1 (db - op(part(da)) x)``, ``part`` the entries of ``a`` the solver reads."""
    options = dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    y = sla.solve_triangular(a, b, check_finite=check_finite, **options)
    x2, vector = _as_columns(y)
    rhs = _columns_or_zeros(b_t, x2)
    if a_t is not NoTangent:
        part = np.tril(a_t) if lower else np.triu(a_t)
        part = part - np.eye(part.shape[-1]) * part if unit_diagonal else part
        rhs = rhs - (part, mT(part), mH(part))[_TRANS_CODES[trans]] @ x2
    dx = sla.solve_triangular(a, rhs, check_finite=False, **options)
    return y, dx[:, 0] if vector else dx


def _eigh_jvp(a, a_t, b=None, b_t=NoTangent, lower=True, lower_t=NoTangent, eigvals_only=False,
              eigvals_only_t=NoTangent, overwrite_a=False, overwrite_a_t=NoTangent, overwrite_b=False,
              overwrite_b_t=NoTangent, type=1, type_t=NoTangent, check_finite=True, check_finite_t=NoTangent,
              subset_by_index=None, subset_by_index_t=NoTangent, subset_by_value=None, subset_by_value_t=NoTangent,
              driver=None, driver_t=NoTangent):
    """``dw = diag(v^H da v)``, ``dv = v (F * v^H da v)`` (``numpy.linalg.eigh``'s formulas), for the
    standard problem of the whole spectrum; a generalised problem or a subset is refused."""
    if b is not None or subset_by_index is not None or subset_by_value is not None:
        raise RuleArgumentError("third derivatives (yb.hvp/yb.hessian of a function calling yb.grad) of "
                                "scipy.linalg.eigh with b=, subset_by_index= or subset_by_value= are not supported; "
                                "take that part out of the function under yb.grad")
    y = sla.eigh(a, lower=lower, eigvals_only=eigvals_only, check_finite=check_finite, driver=driver)
    # the values' tangent does not depend on the vectors' signs: NumPy's, which take stacks, serve
    w, v = (y, np.linalg.eigh(a, UPLO="L" if lower else "U")[1]) if eigvals_only else y
    x = mH(v) @ hermitian_from(tangent_or_zeros(a_t, a), lower) @ v
    dw = np.real(diag_vector(x))
    return y, dw if eigvals_only else (dw, v @ gap_product(w, x))


# --------------------------------------------------------------------------------------------
# Banded, Sylvester and Lyapunov solvers
# --------------------------------------------------------------------------------------------


def _solve_banded_jvp(l_and_u, l_and_u_t, ab, ab_t, b, b_t, overwrite_ab=False, overwrite_ab_t=NoTangent,
                      overwrite_b=False, overwrite_b_t=NoTangent, check_finite=True, check_finite_t=NoTangent):
    """``dx = A^-1 (db - dA x)``, ``dA`` the band matrix stored in ``ab_t``."""
    y = sla.solve_banded(l_and_u, ab, b, check_finite=check_finite)
    x2, vector = _as_columns(y)
    rhs = _columns_or_zeros(b_t, x2)
    if ab_t is not NoTangent:
        rhs = rhs - _band_matvec(np.asarray(ab_t), int(l_and_u[1]), x2)
    dx = sla.solve_banded(l_and_u, ab, rhs, check_finite=False)
    return y, dx[:, 0] if vector else dx


def _solveh_banded_jvp(ab, ab_t, b, b_t, overwrite_ab=False, overwrite_ab_t=NoTangent, overwrite_b=False,
                       overwrite_b_t=NoTangent, lower=False, lower_t=NoTangent, check_finite=True,
                       check_finite_t=NoTangent):
    """``dx = M^-1 (db - dM x)``, ``dM`` the Hermitian matrix stored in ``ab_t``."""
    y = sla.solveh_banded(ab, b, lower=lower, check_finite=check_finite)
    x2, vector = _as_columns(y)
    rhs = _columns_or_zeros(b_t, x2)
    if ab_t is not NoTangent:
        rhs = rhs - _hermitian_band_matvec(np.asarray(ab_t), lower, x2)
    dx = sla.solveh_banded(ab, rhs, lower=lower, check_finite=False)
    return y, dx[:, 0] if vector else dx


def _solve_sylvester_jvp(a, a_t, b, b_t, q, q_t):
    """``A dX + dX B = dQ - dA X - X dB``."""
    y = sla.solve_sylvester(a, b, q)
    rhs = tangent_or_zeros(q_t, y)
    rhs = rhs if a_t is NoTangent else rhs - a_t @ y
    rhs = rhs if b_t is NoTangent else rhs - y @ b_t
    return y, sla.solve_sylvester(a, b, rhs)


def _lyapunov_jvp(a, a_t, q, q_t):
    """``A dX + dX A^H = dQ - dA X - X dA^H``."""
    y = sla.solve_continuous_lyapunov(a, q)
    rhs = tangent_or_zeros(q_t, y)
    rhs = rhs if a_t is NoTangent else rhs - (a_t @ y + y @ mH(a_t))
    return y, sla.solve_continuous_lyapunov(a, rhs)


# --------------------------------------------------------------------------------------------
# Matrix functions: the tangent is the corner block of f([[A, dA], [0, A]])
# --------------------------------------------------------------------------------------------


def _corner(f, a, a_t):
    """``L_f(a, a_t)``, the Frechet derivative of the matrix function ``f``: the corner block of
    ``f([[a, a_t], [0, a]])``."""
    n = np.shape(a)[-1]
    dtype = np.result_type(a, a_t)
    return f(_block(np.asarray(a, dtype=dtype), np.asarray(a_t, dtype=dtype)))[..., :n, n:]


def _expm_jvp(A, A_t):
    y = sla.expm(A)
    return y, np.zeros_like(y) if A_t is NoTangent else _corner(sla.expm, A, A_t)


def _logm_jvp(A, A_t):
    y = sla.logm(A)
    return y, np.zeros_like(y) if A_t is NoTangent else _corner(sla.logm, A, A_t)


if sla is not None:
    jvp_defined_by(sla.cho_factor, _cho_factor_jvp)
    jvp_defined_by(sla.eigh, _eigh_jvp)
    jvp_defined_by(sla.solve_triangular, _solve_triangular_jvp)
    jvp_defined_by(sla.solve_banded, _solve_banded_jvp)
    jvp_defined_by(sla.solveh_banded, _solveh_banded_jvp)
    jvp_defined_by(sla.solve_sylvester, _solve_sylvester_jvp)
    jvp_defined_by(sla.solve_continuous_lyapunov, _lyapunov_jvp)
    jvp_defined_by(sla.expm, _expm_jvp)
    jvp_defined_by(sla.logm, _logm_jvp)

CASES: list = []  # checked by tests/test_third_order_linalg.py (third derivatives against differences)
