"""SciPy: ``scipy.linalg`` (``solve_triangular``, ``cho_factor``, ``cho_solve``, ``cholesky``,
``solve``, ``inv``, ``det``, ``expm``). The other ``scipy.linalg`` rules are in ``scipy_linalg_decomp``
(``eigh``, ``eig``, ``svd``, ``qr``, ``lu``, ``lu_factor``, ``pinv``), ``scipy_linalg_solvers``
(``lu_solve``, the banded, Sylvester and Lyapunov solvers, ``sqrtm``, ``logm``, ``expm_frechet``) and
``scipy_linalg_special`` (``block_diag``, ``toeplitz``, ``circulant``). ``scipy.special`` is in
``scipy_special`` and ``scipy_bessel``.

Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

The linear-algebra rules reuse ``linalg/``'s derivation framework and formulas. Functions that
read one triangle (``cho_factor``, ``cholesky``, ``solve``/``inv`` with ``assume_a`` 'sym', 'her',
'pos' or triangular) are differentiated as the function of the entries they read. ``cho_factor``'s
result holds the factor in one triangle and a copy of ``a`` in the other (SciPy does not clean it),
so its derivative there is the identity. ``overwrite_a``/``overwrite_b=True`` (SciPy *may* then
destroy the argument: a permission, not a promise) are accepted and the primal computed without
them, so the argument the pullback reads stays intact (library code such as ``CubicSpline`` passes
them). Batched arrays are refused for ``solve_triangular``/``cho_solve``/``solve`` (2-D ``a`` only).

One formula per primitive: each nonlinear primitive's cotangent map is a plain-NumPy function
``_f_vjp(g, y, *args)``, which the reverse rule calls (``linalg_rule(f, vjp=_f_vjp)``) and the
forward transform differentiates for second order (``with_vjp``, at the end of the file). Faster
routes are kept where they measurably pay: ``solve_triangular`` of a real float64 C-ordered matrix
(LAPACK's ``dtrtrs`` straight) and ``cholesky``/``cho_factor`` of a real float64 matrix (BLAS
triangular kernels). ``det`` is ``numpy.linalg.det``'s function and takes its formulas.
``cho_solve``, whose argument is a ``(c, lower)`` tuple, has a reverse rule of its own; its second
order is that of the same solve written with covered functions.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn
from .core import Dual, primal, register_frule, register_rrule
from .linalg import (add, carries_gradient, cholesky_parts, conj, det_parts, fit, hermitian_from, hermitian_from_adjoint,
                     linalg_rule, lower_cholesky_cotangent, mH, mT, refuse, upper_cholesky_parts)
from .linalg import direct_second_order
from .linalg.cholesky_blocks import real_cholesky_vjp
from .linalg.triangular_blas import negated_read_outer, triangle_times, triangular_solve
from .linalg.determinants_norms import _det_vjp as _numpy_det_vjp
from .second_order import defined_by, with_vjp
from .util import accumulate, is_differentiable, out_cotangent, output, tangent

try:
    import scipy.linalg as sla
except ImportError:  # pragma: no cover - SciPy is optional
    sla = None


def _matrix_only(label: str, a: Any) -> None:
    if np.ndim(a) != 2:
        refuse(label, "yuebing differentiates this function for a single 2-D matrix only")


# --------------------------------------------------------------------------------------------
# Structured matrices: the matrix a solver actually sees, and its adjoint
# --------------------------------------------------------------------------------------------

# 'banded' reads the band SciPy detects from a's zeros: a perturbation outside it widens the band,
# so the derivative is the general matrix's
_GENERAL = {None, "gen", "general", "banded"}
_SYMMETRIC = {"sym", "symmetric"}
_HERMITIAN = {"her", "hermitian", "pos", "positive definite"}
_TRIANGULAR = {"upper triangular": False, "lower triangular": True}


def _check_structure(label: str, assume_a: Any) -> None:
    if not (assume_a in _GENERAL or assume_a in _SYMMETRIC or assume_a in _HERMITIAN or assume_a in _TRIANGULAR
            or assume_a in ("diagonal", "tridiagonal")):
        refuse(label, f"yuebing does not differentiate assume_a={assume_a!r}")


def _project(a: Any, assume_a: Any, lower: bool) -> Any:
    """The matrix a solver reads from ``a`` under ``assume_a`` (None: SciPy detects structure,
    but a perturbation breaks it, so the general matrix)."""
    if assume_a in _HERMITIAN:
        return hermitian_from(a, lower)
    if assume_a in _SYMMETRIC:
        t = np.tril(a, -1) if lower else np.triu(a, 1)
        return t + mT(t) + np.eye(a.shape[-1]) * a
    if assume_a in _TRIANGULAR:
        return np.tril(a) if _TRIANGULAR[assume_a] else np.triu(a)
    if assume_a == "diagonal":
        return np.eye(a.shape[-1]) * a
    if assume_a == "tridiagonal":
        return np.triu(np.tril(a, 1), -1)
    return a


def _project_adjoint(s: Any, assume_a: Any, lower: bool) -> Any:
    """The adjoint of ``_project``: the cotangent of ``a`` given that of the matrix read."""
    if assume_a in _HERMITIAN:
        return hermitian_from_adjoint(s, lower)
    if assume_a in _SYMMETRIC:
        both = s + mT(s)
        return (np.tril(both, -1) if lower else np.triu(both, 1)) + np.eye(s.shape[-1]) * s
    if assume_a in _TRIANGULAR:
        return np.tril(s) if _TRIANGULAR[assume_a] else np.triu(s)
    if assume_a == "diagonal":
        return np.eye(s.shape[-1]) * s
    if assume_a == "tridiagonal":
        return np.triu(np.tril(s, 1), -1)
    return s


# --------------------------------------------------------------------------------------------
# scipy.linalg: solve_triangular
# --------------------------------------------------------------------------------------------

_TRANS_CODES = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}  # op(T) = T, T^T, T^H


def _trans_code(label: str, trans: Any) -> int:
    if trans not in _TRANS_CODES:
        refuse(label, f"unknown trans={trans!r}")
    return _TRANS_CODES[trans]


def _solve_triangular_vjp(g, y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                          check_finite=True):
    code = _TRANS_CODES[trans]
    vector = np.ndim(b) == 1
    x2 = y[:, None] if vector else y
    g2 = np.asarray(g)[:, None] if vector else np.asarray(g)
    # gb = op(T)^-H g. The forward call checked a; a non-finite cotangent propagates as NaN, as
    # in the primal (check_finite=False)
    if code == 0:
        gb = sla.solve_triangular(a, g2, trans=2, lower=lower, unit_diagonal=unit_diagonal, check_finite=False)
    elif code == 2:
        gb = sla.solve_triangular(a, g2, trans=0, lower=lower, unit_diagonal=unit_diagonal, check_finite=False)
    else:  # op(T)^H = conj(T)
        gb = conj(sla.solve_triangular(a, conj(g2), trans=0, lower=lower, unit_diagonal=unit_diagonal,
                                       check_finite=False))
    # the adjoint of da -> op(part(da)) x, where part keeps the entries of a the solver reads
    m = -(gb @ mH(x2))
    m = m if code == 0 else (mT(m) if code == 1 else mH(m))
    ga = np.tril(m) if lower else np.triu(m)
    if unit_diagonal:
        ga = ga - np.eye(ga.shape[-1]) * ga
    return ga, gb[:, 0] if vector else gb


def _real_triangular_adjoint_solve(a: np.ndarray, g: Any, code: int, lower: bool, unit: bool) -> Any:
    """``op(a)^-T g`` for a real C-ordered float64 ``a`` straight from LAPACK's ``dtrtrs`` on the
    Fortran view ``a.T`` (no copy, no validation: the forward call validated ``a``); None when it
    does not apply or LAPACK reports a problem (the general path then raises its error)."""
    if not (a.ndim == 2 and a.dtype == np.float64 and a.flags.c_contiguous and isinstance(g, np.ndarray)
            and g.dtype == np.float64 and g.ndim == 2):
        return None
    from scipy.linalg.lapack import dtrtrs

    # a y = b needs a^T z = g, which is (a.T) z = g; a^T y = b needs a z = g, which is (a.T)^T z = g
    z, info = dtrtrs(a.T, g, lower=0 if lower else 1, trans=0 if code == 0 else 1, unitdiag=int(unit))
    return z if info == 0 else None


def _real_solve_triangular_jvp(a: np.ndarray, x: np.ndarray, da: Any, db: Any, code: int, lower: bool,
                               unit: bool) -> Any:
    """``dx = op(T)^-1 (db - op(part(da)) x)`` for a real float64 ``a`` and tangents, by BLAS's
    triangular product (it reads the triangle itself: no ``tril`` copy) and LAPACK's ``dtrtrs``
    without SciPy's wrapper (``linalg/triangular_blas.py``); None where that does not apply (then
    the general formula runs). The tangent of gp_lml's solve (n = 128, a vector ``b``): 118 ->
    39 us, same process."""
    if not (a.ndim == 2 and a.dtype == np.float64 and x.dtype == np.float64 and x.ndim in (1, 2)
            and _real_tangent(da, a.shape) and _real_tangent(db, x.shape) and (da is not None or db is not None)):
        return None
    vector = x.ndim == 1
    rhs = None if db is None else (db[:, None] if vector else db)
    if da is not None:
        term = triangle_times(da, x[:, None] if vector else x, code, lower, unit, alpha=-1.0)
        rhs = term if rhs is None else np.add(term, rhs, out=term)
    dx = triangular_solve(a, rhs, code, lower, unit, overwrite=da is not None)
    if dx is None:
        return None
    return dx[:, 0] if vector else dx


def _real_tangent(t: Any, shape: tuple) -> bool:
    """Whether ``t`` is None (zero) or a float64 array of ``shape``."""
    return t is None or type(t) is np.ndarray and t.dtype == np.float64 and t.shape == shape


def _solve_triangular_lapack_vjp(g: Any, y: np.ndarray, a: np.ndarray, b: Any, code: int, lower: bool,
                                 unit_diagonal: bool, need: tuple) -> tuple | None:
    """``_solve_triangular_vjp`` for a real float64 C-ordered ``a`` (None where that does not
    apply): ``dtrtrs`` without SciPy's wrapper, the triangle of the outer product by BLAS's rank-1
    update and one multiply with a cached mask (``negated_read_outer``), and only the needed
    cotangents: 2 to 4 times faster at n = 128 with a vector ``b`` (the gp_lml benchmark's call)
    and 3 times at n = 16; the rank-1 update, 34 -> 12 us at n = 128 (one thread, CPU time)."""
    vector = np.ndim(b) == 1
    gb = _real_triangular_adjoint_solve(a, np.asarray(g)[:, None] if vector else g, code, lower, unit_diagonal)
    if gb is None or y.dtype != np.float64:
        return None
    ga = negated_read_outer(gb, y[:, None] if vector else y, code, lower, unit_diagonal) if need[0] else None
    return ga, (gb[:, 0] if vector else gb) if need[1] else None


def _register_solve_triangular() -> None:
    @linalg_rule(sla.solve_triangular, diff=(0, 1))
    def _solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
        label = "scipy.linalg.solve_triangular"
        _matrix_only(label, a)
        code = _trans_code(label, trans)
        options = dict(lower=lower, unit_diagonal=unit_diagonal, check_finite=check_finite)
        y = sla.solve_triangular(a, b, trans=trans, **options)
        a = np.asarray(a)
        vector = np.ndim(b) == 1

        def jvp(da: Any, db: Any) -> Any:  # dx = op(T)^-1 (db - op(part(da)) x)
            fast = _real_solve_triangular_jvp(a, y, da, db, code, lower, unit_diagonal)
            if fast is not None:
                return fast
            x2 = y[:, None] if vector else y
            part = None
            if da is not None:  # the entries of a the solver reads
                part = np.tril(da) if lower else np.triu(da)
                part = part - np.eye(part.shape[-1]) * part if unit_diagonal else part
                part = -((part, mT(part), mH(part))[code] @ x2)
            rhs = add(None if db is None else (np.asarray(db)[:, None] if vector else db), part)
            dx = sla.solve_triangular(a, rhs, trans=trans, **{**options, "check_finite": False})  # (NaN tangents pass)
            return dx[:, 0] if vector else dx

        # derive's own vjp, not linalg_rule(vjp=...): the LAPACK route skips the cotangent of a
        # constant a, which is most of its work (10 against 77 us at n = 128)
        def vjp(g: Any, need: tuple) -> tuple:
            fast = _solve_triangular_lapack_vjp(g, y, a, b, code, lower, unit_diagonal, need)
            if fast is not None:
                return fast
            cotangents = _solve_triangular_vjp(g, y, a, b, trans, lower, unit_diagonal)
            return tuple(c if wanted else None for c, wanted in zip(cotangents, need))

        return y, jvp, vjp


# --------------------------------------------------------------------------------------------
# scipy.linalg: cholesky, cho_factor
# --------------------------------------------------------------------------------------------


def _cholesky_vjp(g, y, a, lower=False, overwrite_a=False, check_finite=True, *,
                  factor_cotangent=lower_cholesky_cotangent):
    """``factor_cotangent(low, g)``: the cotangent of ``a`` (its lower triangle read) from that of
    its lower factor ``low`` (the upper factor is the lower one of ``a^H``, transposed)."""
    if lower:
        return (factor_cotangent(y, g),)
    return (mH(factor_cotangent(mH(y), mH(g))),)


def _cho_factor_vjp(g, y, a, lower=False, overwrite_a=False, check_finite=True, *,
                    factor_cotangent=lower_cholesky_cotangent):
    """The factor's triangle is ``cholesky``'s; the other triangle holds a copy of ``a``."""
    gc = g[0]
    if gc is None:  # only the flag got a cotangent
        return (None,)
    if lower:
        ga = _cholesky_vjp(np.tril(gc), np.tril(y[0]), a, True, factor_cotangent=factor_cotangent)[0]
        return (ga + np.triu(gc, 1),)
    ga = _cholesky_vjp(np.triu(gc), np.triu(y[0]), a, False, factor_cotangent=factor_cotangent)[0]
    return (ga + np.tril(gc, -1),)


def _blas_cholesky_cotangent(low: np.ndarray, g: Any) -> np.ndarray:
    """``lower_cholesky_cotangent`` for the reverse rules: BLAS triangular kernels for one real
    float64 matrix (``linalg.cholesky_blocks.real_cholesky_vjp``: 2 times faster at n = 128, 4 times at
    n = 16), the formula otherwise."""
    fast = real_cholesky_vjp(low, g)
    return lower_cholesky_cotangent(low, g) if fast is None else fast


# The reverse rules' route (linalg_rule's fast_vjp): the same maps with the BLAS kernel; they
# always apply, falling back to the formula inside _blas_cholesky_cotangent.


def _cholesky_blas_vjp(g, y, *args):
    return _cholesky_vjp(g, y, *args, factor_cotangent=_blas_cholesky_cotangent)


def _cho_factor_blas_vjp(g, y, *args):
    return _cho_factor_vjp(g, y, *args, factor_cotangent=_blas_cholesky_cotangent)


def _register_cholesky() -> None:
    @linalg_rule(sla.cholesky, vjp=_cholesky_vjp, fast_vjp=_cholesky_blas_vjp)
    def _cholesky(a, lower=False, overwrite_a=False, check_finite=True):
        y = sla.cholesky(a, lower=lower, check_finite=check_finite)
        a = np.asarray(a)

        def jvp(da: Any) -> Any:
            return (cholesky_parts(a, y) if lower else upper_cholesky_parts(a, y))[0](da)

        return y, jvp

    @linalg_rule(sla.cho_factor, vjp=_cho_factor_vjp, fast_vjp=_cho_factor_blas_vjp)
    def _cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
        y = sla.cho_factor(a, lower=lower, check_finite=check_finite)
        a = np.asarray(a)

        def jvp(da: Any) -> Any:
            factor = np.tril(y[0]) if lower else np.triu(y[0])
            factor_jvp = (cholesky_parts(a, factor) if lower else upper_cholesky_parts(a, factor))[0]
            copied = np.triu(da, 1) if lower else np.tril(da, -1)  # a, copied as it is
            return [factor_jvp(da) + copied, None]

        return y, jvp


# --------------------------------------------------------------------------------------------
# scipy.linalg: solve, inv, det, expm
# --------------------------------------------------------------------------------------------


def _solve_vjp(g, y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
               transposed=False):
    m = _project(np.asarray(a), assume_a, lower)
    m = mT(m) if transposed else m  # transposed=True refuses complex a
    vector = np.ndim(b) == 1
    x2 = y[..., None] if vector else y
    gb = np.linalg.solve(mH(m), np.asarray(g)[..., None] if vector else g)
    gm = -(gb @ mH(x2))
    return _project_adjoint(mT(gm) if transposed else gm, assume_a, lower), gb[..., 0] if vector else gb


def _inv_vjp(g, y, a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
    return (_project_adjoint(-(mH(y) @ g @ mH(y)), assume_a, lower),)


def _det_vjp(g, y, a, overwrite_a=False, check_finite=True):
    """``numpy.linalg.det``'s cotangent map (the adjugate, also at singular matrices): SciPy's
    ``det`` is the same function; its tangent is NumPy's too (``det_parts``)."""
    return _numpy_det_vjp(g, y, a)


def _expm_vjp(g, y, A):
    """L(A^H, g), with L(M, E) the Frechet derivative of expm at M along E: the corner block of
    expm([[M, E], [0, M]]). The tangent is L(A, dA), this map at A^H (the forward rule uses it)."""
    ah = mH(np.asarray(A))
    g = np.asarray(g)
    n = ah.shape[-1]
    top = np.concatenate([ah, g], axis=-1)
    bottom = np.concatenate([np.zeros_like(g), ah], axis=-1)
    return (sla.expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:],)


def _register_solve_inv_det_expm() -> None:
    @linalg_rule(sla.solve, diff=(0, 1), vjp=_solve_vjp)
    def _solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
               transposed=False):
        label = "scipy.linalg.solve"
        _matrix_only(label, a)
        _check_structure(label, assume_a)
        y = sla.solve(a, b, lower=lower, check_finite=check_finite, assume_a=assume_a, transposed=transposed)
        a = np.asarray(a)
        vector = np.ndim(b) == 1

        def read(m: Any) -> Any:  # the matrix the solver sees
            m = _project(m, assume_a, lower)
            return mT(m) if transposed else m

        def jvp(da: Any, db: Any) -> Any:  # dx = m^-1 (db - dm x)
            rhs = add(None if db is None else (np.asarray(db)[:, None] if vector else db),
                      None if da is None else -(read(da) @ (y[:, None] if vector else y)))
            dx = np.linalg.solve(read(a), rhs)
            return dx[:, 0] if vector else dx

        return y, jvp

    @linalg_rule(sla.inv, vjp=_inv_vjp)
    def _inv(a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
        label = "scipy.linalg.inv"
        _check_structure(label, assume_a)
        y = sla.inv(a, check_finite=check_finite, assume_a=assume_a, lower=lower)

        return y, lambda da: -(y @ _project(da, assume_a, lower) @ y)

    @linalg_rule(sla.det, vjp=_det_vjp)
    def _det(a, overwrite_a=False, check_finite=True):
        y = sla.det(a, check_finite=check_finite)
        return y, det_parts(np.asarray(a), y)[0]

    @linalg_rule(sla.expm, vjp=_expm_vjp)
    def _expm(A):
        y = sla.expm(A)
        return y, lambda da: _expm_vjp(da, y, mH(np.asarray(A)))[0]


# --------------------------------------------------------------------------------------------
# scipy.linalg: cho_solve (its (c, lower) argument is a tuple: a rule of its own)
# --------------------------------------------------------------------------------------------


def _cho_solve_parts(c: np.ndarray, lower: bool, b: Any, x: np.ndarray) -> tuple[Callable, Callable]:
    """jvp and vjp of ``x = S^-1 b`` with ``S = L L^H`` (lower) or ``U^H U`` (upper) from ``c``."""
    tri = np.tril if lower else np.triu
    factor = tri(c)
    vector = np.ndim(b) == 1
    x2 = x[:, None] if vector else x

    def solve(rhs: Any) -> Any:  # (a NaN tangent, as the plain forward pass makes, is not refused)
        return sla.cho_solve((c, lower), rhs, check_finite=False)

    def d_matrix(dc: Any) -> Any:  # dS from a change of the factor
        df = tri(dc)
        return df @ mH(factor) + factor @ mH(df) if lower else mH(df) @ factor + mH(factor) @ df

    def jvp(dc: Any, db: Any) -> Any:
        rhs = add(None if db is None else (np.asarray(db)[:, None] if vector else db),
                  None if dc is None else -(d_matrix(dc) @ x2))
        dx = solve(rhs)
        return dx[:, 0] if vector else dx

    def vjp(g: Any, need: tuple) -> tuple:
        gb = solve(np.asarray(g)[:, None] if vector else g)  # S is Hermitian
        gc = None
        if need[0]:
            gs = -(gb @ mH(x2))
            both = gs + mH(gs)
            gc = tri(both @ factor if lower else factor @ both)
        return gc, (gb[:, 0] if vector else gb) if need[1] else None

    return jvp, vjp


def _register_cho_solve() -> None:
    label = "scipy.linalg.cho_solve"

    def unpack(c_and_lower: Any) -> tuple:
        c, lower = c_and_lower
        _matrix_only(label, c)
        return np.asarray(c), bool(lower)

    names = ("c_and_lower", "b", "overwrite_b", "check_finite")
    defaults = (False, True)

    def bind(args: tuple) -> tuple:
        """The primal arguments (defaults filled in) and the (c, lower) and b arguments."""
        values = [primal(a) for a in args] + list(defaults[len(args) - 2:])
        c, lower = unpack(values[0])
        y = sla.cho_solve(values[0], values[1], check_finite=values[3])
        return c, lower, values[1], y

    def rrule(*args: Any) -> tuple:
        c, lower, b, y = bind(args)
        out = output(y)
        _, vjp = _cho_solve_parts(c, lower, b, y)
        fd = args[0].fdata
        c_fdata = fd[0] if isinstance(fd, tuple) and isinstance(fd[0], np.ndarray) else None

        def pullback(dy: Any) -> tuple:
            need = (c_fdata is not None, carries_gradient(args[1]))
            rdatas = [NoRData] * (len(args) + 1)
            if any(need):
                gc, gb = vjp(out_cotangent(out, dy), need)
                if gc is not None:  # c is an array inside the tuple: its fdata is incremented in place
                    c_fdata[...] += np.real(gc) if c_fdata.dtype.kind == "f" else gc
                if gb is not None:
                    rdatas[2] = accumulate(args[1], gb)
            return tuple(rdatas)

        return out, pullback

    def frule(*args: Any) -> Dual:
        c, lower, b, y = bind(args)
        jvp, _ = _cho_solve_parts(c, lower, b, y)
        t = args[0].tangent
        dc = t[0] if isinstance(t, tuple) and isinstance(t[0], np.ndarray) else None
        db = tangent(args[1])
        db = None if db is NoTangent or not is_differentiable(b) else db
        return Dual(y, fit(None if dc is None and db is None else jvp(dc, db), y))

    P = inspect.Parameter
    signature = inspect.Signature([P(n, P.POSITIONAL_OR_KEYWORD) for n in names[:2]]
                                  + [P(n, P.POSITIONAL_OR_KEYWORD, default=d) for n, d in zip(names[2:], defaults)])
    rrule.__signature__ = frule.__signature__ = signature  # type: ignore[attr-defined]
    register_rrule(sla.cho_solve, rrule)
    register_frule(sla.cho_solve, frule)


if sla is not None:
    _register_solve_triangular()
    _register_cholesky()
    _register_solve_inv_det_expm()
    _register_cho_solve()


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------
# The cotangent maps above, which the reverse rules call. cho_solve, whose (c, lower) argument is
# a tuple holding the factor (with_vjp delivers cotangents to array and number arguments only), is
# the same solve written with covered functions (defined_by).


def _cho_solve_definition(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    factor = np.tril(c) if lower else np.triu(c)
    s = factor @ np.conj(factor.T) if lower else np.conj(factor.T) @ factor
    return np.linalg.solve(s, b)


if sla is not None:
    with_vjp(sla.solve_triangular, _solve_triangular_vjp, direct=direct_second_order.scipy_solve_triangular)
    with_vjp(sla.cholesky, _cholesky_vjp, direct=direct_second_order.scipy_cholesky)
    with_vjp(sla.cho_factor, _cho_factor_vjp)
    with_vjp(sla.solve, _solve_vjp, direct=direct_second_order.scipy_solve)
    with_vjp(sla.inv, _inv_vjp, direct=direct_second_order.scipy_inv)
    with_vjp(sla.det, _det_vjp)
    with_vjp(sla.expm, _expm_vjp)
    defined_by(sla.cho_solve, _cho_solve_definition)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _cases() -> list:
    f32 = np.float32

    def well(n: int, complex_: bool = False) -> np.ndarray:
        x = randc(n, n) if complex_ else randn(n, n)
        return x + n * np.eye(n)

    def spd(n: int, complex_: bool = False) -> np.ndarray:
        b = randc(n, n) if complex_ else randn(n, n)
        return b @ mH(b) + n * np.eye(n)

    return [
        # solve_triangular
        Case(sla.solve_triangular, well(3), randn(3)),
        Case(sla.solve_triangular, well(3), randn(3, 2), kwargs={"lower": True}),
        Case(sla.solve_triangular, well(3), randn(3, 2), kwargs={"trans": 1}),
        Case(sla.solve_triangular, well(3), randn(3), kwargs={"trans": "T", "lower": True}),
        Case(sla.solve_triangular, well(3), randn(3, 2), kwargs={"unit_diagonal": True}),
        Case(sla.solve_triangular, well(3), randn(3), kwargs={"unit_diagonal": True, "lower": True}),
        Case(sla.solve_triangular, well(3), randn(3, 2), kwargs={"unit_diagonal": True, "lower": True, "trans": 1}),
        Case(sla.solve_triangular, np.asfortranarray(well(3)), randn(3), kwargs={"lower": True},
             name="solve_triangular(Fortran-ordered a)"),
        Case(sla.solve_triangular, well(3, True), randc(3), kwargs={"trans": "C"}),
        Case(sla.solve_triangular, well(3, True), randc(3, 2), kwargs={"trans": 1, "lower": True}),
        Case(sla.solve_triangular, well(3, True), randc(3), kwargs={"lower": True}),
        Case(sla.solve_triangular, well(3).astype(f32), randn(3, dtype=f32)),
        # cholesky family
        Case(sla.cholesky, spd(3)),
        Case(sla.cholesky, spd(3), kwargs={"lower": True}),
        Case(sla.cholesky, spd(3, True)),
        Case(sla.cho_factor, spd(3)),
        Case(sla.cho_factor, spd(3), kwargs={"lower": True}),
        Case(sla.cho_factor, spd(3, True), kwargs={"lower": True}),
        Case(sla.cho_solve, sla.cho_factor(spd(3)), randn(3)),
        Case(sla.cho_solve, sla.cho_factor(spd(3), lower=True), randn(3, 2)),
        Case(sla.cho_solve, sla.cho_factor(spd(3, True)), randc(3)),
        Case(sla.cho_solve, sla.cho_factor(spd(3), lower=True), randn(3), kwargs={"check_finite": False}),
        # solve, inv, det, expm
        Case(sla.solve, well(3), randn(3)),
        Case(sla.solve, well(3), randn(3, 2)),
        Case(sla.solve, well(3), randn(3, 2), kwargs={"transposed": True}),
        Case(sla.solve, spd(3), randn(3), kwargs={"assume_a": "pos"}),
        Case(sla.solve, spd(3), randn(3), kwargs={"assume_a": "pos", "lower": True}),
        Case(sla.solve, well(3) + well(3).T, randn(3), kwargs={"assume_a": "sym"}),
        Case(sla.solve, spd(3, True), randc(3), kwargs={"assume_a": "her"}),
        Case(sla.solve, well(3, True), randc(3, 2)),
        Case(sla.solve, np.triu(well(3)), randn(3), kwargs={"assume_a": "upper triangular"}),
        Case(sla.solve, well(3), randn(3, 2), kwargs={"assume_a": "lower triangular"}),
        Case(sla.solve, well(3), randn(3), kwargs={"assume_a": "diagonal"}),
        Case(sla.solve, well(4), randn(4), kwargs={"assume_a": "tridiagonal"}),
        Case(sla.solve, np.triu(np.tril(well(4), 1), -1), randn(4, 2), kwargs={"assume_a": "banded"}),
        Case(sla.solve, well(3), randn(3), kwargs={"assume_a": "sym", "lower": True}),
        Case(sla.inv, well(3), kwargs={"assume_a": "lower triangular"}),
        Case(sla.inv, well(3) + well(3).T, kwargs={"assume_a": "sym"}),
        Case(sla.inv, well(3)),
        Case(sla.inv, well(3, True)),
        Case(sla.inv, spd(3), kwargs={"assume_a": "pos"}),
        Case(sla.inv, np.stack([well(3), well(3)])),
        Case(sla.det, well(3)),
        Case(sla.det, well(3, True)),
        Case(sla.expm, randn(3, 3) / 2),
        Case(sla.expm, randc(2, 2) / 2),
        Case(sla.expm, randn(2, 3, 3) / 2),
    ]


CASES = _cases() if sla is not None else []
