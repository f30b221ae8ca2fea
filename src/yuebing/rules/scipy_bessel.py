"""``scipy.special`` Bessel functions, differentiated in their argument (reverse, forward and
second and third order): ``jv``/``jn``, ``yv``, ``iv``, ``ive``, ``kv``, ``kve``, ``yn``, ``j0``, ``j1``,
``y0``, ``y1``, ``i0``, ``i0e``, ``i1``, ``i1e``, ``k0``, ``k0e``, ``k1``, ``k1e`` and the
spherical ``spherical_jn``, ``spherical_yn``, ``spherical_in``, ``spherical_kn`` (also with
``derivative=True``). Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

Derivatives come from the recurrences, which hold at every order and are regular at z = 0:
``J_v' = (J_{v-1} - J_{v+1})/2`` (``Y`` the same), ``I_v' = (I_{v-1} + I_{v+1})/2``,
``K_v' = -(K_{v-1} + K_{v+1})/2``; the exponentially scaled ``ive = iv exp(-|z|)`` and
``kve = kv exp(z)`` add ``-sign(z) ive`` and ``kve``. ``j1' = (j0 - jv(2, .))/2`` and so on, so
``i1'(0) = j1'(0) = 1/2`` with no special case. ``ive``, ``i0e`` and ``i1e`` are not holomorphic
(``exp(-|Re z|)``): complex arguments are refused; the others take complex arguments (the conjugate
partial, as every holomorphic rule). Spherical functions: ``f_n' = (n f_{n-1} - (n+1) f_{n+1}) /
(2n+1)`` for ``j``/``y`` (``+`` for ``i``, and ``-(n k_{n-1} + (n+1) k_{n+1}) / (2n+1)`` for ``k``),
applied to ``f'`` for ``derivative=True`` (its own derivative, and the second derivative of
``f``). Their ``n`` is an integer (SciPy truncates it): no derivative.

The order ``v`` (``n`` of ``yn``) has no derivative formula: forward mode and second order raise
``RuleArgumentError`` when it has a nonzero tangent; reverse mode, which cannot tell a constant
float from a differentiated one, gives it a NaN cotangent (``scipy_special``'s module docstring).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoTangent
from .cases import Case, randc, randn, randpos, randu
from .declare import elementwise
from .linalg import linalg_rule
from .scipy_special import elementwise_fixed
from .second_order import jvp_defined_by, with_vjp

try:
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is optional
    sp = None

_ORDER = "no closed form for the derivative in the order"


# --------------------------------------------------------------------------------------------
# Bessel functions of real order
# --------------------------------------------------------------------------------------------


def _register_bessel() -> None:
    vz = ("v", "z")
    order = {0: _ORDER}
    elementwise_fixed(sp.jv, vz, order, None, lambda v, z, y: 0.5 * (sp.jv(v - 1, z) - sp.jv(v + 1, z)))
    elementwise_fixed(sp.yv, vz, order, None, lambda v, z, y: 0.5 * (sp.yv(v - 1, z) - sp.yv(v + 1, z)))
    elementwise_fixed(sp.iv, vz, order, None, lambda v, z, y: 0.5 * (sp.iv(v - 1, z) + sp.iv(v + 1, z)))
    elementwise_fixed(sp.kv, vz, order, None, lambda v, z, y: -0.5 * (sp.kv(v - 1, z) + sp.kv(v + 1, z)))
    elementwise_fixed(sp.ive, vz, order, None,
                      lambda v, z, y: 0.5 * (sp.ive(v - 1, z) + sp.ive(v + 1, z)) - np.sign(z) * y, real=True)
    elementwise_fixed(sp.kve, vz, order, None, lambda v, z, y: y - 0.5 * (sp.kve(v - 1, z) + sp.kve(v + 1, z)))
    elementwise_fixed(sp.yn, ("n", "x"), order, None, lambda n, x, y: 0.5 * (sp.yn(n - 1, x) - sp.yn(n + 1, x)))
    # sp.jn is sp.jv
    elementwise(sp.j0, lambda x, y: -sp.j1(x))
    elementwise(sp.j1, lambda x, y: 0.5 * (sp.j0(x) - sp.jv(2, x)))
    elementwise(sp.y0, lambda x, y: -sp.y1(x))
    elementwise(sp.y1, lambda x, y: 0.5 * (sp.y0(x) - sp.yn(2, x)))
    elementwise(sp.i0, lambda x, y: sp.i1(x))
    elementwise(sp.i1, lambda x, y: 0.5 * (sp.i0(x) + sp.iv(2, x)))
    elementwise(sp.k0, lambda x, y: -sp.k1(x))
    elementwise(sp.k1, lambda x, y: -0.5 * (sp.k0(x) + sp.kv(2, x)))
    # exp(-|x|) scaling: real arguments only (these ufuncs take no complex input)
    elementwise(sp.i0e, lambda x, y: sp.i1e(x) - np.sign(x) * y)
    elementwise(sp.i1e, lambda x, y: 0.5 * (sp.i0e(x) + sp.ive(2, x)) - np.sign(x) * y)
    elementwise(sp.k0e, lambda x, y: y - sp.k1e(x))
    elementwise(sp.k1e, lambda x, y: y - 0.5 * (sp.k0e(x) + sp.kve(2, x)))


# --------------------------------------------------------------------------------------------
# Spherical Bessel functions (Python functions of SciPy with a derivative= flag)
# --------------------------------------------------------------------------------------------

#: (function, sign of the (n+1) term, overall sign) of f_n' = s (n f_{n-1} + t (n+1) f_{n+1}) / (2n+1)
_SPHERICAL = {}


def _spherical_slope(f: Any, n: Any, z: Any, derivative: Any) -> Any:
    """``d/dz f(n, z, derivative)``: ``f(n, z, True)``, or for ``derivative=True`` the recurrence
    applied to the derivatives (regular at z = 0; the ``n - 1`` term has weight 0 at n = 0)."""
    if not derivative:
        return f(n, z, derivative=True)
    t, s = _SPHERICAL[f]
    n = np.asarray(n)
    lower = f(np.maximum(n - 1, 0), z, derivative=True)
    upper = f(n + 1, z, derivative=True)
    return s * (n * lower + t * (n + 1) * upper) / (2 * n + 1)


def _spherical_vjp(f: Any) -> Any:
    def vjp(g, y, n, z, derivative=False):
        return None, g * np.conj(_spherical_slope(f, n, z, derivative))

    return vjp


def _spherical_pair(f: Any, n: Any, z: Any, z_t: Any, derivative: Any) -> tuple:
    """Third order: the value and tangent of ``f(n, z, derivative)`` (its cotangent map calls
    ``f`` again)."""
    y = f(n, z, derivative)
    return y, np.zeros_like(y) if z_t is NoTangent else z_t * _spherical_slope(f, n, z, derivative)


def _spherical_jn_jvp(n, n_t, z, z_t, derivative=False, derivative_t=NoTangent):
    return _spherical_pair(sp.spherical_jn, n, z, z_t, derivative)


def _spherical_yn_jvp(n, n_t, z, z_t, derivative=False, derivative_t=NoTangent):
    return _spherical_pair(sp.spherical_yn, n, z, z_t, derivative)


def _spherical_in_jvp(n, n_t, z, z_t, derivative=False, derivative_t=NoTangent):
    return _spherical_pair(sp.spherical_in, n, z, z_t, derivative)


def _spherical_kn_jvp(n, n_t, z, z_t, derivative=False, derivative_t=NoTangent):
    return _spherical_pair(sp.spherical_kn, n, z, z_t, derivative)


def _register_spherical(f: Any, t: float, s: float, jvp: Any) -> None:
    _SPHERICAL[f] = (t, s)
    vjp = _spherical_vjp(f)

    @linalg_rule(f, diff=(1,), vjp=vjp)
    def _spherical(n, z, derivative=False):
        y = f(n, z, derivative)
        return y, lambda dz: dz * _spherical_slope(f, n, z, derivative)

    with_vjp(f, vjp)
    jvp_defined_by(f, jvp)


if sp is not None:
    _register_bessel()
    _register_spherical(sp.spherical_jn, -1.0, 1.0, _spherical_jn_jvp)
    _register_spherical(sp.spherical_yn, -1.0, 1.0, _spherical_yn_jvp)
    _register_spherical(sp.spherical_in, 1.0, 1.0, _spherical_in_jvp)
    _register_spherical(sp.spherical_kn, 1.0, -1.0, _spherical_kn_jvp)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _cases() -> list:
    orders = np.array([0, 1, 2])
    return [
        Case(sp.jv, orders, randpos(3) * 3),
        Case(sp.jv, 1, randn(2, 3) * 2, name="jv(1, negative and positive z)"),
        Case(sp.jv, 3, randc(3) * 2),
        Case(sp.jv, np.array([[0], [2]]), randpos(3), name="jv(broadcast orders)"),
        Case(sp.jv, 0, randn(3, dtype=np.float32)),
        Case(sp.yv, orders, randpos(3) * 3),
        Case(sp.yv, 2, randc(2) + 2),
        Case(sp.iv, orders, randn(3) * 2),
        Case(sp.iv, 1, randc(3)),
        Case(sp.kv, orders, randpos(3) * 2),
        Case(sp.kv, 1, randc(3) + 2),
        Case(sp.ive, orders, randn(3) * 3),
        Case(sp.kve, orders, randpos(3) * 3),
        Case(sp.kve, 2, randc(2) + 2),
        Case(sp.yn, orders, randpos(3) * 3),
        Case(sp.jv, 1, 0.0, name="jv(1, 0)"),
        Case(sp.j0, randn(4) * 3),
        Case(sp.j1, randn(4) * 3),
        Case(sp.j1, np.array([0.0, 1e-3, -2.0]), name="j1 at 0: 1/2"),
        Case(sp.y0, randpos(4) * 3),
        Case(sp.y1, randpos(4) * 3),
        Case(sp.i0, randn(4)),
        Case(sp.i1, randn(4)),
        Case(sp.i1, 0.0, name="i1'(0) = 1/2"),
        Case(sp.i0e, randn(4) * 3),
        Case(sp.i1e, randn(4) * 3),
        Case(sp.k0, randpos(4) * 2),
        Case(sp.k1, randpos(4) * 2),
        Case(sp.k0e, randpos(4) * 2),
        Case(sp.k1e, randpos(4) * 2),
        Case(sp.k1e, randpos()),
        Case(sp.spherical_jn, orders, randpos(3) * 3),
        Case(sp.spherical_jn, 2, randn(4) * 3, kwargs={"derivative": True}),
        Case(sp.spherical_jn, orders, np.array([0.0, 0.0, 0.0]), name="spherical_jn at 0"),
        Case(sp.spherical_jn, 1, randc(3)),
        Case(sp.spherical_yn, orders, randpos(3) * 3),
        Case(sp.spherical_yn, 1, randpos(3) * 3, kwargs={"derivative": True}),
        Case(sp.spherical_in, orders, randn(3) * 2),
        Case(sp.spherical_in, 0, randn(3) * 2, kwargs={"derivative": True}),
        Case(sp.spherical_kn, orders, randpos(3) * 2),
        Case(sp.spherical_kn, 3, randu(3, low=1.0, high=3.0), kwargs={"derivative": True}),
    ]


CASES = _cases() if sp is not None else []
