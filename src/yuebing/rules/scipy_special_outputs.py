"""``scipy.special``'s functions of several outputs (``fresnel``, ``airy``, ``sici``, ``shichi``) and
the Gauss hypergeometric function ``hyp2f1``, in reverse, forward, second and third order.
Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

A ufunc of several outputs is declared ``defined_as`` the tuple of its outputs, each output a
one-output function of this module declared with its partial derivative (``declare.elementwise``),
so every mode differentiates it like user code calling those, and second and third order
differentiate the partials, which are NumPy and SciPy code again:

* ``fresnel(z) = (S, C)``: ``S' = sin(pi z^2/2)``, ``C' = cos(pi z^2/2)``;
* ``airy(z) = (Ai, Ai', Bi, Bi')``: ``Ai'' = z Ai`` (likewise ``Bi``);
* ``sici(x) = (Si, Ci)``: ``sin x / x`` (1 at 0), ``cos x / x``;
* ``shichi(x) = (Shi, Chi)``: ``sinh x / x`` (1 at 0), ``cosh x / x``.

``sin x / x`` and ``sinh x / x`` are their Taylor polynomials near 0, so their derivatives there
(second and third order) are right too. Each output is computed by its own call of the SciPy
ufunc (a call of ``airy`` costs four). Complex arguments are differentiated as holomorphic
functions. ``out=`` and the other ufunc keywords are refused (assign the results instead).

``hyp2f1(a, b, c, z)`` in ``z``: ``(ab/c) 2F1(a+1, b+1; c+1; z)``. ``a``, ``b``, ``c`` have no
derivative (``scipy_special.elementwise_fixed``): forward mode and second order refuse a nonzero
tangent there, reverse mode gives them a NaN cotangent.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import array_like
from .cases import Case, randc, randn, randpos, randu
from .core import RuleArgumentError
from .declare import elementwise, nondifferentiable
from .second_order import defined_as

try:
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is optional
    sp = None

if sp is not None:
    from .scipy_special import elementwise_fixed

#: below this |x|, sin(x)/x and sinh(x)/x are their Taylor polynomials (error below 1e-19)
_SMALL = 1e-2


def _no_keywords(name: str, kwargs: dict) -> None:
    if kwargs:
        raise RuleArgumentError(f"scipy.special.{name}: yuebing does not differentiate it with {sorted(kwargs)}; "
                                "call it without and assign the results")


nondifferentiable(_no_keywords)


def _sin_ratio(x: Any, hyperbolic: bool) -> Any:
    """``sin(x)/x`` (``sinh(x)/x`` when ``hyperbolic``), 1 at 0. Near 0 the Taylor polynomial
    ``1 -+ x^2/6 + x^4/120``: its derivatives at 0 are the function's (second, third order)."""
    x = np.asarray(x)
    sign = 1.0 if hyperbolic else -1.0
    small = np.abs(x) < _SMALL
    safe = np.where(small, 1.0, x)
    square = x * x
    near_zero = 1.0 + sign * square / 6.0 + square * square / 120.0
    far = (np.sinh(safe) if hyperbolic else np.sin(safe)) / safe
    return np.where(small, near_zero, far)



def _over(numerator: Any, x: Any) -> Any:
    """``numerator / x`` as arrays: infinite at ``x = 0`` (``Ci'(0)``), where a Python float's
    division would raise."""
    return np.asarray(numerator) / np.asarray(x)


# One function per output. ``z`` is the argument; each partial receives it and the output.

def fresnel_s(z: Any) -> Any:
    """``scipy.special.fresnel(z)[0]``."""
    return sp.fresnel(z)[0]


def fresnel_c(z: Any) -> Any:
    """``scipy.special.fresnel(z)[1]``."""
    return sp.fresnel(z)[1]


def airy_ai(z: Any) -> Any:
    """``scipy.special.airy(z)[0]``."""
    return sp.airy(z)[0]


def airy_aip(z: Any) -> Any:
    """``scipy.special.airy(z)[1]``."""
    return sp.airy(z)[1]


def airy_bi(z: Any) -> Any:
    """``scipy.special.airy(z)[2]``."""
    return sp.airy(z)[2]


def airy_bip(z: Any) -> Any:
    """``scipy.special.airy(z)[3]``."""
    return sp.airy(z)[3]


def sici_si(x: Any) -> Any:
    """``scipy.special.sici(x)[0]``."""
    return sp.sici(x)[0]


def sici_ci(x: Any) -> Any:
    """``scipy.special.sici(x)[1]``."""
    return sp.sici(x)[1]


def shichi_shi(x: Any) -> Any:
    """``scipy.special.shichi(x)[0]``."""
    return sp.shichi(x)[0]


def shichi_chi(x: Any) -> Any:
    """``scipy.special.shichi(x)[1]``."""
    return sp.shichi(x)[1]


def _fresnel(z, **kwargs):
    _no_keywords("fresnel", kwargs)
    return fresnel_s(z), fresnel_c(z)


def _airy(z, **kwargs):
    _no_keywords("airy", kwargs)
    return airy_ai(z), airy_aip(z), airy_bi(z), airy_bip(z)


def _sici(x, **kwargs):
    _no_keywords("sici", kwargs)
    return sici_si(x), sici_ci(x)


def _shichi(x, **kwargs):
    _no_keywords("shichi", kwargs)
    return shichi_shi(x), shichi_chi(x)


def _hyp2f1_dz(a: Any, b: Any, c: Any, z: Any, y: Any) -> Any:
    return a * b / c * sp.hyp2f1(a + 1.0, b + 1.0, c + 1.0, z)


if sp is not None:
    elementwise(fresnel_s, lambda z, y: np.sin(0.5 * np.pi * z * z))
    elementwise(fresnel_c, lambda z, y: np.cos(0.5 * np.pi * z * z))
    elementwise(airy_ai, lambda z, y: airy_aip(z))
    elementwise(airy_aip, lambda z, y: z * airy_ai(z))
    elementwise(airy_bi, lambda z, y: airy_bip(z))
    elementwise(airy_bip, lambda z, y: z * airy_bi(z))
    elementwise(sici_si, lambda x, y: _sin_ratio(x, False))
    elementwise(sici_ci, lambda x, y: _over(np.cos(x), x))
    elementwise(shichi_shi, lambda x, y: _sin_ratio(x, True))
    elementwise(shichi_chi, lambda x, y: _over(np.cosh(x), x))
    array_like.CONVERTS_ARRAY_LIKES.update((fresnel_s, fresnel_c, airy_ai, airy_aip, airy_bi, airy_bip, sici_si,
                                            sici_ci, shichi_shi, shichi_chi))
    for _target, _definition in ((sp.fresnel, _fresnel), (sp.airy, _airy), (sp.sici, _sici), (sp.shichi, _shichi)):
        defined_as(_target, _definition)
    elementwise_fixed(sp.hyp2f1, ("a", "b", "c", "z"), {0: "a parameter", 1: "a parameter", 2: "a parameter"},
                      None, None, None, _hyp2f1_dz)


def _cases() -> list:
    if sp is None:
        return []
    x = randu(4, low=-2.5, high=2.5)
    return [
        Case(sp.fresnel, x), Case(sp.fresnel, randc(3), name="fresnel(complex)"),
        Case(sp.airy, x), Case(sp.airy, randc(3), name="airy(complex)"),
        # near 0: the Taylor branch of Si and Shi (Ci and Chi have a logarithm there, whose third
        # derivatives central differences cannot resolve)
        Case(sp.sici, randpos(4) * 2.0), Case(sici_si, np.array([0.003, 0.004, -0.5, 3.0]), name="sici Si(near 0)"),
        Case(sp.shichi, randpos(4) * 2.0), Case(shichi_shi, np.array([0.002, -0.004, 0.5, -2.0]), name="shichi Shi(near 0)"),
        # integer parameters: check_rule perturbs a float one (tests/test_scipy_special_outputs.py)
        Case(sp.hyp2f1, 1, 2, 3, randu(4, low=-0.9, high=0.9)),
        Case(sp.hyp2f1, np.array([1, 2, 0, 3]), 1, 4, randu(4, low=-2.0, high=0.6), name="hyp2f1(orders, z < 1)"),
        Case(sp.hyp2f1, 1, 1, 2, randc(3) * 0.4, name="hyp2f1(complex z)"),
        Case(fresnel_s, randn(3)), Case(airy_bip, randn(3)), Case(sici_si, np.array([0.0, 0.005, 2.0])),
        Case(shichi_shi, np.array([0.0, -0.005, 1.5])),
    ]


CASES = _cases()
