"""``np.multiply.at``, ``np.divide.at``, ``np.maximum.at``, ``np.minimum.at`` and the other ufuncs' ``at`` in reverse,
forward and second order against central differences, with repeated positions (a position's
factors multiply: each factor's derivative is the product of the others, exact where one is 0),
a 2-D index with a slice, a broadcast scalar operand, and the caller's arrays restored."""
import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

REPEATED = np.array([0, 2, 2, 4, 2])
X = np.array([0.3, -0.8, 1.1, 0.5, 0.0, 1.3, 0.0, -0.7, 0.9, 1.6])  # zeros: a value and a factor


def products_at_repeated_positions(x):
    a = np.sin(x[:5]) + x[:5]
    np.multiply.at(a, REPEATED, x[5:])
    return np.sum(a * np.cos(a))


def quotients_at_repeated_positions(x):
    a = np.exp(x[:5])
    np.divide.at(a, REPEATED, 2.0 + x[5:] ** 2)
    return np.sum(a ** 2)


def extremes_at_repeated_positions(x):
    a = x[:5] * 1.5
    np.maximum.at(a, REPEATED, x[5:] + 0.2)  # separated values: no ties at X
    b = x[5:] * 0.5
    np.minimum.at(b, REPEATED[::-1], x[:5] - 0.1)
    return np.sum(np.sin(a) * a) + np.sum(b ** 3)


def products_at_rows_and_columns(x):
    a = np.reshape(x[:6], (2, 3)) + 1.0
    np.multiply.at(a, (slice(None), [0, 2, 0]), np.reshape(x[6:9], (1, 3)))  # repeated column 0
    np.multiply.at(a, ([1, 1],), x[9])  # a broadcast scalar, row 1 twice
    return np.sum(np.tanh(a))


@pytest.mark.parametrize("f", [products_at_repeated_positions, quotients_at_repeated_positions,
                               extremes_at_repeated_positions, products_at_rows_and_columns])
def test_ufunc_at_in_every_mode(f):
    check_all_modes(f, X.copy())


def multiply_at_on_the_argument(a, b):
    np.multiply.at(a, REPEATED, b)
    return np.sum(a ** 2)


def test_multiply_at_on_arguments_restores_them_in_every_mode():
    a, b = np.sin(X[:5]) + 0.5, X[5:].copy()
    a0, b0 = a.copy(), b.copy()
    va, vb = np.linspace(0.2, 1.0, 5), np.linspace(-1.0, 0.4, 5)
    h = 1e-6
    slope = (multiply_at_on_the_argument(a0 + h * va, b0 + h * vb)
             - multiply_at_on_the_argument(a0 - h * va, b0 - h * vb)) / (2 * h)
    ga, gb = yb.grad(multiply_at_on_the_argument, argnums=(0, 1))(a, b)
    assert ga @ va + gb @ vb == pytest.approx(slope, rel=1e-6)
    np.testing.assert_array_equal(a, a0)
    assert yb.jvp(multiply_at_on_the_argument, (a, b), (va, vb))[1] == pytest.approx(slope, rel=1e-6)
    np.testing.assert_array_equal(a, a0)
    _, grads, _ = yb.hvp(multiply_at_on_the_argument, (a, b), (va, vb))
    assert grads[0] @ va + grads[1] @ vb == pytest.approx(slope, rel=1e-6)
    np.testing.assert_array_equal(a, a0)
    np.testing.assert_array_equal(b, b0)


def test_a_repeated_factor_of_zero_gives_the_product_of_the_others():
    """d/db_k of a * b_1 * b_2 * b_3 at one position, b_2 = 0: a * b_1 * b_3, not 0/0."""
    b = np.array([1.5, 0.0, -2.0])

    def f(b):
        a = np.full(3, 0.7)
        np.multiply.at(a, [1, 1, 1], b)
        return a[1]

    gradient = yb.grad(f)(b)
    forward = [yb.jvp(f, (b,), (e,))[1] for e in np.eye(3)]
    h = 1e-6
    differences = [(f(b + h * e) - f(b - h * e)) / (2 * h) for e in np.eye(3)]
    np.testing.assert_allclose(gradient, differences, rtol=1e-8, atol=1e-12)
    np.testing.assert_allclose(forward, differences, rtol=1e-8, atol=1e-12)
    assert gradient[1] != 0.0


def powers_and_negations_at_repeated_positions(x):
    a = 1.5 + np.sin(x[:5]) ** 2  # positive bases
    np.power.at(a, REPEATED, 0.5 + x[5:] ** 2)  # position 2 three times: ((a ** p1) ** p2) ** p3
    b = x[5:] * 1.3
    np.negative.at(b, [1, 1, 3])  # a unary ufunc: position 1 negated twice
    np.logaddexp.at(b, [0, 0], x[:2])
    c = np.cos(x[:5])
    np.fmax.at(c, [4, 0, 4], x[5:8] + 0.05)
    return np.sum(a * np.cos(a)) + np.sum(np.tanh(b) * b) + np.sum(c ** 3)


def test_every_other_ufunc_at_in_every_mode():
    """np.power.at, np.negative.at (one input), np.logaddexp.at, np.fmax.at: were refused."""
    check_all_modes(powers_and_negations_at_repeated_positions, X.copy())


def test_ufunc_at_missing_its_operand_is_a_clear_error():
    def f(x):
        a = x.copy()
        np.power.at(a, [0, 0])
        return np.sum(a)

    with pytest.raises(Exception, match=r"np\.power\.at with the operands NumPy takes"):
        yb.grad(f)(np.array([0.5, 1.5]))


@pytest.mark.parametrize("ufunc", [np.multiply, np.divide, np.maximum, np.minimum, np.power, np.hypot],
                         ids=lambda u: u.__name__)
def test_third_order_follows_the_loop(ufunc):
    """Third order took these calls for linear (add.at's class) and gave 6.02 where -0.67 is
    right (the slow step's rule cases): it now follows the loop they are differentiated as."""
    from yuebing.testing.third_order import check_third_order

    def f(a, b):
        a = 1.2 + a * a  # positive (power's bases)
        ufunc.at(a, [0, 1, 1, 3, 1], b)
        return np.sum(np.sin(a) * a)

    rng = np.random.default_rng(3)
    check_third_order(f, rng.standard_normal(4), 0.6 + 0.5 * rng.random(5))
