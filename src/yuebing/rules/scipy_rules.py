"""SciPy: ``scipy.linalg`` (``solve_triangular``, ``cho_factor``, ``cho_solve``, ``cholesky``,
``solve``, ``inv``, ``det``, ``expm``) and ``scipy.special`` (``logsumexp``, ``softmax``,
``log_softmax``, ``expit``, ``logit``, ``erf``, ``erfc``, ``erfinv``, ``erfcinv``, ``gamma``,
``gammaln``, ``digamma``/``psi``, ``polygamma``, ``beta``, ``betaln``, ``xlogy``, ``xlog1py``,
``i0``, ``i1``).

Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

The linear-algebra rules reuse ``linalg.py``'s derivation framework and formulas. Functions that
read one triangle (``cho_factor``, ``cholesky``, ``solve``/``inv`` with ``assume_a`` 'sym', 'her',
'pos' or triangular) are differentiated as the function of the entries they read. ``cho_factor``'s
result holds the factor in one triangle and a copy of ``a`` in the other (SciPy does not clean it),
so its derivative there is the identity. ``overwrite_a``/``overwrite_b=True`` are refused (SciPy may
then destroy the argument), as are batched arrays for ``solve_triangular``/``cho_solve``/``solve``
(2-D ``a`` only).

Conventions: ``xlogy(x, y)`` and ``xlog1py`` have ``d/dy = 0`` where ``x == 0`` (also at ``y = 0``);
``d/dx`` is ``log(y)`` (``-inf`` at ``y = 0``, NumPy's answer). ``i1'(0) = 1/2``. ``logsumexp``
refuses ``return_sign=True`` and complex input; where the result is ``-inf`` the gradient is nan.
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn, randpos, randu
from .core import Dual, primal, register_frule, register_rrule
from .declare import elementwise
from .linalg import (add, carries_gradient, cholesky_parts, conj, det_parts, fit, hermitian_from, hermitian_from_adjoint,
                     linalg_rule, lower_cholesky_cotangent, mH, mT, real_only, refuse, solve_parts,
                     upper_cholesky_parts)
from .second_order import with_vjp
from .util import accumulate, is_differentiable, out_cotangent, output, tangent

try:
    import scipy.linalg as sla
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is optional
    sla = sp = None


def _no_overwrite(label: str, **flags: Any) -> None:
    for name, value in flags.items():
        if value:
            refuse(label, f"yuebing does not support {name}=True (SciPy may destroy the argument); "
                          "use the default")


def _matrix_only(label: str, a: Any) -> None:
    if np.ndim(a) != 2:
        refuse(label, "yuebing differentiates this function for a single 2-D matrix only")


# --------------------------------------------------------------------------------------------
# Structured matrices: the matrix a solver actually sees, and its adjoint
# --------------------------------------------------------------------------------------------

_GENERAL = {None, "gen", "general"}
_SYMMETRIC = {"sym", "symmetric"}
_HERMITIAN = {"her", "hermitian", "pos", "positive definite"}
_TRIANGULAR = {"upper triangular": False, "lower triangular": True}


def _structure(label: str, assume_a: Any, lower: bool) -> tuple[Callable, Callable]:
    """``(project, adjoint)``: the matrix read from ``a`` under ``assume_a``, and its adjoint."""
    if assume_a in _GENERAL:  # None: SciPy detects structure, but a perturbation breaks it
        return (lambda a: a), (lambda s: s)
    if assume_a in _HERMITIAN:
        return (lambda a: hermitian_from(a, lower)), (lambda s: hermitian_from_adjoint(s, lower))
    if assume_a in _SYMMETRIC:
        def project(a: Any) -> Any:
            t = np.tril(a, -1) if lower else np.triu(a, 1)
            return t + mT(t) + np.eye(a.shape[-1]) * a

        def adjoint(s: Any) -> Any:
            both = s + mT(s)
            return (np.tril(both, -1) if lower else np.triu(both, 1)) + np.eye(s.shape[-1]) * s

        return project, adjoint
    if assume_a in _TRIANGULAR:
        tri = np.tril if _TRIANGULAR[assume_a] else np.triu
        return tri, tri
    if assume_a == "diagonal":
        return (lambda a: np.eye(a.shape[-1]) * a), (lambda s: np.eye(s.shape[-1]) * s)
    refuse(label, f"yuebing does not differentiate assume_a={assume_a!r}")


# --------------------------------------------------------------------------------------------
# scipy.linalg
# --------------------------------------------------------------------------------------------


def _trans_code(label: str, trans: Any) -> int:
    codes = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}
    if trans not in codes:
        refuse(label, f"unknown trans={trans!r}")
    return codes[trans]


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


@functools.lru_cache(maxsize=16)
def _negated_triangle(n: int, lower: bool, unit_diagonal: bool) -> np.ndarray:
    """-1 on the triangle a triangular solver reads (its diagonal too unless unit), 0 elsewhere
    (read-only: shared)."""
    mask = -(np.tril if lower else np.triu)(np.ones((n, n)), -1 if unit_diagonal and lower else
                                             1 if unit_diagonal else 0)
    mask.flags.writeable = False
    return mask


def _register_linalg() -> None:
    @linalg_rule(sla.solve_triangular, diff=(0, 1))
    def _solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True):
        label = "scipy.linalg.solve_triangular"
        _no_overwrite(label, overwrite_b=overwrite_b)
        _matrix_only(label, a)
        code = _trans_code(label, trans)
        options = dict(lower=lower, unit_diagonal=unit_diagonal, check_finite=check_finite)
        y = sla.solve_triangular(a, b, trans=trans, **options)
        a = np.asarray(a)
        tri = np.tril if lower else np.triu

        def part(da: Any) -> Any:  # the entries of a the solver reads
            d = tri(da)
            return d - np.eye(d.shape[-1]) * d if unit_diagonal else d

        op = (lambda m: m, mT, mH)[code]

        def solve(rhs: Any) -> Any:
            return sla.solve_triangular(a, rhs, trans=trans, **options)

        # the forward call checked ``a``; a non-finite cotangent propagates as NaN, as in the primal
        checked = dict(options, check_finite=False)

        def solve_adjoint(g: Any) -> Any:  # op(T)^-H g
            fast = _real_triangular_adjoint_solve(a, g, code, lower, unit_diagonal)
            if fast is not None:
                return fast
            if code == 0:
                return sla.solve_triangular(a, g, trans=2, **checked)
            if code == 2:
                return sla.solve_triangular(a, g, trans=0, **checked)
            return conj(sla.solve_triangular(a, conj(g), trans=0, **checked))  # op(T)^H = conj(T)

        vector = np.ndim(b) == 1
        x2 = y[:, None] if vector else y

        def jvp(da: Any, db: Any) -> Any:
            rhs = add(None if db is None else (np.asarray(db)[:, None] if vector else db),
                      None if da is None else -(op(part(da)) @ x2))
            dx = solve(rhs)
            return dx[:, 0] if vector else dx

        def vjp(g: Any, need: tuple) -> tuple:
            gb = solve_adjoint(np.asarray(g)[:, None] if vector else g)
            ga = None
            if need[0]:  # adjoint of da -> op(part(da)) x: -part(op(gb x^H))
                outer = op(gb @ mH(x2))
                if outer.ndim == 2 and outer.dtype == np.float64:  # one multiply by a cached mask
                    ga = outer * _negated_triangle(outer.shape[0], lower, unit_diagonal)
                else:
                    ga = part(-outer)
            return ga, (gb[:, 0] if vector else gb) if need[1] else None

        return y, jvp, vjp

    @linalg_rule(sla.cholesky)
    def _cholesky(a, lower=False, overwrite_a=False, check_finite=True):
        _no_overwrite("scipy.linalg.cholesky", overwrite_a=overwrite_a)
        y = sla.cholesky(a, lower=lower, check_finite=check_finite)
        a = np.asarray(a)
        return (y, *(cholesky_parts(a, y) if lower else upper_cholesky_parts(a, y)))

    @linalg_rule(sla.cho_factor)
    def _cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
        _no_overwrite("scipy.linalg.cho_factor", overwrite_a=overwrite_a)
        y = sla.cho_factor(a, lower=lower, check_finite=check_finite)
        c = y[0]
        a = np.asarray(a)
        tri = np.tril if lower else np.triu
        rest = (lambda m: np.triu(m, 1)) if lower else (lambda m: np.tril(m, -1))  # a copied as is
        factor = tri(c)
        jvp_f, vjp_f = cholesky_parts(a, factor) if lower else upper_cholesky_parts(a, factor)

        def jvp(da: Any) -> Any:
            return [jvp_f(da) + rest(da), None]

        def vjp(g: list, need: tuple) -> tuple:
            gc = g[0]
            if gc is None:
                return (None,)
            return (vjp_f(tri(gc), need)[0] + rest(gc),)

        return y, jvp, vjp

    @linalg_rule(sla.solve, diff=(0, 1))
    def _solve(a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
               transposed=False):
        label = "scipy.linalg.solve"
        _no_overwrite(label, overwrite_a=overwrite_a, overwrite_b=overwrite_b)
        _matrix_only(label, a)
        y = sla.solve(a, b, lower=lower, check_finite=check_finite, assume_a=assume_a, transposed=transposed)
        a = np.asarray(a)
        project, adjoint = _structure(label, assume_a, lower)
        m = project(a)
        m = mT(m) if transposed else m  # transposed=True refuses complex a
        jvp, vjp = solve_parts(m, y, np.ndim(b) == 1, lambda r: np.linalg.solve(m, r),
                               lambda g: np.linalg.solve(mH(m), g))

        def jvp_a(da: Any, db: Any) -> Any:
            dm = None if da is None else project(da)
            return jvp(None if dm is None else (mT(dm) if transposed else dm), db)

        def vjp_a(g: Any, need: tuple) -> tuple:
            gm, gb = vjp(g, need)
            return (None if gm is None else adjoint(mT(gm) if transposed else gm)), gb

        return y, jvp_a, vjp_a

    @linalg_rule(sla.inv)
    def _inv(a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
        label = "scipy.linalg.inv"
        _no_overwrite(label, overwrite_a=overwrite_a)
        y = sla.inv(a, check_finite=check_finite, assume_a=assume_a, lower=lower)
        project, adjoint = _structure(label, assume_a, lower)

        def jvp(da: Any) -> Any:
            return -(y @ project(da) @ y)

        def vjp(g: Any, need: tuple) -> tuple:
            return (adjoint(-(mH(y) @ g @ mH(y))),)

        return y, jvp, vjp

    @linalg_rule(sla.det)
    def _det(a, overwrite_a=False, check_finite=True):
        _no_overwrite("scipy.linalg.det", overwrite_a=overwrite_a)
        y = sla.det(a, check_finite=check_finite)
        return (y, *det_parts(np.asarray(a), y))

    @linalg_rule(sla.expm)
    def _expm(A):
        y = sla.expm(A)
        a = np.asarray(A)
        n = a.shape[-1]

        def frechet(m: np.ndarray, e: np.ndarray) -> np.ndarray:
            """L(m, e), the derivative of expm at m along e: a block of expm([[m, e], [0, m]])."""
            block = np.zeros(np.broadcast_shapes(m.shape, e.shape)[:-2] + (2 * n, 2 * n),
                             dtype=np.result_type(m, e))
            block[..., :n, :n] = block[..., n:, n:] = m
            block[..., :n, n:] = e
            return sla.expm(block)[..., :n, n:]

        return y, lambda da: frechet(a, np.asarray(da)), lambda g, need: (frechet(mH(a), np.asarray(g)),)

    _register_cho_solve()


def _cho_solve_parts(c: np.ndarray, lower: bool, b: Any, x: np.ndarray) -> tuple[Callable, Callable]:
    """jvp and vjp of ``x = S^-1 b`` with ``S = L L^H`` (lower) or ``U^H U`` (upper) from ``c``."""
    tri = np.tril if lower else np.triu
    factor = tri(c)
    vector = np.ndim(b) == 1
    x2 = x[:, None] if vector else x

    def solve(rhs: Any) -> Any:
        return sla.cho_solve((c, lower), rhs)

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
        _no_overwrite(label, overwrite_b=values[2])
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


# --------------------------------------------------------------------------------------------
# scipy.special
# --------------------------------------------------------------------------------------------


def _axes(axis: Any, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    axis = (axis,) if np.ndim(axis) == 0 else axis
    return tuple(int(ax) % ndim for ax in axis)


def _safe_ratio(x: Any, y: Any) -> Any:
    """x / y, with 0 where x == 0 (whatever y is). Only 0 / 0 is guarded, so forward mode of this
    partial still gives d(x / y)/dx = 1 / y at x = 0 (second order)."""
    x, y = np.asarray(x), np.asarray(y)
    return x / np.where((x == 0) & (y == 0), 1.0, y)


def _register_special() -> None:
    sqrt_pi = np.sqrt(np.pi)
    elementwise(sp.expit, lambda x, y: y * (1 - y))
    elementwise(sp.logit, lambda x, y: 1 / (x * (1 - x)))
    elementwise(sp.erf, lambda x, y: 2 / sqrt_pi * np.exp(-x * x))
    elementwise(sp.erfc, lambda x, y: -2 / sqrt_pi * np.exp(-x * x))
    elementwise(sp.erfinv, lambda x, y: sqrt_pi / 2 * np.exp(y * y))
    elementwise(sp.erfcinv, lambda x, y: -sqrt_pi / 2 * np.exp(y * y))
    elementwise(sp.gamma, lambda x, y: y * sp.digamma(x))
    elementwise(sp.gammaln, lambda x, y: sp.digamma(x))
    elementwise(sp.digamma, lambda x, y: sp.polygamma(1, x))  # sp.psi is the same ufunc
    elementwise(sp.beta, lambda a, b, y: y * (sp.digamma(a) - sp.digamma(a + b)),
                lambda a, b, y: y * (sp.digamma(b) - sp.digamma(a + b)))
    elementwise(sp.betaln, lambda a, b, y: sp.digamma(a) - sp.digamma(a + b),
                lambda a, b, y: sp.digamma(b) - sp.digamma(a + b))
    elementwise(sp.xlogy, lambda x, y, out: np.log(y), lambda x, y, out: _safe_ratio(x, y))
    elementwise(sp.xlog1py, lambda x, y, out: np.log1p(y), lambda x, y, out: _safe_ratio(x, 1 + np.asarray(y)))
    elementwise(sp.i0, lambda x, y: sp.i1(x))
    # i1'(x) = i0(x) - i1(x)/x, which tends to 1/2 at 0
    elementwise(sp.i1, lambda x, y: sp.i0(x) - np.where(np.asarray(x) == 0, 0.5, _safe_ratio(y, x)))

    @linalg_rule(sp.polygamma, diff=(1,))
    def _polygamma(n, x):
        y = sp.polygamma(n, x)
        slope = sp.polygamma(np.asarray(n) + 1, x)
        return y, lambda dx: slope * dx, lambda g, need: (g * conj(slope),)

    @linalg_rule(sp.logsumexp, diff=(0, 2))
    def _logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
        label = "scipy.special.logsumexp"
        if return_sign:
            refuse(label, "yuebing does not differentiate return_sign=True")
        real_only(label, a, b)
        y = sp.logsumexp(a, axis=axis, b=b, keepdims=keepdims)
        axes = _axes(axis, np.ndim(a))
        y_kept = y if keepdims else np.expand_dims(y, axes)
        with np.errstate(invalid="ignore"):
            weight_b = np.exp(np.asarray(a) - y_kept)  # d y / d b
        weight_a = weight_b if b is None else weight_b * b  # d y / d a

        def jvp(da: Any, db: Any) -> Any:
            dy = add(None if da is None else weight_a * da, None if db is None else weight_b * db)
            return np.sum(dy, axis=axes, keepdims=keepdims)

        def vjp(g: Any, need: tuple) -> tuple:
            g_kept = g if keepdims else np.expand_dims(g, axes)
            return (g_kept * weight_a if need[0] else None), (g_kept * weight_b if need[1] else None)

        return y, jvp, vjp

    @linalg_rule(sp.softmax)
    def _softmax(x, axis=None):
        real_only("scipy.special.softmax", x)
        y = sp.softmax(x, axis=axis)
        axes = _axes(axis, np.ndim(x))

        def jvp(dx: Any) -> Any:
            return y * (dx - np.sum(y * dx, axis=axes, keepdims=True))

        def vjp(g: Any, need: tuple) -> tuple:
            return (y * (g - np.sum(g * y, axis=axes, keepdims=True)),)

        return y, jvp, vjp

    @linalg_rule(sp.log_softmax)
    def _log_softmax(x, axis=None):
        real_only("scipy.special.log_softmax", x)
        y = sp.log_softmax(x, axis=axis)
        axes = _axes(axis, np.ndim(x))
        p = np.exp(y)

        def jvp(dx: Any) -> Any:
            return dx - np.sum(p * dx, axis=axes, keepdims=True)

        def vjp(g: Any, need: tuple) -> tuple:
            return (g - p * np.sum(g, axis=axes, keepdims=True),)

        return y, jvp, vjp


if sla is not None:
    _register_linalg()
    _register_special()


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------
# vjps in plain NumPy/SciPy giving the pullbacks' cotangents (the formulas of the rules above,
# with the same structured-matrix reads). Not declared: cho_solve, whose (c, lower) argument is a
# tuple holding the factor (with_vjp delivers cotangents to array and number arguments only).


def _so_axes(axis: Any, ndim: int) -> tuple:
    if axis is None:
        return tuple(range(ndim))
    if np.ndim(axis) == 0:
        return (int(axis) % ndim,)
    axes = []
    for ax in axis:
        axes.append(int(ax) % ndim)
    return tuple(axes)


def _so_project(a: Any, assume_a: Any, lower: bool) -> Any:
    """``_structure``'s ``project``: the matrix a solver reads from ``a`` under ``assume_a``."""
    if assume_a in _HERMITIAN:
        return hermitian_from(a, lower)
    if assume_a in _SYMMETRIC:
        t = np.tril(a, -1) if lower else np.triu(a, 1)
        return t + mT(t) + np.eye(a.shape[-1]) * a
    if assume_a in _TRIANGULAR:
        return np.tril(a) if _TRIANGULAR[assume_a] else np.triu(a)
    if assume_a == "diagonal":
        return np.eye(a.shape[-1]) * a
    return a


def _so_project_adjoint(s: Any, assume_a: Any, lower: bool) -> Any:
    """``_structure``'s ``adjoint``."""
    if assume_a in _HERMITIAN:
        return hermitian_from_adjoint(s, lower)
    if assume_a in _SYMMETRIC:
        both = s + mT(s)
        return (np.tril(both, -1) if lower else np.triu(both, 1)) + np.eye(s.shape[-1]) * s
    if assume_a in _TRIANGULAR:
        return np.tril(s) if _TRIANGULAR[assume_a] else np.triu(s)
    if assume_a == "diagonal":
        return np.eye(s.shape[-1]) * s
    return s


def _solve_triangular_vjp(g, y, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                          check_finite=True):
    code = {0: 0, "N": 0, 1: 1, "T": 1, 2: 2, "C": 2}[trans]
    vector = np.ndim(b) == 1
    x2 = y[:, None] if vector else y
    g2 = np.asarray(g)[:, None] if vector else np.asarray(g)
    if code == 0:  # op(T)^-H g
        gb = sla.solve_triangular(a, g2, trans=2, lower=lower, unit_diagonal=unit_diagonal)
    elif code == 2:
        gb = sla.solve_triangular(a, g2, trans=0, lower=lower, unit_diagonal=unit_diagonal)
    else:
        gb = conj(sla.solve_triangular(a, conj(g2), trans=0, lower=lower, unit_diagonal=unit_diagonal))
    m = -(gb @ mH(x2))
    m = m if code == 0 else (mT(m) if code == 1 else mH(m))
    ga = np.tril(m) if lower else np.triu(m)
    if unit_diagonal:
        ga = ga - np.eye(ga.shape[-1]) * ga
    return ga, gb[:, 0] if vector else gb


def _cholesky_vjp(g, y, a, lower=False, overwrite_a=False, check_finite=True):
    if lower:
        return (lower_cholesky_cotangent(y, g),)
    return (mH(lower_cholesky_cotangent(mH(y), mH(g))),)


def _cho_factor_vjp(g, y, a, lower=False, overwrite_a=False, check_finite=True):
    gc = g[0]
    if lower:  # the factor in the lower triangle, a copy of a in the strict upper one
        return (lower_cholesky_cotangent(np.tril(y[0]), np.tril(gc)) + np.triu(gc, 1),)
    return (mH(lower_cholesky_cotangent(mH(np.triu(y[0])), mH(np.triu(gc)))) + np.tril(gc, -1),)


def _solve_vjp(g, y, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
               transposed=False):
    m = _so_project(np.asarray(a), assume_a, lower)
    m = mT(m) if transposed else m
    vector = np.ndim(b) == 1
    x2 = y[..., None] if vector else y
    gb = np.linalg.solve(mH(m), np.asarray(g)[..., None] if vector else g)
    gm = -(gb @ mH(x2))
    return _so_project_adjoint(mT(gm) if transposed else gm, assume_a, lower), gb[..., 0] if vector else gb


def _inv_vjp(g, y, a, overwrite_a=False, check_finite=True, assume_a=None, lower=False):
    return (_so_project_adjoint(-(mH(y) @ g @ mH(y)), assume_a, lower),)


def _det_vjp(g, y, a, overwrite_a=False, check_finite=True):
    # the adjugate det(a) a^-1: the first-order rule's, except at an exactly singular matrix
    # (there it uses the SVD, whose derivative is not smooth): np.linalg.inv raises there
    adjugate = np.asarray(y)[..., None, None] * np.linalg.inv(a)
    return (np.asarray(g)[..., None, None] * mH(adjugate),)


def _expm_vjp(g, y, A):
    """L(A^H, g): the Frechet derivative of expm, the corner block of expm([[A^H, g], [0, A^H]])."""
    ah = mH(np.asarray(A))
    g = np.asarray(g)
    n = ah.shape[-1]
    top = np.concatenate([ah, g], axis=-1)
    bottom = np.concatenate([np.zeros_like(g), ah], axis=-1)
    return (sla.expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:],)


def _polygamma_vjp(g, y, n, x):
    return None, g * sp.polygamma(np.asarray(n) + 1, x)


def _logsumexp_vjp(g, y, a, axis=None, b=None, keepdims=False, return_sign=False):
    axes = _so_axes(axis, np.ndim(a))
    y_kept = y if keepdims else np.expand_dims(y, axes)
    g_kept = g if keepdims else np.expand_dims(g, axes)
    weight_b = np.exp(np.asarray(a) - y_kept)  # nan where y is -inf, as the rule
    if b is None:
        return g_kept * weight_b, None, None
    return g_kept * weight_b * b, None, g_kept * weight_b


def _softmax_vjp(g, y, x, axis=None):
    return (y * (g - np.sum(g * y, axis=_so_axes(axis, np.ndim(x)), keepdims=True)),)


def _log_softmax_vjp(g, y, x, axis=None):
    return (g - np.exp(y) * np.sum(g, axis=_so_axes(axis, np.ndim(x)), keepdims=True),)


if sla is not None:
    with_vjp(sla.solve_triangular, _solve_triangular_vjp)
    with_vjp(sla.cholesky, _cholesky_vjp)
    with_vjp(sla.cho_factor, _cho_factor_vjp)
    with_vjp(sla.solve, _solve_vjp)
    with_vjp(sla.inv, _inv_vjp)
    with_vjp(sla.det, _det_vjp)
    with_vjp(sla.expm, _expm_vjp)
    with_vjp(sp.polygamma, _polygamma_vjp)
    with_vjp(sp.logsumexp, _logsumexp_vjp)
    with_vjp(sp.softmax, _softmax_vjp)
    with_vjp(sp.log_softmax, _log_softmax_vjp)


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
        Case(sla.inv, well(3)),
        Case(sla.inv, well(3, True)),
        Case(sla.inv, spd(3), kwargs={"assume_a": "pos"}),
        Case(sla.inv, np.stack([well(3), well(3)])),
        Case(sla.det, well(3)),
        Case(sla.det, well(3, True)),
        Case(sla.expm, randn(3, 3) / 2),
        Case(sla.expm, randc(2, 2) / 2),
        Case(sla.expm, randn(2, 3, 3) / 2),
        # special: elementwise
        Case(sp.expit, randn(4)),
        Case(sp.expit, randn()),
        Case(sp.expit, randn(3, dtype=f32)),
        Case(sp.logit, randu(4, low=0.1, high=0.9)),
        Case(sp.erf, randn(2, 3)),
        Case(sp.erf, randc(3)),
        Case(sp.erfc, randn(4)),
        Case(sp.erfinv, randu(4, low=-0.9, high=0.9)),
        Case(sp.erfcinv, randu(4, low=0.1, high=1.9)),
        Case(sp.gamma, randpos(4)),
        Case(sp.gammaln, randpos(4)),
        Case(sp.gammaln, randpos()),
        Case(sp.digamma, randpos(4)),
        Case(sp.polygamma, 1, randpos(4)),
        Case(sp.polygamma, np.array([0, 1, 2]), randpos(3)),
        Case(sp.beta, randpos(3), randpos(3)),
        Case(sp.betaln, randpos(3), randpos(2, 1)),
        Case(sp.xlogy, randn(4), randpos(4)),
        Case(sp.xlogy, randn(3), randpos(1)),
        Case(sp.xlogy, np.zeros(3), randpos(3), name="xlogy(0, y): d/dy = 0"),
        Case(sp.xlogy, 0.0, 1.5),
        Case(sp.xlog1py, randn(4), randpos(4)),
        Case(sp.i0, randn(4)),
        Case(sp.i1, randn(4)),
        # special: reductions
        Case(sp.logsumexp, randn(5)),
        Case(sp.logsumexp, randn(3, 4), kwargs={"axis": 1}),
        Case(sp.logsumexp, randn(3, 4), kwargs={"axis": 0, "keepdims": True}),
        Case(sp.logsumexp, randn(2, 3, 4), kwargs={"axis": (0, 2)}),
        Case(sp.logsumexp, randn(3, 4), None, randpos(3, 4)),
        Case(sp.logsumexp, randn(3, 4), 1, randpos(4)),
        Case(sp.logsumexp, randn(4, dtype=f32)),
        Case(sp.softmax, randn(5)),
        Case(sp.softmax, randn(3, 4), kwargs={"axis": 1}),
        Case(sp.softmax, randn(3, 4, dtype=f32), kwargs={"axis": 0}),
        Case(sp.log_softmax, randn(5)),
        Case(sp.log_softmax, randn(3, 4), kwargs={"axis": -1}),
    ]


CASES = _cases() if sla is not None else []
