"""Determinants and norms: ``np.linalg.det``, ``slogdet`` and ``norm``.

Conventions and limits (everything else raises ``RuleArgumentError``):

* ``norm``: the gradient at the zero vector (and at zero entries for ``ord=1`` or ``p < 1``) is 0;
  ``ord=inf``/``-inf`` and the induced matrix norms split ties evenly; ``ord=0`` has zero derivative.
  A float ``ord = p`` of a vector norm is differentiated (``d/dp (sum |x_i|^p)^(1/p)``); in
  ``ord=inf``/``-inf``/``0`` and the matrix norms ``ord`` picks a different function (a discrete
  choice), so its derivative is 0 by definition (the rules return that zero explicitly).
* ``det``: also at singular matrices (the adjugate from the cofactors, or for large matrices the
  SVD). ``slogdet``: nonsingular matrices; its sign has zero derivative for real input (it is
  piecewise constant) and turns with ``Im tr(a^-1 da)`` for complex input.

Each primitive's cotangent map is one plain-NumPy function ``_f_vjp(g, y, *args)`` (no
try/except, no ``out=``/``where=``: the forward transform differentiates it for second order,
``with_vjp`` at the end of the file), which the reverse rule calls. The forward rules are their
own formulas (``jvp``) built from the same pieces (``norm_direction``, ``adjugate``).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..cases import Case, randc, randn
from ..second_order import with_vjp
from . import direct_second_order
from .common import add, conj, cotangent_entry, linalg_rule, mH, mT, normalise_axes, refuse, well_conditioned

# --------------------------------------------------------------------------------------------
# np.linalg.norm
# --------------------------------------------------------------------------------------------


def _safe_div(x: Any, r: Any) -> Any:
    """x / r, 0 where r is 0."""
    nonzero = r != 0
    return np.where(nonzero, x / np.where(nonzero, r, 1.0), 0.0)


def _vector_direction(x, ym, ord, axes):
    """``u`` with ``d norm = Re sum(conj(u) * dx)`` over ``axes`` (``ym``: the norm, kept dims)."""
    if ord is None or ord == 2:
        return _safe_div(x, ym)  # ym unbroadcast: one pass over x
    r = np.abs(x)
    if ord == 1:
        return _safe_div(x, r)
    if ord == np.inf or ord == -np.inf:
        ties = r == ym  # split evenly
        return _safe_div(x, r) * (ties / np.sum(ties, axis=axes, keepdims=True))
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, 1.0))
    p = float(ord)
    # d/d|x_i| (sum |x|^p)^(1/p) = (|x_i| / y)^(p-1); 0 at x_i = 0 and at y = 0 by convention
    ratio = np.where((ym != 0) & (r != 0), r / np.where(ym != 0, ym, 1.0), 0.0)
    scale = np.where(ratio != 0, np.where(ratio != 0, ratio, 1.0) ** (p - 1), 0.0)
    return _safe_div(x, r) * scale


def _matrix_direction(x, ym, ord):
    """Matrix norms over the last two axes: ``u`` as in ``_vector_direction``."""
    if ord is None or ord == "fro":
        return _safe_div(x, ym)
    if ord in ("nuc", 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        if ord == "nuc":
            return u @ vh
        if ord == 2:  # the largest singular value (assumed simple)
            return u[..., :, :1] @ vh[..., :1, :]
        return u[..., :, -1:] @ vh[..., -1:, :]
    # ord 1, -1: column sums; inf, -inf: row sums (np.linalg.norm refuses every other ord)
    r = np.abs(x)
    sums_axis = -2 if ord in (1, -1) else -1
    ties = np.sum(r, axis=sums_axis, keepdims=True) == ym
    return _safe_div(x, r) * (ties / np.sum(ties, axis=(-1,) if sums_axis == -2 else (-2,), keepdims=True))


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


def norm_direction(x, ym, ord, axes, matrix):
    """``u`` with ``d norm = Re sum(conj(u) * dx)`` over ``axes`` (``ym``: the norm, kept dims)."""
    if not matrix:
        return _vector_direction(x, ym, ord, axes)
    moved = np.moveaxis(x, axes, (-2, -1))
    return np.moveaxis(_matrix_direction(moved, np.moveaxis(np.asarray(ym), axes, (-2, -1)), ord), (-2, -1), axes)


def _norm_vjp(g, y, x, ord=None, axis=None, keepdims=False):
    x = np.asarray(x)
    axes, matrix = norm_axes(x.ndim, ord, axis)
    ym = y if keepdims else np.expand_dims(y, axes)
    gk = np.real(g if keepdims else np.expand_dims(g, axes))
    g_ord = None if ord is None or isinstance(ord, (int, str)) else np.sum(gk * ord_partial(x, ym, ord, axes, matrix))
    return gk * norm_direction(x, ym, ord, axes, matrix), g_ord, None, None


@linalg_rule(np.linalg.norm, diff=(0, 1), vjp=_norm_vjp)
def _norm(x, ord=None, axis=None, keepdims=False):
    y = np.linalg.norm(x, ord, axis, keepdims)
    x = np.asarray(x)
    axes, matrix = norm_axes(x.ndim, ord, axis)
    ym = y if keepdims else np.expand_dims(y, axes)

    def jvp(dx: Any, d_ord: Any = None) -> Any:
        dy = None
        if dx is not None:
            u = norm_direction(x, ym, ord, axes, matrix)
            dy = np.real(np.sum(conj(u) * dx, axis=axes, keepdims=keepdims))
        if d_ord is not None:
            dy = add(dy, np.reshape(ord_partial(x, ym, ord, axes, matrix), np.shape(y)) * d_ord)
        return dy

    return y, jvp


# --------------------------------------------------------------------------------------------
# det, slogdet
# --------------------------------------------------------------------------------------------

#: The largest matrices whose adjugate at a singular matrix comes from the cofactors (n^4 numbers);
#: larger ones take the SVD.
_COFACTOR_LIMIT = 32


def _cofactor_adjugate(a):
    """adj(a) from the cofactors (a polynomial in ``a``: smooth at singular matrices too)."""
    n = a.shape[-1]
    j = np.arange(n - 1)[None, :]
    keep = j + (j >= np.arange(n)[:, None])  # keep[i]: the indices other than i
    minors = a[..., keep[:, None, :, None], keep[None, :, None, :]]  # (..., n, n, n-1, n-1)
    signs = 1.0 - 2.0 * ((np.arange(n)[:, None] + np.arange(n)[None, :]) % 2)
    return mT(signs * np.linalg.det(minors))


def _svd_adjugate(a):
    """adj(a) from the SVD ``a = U S V^H``: ``det(U) det(V^H) V diag(prod_(j != i) s_j) U^H``."""
    u, s, vh = np.linalg.svd(a)
    n = s.shape[-1]
    others = np.stack([np.prod(np.delete(s, i, axis=-1), axis=-1) for i in range(n)], axis=-1)
    phase = np.linalg.det(u) * np.linalg.det(vh)
    return phase[..., None, None] * (mH(vh) * others[..., None, :]) @ mH(u)


def adjugate(a, det):
    """adj(a) = det(a) a^-1; where ``det`` is 0 (at any matrix of a stack), from the cofactors,
    which are polynomials in ``a`` and so second order differentiates them there too, or for a
    matrix larger than ``_COFACTOR_LIMIT`` from the SVD (first order only: the SVD's derivative
    needs distinct singular values)."""
    det = np.asarray(det)
    if np.all(det != 0):
        return det[..., None, None] * np.linalg.inv(a)
    if a.shape[-1] <= _COFACTOR_LIMIT:
        return _cofactor_adjugate(a)
    return _svd_adjugate(a)


def _det_vjp(g, y, a):
    return (np.asarray(g)[..., None, None] * mH(adjugate(np.asarray(a), y)),)


def det_parts(a: np.ndarray, y: Any) -> tuple[Callable, Callable]:
    """jvp and vjp of ``y = det(a)``: ``dy = tr(adj(a) da)``."""

    def jvp(da: Any) -> Any:
        return np.einsum("...ij,...ji->...", adjugate(a, y), da)

    def vjp(g: Any, need: tuple) -> tuple:
        return _det_vjp(g, y, a)

    return jvp, vjp


@linalg_rule(np.linalg.det, vjp=_det_vjp)
def _det(a):
    y = np.linalg.det(a)
    return y, det_parts(np.asarray(a), y)[0]


def _refuse_singular(sign):
    """slogdet has no derivative where the sign is 0 (log|det| = -inf)."""
    if np.any(sign == 0):
        refuse("numpy.linalg.slogdet", "not differentiable at a singular matrix (log|det| = -inf)")


def _slogdet_vjp(g, y, a):
    _refuse_singular(y[0])
    g_sign, g_log = cotangent_entry(g, 0), cotangent_entry(g, 1)
    w = 0.0 if g_log is None else np.real(g_log)
    if np.iscomplexobj(a) and g_sign is not None:
        w = w + 1j * np.real(np.conj(g_sign) * y[0] * 1j)
    return (np.asarray(w)[..., None, None] * mH(np.linalg.inv(a)),)


@linalg_rule(np.linalg.slogdet, vjp=_slogdet_vjp)
def _slogdet(a):
    y = np.linalg.slogdet(a)
    sign = y[0]

    def jvp(da: Any) -> Any:
        _refuse_singular(sign)
        t = np.einsum("...ij,...ji->...", np.linalg.inv(a), da)
        # real input: the sign is piecewise constant; complex: it turns with Im(t)
        return [sign * 1j * np.imag(t) if np.iscomplexobj(a) else None, np.real(t)]

    return y, jvp


# --------------------------------------------------------------------------------------------
# Second order: each primitive's cotangent map above, differentiated by the forward transform. A
# tuple output's cotangent ``g`` is then a tuple (a ``SlogdetResult``) whose entries are
# ``NoRData`` for outputs nobody used: ``cotangent_entry`` reads them.
# --------------------------------------------------------------------------------------------

with_vjp(np.linalg.norm, _norm_vjp)
with_vjp(np.linalg.det, _det_vjp, direct=direct_second_order.numpy_det)
with_vjp(np.linalg.slogdet, _slogdet_vjp, direct=direct_second_order.numpy_slogdet)


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
