"""``cmath.log`` with and without a base in every order: reverse and forward mode against central
differences of the function, second order (``yb.hvp``, ``yb.hessian``) against central differences
of its gradient, third order (``yb.hessian`` of a function calling ``yb.grad``) against central
differences of reverse over reverse. Second order of ``cmath.log(z, base)`` was refused
(``SecondOrderError``) before its cotangent map was declared (``rules/math_cmath.py``)."""
from __future__ import annotations

import cmath

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order
from yuebing.testing.third_order import check_third_order

X = np.array([1.7, 2.3, 3.1])
DIRECTION = np.array([0.4, -1.1, 0.7])


def real_base(x):
    return cmath.log(x[0], x[1]).real * x[2]


def complex_base(x):
    return abs(cmath.log(complex(x[0], x[1]), complex(x[2], 0.5))) ** 2


def imaginary_part(x):
    return cmath.log(complex(x[0], x[1]), x[2] + 1.0).imag


def one_argument(x):
    return (cmath.log(complex(x[0], x[1])) * x[2]).real + cmath.log(-x[2]).imag * x[0]


FUNCTIONS = [real_base, complex_base, imaginary_part, one_argument]


def central(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_reverse_and_forward(f):
    expected = central(f, X)
    np.testing.assert_allclose(yb.grad(f)(X), expected, rtol=1e-6, atol=1e-8)
    assert yb.jvp(f, (X,), (DIRECTION,))[1] == pytest.approx(expected @ DIRECTION, rel=1e-6, abs=1e-8)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_second_order(f):
    check_second_order(f, X)
    expected = np.stack([central(yb.grad(f), X)[:, k] for k in range(X.size)])
    np.testing.assert_allclose(yb.hessian(f)(X), expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X)
