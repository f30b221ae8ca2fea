"""Inverses and solves: ``np.linalg.inv``, ``solve``, ``matrix_power``, ``lstsq`` and ``pinv``.

Limits (everything else raises ``RuleArgumentError``): ``lstsq`` and ``pinv`` for full-rank
matrices, ``lstsq`` for square or tall ``a``; ``pinv(hermitian=True)`` is refused.

Second order (``yb.hvp``, ``yb.hessian``; the end of the file): vjp functions written in plain
NumPy (``with_vjp``) that compute the reverse rules' cotangents with the same conventions; ``solve``
also declares its forward derivative as NumPy code, for third order.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ...tangents import NoTangent
from ..cases import Case, randc, randn
from ..second_order import jvp_defined_by, with_vjp
from .common import add, cotangent_entry, linalg_rule, mH, refuse, well_conditioned
from .decompositions import singular_value_parts

# --------------------------------------------------------------------------------------------
# inv, solve, matrix_power
# --------------------------------------------------------------------------------------------


@linalg_rule(np.linalg.inv)
def _inv(a):
    y = np.linalg.inv(a)

    def jvp(da: Any) -> Any:
        return -(y @ da @ y)

    def vjp(g: Any, need: tuple) -> tuple:
        return (-(mH(y) @ g @ mH(y)),)

    return y, jvp, vjp


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


@linalg_rule(np.linalg.solve, diff=(0, 1))
def _solve(a, b):
    y = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1
    return (y, *solve_parts(np.asarray(a), y, vector,
                            lambda r: np.linalg.solve(a, r), lambda g: np.linalg.solve(mH(np.asarray(a)), g)))


@linalg_rule(np.linalg.matrix_power)
def _matrix_power(a, n):
    y = np.linalg.matrix_power(a, n)
    n = operator.index(n)
    if n == 0 or y is a:
        return y, lambda da: None, lambda g, need: (None,)
    base = np.linalg.inv(a) if n < 0 else np.asarray(a)
    m = abs(n)
    powers = [None, base]  # powers[k] = base^k; None stands for the identity
    for _ in range(m - 2):
        powers.append(powers[-1] @ base)

    def times(p: Any, x: Any, left: bool) -> Any:
        return x if p is None else (p @ x if left else x @ p)

    def jvp(da: Any) -> Any:
        d_base = da if n > 0 else -(base @ da @ base)
        return add(*(times(powers[k], times(powers[m - 1 - k], d_base, False), True) for k in range(m)))

    def vjp(g: Any, need: tuple) -> tuple:
        g_base = add(*(times(_mH_or_none(powers[k]), times(_mH_or_none(powers[m - 1 - k]), g, False), True)
                       for k in range(m)))
        return (g_base if n > 0 else -(mH(base) @ g_base @ mH(base)),)

    return y, jvp, vjp


def _mH_or_none(p: Any) -> Any:
    return None if p is None else mH(p)


# --------------------------------------------------------------------------------------------
# Least squares, pseudo-inverse
# --------------------------------------------------------------------------------------------


@linalg_rule(np.linalg.lstsq, diff=(0, 1))
def _lstsq(a, b, rcond=None):
    label = "numpy.linalg.lstsq"
    y = np.linalg.lstsq(a, b, rcond=rcond)
    x, res, rank, s = y
    a, b = np.asarray(a), np.asarray(b)
    m, n = a.shape
    if m < n or rank < n:
        refuse(label, "yuebing differentiates full-rank square or tall least-squares problems only")
    vector = b.ndim == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    r = b2 - a @ x2
    gram_inv = np.linalg.inv(mH(a) @ a)
    pinv = gram_inv @ mH(a)
    has_res = res.size > 0
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    s_jvp, s_vjp = singular_value_parts(u, vh)

    def as2(t: Any) -> Any:
        return None if t is None else (np.asarray(t)[:, None] if vector else t)

    def jvp(da: Any, db: Any) -> Any:
        dr = add(as2(db), None if da is None else -(da @ x2))  # change of b - a x, x held fixed
        dx = add(None if dr is None else pinv @ dr, None if da is None else gram_inv @ (mH(da) @ r))
        dres = 2 * np.real(np.sum(np.conj(r) * dr, axis=0)) if has_res and dr is not None else None
        ds = s_jvp(da) if da is not None else None
        return [None if dx is None else (dx[:, 0] if vector else dx), dres, None, ds]

    def vjp(g: list, need: tuple) -> tuple:
        gx, gres, _, gs = g
        gb = ga = None
        if gx is not None:
            gx = as2(gx)
            z = mH(pinv) @ gx
            gb, ga = z, -(z @ mH(x2)) + r @ mH(gram_inv @ gx)
        if gres is not None and has_res:
            w = 2 * r * np.real(np.asarray(gres))
            gb, ga = add(gb, w), add(ga, -(w @ mH(x2)))
        if gs is not None:
            ga = add(ga, s_vjp(gs, need)[0])
        if gb is not None and vector:
            gb = gb[:, 0]
        return ga, gb

    return y, jvp, vjp


_NO_VALUE = object()


@linalg_rule(np.linalg.pinv)
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
    p = y
    left = np.eye(m) - a @ p  # projector onto the complement of the range of a
    right = np.eye(n) - p @ a

    def jvp(da: Any) -> Any:
        return -(p @ da @ p) + p @ mH(p) @ mH(da) @ left + right @ mH(da) @ mH(p) @ p

    def vjp(g: Any, need: tuple) -> tuple:
        return (-(mH(p) @ g @ mH(p)) + left @ mH(g) @ p @ mH(p) + mH(p) @ p @ mH(g) @ right,)

    return y, jvp, vjp


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------
#
# The vjp functions below are differentiated by the forward transform (plain NumPy: no
# try/except, no ``out=``/``where=``). Each computes exactly the cotangents of the reverse rule
# above it. A tuple output's cotangent ``g`` is a tuple (a ``SlogdetResult``, ``EighResult``...)
# whose entries are ``NoRData`` for number outputs nobody used: ``cotangent_entry`` reads them.


def _inv_vjp(g, y, a):
    return (-(mH(y) @ g @ mH(y)),)


def _solve_vjp(g, y, a, b):
    vector = np.ndim(b) == 1
    x2 = y[..., None] if vector else y
    gb = np.linalg.solve(mH(np.asarray(a)), g[..., None] if vector else g)
    return -(gb @ mH(x2)), (gb[..., 0] if vector else gb)


def _matrix_power_vjp(g, y, a, n):
    n = operator.index(n)
    if n == 0:
        return None, None
    base = np.linalg.inv(a) if n < 0 else np.asarray(a)
    m = abs(n)
    powers = [np.eye(base.shape[-1], dtype=base.dtype), base]  # powers[k] = base^k
    for _ in range(m - 2):
        powers.append(powers[-1] @ base)
    g_base = mH(powers[0]) @ g @ mH(powers[m - 1])
    for k in range(1, m):
        g_base = g_base + mH(powers[k]) @ g @ mH(powers[m - 1 - k])
    return (g_base if n > 0 else -(mH(base) @ g_base @ mH(base))), None


def _lstsq_vjp(g, y, a, b, rcond=None):
    a, b = np.asarray(a), np.asarray(b)
    x, res = y[0], y[1]
    vector = b.ndim == 1
    x2, b2 = (x[:, None], b[:, None]) if vector else (x, b)
    r = b2 - a @ x2
    gram_inv = np.linalg.inv(mH(a) @ a)
    gx, gres, gs = cotangent_entry(g, 0), cotangent_entry(g, 1), cotangent_entry(g, 3)
    ga = np.zeros(a.shape, dtype=np.result_type(a, b))
    gb = np.zeros(b2.shape, dtype=np.result_type(a, b))
    if gx is not None:
        gx2 = gx[:, None] if vector else gx
        z = a @ mH(gram_inv) @ gx2  # mH(pinv) @ gx
        gb = gb + z
        ga = ga - z @ mH(x2) + r @ mH(gram_inv @ gx2)
    if gres is not None and np.size(res) > 0:
        w = 2 * r * np.real(np.asarray(gres))
        gb = gb + w
        ga = ga - w @ mH(x2)
    if gs is not None:
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        ga = ga + (u * np.asarray(gs)[..., None, :]) @ vh
    return ga, (gb[:, 0] if vector else gb), None


def _pinv_vjp(g, y, a, rcond=None, hermitian=False, rtol=_NO_VALUE):
    a = np.asarray(a)
    p = y
    m, n = a.shape[-2:]
    left = np.eye(m) - a @ p
    right = np.eye(n) - p @ a
    return -(mH(p) @ g @ mH(p)) + left @ mH(g) @ p @ mH(p) + mH(p) @ p @ mH(g) @ right, None, None, None


def _solve_jvp(a, a_t, b, b_t):
    """Third order: the tangent of ``solve(a, b)`` (its cotangent map solves again)."""
    y = np.linalg.solve(a, b)
    vector = np.ndim(b) == 1  # b is one vector, for every matrix of a stack
    rhs = b_t if b_t is not NoTangent else np.zeros_like(y)
    if a_t is not NoTangent:
        rhs = rhs - ((a_t @ y[..., None])[..., 0] if vector else a_t @ y)
    return y, (np.linalg.solve(a, rhs[..., None])[..., 0] if vector else np.linalg.solve(a, rhs))


with_vjp(np.linalg.inv, _inv_vjp)
with_vjp(np.linalg.solve, _solve_vjp)
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
    Case(np.linalg.pinv, randn(4, 3)),
    Case(np.linalg.pinv, randn(3, 4)),
    Case(np.linalg.pinv, randn(2, 3, 3)),
    Case(np.linalg.pinv, randc(4, 2)),
]
