"""``polygamma(n, z)`` for complex ``z`` too: the derivative of ``digamma`` (and of ``polygamma``)
at a complex argument.

SciPy's ``digamma`` and ``loggamma`` take complex arguments, but ``scipy.special.polygamma`` (through
``zeta``) takes real ones only, so the derivative of ``digamma(z)`` (the second derivative of
``loggamma(z)``: lmfit's Pearson IV lineshape takes ``real(loggamma(m + 0.5j * skew))``) could not
be computed. For complex ``z`` it is computed here: the recurrence
``psi_n(z) = psi_n(z + 1) + (-1)^(n+1) n! / z^(n+1)`` moves ``z`` right of ``SHIFTED_REAL_PART``,
where the asymptotic series ``(-1)^(n+1) [(n-1)!/z^n + n!/(2 z^(n+1)) + sum_k B_2k (2k+n-1)!/((2k)!
z^(2k+n))]`` converges to rounding within its ten terms. Real arguments go to SciPy unchanged.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

# the Bernoulli numbers B_2, B_4, ..., B_20
BERNOULLI_EVEN = (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510,
                  43867 / 798, -174611 / 330)
# |z| >= 16 makes the series' last term below 1e-17 of the first for n <= 4
SHIFTED_REAL_PART = 16.0


def polygamma(n: Any, x: Any) -> Any:
    """``scipy.special.polygamma(n, x)``, also for complex ``x`` (``n`` a whole number >= 1)."""
    import scipy.special as sp
    if not np.iscomplexobj(x):
        return sp.polygamma(n, x)
    orders = np.asarray(n)
    if orders.ndim:
        return np.vectorize(_complex_polygamma, otypes=[complex])(orders, x)
    return _complex_polygamma(int(orders), x)


def _complex_polygamma(n: int, z: Any) -> Any:
    z = np.asarray(z, dtype=complex)
    sign = -1.0 if n % 2 == 0 else 1.0       # (-1)^(n+1)
    steps = int(max(0.0, math.ceil(SHIFTED_REAL_PART - float(np.min(z.real, initial=SHIFTED_REAL_PART)))))
    total = np.zeros_like(z)
    shifted = z.copy()
    for _ in range(steps):
        below = shifted.real < SHIFTED_REAL_PART
        term = sign * math.factorial(n) / np.where(below, shifted, 1.0) ** (n + 1)
        total = total + np.where(below, term, 0.0)
        shifted = np.where(below, shifted + 1.0, shifted)
    return total + sign * _asymptotic_series(n, shifted)


def _asymptotic_series(n: int, z: Any) -> Any:
    """The series without its sign ``(-1)^(n+1)``, for ``Re z >= SHIFTED_REAL_PART``."""
    series = math.factorial(n - 1) / z ** n + math.factorial(n) / (2.0 * z ** (n + 1))
    for k, bernoulli in enumerate(BERNOULLI_EVEN, start=1):
        coefficient = bernoulli * math.factorial(2 * k + n - 1) / math.factorial(2 * k)
        series = series + coefficient / z ** (2 * k + n)
    return series
