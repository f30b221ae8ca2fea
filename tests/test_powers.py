"""Powers at negative and zero bases in every mode (issue 12, item 4).

The exponent's partial ``log(x) * x ** y`` is NaN for a negative base; a constant exponent, or
one whose tangent or cotangent is exactly zero, must contribute nothing (the strong-zero rule,
docs/conventions.md), so ``x ** 2.0`` at ``x < 0`` has the derivatives of ``x * x`` in forward
mode and second order as in reverse mode. Each function is checked by ``check_every_mode``
(grad, jvp, jacobian(mode="fwd"), hvp, hessian against central differences), on the inline
paths (templates, float blocks, array blocks) and on the generic rule paths.
"""
from __future__ import annotations

import math
import operator
import warnings

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

NEGATIVE = np.array([-1.3, 2.0, -0.7])


# ---------------------------------------------------------------- arrays


def array_pow_float(x):
    return np.sum(x ** 2.0)


def array_pow_three(x):
    return np.sum(x ** 3.0 * 0.5)  # an array block: pow, mul, sum


def np_power(x):
    return np.sum(np.power(x, 3.0))


def np_float_power(x):
    return np.sum(np.float_power(x, 2.0))


def array_pow_int(x):
    return np.sum(x ** 2)


def array_pow_minus_one(x):
    return np.sum(x ** -1)


def array_pow_generic(x):
    power = np.power  # called through a local: the generic rule, no template
    return np.sum(power(x, 2.0))


def operator_pow_array(x):
    return np.sum(operator.pow(x, 3.0))


def array_ipow(x):
    y = x.copy()
    y **= 2.0
    return np.sum(y)


@pytest.mark.parametrize("f", [array_pow_float, array_pow_three, np_power, np_float_power, array_pow_int,
                               array_pow_minus_one, array_pow_generic, operator_pow_array, array_ipow])
def test_array_powers_with_negative_bases(f):
    check_every_mode(f, NEGATIVE)


def test_the_issue_hessian():
    h = yb.hessian(lambda x: np.sum(x ** 2.0))(np.array([-1.0, 2.0]))
    np.testing.assert_allclose(h, 2 * np.eye(2))


# ---------------------------------------------------------------- floats


def float_pow(x):
    return x ** 2.0


def float_pow_three(x):
    return x ** 3.0 + x


def math_pow(x):
    return math.pow(x, 2.0)


def builtin_pow(x):
    return pow(x, 3.0)


def operator_pow(x):
    return operator.pow(x, 2.0)


def float_ipow(x):
    x **= 2.0
    return x


def float_np_power(x):
    return np.power(x, 3.0)


def float_pow_int(x):
    return x ** 2 + x ** -1


def float_block_powers(x):  # six float statements: a float block (integer exponents)
    a = x ** 2
    b = a * x
    c = b - x ** 3
    d = c / 3.0 + a
    e = d * d
    f = e + a ** 2
    return f


@pytest.mark.parametrize("f", [float_pow, float_pow_three, math_pow, builtin_pow, operator_pow, float_ipow,
                               float_np_power, float_pow_int, float_block_powers])
@pytest.mark.parametrize("x", [-1.5, 0.8])
def test_float_powers_with_negative_bases(f, x):
    check_every_mode(f, x)


def test_float_block_is_taken():
    assert "float block" in yb.show(float_block_powers)


# ---------------------------------------------------------------- variable exponents, zero bases


def power_of_zero(y):
    return np.power(0.0, y) + y


def float_zero_power(y):
    return 0.0 ** y + y


def math_zero_power(y):
    return math.pow(0.0, y) + y


def positive_base_power(y):
    return 1.7 ** y + np.power(2.5, y) + math.pow(0.6, y)


@pytest.mark.parametrize("f", [power_of_zero, float_zero_power, math_zero_power, positive_base_power])
def test_exponent_derivatives(f):
    check_every_mode(f, 2.5)


def both_variable(v):
    return np.sum(v[:2] ** v[2:])


def test_base_and_exponent_both_variable():
    check_every_mode(both_variable, np.array([1.3, 0.7, 2.2, -1.4]))


def square_root_by_power(x):
    return x ** 0.5


def test_square_root_by_power_at_zero_is_infinite_in_every_first_order_mode():
    """``sqrt'(0) = inf`` (docs/conventions.md); no NaN, no exception."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert yb.grad(square_root_by_power)(0.0) == math.inf
        assert yb.jvp(square_root_by_power, (0.0,), (1.0,))[1] == math.inf
        # a zero tangent contributes zero, even through the infinite partial
        assert yb.jvp(square_root_by_power, (0.0,), (0.0,))[1] == 0.0
        g = yb.grad(lambda x: np.sum(x ** 0.5))(np.array([0.0, 4.0]))
        assert g[0] == math.inf and g[1] == 0.25
