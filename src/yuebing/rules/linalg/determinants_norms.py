"""Determinants and norms: ``np.linalg.det``, ``slogdet`` and ``norm``.

Conventions and limits (everything else raises ``RuleArgumentError``):

* ``norm``: the gradient at the zero vector (and at zero entries for ``ord=1`` or ``p < 1``) is 0;
  ``ord=inf``/``-inf`` and the induced matrix norms split ties evenly; ``ord=0`` has zero derivative.
  A float ``ord = p`` of a vector norm is differentiated (``d/dp (sum |x_i|^p)^(1/p)``); in
  ``ord=inf``/``-inf``/``0`` and the matrix norms ``ord`` picks a different function (a discrete
  choice), so its derivative is 0 by definition (the rules return that zero explicitly).
* ``det``: also at singular matrices (the adjugate from the SVD). ``slogdet``: nonsingular
  matrices (the rule inverts ``a``); its sign has zero derivative for real input (it is piecewise
  constant) and turns with ``Im tr(a^-1 da)`` for complex input.

Second order (``yb.hvp``, ``yb.hessian``; the end of the file): vjp functions written in plain
NumPy (``with_vjp``) that compute the reverse rules' cotangents with the same conventions.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..cases import Case, randc, randn
from ..second_order import with_vjp
from .common import add, conj, cotangent_entry, linalg_rule, mH, mT, normalise_axes, refuse, well_conditioned

# --------------------------------------------------------------------------------------------
# np.linalg.norm
# --------------------------------------------------------------------------------------------


def _sgn(x: np.ndarray, r: np.ndarray) -> np.ndarray:
    """x / |x|, 0 where x is 0."""
    return np.divide(x, r, out=np.zeros(np.shape(x), dtype=np.result_type(x, 1.0)), where=r != 0)


def _split_ties(mask: np.ndarray, axes: tuple) -> np.ndarray:
    return mask / np.sum(mask, axis=axes, keepdims=True)


def _vector_direction(x: np.ndarray, ym: np.ndarray, ord: Any, axes: tuple) -> np.ndarray:
    """``u`` with ``d norm = Re sum(conj(u) * dx)`` over ``axes`` (``ym``: the norm, kept dims)."""
    r = np.abs(x)
    if ord is None or ord == 2:
        return _sgn(x, np.broadcast_to(ym, x.shape))
    if ord == 1:
        return _sgn(x, r)
    if ord == np.inf or ord == -np.inf:
        return _sgn(x, r) * _split_ties(r == ym, axes)
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, 1.0))
    p = float(ord)
    # d/d|x_i| (sum |x|^p)^(1/p) = (|x_i| / y)^(p-1); 0 at x_i = 0 and at y = 0 by convention
    ratio = np.divide(r, ym, out=np.zeros(r.shape, dtype=np.result_type(r, 1.0)), where=(ym != 0) & (r != 0))
    with np.errstate(divide="ignore", invalid="ignore"):
        scale = np.where(ratio != 0, ratio ** (p - 1), 0.0)
    return _sgn(x, r) * scale


def _matrix_direction(x: np.ndarray, ym: np.ndarray, ord: Any) -> np.ndarray:
    """Matrix norms over the last two axes: ``u`` as in ``_vector_direction``."""
    if ord is None or ord == "fro":
        return _sgn(x, np.broadcast_to(ym, x.shape))
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        if ord == 2:  # the largest singular value (assumed simple)
            return u[..., :, :1] @ vh[..., :1, :]
        return u[..., :, -1:] @ vh[..., -1:, :]
    if ord in (1, -1, np.inf, -np.inf):
        r = np.abs(x)
        sums_axis = -2 if ord in (1, -1) else -1  # ord 1: column sums; inf: row sums
        sums = np.sum(r, axis=sums_axis, keepdims=True)
        return _sgn(x, r) * _split_ties(sums == ym, (-1,) if sums_axis == -2 else (-2,))
    refuse("numpy.linalg.norm", f"yuebing does not differentiate the matrix norm ord={ord!r}")


def norm_axes(nd: int, ord: Any, axis: Any) -> tuple[tuple, bool]:
    """The axes ``np.linalg.norm`` reduces over, and whether it takes a matrix norm of them."""
    if axis is None:
        axes = tuple(range(nd)) if ord is None or nd == 1 else (0, 1)
    else:
        axes = tuple(normalise_axes(axis, nd))
    return axes, len(axes) == 2 and not (axis is None and ord is None)


def ord_partial(x, ym, ord, axes, matrix):
    """``d norm / d ord`` (kept dims; plain NumPy, also differentiated by second order): for a
    vector norm of finite nonzero ``ord = p``, ``(y / p) sum q^p log q`` with ``q = |x| / y`` (zero
    entries add nothing, their limit for ``p > 0``; ``y = 0`` gives 0). ``ord = ±inf``, ``0`` and
    the matrix norms are discrete choices: 0 by definition."""
    if matrix or ord is None or isinstance(ord, str) or ord == 0 or np.isinf(ord):
        return np.zeros(np.shape(ym))
    p = float(ord)
    r = np.abs(x)
    inside = (r != 0) & (ym != 0)
    q = np.where(inside, r / np.where(ym != 0, ym, 1.0), 1.0)  # q = 1 elsewhere: log q = 0
    return ym / p * np.sum(q ** p * np.log(q), axis=axes, keepdims=True)


@linalg_rule(np.linalg.norm, diff=(0, 1))
def _norm(x, ord=None, axis=None, keepdims=False):
    y = np.linalg.norm(x, ord, axis, keepdims)
    x = np.asarray(x)
    nd = x.ndim
    axes, matrix = norm_axes(nd, ord, axis)
    ym = y if keepdims else np.expand_dims(y, axes)
    if matrix:
        moved = np.moveaxis(x, axes, (-2, -1))
        u = np.moveaxis(_matrix_direction(moved, np.moveaxis(np.asarray(ym), axes, (-2, -1)), ord), (-2, -1), axes)
    else:
        u = _vector_direction(x, ym, ord, axes)

    def jvp(dx: Any, d_ord: Any = None) -> Any:
        dy = None if dx is None else np.real(np.sum(conj(u) * dx, axis=axes, keepdims=keepdims))
        if d_ord is not None:
            dy = add(dy, np.reshape(ord_partial(x, ym, ord, axes, matrix), np.shape(y)) * d_ord)
        return dy

    def vjp(g: Any, need: tuple) -> tuple:
        gk = np.real(g if keepdims else np.expand_dims(g, axes))
        g_ord = float(np.sum(gk * ord_partial(x, ym, ord, axes, matrix))) if need[1] else None
        return (gk * u if need[0] else None), g_ord

    return y, jvp, vjp


# --------------------------------------------------------------------------------------------
# det, slogdet
# --------------------------------------------------------------------------------------------


def adjugate(a: np.ndarray, det: Any) -> np.ndarray:
    """adj(a) = det(a) a^-1, also for singular matrices (from the SVD a = U S V^H)."""
    try:
        return np.asarray(det)[..., None, None] * np.linalg.inv(a)
    except np.linalg.LinAlgError:
        u, s, vh = np.linalg.svd(a)
        n = s.shape[-1]
        others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
        phase = np.linalg.det(u) * np.linalg.det(vh)
        return phase[..., None, None] * (mH(vh) * others[..., None, :]) @ mH(u)


def det_parts(a: np.ndarray, y: Any) -> tuple[Callable, Callable]:
    """jvp and vjp of ``y = det(a)``: ``dy = tr(adj(a) da)``."""
    adj = adjugate(a, y)

    def jvp(da: Any) -> Any:
        return np.einsum("...ij,...ji->...", adj, da)

    def vjp(g: Any, need: tuple) -> tuple:
        return (np.asarray(g)[..., None, None] * mH(adj),)

    return jvp, vjp


@linalg_rule(np.linalg.det)
def _det(a):
    y = np.linalg.det(a)
    return (y, *det_parts(np.asarray(a), y))


@linalg_rule(np.linalg.slogdet)
def _slogdet(a):
    y = np.linalg.slogdet(a)
    sign = y[0]
    try:
        a_inv = np.linalg.inv(a)
    except np.linalg.LinAlgError:
        a_inv = None  # log|det| is not differentiable here: say so if a derivative is asked for
    complex_input = np.iscomplexobj(a)

    def inverse() -> np.ndarray:
        if a_inv is None:
            refuse("numpy.linalg.slogdet", "not differentiable at a singular matrix (log|det| = -inf)")
        return a_inv

    def jvp(da: Any) -> Any:
        t = np.einsum("...ij,...ji->...", inverse(), da)
        # real input: the sign is piecewise constant; complex: it turns with Im(t)
        return [sign * 1j * np.imag(t) if complex_input else None, np.real(t)]

    def vjp(g: list, need: tuple) -> tuple:
        g_sign, g_log = g
        w = np.asarray(0.0 if g_log is None else np.real(g_log), dtype=np.result_type(a, 1.0))
        if complex_input and g_sign is not None:
            w = w + 1j * np.real(np.conj(g_sign) * sign * 1j)
        return (w[..., None, None] * mH(inverse()),)

    return y, jvp, vjp


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------
#
# The vjp functions below are differentiated by the forward transform (plain NumPy: no
# try/except, no ``out=``/``where=``). Each computes exactly the cotangents of the reverse rule
# above it. A tuple output's cotangent ``g`` is a tuple (a ``SlogdetResult``, ``EighResult``...)
# whose entries are ``NoRData`` for number outputs nobody used: ``cotangent_entry`` reads them.


def _safe_div(x: Any, r: Any) -> Any:
    """x / r, 0 where r is 0 (``_sgn`` without ``out=``/``where=``)."""
    nonzero = r != 0
    return np.where(nonzero, x / np.where(nonzero, r, 1.0), 0.0)


def _cofactor_adjugate(a):
    """adj(a) from the cofactors (a polynomial in ``a``: smooth at singular matrices too)."""
    n = a.shape[-1]
    j = np.arange(n - 1)[None, :]
    keep = j + (j >= np.arange(n)[:, None])  # keep[i]: the indices other than i
    minors = a[..., keep[:, None, :, None], keep[None, :, None, :]]  # (..., n, n, n-1, n-1)
    signs = 1.0 - 2.0 * ((np.arange(n)[:, None] + np.arange(n)[None, :]) % 2)
    return mT(signs * np.linalg.det(minors))


def _det_vjp(g, y, a):
    a = np.asarray(a)
    if np.all(np.asarray(y) != 0):
        adj = np.asarray(y)[..., None, None] * np.linalg.inv(a)
    else:  # the reverse rule's SVD adjugate has no forward rule at a singular matrix
        adj = _cofactor_adjugate(a)
    return (np.asarray(g)[..., None, None] * mH(adj),)


def _slogdet_vjp(g, y, a):
    g_sign, g_log = cotangent_entry(g, 0), cotangent_entry(g, 1)
    w = 0.0 if g_log is None else np.real(g_log)
    if np.iscomplexobj(a) and g_sign is not None:
        w = w + 1j * np.real(np.conj(g_sign) * y[0] * 1j)
    return (np.asarray(w)[..., None, None] * mH(np.linalg.inv(a)),)


def _vector_direction_vjp(x, ym, ord, axes):
    """``_vector_direction`` in plain NumPy."""
    r = np.abs(x)
    if ord is None or ord == 2:
        return _safe_div(x, np.broadcast_to(ym, x.shape))
    if ord == 1:
        return _safe_div(x, r)
    if ord == np.inf or ord == -np.inf:
        ties = r == ym
        return _safe_div(x, r) * (ties / np.sum(ties, axis=axes, keepdims=True))
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, 1.0))
    p = float(ord)
    ratio = np.where((ym != 0) & (r != 0), r / np.where(ym != 0, ym, 1.0), 0.0)
    scale = np.where(ratio != 0, np.where(ratio != 0, ratio, 1.0) ** (p - 1), 0.0)
    return _safe_div(x, r) * scale


def _matrix_direction_vjp(x, ym, ord):
    """``_matrix_direction`` in plain NumPy."""
    if ord is None or ord == "fro":
        return _safe_div(x, np.broadcast_to(ym, x.shape))
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        if ord == 2:
            return u[..., :, :1] @ vh[..., :1, :]
        return u[..., :, -1:] @ vh[..., -1:, :]
    r = np.abs(x)
    sums_axis = -2 if ord in (1, -1) else -1
    ties = np.sum(r, axis=sums_axis, keepdims=True) == ym
    return _safe_div(x, r) * (ties / np.sum(ties, axis=(-1,) if sums_axis == -2 else (-2,), keepdims=True))


def _norm_vjp(g, y, x, ord=None, axis=None, keepdims=False):
    x = np.asarray(x)
    nd = x.ndim
    axes, matrix = norm_axes(nd, ord, axis)
    ym = y if keepdims else np.expand_dims(y, axes)
    if matrix:
        moved = np.moveaxis(x, axes, (-2, -1))
        u = np.moveaxis(_matrix_direction_vjp(moved, np.moveaxis(np.asarray(ym), axes, (-2, -1)), ord),
                        (-2, -1), axes)
    else:
        u = _vector_direction_vjp(x, ym, ord, axes)
    gk = np.real(g if keepdims else np.expand_dims(g, axes))
    g_ord = None if ord is None or isinstance(ord, (int, str)) else np.sum(gk * ord_partial(x, ym, ord, axes, matrix))
    return gk * u, g_ord, None, None


with_vjp(np.linalg.norm, _norm_vjp)
with_vjp(np.linalg.det, _det_vjp)
with_vjp(np.linalg.slogdet, _slogdet_vjp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


f32 = np.float32

CASES = [
    # norm
    Case(np.linalg.norm, randn(5)),
    Case(np.linalg.norm, randn(3, 4)),
    Case(np.linalg.norm, randn(2, 3, 4)),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 1}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": np.inf}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": -np.inf}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 3}),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 0.5}),
    # a float ord passed positionally is perturbed by check_rule: d norm / d ord is checked too
    Case(np.linalg.norm, randn(5), 3.5, name="numpy.linalg.norm(x, ord=3.5)"),
    Case(np.linalg.norm, randn(3, 4), 1.5, 1, True, name="numpy.linalg.norm(x, ord=1.5, axis=1, keepdims)"),
    Case(np.linalg.norm, np.array([0.0, 1.5, -2.0]), 3.5, name="numpy.linalg.norm(ord=3.5) with a zero entry"),
    Case(np.linalg.norm, randn(4), -1.5, name="numpy.linalg.norm(x, ord=-1.5)"),
    Case(np.linalg.norm, randc(4), 2.5, name="numpy.linalg.norm(complex, ord=2.5)"),
    Case(np.linalg.norm, randn(5), kwargs={"ord": 0}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"axis": 1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"axis": 0, "keepdims": True}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"axis": -1, "ord": 1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": "fro"}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": "nuc"}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": 2}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": -2}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": 1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": -1}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": np.inf}),
    Case(np.linalg.norm, randn(3, 4), kwargs={"ord": -np.inf}),
    Case(np.linalg.norm, randn(2, 3, 4), kwargs={"axis": (0, 2), "ord": "fro", "keepdims": True}),
    Case(np.linalg.norm, randn(2, 3, 4), kwargs={"axis": (2, 1), "ord": "nuc"}),
    Case(np.linalg.norm, randn(4, dtype=f32)),
    Case(np.linalg.norm, randc(4)),
    Case(np.linalg.norm, randc(4), kwargs={"ord": 1}),
    Case(np.linalg.norm, randc(3, 3), kwargs={"ord": "nuc"}),
    Case(np.linalg.norm, randn()),
    Case(np.linalg.norm, np.zeros(3), name="norm(zeros(3)): gradient 0 by convention"),
    Case(np.linalg.norm, np.zeros((2, 3)), kwargs={"axis": 1, "ord": 3}, name="norm(zeros, ord=3): gradient 0"),
    Case(np.linalg.norm, np.array([0.0, 1.5, -2.0]), kwargs={"ord": 1}, name="norm(ord=1) with a zero entry"),
    # a two-way tie: the central difference is the mean of the one-sided slopes, i.e. the even split
    Case(np.linalg.norm, np.array([2.0, -2.0, 1.0]), kwargs={"ord": np.inf}, name="norm(ord=inf) at a tie"),
    # det, slogdet
    Case(np.linalg.det, well_conditioned(3)),
    Case(np.linalg.det, well_conditioned(2, 3)),
    Case(np.linalg.det, well_conditioned(3, dtype=f32)),
    Case(np.linalg.det, well_conditioned(3, complex_=True)),
    Case(np.linalg.det, well_conditioned(1)),
    Case(np.linalg.det, np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [0.5, 1.0, 2.0]]), name="det at a singular matrix"),
    Case(np.linalg.det, np.stack([np.ones((2, 2)), well_conditioned(2)]), name="det of a stack with a singular matrix"),
    Case(np.linalg.slogdet, well_conditioned(3)),
    Case(np.linalg.slogdet, -well_conditioned(3, 2)),
    Case(np.linalg.slogdet, well_conditioned(3, complex_=True)),
]
