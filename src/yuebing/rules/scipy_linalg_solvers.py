"""SciPy solvers and matrix functions: ``scipy.linalg.lu_solve``, ``solve_banded``,
``solveh_banded``, ``solve_sylvester``, ``solve_continuous_lyapunov``, ``expm_frechet``, ``logm``
and ``sqrtm``. Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

Every solver is differentiated as the solution of its linear system, ``x = M^-1 b`` with
``dx = M^-1 (db - dM x)`` and cotangents ``gb = M^-H g``, ``gM = -gb x^H``, where ``M`` is the
matrix the solver reads from its arguments: ``P L U`` from ``lu_solve``'s packed factor (its strict
lower triangle is ``L``'s, its upper triangle ``U``'s; the pivots are held fixed), the band of
``solve_banded``'s ``ab`` (entries of ``ab`` outside the matrix have zero derivative), the
Hermitian matrix built from the triangle ``solveh_banded`` reads (as ``eigh``/``cholesky``: the
imaginary part of its diagonal is ignored). The adjoint solves run SciPy's own solver (banded
stays banded: O(n (l + u)) per right-hand side). ``solve_sylvester`` (``A X + X B = Q``) and
``solve_continuous_lyapunov`` (``A X + X A^H = Q``) solve the adjoint equation
(``A^H Y + Y B^H = G``).

Matrix functions: ``sqrtm`` by its Sylvester equation (``X dX + dX X = dA``); ``logm`` and
``expm_frechet`` by the block-triangular identity ``f([[A, E], [0, A]]) = [[f(A), L_f(A, E)],
[0, f(A)]]``, the cotangent being ``L_f(A^H, G)`` (both are primary matrix functions with real
coefficients). ``expm_frechet``'s result is itself such a block, so its derivatives come from
``expm`` of the doubled block.

``lu_solve``, whose ``(lu, piv)`` argument is a tuple, has a reverse and a forward rule of its own;
its second order is that of the same solve written with covered functions (``defined_by``). The
others have second order by their cotangent maps (``with_vjp``).
``overwrite_*=True`` is refused; ``logm(disp=...)`` and ``sqrtm(disp=..., blocksize=...)`` (deprecated
by SciPy) are refused.
"""
from __future__ import annotations

import inspect
from typing import Any

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn
from .core import Dual, primal, register_frule, register_rrule
from .linalg import add, carries_gradient, conj, fit, linalg_rule, mH, mT, refuse
from .linalg.common import cotangent_entry
from .scipy_linalg_decomp import lu_permutation
from .scipy_rules import _expm_vjp
from .second_order import defined_by, with_vjp
from .util import accumulate, is_differentiable, out_cotangent, output, tangent

try:
    import scipy.linalg as sla
except ImportError:  # pragma: no cover - SciPy is optional
    sla = None


def _as_columns(b: Any) -> tuple:
    """``b`` as a 2-D array of columns, and whether it was one vector."""
    b = np.asarray(b)
    return (b[:, None], True) if b.ndim == 1 else (b, False)


def _real_like(a: Any, g: Any) -> Any:
    return np.real(g) if not np.iscomplexobj(a) else g


# --------------------------------------------------------------------------------------------
# lu_solve ((lu, piv), b, trans, overwrite_b, check_finite)
# --------------------------------------------------------------------------------------------


def _lu_solve_parts(lu: np.ndarray, piv: np.ndarray, b: Any, x: np.ndarray, trans: int) -> tuple:
    """jvp and vjp of ``x = op(a)^-1 b`` with ``a[perm] = L U`` read from the packed factor, in
    the factor and ``b``: O(n^2) per right-hand side besides the solves (the matrix cotangent is a
    low-rank product, never formed)."""
    perm = lu_permutation(piv)
    back = np.argsort(perm)
    low, up = np.tril(lu, -1) + np.eye(lu.shape[0]), np.triu(lu)
    x2, vector = _as_columns(x)

    def solve(rhs: Any, code: int) -> Any:
        return sla.lu_solve((lu, piv), rhs, trans=code, check_finite=False)

    def d_matrix_times_x(dlu: np.ndarray) -> np.ndarray:
        """``op(dA) x`` with ``dA = P (dL U + L dU)``."""
        dl, du = np.tril(dlu, -1), np.triu(dlu)
        if trans == 0:
            return (dl @ (up @ x2) + low @ (du @ x2))[back]
        op = mT if trans == 1 else mH
        xp = x2[perm]
        return op(up) @ (op(dl) @ xp) + op(du) @ (op(low) @ xp)

    def jvp(dlu: Any, db: Any) -> Any:
        rhs = add(None if db is None else _as_columns(db)[0], None if dlu is None else -d_matrix_times_x(dlu))
        dx = solve(rhs, trans)
        return dx[:, 0] if vector else dx

    def vjp(g: Any, need: tuple) -> tuple:
        g2 = _as_columns(g)[0]
        # op(a)^-H g: a^-H g, conj(a^-1 conj(g)) or a^-1 g
        gb = solve(g2, 2) if trans == 0 else (conj(solve(conj(g2), 0)) if trans == 1 else solve(g2, 0))
        glu = None
        if need[0]:
            # the cotangent of a is -p q^H: op(-gb x^H)'s adjoint
            p, q = (gb, x2) if trans == 0 else ((conj(x2), conj(gb)) if trans == 1 else (x2, gb))
            pp = p[perm]  # rows of P^T (-p q^H), negated below
            glu = -(np.tril(pp @ mH(up @ q), -1) + np.triu((mH(low) @ pp) @ mH(q)))
        return glu, (gb[:, 0] if vector else gb) if need[1] else None

    return jvp, vjp


_TRANS = {0: 0, 1: 1, 2: 2}  # SciPy's lu_solve takes these only


def _register_lu_solve() -> None:
    label = "scipy.linalg.lu_solve"
    names = ("lu_and_piv", "b", "trans", "overwrite_b", "check_finite")
    defaults = (0, False, True)

    def bind(args: tuple) -> tuple:
        values = [primal(a) for a in args] + list(defaults[len(args) - 2:])
        if values[2] not in _TRANS:
            refuse(label, f"unknown trans={values[2]!r}")
        lu, piv = values[0]
        if np.ndim(lu) != 2 or np.ndim(values[1]) > 2:
            refuse(label, "yuebing differentiates this function for a single 2-D factor and a vector or "
                          "matrix b only")
        y = sla.lu_solve(values[0], values[1], trans=values[2], check_finite=values[4])
        return np.asarray(lu), np.asarray(piv), values[1], y, _TRANS[values[2]]

    def rrule(*args: Any) -> tuple:
        lu, piv, b, y, trans = bind(args)
        out = output(y)
        fd = args[0].fdata
        lu_fdata = fd[0] if isinstance(fd, tuple) and isinstance(fd[0], np.ndarray) else None

        def pullback(dy: Any) -> tuple:
            need = (lu_fdata is not None, carries_gradient(args[1]))
            rdatas = [NoRData] * (len(args) + 1)
            if any(need):
                glu, gb = _lu_solve_parts(lu, piv, b, y, trans)[1](out_cotangent(out, dy), need)
                if glu is not None:  # lu is an array inside the tuple: its fdata is incremented in place
                    lu_fdata[...] += np.real(glu) if lu_fdata.dtype.kind == "f" else glu
                if gb is not None:
                    rdatas[2] = accumulate(args[1], gb)
            return tuple(rdatas)

        return out, pullback

    def frule(*args: Any) -> Dual:
        lu, piv, b, y, trans = bind(args)
        t = args[0].tangent
        dlu = t[0] if isinstance(t, tuple) and isinstance(t[0], np.ndarray) else None
        db = tangent(args[1])
        db = None if db is NoTangent or not is_differentiable(b) else db
        if dlu is None and db is None:
            return Dual(y, fit(None, y))
        return Dual(y, fit(_lu_solve_parts(lu, piv, b, y, trans)[0](dlu, db), y))

    P = inspect.Parameter
    signature = inspect.Signature([P(n, P.POSITIONAL_OR_KEYWORD) for n in names[:2]]
                                  + [P(n, P.POSITIONAL_OR_KEYWORD, default=d) for n, d in zip(names[2:], defaults)])
    rrule.__signature__ = frule.__signature__ = signature  # type: ignore[attr-defined]
    register_rrule(sla.lu_solve, rrule)
    register_frule(sla.lu_solve, frule)


# --------------------------------------------------------------------------------------------
# Band storage: ab[u + i - j, j] = a[i, j]
# --------------------------------------------------------------------------------------------


def _band_rows(rows: int, u: int, n: int) -> tuple:
    """For each entry ``ab[k, j]``: its matrix row ``i = k - u + j`` (clipped) and whether the
    entry lies inside the matrix."""
    i = np.arange(rows)[:, None] - u + np.arange(n)[None, :]
    return np.clip(i, 0, n - 1), (i >= 0) & (i < n)


def _band_outer(p: np.ndarray, q: np.ndarray, u: int, rows: int, transpose: bool = False) -> np.ndarray:
    """``sum_r p[i, r] conj(q[j, r])`` at each band entry ``(i, j)`` (``(j, i)`` if ``transpose``),
    zero outside the matrix: the band of the outer product ``p q^H`` (or of its transpose)."""
    n = p.shape[0]
    i, inside = _band_rows(rows, u, n)
    j = np.arange(n)[None, :] + np.zeros_like(i)
    first, second = (j, i) if transpose else (i, j)
    return np.where(inside, np.sum(p[first] * np.conj(q[second]), axis=-1), 0.0)


def _band_matvec(ab: np.ndarray, u: int, x2: np.ndarray, adjoint: bool = False) -> np.ndarray:
    """``A x`` (or ``A^H x``) for the band matrix ``A`` stored in ``ab`` (``u`` superdiagonals)."""
    rows, n = ab.shape
    i, inside = _band_rows(rows, u, n)
    if adjoint:  # (A^H x)[j] = sum_k conj(ab[k, j]) x[i(k, j)]: a gather along the columns
        terms = np.where(inside[..., None], np.conj(ab)[..., None] * x2[i], 0.0)
        return np.sum(terms, axis=0)
    # (A x)[i] = sum_k ab[k, j] x[j] with j = i + u - k
    j = np.arange(n)[None, :] + u - np.arange(rows)[:, None]
    ok = (j >= 0) & (j < n)
    jc = np.clip(j, 0, n - 1)
    k = np.arange(rows)[:, None] + np.zeros_like(jc)
    terms = np.where(ok[..., None], ab[k, jc][..., None] * x2[jc], 0.0)
    return np.sum(terms, axis=0)


# --------------------------------------------------------------------------------------------
# solve_banded ((l, u), ab, b), solveh_banded (ab, b, lower)
# --------------------------------------------------------------------------------------------


def _adjoint_band(ab: np.ndarray, low: int, up: int) -> np.ndarray:
    """The band storage (``low`` superdiagonals) of ``A^H`` from ``A``'s (``up`` superdiagonals):
    ``abH[k, j] = conj(ab[low + up - k, j + k - low])``."""
    rows, n = ab.shape
    k = np.arange(rows)[:, None]
    cols = np.arange(n)[None, :] + k - low
    ok = (cols >= 0) & (cols < n)
    src = ab[(low + up - k) + np.zeros_like(cols), np.clip(cols, 0, n - 1)]
    return np.where(ok, np.conj(src), 0.0)


def _solve_banded_vjp(g, y, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    low, up = int(l_and_u[0]), int(l_and_u[1])
    ab = np.asarray(ab)
    x2, vector = _as_columns(y)
    gb = sla.solve_banded((up, low), _adjoint_band(ab, low, up), _as_columns(g)[0], check_finite=False)
    gab = -_band_outer(gb, x2, up, ab.shape[0])
    return None, _real_like(ab, gab), (gb[:, 0] if vector else gb)


def _solveh_banded_vjp(g, y, ab, b, overwrite_ab=False, overwrite_b=False, lower=False, check_finite=True):
    """The cotangent of the Hermitian ``M`` is ``S = -gb x^H``; the triangle read gets ``S + S^H``,
    its diagonal ``Re(S)`` (``hermitian_from_adjoint``), here on the band entries only."""
    ab = np.asarray(ab)
    rows = ab.shape[0]
    x2, vector = _as_columns(y)
    gb = sla.solveh_banded(ab, _as_columns(g)[0], lower=lower, check_finite=False)
    up = 0 if lower else rows - 1  # the stored triangle, as band storage with `up` superdiagonals
    s = _band_outer(gb, x2, up, rows)
    s_h = np.conj(_band_outer(gb, x2, up, rows, transpose=True))
    diagonal = (np.arange(rows) == (0 if lower else rows - 1))[:, None]
    gab = -np.where(diagonal, np.real(s), s + s_h)
    return _real_like(ab, gab), (gb[:, 0] if vector else gb)


def _hermitian_band_matvec(ab: np.ndarray, lower: bool, x2: np.ndarray) -> np.ndarray:
    """``M x`` for the Hermitian ``M`` read from ``solveh_banded``'s storage."""
    rows = ab.shape[0]
    diag_row = 0 if lower else rows - 1
    diagonal = (np.arange(rows) == diag_row)[:, None]
    strict = np.where(diagonal, 0.0, ab)
    up = 0 if lower else rows - 1
    d = np.real(ab[diag_row])[:, None] * x2
    return d + _band_matvec(strict, up, x2) + _band_matvec(strict, up, x2, adjoint=True)


def _register_banded() -> None:
    @linalg_rule(sla.solve_banded, diff=(1, 2), vjp=_solve_banded_vjp)
    def _solve_banded(l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
        label = "scipy.linalg.solve_banded"
        if np.ndim(ab) != 2 or np.ndim(b) > 2:
            refuse(label, "yuebing differentiates this function for one 2-D ab and a vector or matrix b only")
        y = sla.solve_banded(l_and_u, ab, b, check_finite=check_finite)
        ab, up = np.asarray(ab), int(l_and_u[1])

        def jvp(dab: Any, db: Any) -> Any:
            x2, vector = _as_columns(y)
            rhs = add(None if db is None else _as_columns(db)[0],
                      None if dab is None else -_band_matvec(np.asarray(dab), up, x2))
            dx = sla.solve_banded(l_and_u, ab, rhs, check_finite=False)
            return dx[:, 0] if vector else dx

        return y, jvp

    @linalg_rule(sla.solveh_banded, diff=(0, 1), vjp=_solveh_banded_vjp)
    def _solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False, check_finite=True):
        label = "scipy.linalg.solveh_banded"
        if np.ndim(ab) != 2 or np.ndim(b) > 2:
            refuse(label, "yuebing differentiates this function for one 2-D ab and a vector or matrix b only")
        y = sla.solveh_banded(ab, b, lower=lower, check_finite=check_finite)
        ab = np.asarray(ab)

        def jvp(dab: Any, db: Any) -> Any:
            x2, vector = _as_columns(y)
            rhs = add(None if db is None else _as_columns(db)[0],
                      None if dab is None else -_hermitian_band_matvec(np.asarray(dab), lower, x2))
            dx = sla.solveh_banded(ab, rhs, lower=lower, check_finite=False)
            return dx[:, 0] if vector else dx

        return y, jvp


# --------------------------------------------------------------------------------------------
# solve_sylvester (a, b, q), solve_continuous_lyapunov (a, q)
# --------------------------------------------------------------------------------------------


def _solve_sylvester_vjp(g, y, a, b, q):
    gq = sla.solve_sylvester(mH(np.asarray(a)), mH(np.asarray(b)), g)
    return _real_like(a, -(gq @ mH(y))), _real_like(b, -(mH(y) @ gq)), _real_like(q, gq)


def _lyapunov_solve(a: Any, q: Any) -> Any:
    """``solve_continuous_lyapunov(a, q)`` for tangents and cotangents: as the Sylvester equation
    ``a x + x a^H = q``, which passes a NaN ``q`` (the plain forward pass's) where Lyapunov raises."""
    a = np.asarray(a)
    return sla.solve_sylvester(a, mH(a), q)


def _lyapunov_vjp(g, y, a, q):
    gq = _lyapunov_solve(mH(np.asarray(a)), g)
    return _real_like(a, -(gq @ mH(y) + mH(gq) @ y)), _real_like(q, gq)


def _register_sylvester() -> None:
    @linalg_rule(sla.solve_sylvester, diff=(0, 1, 2), vjp=_solve_sylvester_vjp)
    def _solve_sylvester(a, b, q):
        y = sla.solve_sylvester(a, b, q)

        def jvp(da: Any, db: Any, dq: Any) -> Any:  # A dX + dX B = dQ - dA X - X dB
            rhs = add(dq, None if da is None else -(da @ y), None if db is None else -(y @ db))
            return sla.solve_sylvester(a, b, rhs)

        return y, jvp

    @linalg_rule(sla.solve_continuous_lyapunov, diff=(0, 1), vjp=_lyapunov_vjp)
    def _lyapunov(a, q):
        y = sla.solve_continuous_lyapunov(a, q)

        def jvp(da: Any, dq: Any) -> Any:  # A dX + dX A^H = dQ - dA X - X dA^H
            rhs = add(dq, None if da is None else -(da @ y + y @ mH(da)))
            return _lyapunov_solve(a, rhs)

        return y, jvp


# --------------------------------------------------------------------------------------------
# sqrtm, logm, expm_frechet
# --------------------------------------------------------------------------------------------


def _block(a: np.ndarray, e: np.ndarray) -> np.ndarray:
    """``[[a, e], [0, a]]``."""
    top = np.concatenate([a, e], axis=-1)
    return np.concatenate([top, np.concatenate([np.zeros_like(e), a], axis=-1)], axis=-2)


def _logm_frechet(a: np.ndarray, e: Any) -> np.ndarray:
    """``L_log(a, e)``: the corner block of ``logm([[a, e], [0, a]])``."""
    n = a.shape[-1]
    dtype = np.result_type(a, e)
    if not np.all(np.isfinite(e)):  # logm raises on NaN: a NaN tangent (the plain forward pass's) stays NaN
        return np.full((n, n), np.nan, dtype=np.result_type(dtype, 1.0))
    return sla.logm(_block(np.asarray(a, dtype=dtype), np.asarray(e, dtype=dtype)))[:n, n:]


def _sqrtm_vjp(g, y, A):
    return (_real_like(A, sla.solve_sylvester(mH(y), mH(y), g)),)


def _logm_vjp(g, y, A):
    return (_real_like(A, _logm_frechet(mH(np.asarray(A)), g)),)


def _expm_frechet_vjp(g, y, A, E, method=None, compute_expm=True, check_finite=True):
    """``expm_frechet`` returns blocks of ``F = expm(M)``, ``M = [[A, E], [0, A]]``: the cotangent
    of ``M`` is ``L_exp(M^H, G)`` with ``G = [[g_expm, g_frechet], [0, 0]]``."""
    a, e = np.asarray(A), np.asarray(E)
    n = a.shape[-1]
    gl = cotangent_entry(g, 1) if compute_expm else g
    ge = cotangent_entry(g, 0) if compute_expm else None
    zero = np.zeros((n, n), dtype=np.result_type(a, e))
    big = _block(zero if ge is None else zero + ge, zero if gl is None else zero + gl)
    big = np.concatenate([big[:n], np.zeros((n, 2 * n), dtype=big.dtype)], axis=0)  # G's bottom blocks are 0
    gm = _expm_vjp(big, None, _block(a, e))[0]
    return _real_like(a, gm[:n, :n] + gm[n:, n:]), _real_like(e, gm[:n, n:]), None, None, None


def _default_of(function: Any, name: str) -> Any:
    """The default of ``function``'s deprecated parameter ``name``; a fresh marker where SciPy
    has removed it (``disp`` of ``sqrtm``/``logm`` is gone in SciPy 1.18), so that passing it is
    refused."""
    parameter = inspect.signature(function).parameters.get(name)
    return object() if parameter is None else parameter.default


def _register_matrix_functions() -> None:
    unset_sqrtm = _default_of(sla.sqrtm, "disp")
    unset_logm = _default_of(sla.logm, "disp")

    def square(label: str, a: Any) -> np.ndarray:
        a = np.asarray(a)
        if a.ndim != 2 or a.shape[0] != a.shape[1]:
            refuse(label, f"yuebing differentiates this function for one square 2-D matrix only (got {a.shape})")
        return a

    def _sqrtm_derive(A, disp=unset_sqrtm, blocksize=unset_sqrtm):
        label = "scipy.linalg.sqrtm"
        if disp is not unset_sqrtm or blocksize is not unset_sqrtm:
            refuse(label, "yuebing does not support disp= or blocksize= (deprecated by SciPy); use the defaults")
        a = square(label, A)
        y = sla.sqrtm(a)
        return y, lambda da: sla.solve_sylvester(y, y, da)  # X dX + dX X = dA

    def _logm_derive(A, disp=unset_logm):
        label = "scipy.linalg.logm"
        if disp is not unset_logm:
            refuse(label, "yuebing does not support disp= (deprecated by SciPy); use the default")
        a = square(label, A)
        y = sla.logm(a)
        return y, lambda da: _logm_frechet(a, da)

    def _expm_frechet_derive(A, E, method=None, compute_expm=True, check_finite=True):
        a, e = square("scipy.linalg.expm_frechet", A), np.asarray(E)
        y = sla.expm_frechet(a, e, method=method, compute_expm=compute_expm, check_finite=check_finite)
        n = a.shape[-1]

        def jvp(da: Any, de: Any) -> Any:
            zero = np.zeros((n, n), dtype=np.result_type(a, e))
            dm = _block(zero if da is None else zero + da, zero if de is None else zero + de)
            df = _expm_vjp(dm, None, mH(_block(a, e)))[0]  # L_exp(M, dM)
            return [df[:n, :n], df[:n, n:]] if compute_expm else df[:n, n:]

        return y, jvp

    linalg_rule(sla.sqrtm, vjp=_sqrtm_vjp)(_sqrtm_derive)
    linalg_rule(sla.logm, vjp=_logm_vjp)(_logm_derive)
    linalg_rule(sla.expm_frechet, diff=(0, 1), vjp=_expm_frechet_vjp)(_expm_frechet_derive)


def _lu_solve_definition(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    """Second order of ``lu_solve``: the same solve written with covered functions (the
    permutation from the pivots is integer work; the solve is ``numpy.linalg.solve``'s)."""
    lu, piv = lu_and_piv
    n = lu.shape[0]
    a = ((np.tril(lu, -1) + np.eye(n)) @ np.triu(lu))[np.argsort(lu_permutation(piv))]
    if trans == 1:
        a = a.T
    if trans == 2:
        a = np.conj(a.T)
    return np.linalg.solve(a, b)


if sla is not None:
    _register_lu_solve()
    defined_by(sla.lu_solve, _lu_solve_definition)
    _register_banded()
    _register_sylvester()
    _register_matrix_functions()
    with_vjp(sla.solve_banded, _solve_banded_vjp)
    with_vjp(sla.solveh_banded, _solveh_banded_vjp)
    with_vjp(sla.solve_sylvester, _solve_sylvester_vjp)
    with_vjp(sla.solve_continuous_lyapunov, _lyapunov_vjp)
    with_vjp(sla.sqrtm, _sqrtm_vjp)
    with_vjp(sla.logm, _logm_vjp)
    with_vjp(sla.expm_frechet, _expm_frechet_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _banded(n: int, low: int, up: int, complex_: bool = False) -> np.ndarray:
    """Band storage of a diagonally dominant matrix (corner entries outside the matrix random)."""
    ab = randc(low + up + 1, n) if complex_ else randn(low + up + 1, n)
    ab[up] += 2.0 * (low + up + 1)
    return ab


def _hermitian_banded(n: int, u: int, lower: bool, complex_: bool = False) -> np.ndarray:
    ab = randc(u + 1, n) if complex_ else randn(u + 1, n)
    ab[0 if lower else u] = 2.0 * (2 * u + 1) + np.abs(randn(n))
    return ab


def _spd(n: int, complex_: bool = False) -> np.ndarray:
    b = randc(n, n) if complex_ else randn(n, n)
    return b @ mH(b) + n * np.eye(n)


def _cases() -> list:
    def well(n: int, complex_: bool = False) -> np.ndarray:
        return (randc(n, n) if complex_ else randn(n, n)) + n * np.eye(n)

    return [
        Case(sla.lu_solve, sla.lu_factor(randn(3, 3)), randn(3)),
        Case(sla.lu_solve, sla.lu_factor(randn(4, 4)), randn(4, 2), kwargs={"trans": 1}),
        Case(sla.lu_solve, sla.lu_factor(randn(3, 3)), randn(3), kwargs={"trans": 2}),
        Case(sla.lu_solve, sla.lu_factor(randc(3, 3)), randc(3, 2)),
        Case(sla.lu_solve, sla.lu_factor(randc(3, 3)), randc(3), kwargs={"trans": 1}),
        Case(sla.lu_solve, sla.lu_factor(randc(3, 3)), randc(3), kwargs={"trans": 2}),
        Case(sla.solve_banded, (1, 1), _banded(5, 1, 1), randn(5)),
        Case(sla.solve_banded, (2, 1), _banded(5, 2, 1), randn(5, 2)),
        Case(sla.solve_banded, (0, 2), _banded(4, 0, 2), randn(4)),
        Case(sla.solve_banded, (1, 2), _banded(4, 1, 2, True), randc(4)),
        Case(sla.solveh_banded, _hermitian_banded(5, 1, False), randn(5)),
        Case(sla.solveh_banded, _hermitian_banded(5, 2, True), randn(5, 2), kwargs={"lower": True}),
        Case(sla.solveh_banded, _hermitian_banded(4, 1, False, True), randc(4)),
        Case(sla.solveh_banded, _hermitian_banded(4, 2, True, True), randc(4), kwargs={"lower": True}),
        Case(sla.solve_sylvester, well(3), well(2), randn(3, 2)),
        Case(sla.solve_sylvester, well(3), well(3), randn(3, 3)),
        Case(sla.solve_sylvester, well(2, True), well(3, True), randc(2, 3)),
        Case(sla.solve_continuous_lyapunov, -well(3), randn(3, 3)),
        Case(sla.solve_continuous_lyapunov, -well(3), _spd(3)),
        Case(sla.solve_continuous_lyapunov, -well(2, True), randc(2, 2)),
        Case(sla.sqrtm, _spd(3)),
        Case(sla.sqrtm, well(3)),
        Case(sla.sqrtm, _spd(3, True)),
        Case(sla.logm, _spd(3)),
        Case(sla.logm, well(3)),
        Case(sla.logm, _spd(2, True)),
        Case(sla.expm_frechet, randn(3, 3) / 2, randn(3, 3)),
        Case(sla.expm_frechet, randn(3, 3) / 2, randn(3, 3), kwargs={"compute_expm": False}),
        Case(sla.expm_frechet, randc(2, 2) / 2, randc(2, 2)),
    ]


CASES = _cases() if sla is not None else []
