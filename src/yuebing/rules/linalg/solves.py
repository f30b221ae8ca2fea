"""Inverses and solves: ``np.linalg.inv``, ``solve``, ``matrix_power``, ``lstsq`` and ``pinv``.

Limits (everything else raises ``RuleArgumentError``): ``lstsq`` and ``pinv`` for full-rank
matrices (a wide ``lstsq`` gives the minimum-norm solution's derivative; a rank-deficient one is
refused when a derivative is needed, its value alone is given); ``pinv(hermitian=True)`` is refused.

Each primitive's cotangent map is one plain-NumPy function ``_f_vjp(g, y, *args)`` (no
try/except, no ``out=``/``where=``: the forward transform differentiates it for second order,
``with_vjp`` at the end of the file), which the reverse rule calls. The forward rules are their
own formulas (``jvp``); ``solve`` also declares its forward derivative as NumPy code, for third
order.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ...tangents import NoTangent
from ..cases import Case, randc, randn
from ..second_order import jvp_defined_by, with_vjp
from . import direct_second_order
from .common import add, cotangent_entry, linalg_rule, mH, refuse, well_conditioned
from .decompositions import singular_values_cotangent, singular_values_jvp

# --------------------------------------------------------------------------------------------
# inv, solve, matrix_power
# --------------------------------------------------------------------------------------------


def _inv_vjp(g, y, a):
    return (-(mH(y) @ g @ mH(y)),)


@linalg_rule(np.linalg.inv, vjp=_inv_vjp)
def _inv(a):
    y = np.linalg.inv(a)
    return y, lambda da: -(y @ da @ y)


def solve_parts(a: np.ndarray, x: np.ndarray, vector: bool, solve: Callable, solve_adjoint: Callable) -> tuple:
    """jvp and vjp of ``x = solve(a, b)``; ``vector``: b (and x) is a stack of vectors."""
    x2 = x[..., None] if vector else x

    def jvp(da: Any, db: Any) -> Any:
        rhs = add(None if db is None else (np.asarray(db)[..., None] if vector else db),
                  None if da is None else -(da @ x2))
        dx = solve(rhs)
        return dx[..., 0] if vector else dx

    def vjp(g: Any, need: tuple) -> tuple:
        gb = solve_adjoint(g[..., None] if vector else g)
        ga = -(gb @ mH(x2)) if need[0] else None
        return ga, (gb[..., 0] if vector else gb) if need[1] else None

    return jvp, vjp


def _solve_vjp(g, y, a, b):
    vector = np.ndim(b) == 1
    x2 = y[..., None] if vector else y
    gb = np.linalg.solve(mH(np.asarray(a)), g[..., None] if vector else g)
    return -(gb @ mH(x2)), (gb[..., 0] if vector else gb)


@linalg_rule(np.linalg.solve, diff=(0, 1), vjp=_solve_vjp)
def _solve(a, b):
    y = np.linalg.solve(a, b)
    jvp, _ = solve_parts(np.asarray(a), y, np.ndim(b) == 1,
                         lambda r: np.linalg.solve(a, r), lambda g: np.linalg.solve(mH(np.asarray(a)), g))
    return y, jvp


def _solve_jvp(a, a_t, b, b_t):
    """Third order: the tangent of ``solve(a, b)`` (its cotangent map solves again)."""
    y = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1  # b is one vector, for every matrix of a stack
    rhs = b_t if b_t is not NoTangent else np.zeros_like(y)
    if a_t is not NoTangent:
        rhs = rhs - ((a_t @ y[..., None])[..., 0] if vector else a_t @ y)
    return y, (np.linalg.solve(a, rhs[..., None])[..., 0] if vector else np.linalg.solve(a, rhs))


def _matrix_power_vjp(g, y, a, n):
    # y = base^m: dy = sum_k base^k d(base) base^(m-1-k), so the cotangent of base is
    # sum_k (base^k)^H g (base^(m-1-k))^H (the k = 0 and k = m - 1 terms need no identity)
    n = operator.index(n)
    if n == 0:
        return None, None
    base = np.linalg.inv(a) if n < 0 else np.asarray(a)
    m = abs(n)
    powers = [base]  # powers[k - 1] = base^k
    for _ in range(m - 2):
        powers.append(powers[-1] @ base)
    g_base = g
    if m > 1:
        g_base = g @ mH(powers[m - 2]) + mH(powers[m - 2]) @ g
    for k in range(1, m - 1):
        g_base = g_base + mH(powers[k - 1]) @ g @ mH(powers[m - 2 - k])
    return (g_base if n > 0 else -(mH(base) @ g_base @ mH(base))), None


@linalg_rule(np.linalg.matrix_power, vjp=_matrix_power_vjp)
def _matrix_power(a, n):
    y = np.linalg.matrix_power(a, n)
    n = operator.index(n)
    if n == 0 or y is a:
        return y, lambda da: None

    def jvp(da: Any) -> Any:
        base = np.linalg.inv(a) if n < 0 else np.asarray(a)
        m = abs(n)
        powers = [None, base]  # powers[k] = base^k; None stands for the identity
        for _ in range(m - 2):
            powers.append(powers[-1] @ base)
        d_base = da if n > 0 else -(base @ da @ base)
        return add(*(_times(powers[k], _times(powers[m - 1 - k], d_base, False), True) for k in range(m)))

    return y, jvp


def _times(p: Any, x: Any, left: bool) -> Any:
    """``p @ x`` (``left``) or ``x @ p``; ``p`` None is the identity."""
    return x if p is None else (p @ x if left else x @ p)


# --------------------------------------------------------------------------------------------
# Least squares, pseudo-inverse
# --------------------------------------------------------------------------------------------


def lstsq_parts(a: np.ndarray, rank: Any) -> tuple:
    """``(P, P P^H, Q)`` of a full-rank problem: ``P = pinv(a)``, ``Q = I - P a`` the projector on
    ``a``'s null space (None for a square or tall ``a``, where it is 0). With ``r = b - a x``,
    ``dx = P (db - da x) + P P^H da^H r + Q da^H P^H x`` (``r = 0`` when ``a`` is wide: the
    minimum-norm solution). A rank-deficient problem is refused once a derivative is needed."""
    m, n = a.shape
    if rank < min(m, n):
        refuse("numpy.linalg.lstsq", "yuebing differentiates full-rank least-squares problems only (this one has "
               f"rank {rank} < {min(m, n)})")
    p = np.linalg.pinv(a)
    return p, p @ mH(p), (np.eye(n) - p @ a if m < n else None)


def _lstsq_vjp(g, y, a, b, rcond=None):
    a, b = np.asarray(a), np.asarray(b)
    x, res = y[0], y[1]
    vector = b.ndim == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    r = b2 - a @ x2
    p, pph, q = lstsq_parts(a, y[2])
    gx, gres, gs = cotangent_entry(g, 0), cotangent_entry(g, 1), cotangent_entry(g, 3)
    ga = np.zeros(a.shape, dtype=np.result_type(a, b))
    gb = np.zeros(b2.shape, dtype=np.result_type(a, b))
    if gx is not None:
        gx2 = gx[:, None] if vector else gx
        z = mH(p) @ gx2
        gb = gb + z
        ga = ga - z @ mH(x2) + r @ mH(pph @ gx2)
        if q is not None:
            ga = ga + (mH(p) @ x2) @ mH(q @ gx2)
    if gres is not None and np.size(res) > 0:
        w = 2 * r * np.real(np.asarray(gres))
        gb = gb + w
        ga = ga - w @ mH(x2)
    if gs is not None:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        ga = ga + singular_values_cotangent(u, vh, gs)
    return ga, (gb[:, 0] if vector else gb), None


@linalg_rule(np.linalg.lstsq, diff=(0, 1), vjp=_lstsq_vjp)
def _lstsq(a, b, rcond=None):
    y = np.linalg.lstsq(a, b, rcond=rcond)
    x, res, rank, s = y
    a, b = np.asarray(a), np.asarray(b)
    vector = b.ndim == 1

    def as2(t: Any) -> Any:
        return None if t is None else (np.asarray(t)[:, None] if vector else t)

    def jvp(da: Any, db: Any) -> Any:
        x2 = as2(x)
        r = as2(b) - a @ x2
        p, pph, q = lstsq_parts(a, rank)
        dr = add(as2(db), None if da is None else -(da @ x2))  # change of b - a x, x held fixed
        dx = add(None if dr is None else p @ dr, None if da is None else pph @ (mH(da) @ r))
        if q is not None and da is not None:
            dx = add(dx, q @ (mH(da) @ (mH(p) @ x2)))
        dres = 2 * np.real(np.sum(np.conj(r) * dr, axis=0)) if res.size > 0 and dr is not None else None
        ds = None
        if da is not None:
            u, _, vh = np.linalg.svd(a, full_matrices=False)
            ds = singular_values_jvp(u, vh, da)
        return [None if dx is None else (dx[:, 0] if vector else dx), dres, None, ds]

    return y, jvp


_NO_VALUE = object()


def _pinv_vjp(g, y, a, rcond=None, hermitian=False, rtol=_NO_VALUE):
    a = np.asarray(a)
    p = y
    m, n = a.shape[-2:]
    left = np.eye(m) - a @ p
    right = np.eye(n) - p @ a
    return -(mH(p) @ g @ mH(p)) + left @ mH(g) @ p @ mH(p) + mH(p) @ p @ mH(g) @ right, None, None, None


@linalg_rule(np.linalg.pinv, vjp=_pinv_vjp)
def _pinv(a, rcond=None, hermitian=False, rtol=_NO_VALUE):
    label = "numpy.linalg.pinv"
    kwargs = {} if rtol is _NO_VALUE else {"rtol": rtol}
    y = np.linalg.pinv(a, rcond, hermitian, **kwargs)
    if hermitian:
        refuse(label, "yuebing does not differentiate hermitian=True; use the default")
    a = np.asarray(a)
    s = np.linalg.svd(a, compute_uv=False)
    m, n = a.shape[-2:]
    if s.size and np.any(s[..., -1] <= max(m, n) * np.finfo(s.dtype).eps * s[..., 0]):
        refuse(label, "yuebing differentiates the pseudo-inverse of full-rank matrices only")

    def jvp(da: Any) -> Any:
        p = y
        left = np.eye(m) - a @ p  # projector onto the complement of the range of a
        right = np.eye(n) - p @ a
        return -(p @ da @ p) + p @ mH(p) @ mH(da) @ left + right @ mH(da) @ mH(p) @ p

    return y, jvp


# --------------------------------------------------------------------------------------------
# Second order: each primitive's cotangent map above, differentiated by the forward transform. A
# tuple output's cotangent ``g`` is then a tuple (an ``LstsqResult``...) whose entries are
# ``NoRData`` for outputs nobody used: ``cotangent_entry`` reads them.
# --------------------------------------------------------------------------------------------

with_vjp(np.linalg.inv, _inv_vjp, direct=direct_second_order.numpy_inv)
with_vjp(np.linalg.solve, _solve_vjp, direct=direct_second_order.numpy_solve)
jvp_defined_by(np.linalg.solve, _solve_jvp)
with_vjp(np.linalg.matrix_power, _matrix_power_vjp)
with_vjp(np.linalg.lstsq, _lstsq_vjp)
with_vjp(np.linalg.pinv, _pinv_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


f32 = np.float32

CASES = [
    # inv, solve, matrix_power
    Case(np.linalg.inv, well_conditioned(3)),
    Case(np.linalg.inv, well_conditioned(3, 2)),
    Case(np.linalg.inv, well_conditioned(3, dtype=f32)),
    Case(np.linalg.inv, well_conditioned(3, complex_=True)),
    Case(np.linalg.solve, well_conditioned(3), randn(3)),
    Case(np.linalg.solve, well_conditioned(3), randn(3, 2)),
    Case(np.linalg.solve, well_conditioned(3, 2), randn(3)),
    Case(np.linalg.solve, well_conditioned(3, 2), randn(2, 3, 2)),
    Case(np.linalg.solve, well_conditioned(3, 2), randn(3, 2)),
    Case(np.linalg.solve, well_conditioned(3, dtype=f32), randn(3, dtype=f32)),
    Case(np.linalg.solve, well_conditioned(3, complex_=True), randc(3, 2)),
    Case(np.linalg.solve, well_conditioned(3), randc(3)),
    Case(np.linalg.matrix_power, well_conditioned(3) / 3, 3),
    Case(np.linalg.matrix_power, well_conditioned(3) / 3, 1),
    Case(np.linalg.matrix_power, well_conditioned(3) / 3, 0),
    Case(np.linalg.matrix_power, well_conditioned(3) / 3, -2),
    Case(np.linalg.matrix_power, well_conditioned(2, 2, complex_=True) / 2, 5),
    # least squares, pseudo-inverse
    Case(np.linalg.lstsq, randn(5, 3), randn(5)),
    Case(np.linalg.lstsq, randn(5, 3), randn(5, 2)),
    Case(np.linalg.lstsq, well_conditioned(3), randn(3, 2)),
    Case(np.linalg.lstsq, randc(4, 2), randc(4)),
    Case(np.linalg.lstsq, randn(2, 4), randn(2)), Case(np.linalg.lstsq, randc(2, 3), randc(2, 2)),
    Case(np.linalg.pinv, randn(4, 3)),
    Case(np.linalg.pinv, randn(3, 4)),
    Case(np.linalg.pinv, randn(2, 3, 3)),
    Case(np.linalg.pinv, randc(4, 2)),
]
