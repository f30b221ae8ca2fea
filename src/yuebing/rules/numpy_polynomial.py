"""The ``numpy.polynomial`` classes (``Polynomial``, ``Chebyshev``, ``Legendre``, ``Laguerre``,
``Hermite``, ``HermiteE``): construction and evaluation, ``p(x)`` differentiated in the
coefficients, the points, ``domain`` and ``window``.

Their shared ``ABCPolyBase.__init__`` validates ``symbol`` with try/except, which yuebing does not
transform; ``_init`` is the same constructor without it (the symbol is checked by a helper with
zero derivative, with NumPy's errors) and the coefficients are made a fresh 1-d array of their
common inexact dtype as ``polyutils.as_series`` does. Everything else -- ``__call__``'s domain
map and the ``chebval``/``legval``/... evaluations -- is NumPy's own Python, derived as it is.
"""
from __future__ import annotations

from typing import Any

import numpy as np
from numpy.polynomial._polybase import ABCPolyBase

from .cases import Case, randn
from .declare import nondifferentiable
from .second_order import defined_as


def _check_symbol(symbol: Any) -> None:
    """NumPy's checks of ``symbol``."""
    if not isinstance(symbol, str):
        raise TypeError("Symbol must be a non-empty string")
    if not symbol.isidentifier():
        raise ValueError("Symbol string must be a valid Python identifier")


def _check_pair(values: Any, what: str) -> None:
    if np.size(values) != 2:
        raise ValueError(f"{what} has wrong number of elements.")


def _inexact(c: Any) -> Any:
    """The dtype ``as_series`` gives: the array's own when inexact, else float64."""
    dtype = np.asarray(c).dtype
    return dtype if dtype.kind in "fc" else np.dtype(np.float64)


nondifferentiable(_check_symbol, _check_pair, _inexact)


def _series(c):
    """``polyutils.as_series([c], trim=False)[0]``: a fresh 1-d inexact array."""
    return np.array(np.atleast_1d(c), dtype=_inexact(c))


def _init(self, coef, domain=None, window=None, symbol="x"):
    """``ABCPolyBase.__init__`` without its try/except."""
    self.coef = _series(coef)
    if domain is not None:
        _check_pair(domain, "Domain")
        self.domain = _series(domain)
    if window is not None:
        _check_pair(window, "Window")
        self.window = _series(window)
    _check_symbol(symbol)
    self._symbol = symbol


defined_as(ABCPolyBase.__init__, _init)


def _power_series(c, x):
    return np.polynomial.Polynomial(c)(x)


def _chebyshev_on(c, x, lo):
    return np.polynomial.Chebyshev(c, domain=[lo, 3.0])(x)


def _legendre(c, x):
    return np.polynomial.Legendre(c)(x)


def _hermite(c, x):
    return np.polynomial.Hermite(c, window=[-2.0, 2.0])(x)


def _laguerre(c, x):
    return np.polynomial.Laguerre(c)(x)


CASES = [
    Case(_power_series, randn(4), randn(5), name="Polynomial(c)(x)"),
    Case(_chebyshev_on, randn(3), randn(4), -1.5, name="Chebyshev(c, domain=[lo, 3])(x)"),
    Case(_legendre, randn(4), randn(3), name="Legendre(c)(x)"),
    Case(_hermite, randn(3), randn(3), name="Hermite(c, window)(x)"),
    Case(_laguerre, randn(3), randn(3), name="Laguerre(c)(x)"),
]
