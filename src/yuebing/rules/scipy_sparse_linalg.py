"""``scipy.sparse.linalg``'s direct solvers: ``spsolve`` (SuperLU's ``gssv``), ``splu`` and
``factorized`` (``gstrf``, then the factor's ``solve``). SciPy's Python around them is
differentiated from its source (``scipy_sparse.py`` covers the kernels it reaches).

A solve is differentiated as the solution of its linear system, ``x = A^-1 b``:
``dx = A^-1 (db - dA x)``, with cotangents ``gb = A^-H g`` and, on each stored entry ``(r, c)``
of ``A``, ``gA = -gb[r] conj(x[c])`` (summed over right-hand sides). The adjoint solve reuses
SuperLU: ``gssv`` reads the same arrays as the transposed matrix when told the other format, and a
factor solves with ``trans="T"`` / ``"H"``.

``splu(A)`` is differentiated as a ``FactoredMatrix``: SciPy's factor of A together with A's
stored entries, so its ``solve`` has the derivative in A too. Its ``L`` and ``U`` are refused
(the factors' derivatives are not written); a factor made outside the differentiated function
is a constant, and its ``solve`` is linear in the right-hand side.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents.kinds import register_nondifferentiable_type
from .cases import Case, randn
from .core import RuleArgumentError
from .declare import nondifferentiable
from .linalg import add, linalg_rule
from .scipy_sparse import _major_of, _scatter
from .second_order import defined_as, with_vjp

try:
    import scipy.sparse.linalg as _spla
    from scipy.sparse.linalg._dsolve import _superlu
except ImportError:  # the scipy extra is not installed: no rules to register
    _spla = _superlu = None


# --------------------------------------------------------------------------------------------
# Stored entries as a matrix
# --------------------------------------------------------------------------------------------


def _entries(n, indices, indptr, csc):
    """Row and column of each stored entry of the compressed ``n x n`` matrix."""
    major = _major_of(n, indptr)
    minor = np.asarray(indices)[:len(major)]
    return (minor, major) if csc else (major, minor)


nondifferentiable(_entries)


def _columns(b):
    b = np.asarray(b)
    return b[:, None] if b.ndim == 1 else b


def _times(data, rows, cols, x, n, trans):
    """``op(A) x`` for ``A``'s stored ``data`` at ``(rows, cols)``: ``op`` is ``trans`` (N, T, H)."""
    x2 = _columns(x)
    k = x2.shape[1]
    if trans in ("N", "C"):
        out, at, data_x = rows, cols, (np.conj(data) if trans == "C" else data)
    else:
        out, at, data_x = cols, rows, (np.conj(data) if trans == "H" else data)
    flat = (out[:, None] * k + np.arange(k)).ravel()
    y = np.reshape(_scatter(flat, data_x[:, None] * x2[at], n * k), (n, k))
    return y[:, 0] if np.ndim(x) == 1 else y


def _entry_cotangent(gb, x, rows, cols, trans, data):
    """The cotangent of the stored entries from ``gb = op(A)^-H g`` and the solution ``x``."""
    gb2, x2 = _columns(gb), _columns(x)
    if trans == "N":
        g = -np.sum(gb2[rows] * np.conj(x2[cols]), axis=1)
    elif trans == "T":
        g = -np.sum(np.conj(x2[rows]) * gb2[cols], axis=1)
    elif trans == "H":
        g = -np.sum(x2[rows] * np.conj(gb2[cols]), axis=1)
    else:  # "C": conj(A)
        g = -np.sum(np.conj(gb2[rows]) * x2[cols], axis=1)
    return g if np.iscomplexobj(data) else np.real(g)


#: the adjoint of each ``trans``; "C" solves with ``conj(A)``, as ``conj(solve(conj(g)))``
_ADJOINT = {"N": "H", "T": "C", "H": "N", "C": "T"}


def _refuse_option(label, options):
    if options and options.get("Trans", "N") not in ("N", None):
        raise RuleArgumentError(f"{label}: yuebing differentiates it with options Trans='N' only; "
                                "solve with the transposed matrix instead (A.T)")


nondifferentiable(_refuse_option)


# --------------------------------------------------------------------------------------------
# spsolve: gssv(N, nnz, nzvals, colind, rowptr, B, csc, options)
# --------------------------------------------------------------------------------------------


def _gssv_adjoint(N, nnz, nzvals, colind, rowptr, g, csc, options):
    """``A^-H g``: the same arrays read in the other format are ``A^T``."""
    return _superlu.gssv(N, nnz, np.conj(nzvals), colind, rowptr, g, 0 if csc else 1, options=options or {})[0]


def _gssv_vjp(g, y, N, nnz, nzvals, colind, rowptr, B, csc=0, options=None):
    gx = g[0]
    if gx is None:
        return (None,) * 6
    rows, cols = _entries(N, colind, rowptr, csc)
    gb = _gssv_adjoint(N, nnz, nzvals, colind, rowptr, gx, csc, options)
    return None, None, _entry_cotangent(gb, y[0], rows, cols, "N", nzvals), None, None, gb


def _register_gssv() -> None:
    @linalg_rule(_superlu.gssv, diff=(2, 5), vjp=_gssv_vjp)
    def _gssv(N, nnz, nzvals, colind, rowptr, B, csc=0, options=None):
        _refuse_option("scipy.sparse.linalg.spsolve (SuperLU gssv)", options)
        options = {} if options is None else options
        y = _superlu.gssv(N, nnz, nzvals, colind, rowptr, B, csc, options=options)
        rows, cols = _entries(N, colind, rowptr, csc)

        def jvp(d_values: Any, d_b: Any) -> Any:
            rhs = add(d_b, None if d_values is None else -_times(d_values, rows, cols, y[0], N, "N"))
            return _superlu.gssv(N, nnz, nzvals, colind, rowptr, np.asarray(rhs, dtype=y[0].dtype), csc,
                                 options=options)[0], None

        return y, jvp

    with_vjp(_superlu.gssv, _gssv_vjp)


# --------------------------------------------------------------------------------------------
# splu(A).solve(b, trans): a factor with its matrix
# --------------------------------------------------------------------------------------------


def _solve_with(factor, rhs, trans):
    """``op(A)^-1 rhs`` with SciPy's factor; ``"C"`` solves with ``conj(A)``."""
    if trans == "C":
        return np.conj(factor.solve(np.conj(rhs), "N")) if np.iscomplexobj(rhs) else factor.solve(rhs, "N")
    return factor.solve(np.ascontiguousarray(rhs), trans)


def _factor_solve_vjp(g, y, factor, data, rows, cols, rhs, trans="N"):
    # through the solve primitive, not the factor: its derivative in data is there (second order)
    gb = _factor_solve_impl(factor, data, rows, cols, g, _ADJOINT[trans])
    return None, _entry_cotangent(gb, y, rows, cols, trans, data), None, None, gb


def _factor_solve_impl(factor, data, rows, cols, rhs, trans="N"):
    """The solve of a ``FactoredMatrix``: ``data`` at ``(rows, cols)`` is the factored matrix."""
    return _solve_with(factor, rhs, trans)


def _superlu_solve_vjp(g, y, factor, rhs, trans="N"):
    return None, _solve_with(factor, g, _ADJOINT[trans])


def _register_factor_solve() -> None:
    @linalg_rule(_factor_solve_impl, diff=(1, 4), vjp=_factor_solve_vjp)
    def _factor_solve(factor, data, rows, cols, rhs, trans="N"):
        y = _solve_with(factor, rhs, trans)
        n = factor.shape[0]

        def jvp(d_data: Any, d_rhs: Any) -> Any:
            return _solve_with(factor, add(d_rhs, None if d_data is None else -_times(d_data, rows, cols, y, n,
                                                                                        trans)), trans)

        return y, jvp

    with_vjp(_factor_solve_impl, _factor_solve_vjp)

    # a factor made outside the differentiated function: a constant matrix
    @linalg_rule((_superlu.SuperLU, "solve"), diff=(1,), vjp=_superlu_solve_vjp)
    def _superlu_solve(factor, rhs, trans="N"):
        return _solve_with(factor, rhs, trans), lambda d_rhs: _solve_with(factor, d_rhs, trans)

    with_vjp((_superlu.SuperLU, "solve"), _superlu_solve_vjp)
    register_nondifferentiable_type(_superlu.SuperLU)


class FactoredMatrix:
    """What ``splu(A)`` gives under differentiation: SciPy's ``SuperLU`` factor of ``A`` and
    ``A``'s stored entries, so that ``solve`` is differentiated in both ``A`` and the right-hand
    side. ``perm_r``, ``perm_c``, ``shape`` and ``nnz`` are the factor's."""

    def __init__(self, factor, data, rows, cols):
        self.factor, self.data, self.rows, self.cols = factor, data, rows, cols

    def solve(self, rhs, trans="N"):
        return _factor_solve_impl(self.factor, self.data, self.rows, self.cols, rhs, trans)

    shape = property(lambda self: self.factor.shape)
    nnz = property(lambda self: self.factor.nnz)
    perm_r = property(lambda self: self.factor.perm_r)
    perm_c = property(lambda self: self.factor.perm_c)
    L = property(lambda self: _refuse_factor("L"))
    U = property(lambda self: _refuse_factor("U"))


def _refuse_factor(name):
    raise _factors_refused(name)


def _factors_refused(name):
    return RuleArgumentError(
        f"scipy.sparse.linalg.splu: yuebing differentiates the factor's solve, not its factor {name} "
        "(under differentiation splu gives a FactoredMatrix). What to do: use lu.solve(b), or "
        "call splu outside the differentiated function if A does not depend on what you differentiate")


def _factor_of(A, permc_spec, diag_pivot_thresh, relax, panel_size, options):
    return _spla.splu(A, permc_spec, diag_pivot_thresh, relax, panel_size, options)


def _canonical_csc(A):
    """``A`` as SciPy's ``splu`` reads it: CSC, duplicates summed, floats."""
    A = A.tocsc() if getattr(A, "format", None) != "csc" else A.copy()
    A.sum_duplicates()
    return A._asfptype()


def _splu(A, permc_spec=None, diag_pivot_thresh=None, relax=None, panel_size=None, options=None):
    factor = _factor_of(A, permc_spec, diag_pivot_thresh, relax, panel_size, options)
    A = _canonical_csc(A)
    rows, cols = _entries(A.shape[0], A.indices, A.indptr, True)
    return FactoredMatrix(factor, A.data, rows, cols)


nondifferentiable(_factor_of, _factors_refused)


def _induced(ord, axis, x):
    """Whether ``norm(x, ord, axis)`` is the induced 1- or inf-norm of a matrix (or their -1, -inf)."""
    return axis is None and np.ndim(x) == 2 and not isinstance(ord, str) and ord in (1, -1, np.inf, -np.inf)


nondifferentiable(_induced)


def _norm(x, ord=None, axis=None):
    """``scipy.sparse.linalg.norm``: the induced norms as the largest (or smallest) column or row
    sum of ``abs(x)``, taken as products with ones (SciPy's call NumPy's ``abs``, a ufunc that
    puts the matrix in an object array, and the *_matrix classes' sums are np.matrix); every other
    norm by SciPy's own code."""
    if not _induced(ord, axis, x):
        return _NORM(x, ord=ord, axis=axis)
    magnitudes = abs(x)
    sums = np.ones(x.shape[0]) @ magnitudes if ord in (1, -1) else magnitudes @ np.ones(x.shape[1])
    return np.max(sums) if ord > 0 else np.min(sums)


if _superlu is not None:
    _register_gssv()
    _register_factor_solve()
    defined_as(_spla.splu, _splu)
    from scipy.sparse.linalg import _norm as _norm_module

    from .scipy_sparse import _copy_of_function

    _NORM = _copy_of_function(_norm_module.norm)
    defined_as(_norm_module.norm, _norm)


def _cases() -> list:
    if _superlu is None:
        return []
    import scipy.sparse as sps

    A = (sps.random(5, 5, density=0.4, format="csc", random_state=11) + 3.0 * sps.eye(5, format="csc")).tocsc()
    indices, indptr = A.indices.astype(np.intc), A.indptr.astype(np.intc)
    factor = _spla.splu(A)
    return [
        Case(_superlu.gssv, 5, A.nnz, randn(A.nnz) * 0.2 + A.data, indices, indptr, randn(5), 1),
        Case(_superlu.gssv, 5, A.nnz, randn(A.nnz) * 0.2 + A.data, indices, indptr, randn(5, 2), 0,
             name="gssv(CSR arrays, two right-hand sides)"),
        Case(_superlu.SuperLU.solve, factor, randn(5)),
        Case(_superlu.SuperLU.solve, factor, randn(5, 2), "T"),
    ]


CASES = _cases()
