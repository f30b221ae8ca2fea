"""``scipy.special``'s exponential integrals, Struve functions, Owen's T and the loss and
transform functions a fit uses, in reverse, forward and second order (declared with their
partial derivatives, ``declare.elementwise``; the partials are NumPy and SciPy code that second
order differentiates). Nothing is registered, and ``CASES`` is empty, when SciPy is not installed.

* ``exp1`` (``-exp(-x)/x``), ``expi`` (``exp(x)/x``), ``expn(n, x)`` (``-E_{n-1}(x)``; for
  ``n = 0``, ``-(x + 1) exp(-x)/x^2``), in x; ``n`` has no derivative (an integer order);
* ``ellipkm1(p) = K(1 - p)``: ``-(E(1 - p) - p K(1 - p)) / (2 p (1 - p))``;
* ``struve(v, x)``, ``modstruve(v, x)`` in x: ``H_{v-1}(x) - (v/x) H_v(x)`` (likewise ``L``);
  the order ``v`` has no derivative (``scipy_special.elementwise_fixed``);
* ``owens_t(h, a)`` in both arguments;
* ``huber(delta, r)`` and ``pseudo_huber(delta, r)`` in both arguments (``huber`` is quadratic
  for ``|r| <= delta``, its derivative in ``r`` continuous; in ``delta`` the kink at
  ``|r| = delta`` takes the quadratic side's 0);
* ``boxcox(x, lmbda)``, ``boxcox1p(x, lmbda)`` in both arguments (at ``lmbda = 0``, ``d/dlmbda =
  log(x)^2 / 2``).

The functions of several outputs (``sici``, ``shichi``, ``fresnel``, ``airy``) are in
``scipy_special_outputs``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .cases import Case, randpos, randu
from .declare import elementwise

try:
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is optional
    sp = None

if sp is not None:
    from .scipy_special import elementwise_fixed

_SQRT_2PI = float(np.sqrt(2.0 * np.pi))


def _expn_dx(n: Any, x: Any, y: Any) -> Any:
    n = np.asarray(n)
    lower = sp.expn(np.maximum(n - 1, 0), x)
    return np.where(n >= 1, -lower, -(x + 1.0) * np.exp(-x) / (x * x))


def _ellipkm1_dp(p: Any, y: Any) -> Any:
    return -(sp.ellipe(1.0 - p) - p * y) / (2.0 * p * (1.0 - p))


def _owens_t_dh(h: Any, a: Any, y: Any) -> Any:
    return -np.exp(-0.5 * h * h) * sp.erf(a * h / np.sqrt(2.0)) / (2.0 * _SQRT_2PI)


def _owens_t_da(h: Any, a: Any, y: Any) -> Any:
    s = 1.0 + a * a
    return np.exp(-0.5 * h * h * s) / (2.0 * np.pi * s)


def _huber_ddelta(delta: Any, r: Any, y: Any) -> Any:
    return np.where(np.abs(r) <= delta, 0.0, np.abs(r) - delta)


def _huber_dr(delta: Any, r: Any, y: Any) -> Any:
    return np.where(np.abs(r) <= delta, r, delta * np.sign(r))


def _pseudo_huber_ddelta(delta: Any, r: Any, y: Any) -> Any:
    s = np.sqrt(1.0 + (r / delta) ** 2)
    return 2.0 * delta * (s - 1.0) - r * r / (delta * s)


def _pseudo_huber_dr(delta: Any, r: Any, y: Any) -> Any:
    return r / np.sqrt(1.0 + (r / delta) ** 2)


def _boxcox_dx(x: Any, lmbda: Any, y: Any) -> Any:
    return np.power(x, lmbda - 1.0)


def _boxcox_dlmbda(x: Any, lmbda: Any, y: Any) -> Any:
    """``(x^l log x - y) / l``; at ``l = 0`` its Taylor polynomial ``L^2/2 + l L^3/3 + l^2 L^4/8``
    (``L = log x``), whose value is the limit and whose derivatives in ``l`` are those of the
    quotient's limit there (second and third order differentiate this partial)."""
    lmbda = np.asarray(lmbda)
    zero = lmbda == 0
    log_x = np.log(x)
    safe = np.where(zero, 1.0, lmbda)
    at_zero = log_x * log_x * (0.5 + lmbda * log_x / 3.0 + lmbda * lmbda * log_x * log_x / 8.0)
    return np.where(zero, at_zero, (np.power(x, lmbda) * log_x - y) / safe)


def _boxcox1p_dx(x: Any, lmbda: Any, y: Any) -> Any:
    return np.power(1.0 + x, lmbda - 1.0)


def _boxcox1p_dlmbda(x: Any, lmbda: Any, y: Any) -> Any:
    return _boxcox_dlmbda(1.0 + x, lmbda, y)


def _struve_dx(function: Any) -> Any:
    def partial(v: Any, x: Any, y: Any) -> Any:
        return function(v - 1.0, x) - v / x * y

    return partial


if sp is not None:
    elementwise(sp.exp1, lambda x, y: -np.exp(-x) / x)
    elementwise(sp.expi, lambda x, y: np.exp(x) / x)
    elementwise_fixed(sp.expn, ("n", "x"), {0: "an integer order"}, None, _expn_dx, real=True)
    elementwise(sp.ellipkm1, _ellipkm1_dp)
    elementwise_fixed(sp.struve, ("v", "x"), {0: "the order"}, None, _struve_dx(sp.struve), real=True)
    elementwise_fixed(sp.modstruve, ("v", "x"), {0: "the order"}, None, _struve_dx(sp.modstruve), real=True)
    elementwise(sp.owens_t, _owens_t_dh, _owens_t_da)
    elementwise(sp.huber, _huber_ddelta, _huber_dr)
    elementwise(sp.pseudo_huber, _pseudo_huber_ddelta, _pseudo_huber_dr)
    elementwise(sp.boxcox, _boxcox_dx, _boxcox_dlmbda)
    elementwise(sp.boxcox1p, _boxcox1p_dx, _boxcox1p_dlmbda)


def _cases() -> list:
    if sp is None:
        return []
    x = randpos(4) + 0.2
    return [
        Case(sp.exp1, x), Case(sp.expi, x), Case(sp.expi, -x, name="expi(negative x)"),
        Case(sp.expn, 2, x), Case(sp.expn, np.array([0, 1, 3, 5]), x, name="expn(orders 0..5, x)"),
        Case(sp.ellipkm1, randu(4, low=0.05, high=0.95)),
        # integer orders: check_rule perturbs a float one (tests/test_scipy_special_integrals.py: 1.5)
        Case(sp.struve, np.array([0, 1, 2, 3]), x), Case(sp.modstruve, np.array([1, 0, 2, 1]), x),
        Case(sp.owens_t, randu(4, low=-2.0, high=2.0), randu(4, low=-1.5, high=1.5)),
        Case(sp.huber, 1.0, np.array([-2.5, -0.3, 0.4, 1.7])),
        Case(sp.huber, randpos(4), np.array([-2.5, -0.3, 0.4, 1.7])),
        Case(sp.pseudo_huber, randpos(4), randu(4, low=-2.0, high=2.0)),
        Case(sp.boxcox, x, randu(4, low=-1.0, high=2.0)), Case(sp.boxcox, x, 0.0, name="boxcox(x, 0)"),
        Case(sp.boxcox1p, x, randu(4, low=-1.0, high=2.0)),
    ]


CASES = _cases()
