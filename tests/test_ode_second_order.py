"""Second order (``yb.hessian``, ``yb.hvp``) of ``scipy.integrate.solve_ivp`` and ``odeint``
(``api/ode_second_order.py``: forward over the continuous adjoint): in the initial state, ``args=``,
closed-over parameters, a bound method's object, the output times and the initial time; every
``solve_ivp`` method; against the Hessian of a closed form (differentiated by yuebing's NumPy
rules), against nested central differences of yuebing's own gradient, by the symmetry of the
Hessian and by ``hvp`` against the Hessian's columns; arguments restored."""
import numpy as np
import pytest
from scipy.integrate import odeint, solve_ivp

import yuebing as yb

P = np.array([0.8, 0.3, 1.2, 0.7, 0.1])  # rate, forcing, initial state, first output time, t0


def forced_decay(p, method="DOP853", rtol=1e-12, atol=1e-13):
    """``y' = -k y + c`` (k closed over, c through args=) from ``t0 = p[4]``, at moving ``t_eval``."""
    k = p[0]

    def fun(t, y, c):
        return -k * y + c

    sol = solve_ivp(fun, (p[4], 2.0), np.array([p[2], 0.5 * p[2]]), method=method, t_eval=[p[3], 1.5, 2.0],
                    args=(p[1],), rtol=rtol, atol=atol)
    return np.sum(np.sin(sol.y)) + sol.t[0] * sol.y[1, 0]


def forced_decay_exact(p):
    k, c = p[0], p[1]
    t = np.array([p[3], 1.5, 2.0])
    y0 = np.array([p[2], 0.5 * p[2]])
    y = c / k + (y0[:, None] - c / k) * np.exp(-k * (t[None, :] - p[4]))
    return np.sum(np.sin(y)) + t[0] * y[1, 0]


def relative_error(a, b):
    return np.max(np.abs(a - b)) / np.max(np.abs(b))


# --------------------------------------------------------------------------------------------
# Closed forms: the accuracy is the solver's
# --------------------------------------------------------------------------------------------


V = np.array([0.3, -0.7, 0.5, 0.4, -0.2])  # every input moves: closure, args=, y0, t_eval, t0


@pytest.mark.parametrize("method, rtol, bound", [
    ("DOP853", 1e-12, 1e-10),
    pytest.param("LSODA", 1e-10, 1e-8, marks=pytest.mark.slow),
    pytest.param("RK45", 1e-10, 1e-8, marks=pytest.mark.slow),
    pytest.param("RK23", 1e-8, 1e-6, marks=pytest.mark.slow),
    pytest.param("Radau", 1e-10, 1e-8, marks=pytest.mark.slow),
    pytest.param("BDF", 1e-10, 1e-7, marks=pytest.mark.slow),
])
def test_hvp_closed_form_every_method(method, rtol, bound):
    _, _, (product,) = yb.hvp(lambda p: forced_decay(p, method, rtol, 1e-2 * rtol), (P,), (V,))
    _, _, (expected,) = yb.hvp(forced_decay_exact, (P,), (V,))
    assert relative_error(product, expected) <= bound


@pytest.mark.slow
def test_hessian_closed_form():
    hessian = yb.hessian(forced_decay)(P)
    assert relative_error(hessian, yb.hessian(forced_decay_exact)(P)) <= 1e-10


def odeint_decay(p, tfirst=False):
    """odeint with args=, a closure, moving output times and a moving t0 (the first of ``t``)."""
    c = p[1]
    times = [p[4], p[3], 1.5, 2.0]
    if tfirst:
        y = odeint(lambda t, y, k: -k * y + c, [p[2], 0.5 * p[2]], times, args=(p[0],), tfirst=True,
                   rtol=1e-11, atol=1e-12)
    else:
        y = odeint(lambda y, t, k: -k * y + c, np.array([p[2], 0.5 * p[2]]), times, args=(p[0],),
                   rtol=1e-11, atol=1e-12)
    return np.sum(np.sin(y[1:].T)) + p[3] * y[1, 1]


@pytest.mark.parametrize("tfirst", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_odeint_hvp_closed_form(tfirst):
    _, _, (product,) = yb.hvp(lambda p: odeint_decay(p, tfirst), (P,), (V,))
    _, _, (expected,) = yb.hvp(forced_decay_exact, (P,), (V,))
    assert relative_error(product, expected) <= 1e-8


def test_end_time_without_t_eval():
    """Without t_eval the last output time is t_span's end, which moves."""
    def f(p):
        sol = solve_ivp(lambda t, y: -p[0] * y, (0.0, p[1]), [p[2]], method="DOP853", rtol=1e-12, atol=1e-14)
        return sol.y[0, -1] * sol.t[-1]

    def exact(p):
        return p[2] * np.exp(-p[0] * p[1]) * p[1]

    q, v = np.array([0.6, 1.4, 0.9]), np.array([0.5, -1.0, 0.3])
    assert relative_error(yb.hvp(f, (q,), (v,))[2][0], yb.hvp(exact, (q,), (v,))[2][0]) <= 1e-9


# --------------------------------------------------------------------------------------------
# Nonlinear flows: nested central differences of yb.grad, symmetry, hvp
# --------------------------------------------------------------------------------------------


def nested_central(f, p, h=1e-4):
    g = yb.grad(f)
    return np.stack([(g(p + h * e) - g(p - h * e)) / (2 * h) for e in np.eye(p.size)], axis=-1)


Q = np.array([1.1, 0.4, 1.0, 0.3])


def lotka_volterra(p, method="DOP853", rtol=1e-11):
    """Rates a, b closed over, c through args=, the initial prey p[2]."""
    a, b = p[0], p[1]

    def fun(t, y, c):
        return np.array([a * y[0] - b * y[0] * y[1], c * y[0] * y[1] - y[1]])

    sol = solve_ivp(fun, (0.0, 2.0), np.array([p[2], 1.0]), method=method, t_eval=[0.5, 1.0, 2.0], args=(p[3],),
                    rtol=rtol, atol=1e-2 * rtol)
    return np.sum(sol.y ** 2)


def directional_central(f, p, v, h=1e-4):
    g = yb.grad(f)
    return (g(p + h * v) - g(p - h * v)) / (2 * h)


def test_logistic_hessian_against_nested_differences():
    """A nonlinear flow, its rate closed over and its capacity through args=."""
    def f(p):
        sol = solve_ivp(lambda t, y, cap: p[0] * y * (1.0 - y / cap), (0.0, 1.5), [0.2], method="DOP853",
                        t_eval=[0.5, 1.5], args=(p[1],), rtol=1e-10, atol=1e-12)
        return np.sum(sol.y ** 2)

    q = np.array([1.3, 2.0])
    hessian = yb.hessian(f)(q)
    assert relative_error(hessian, nested_central(f, q)) <= 1e-5
    assert relative_error(hessian, hessian.T) <= 1e-8


# the differences of a gradient solved to rtol are good to about rtol / h (h = 1e-4)
@pytest.mark.parametrize("method, rtol, bound", [("DOP853", 1e-10, 1e-5),
                                                 pytest.param("LSODA", 1e-10, 1e-5, marks=pytest.mark.slow),
                                                 pytest.param("Radau", 1e-9, 1e-4, marks=pytest.mark.slow)])
def test_lotka_volterra_hvp_against_differences_of_grad(method, rtol, bound):
    f = lambda p: lotka_volterra(p, method, rtol)  # noqa: E731
    v = np.array([0.3, -1.1, 0.5, 0.2])
    value, (gradient,), (product,) = yb.hvp(f, (Q,), (v,))
    assert value == f(Q)
    np.testing.assert_allclose(gradient, yb.grad(f)(Q), rtol=1e-8)
    assert relative_error(product, directional_central(f, Q, v)) <= bound


@pytest.mark.slow
@pytest.mark.parametrize("method, rtol, bound", [("DOP853", 1e-11, 1e-6), ("BDF", 1e-9, 1e-4)])
def test_lotka_volterra_hessian_against_nested_differences(method, rtol, bound):
    f = lambda p: lotka_volterra(p, method, rtol)  # noqa: E731
    hessian = yb.hessian(f)(Q)
    assert relative_error(hessian, nested_central(f, Q)) <= bound
    assert relative_error(hessian, hessian.T) <= 100 * rtol  # symmetric to the solver's tolerance
    v = np.array([0.3, -1.1, 0.5, 0.2])
    assert relative_error(yb.hvp(f, (Q,), (v,))[2][0], hessian @ v) <= 1e-8  # steps depend on v: not to the bit


class Pendulum:
    """Parameters on a bound method's object."""

    def __init__(self, damping, length):
        self.damping, self.length = damping, length

    def rhs(self, t, y):
        return np.array([y[1], -9.81 / self.length * np.sin(y[0]) - self.damping * y[1]])


@pytest.mark.slow
def test_bound_method_and_odeint_against_differences_of_grad():
    def swing(p):
        model = Pendulum(p[0], p[1])
        sol = solve_ivp(model.rhs, (0.0, 1.0), np.array([p[2], 0.0]), method="DOP853", t_eval=[1.0],
                        rtol=1e-10, atol=1e-12)
        y = odeint(model.rhs, np.array([p[2], 0.0]), [0.0, 0.5], tfirst=True, rtol=1e-10, atol=1e-12)
        return sol.y[0, -1] ** 2 + y[-1, 1]

    q, v = np.array([0.3, 1.2, 0.4]), np.array([1.0, -0.5, 0.8])
    assert relative_error(yb.hvp(swing, (q,), (v,))[2][0], directional_central(swing, q, v)) <= 1e-5


def test_arguments_restored_and_repeatable():
    """The caller's arrays (the initial state, an args= array) are as they were; a second call
    gives the same Hessian-vector product."""
    y0 = np.array([1.0, 0.5])
    weights = np.array([0.2, 0.1])

    def f(p, y0, weights):
        sol = solve_ivp(lambda t, y, w: -p[0] * y + w * p[1], (0.0, 1.0), y0 * p[1], method="DOP853", args=(weights,),
                        rtol=1e-10, atol=1e-12)
        return np.sum(sol.y[:, -1] ** 2)

    q, v = np.array([0.5, 1.5]), np.array([1.0, -0.4])
    primals, tangents = (q, y0, weights), (v, np.zeros(2), np.zeros(2))
    first = yb.hvp(f, primals, tangents)[2][0]
    np.testing.assert_array_equal(y0, [1.0, 0.5])
    np.testing.assert_array_equal(weights, [0.2, 0.1])
    np.testing.assert_array_equal(q, [0.5, 1.5])
    np.testing.assert_array_equal(yb.hvp(f, primals, tangents)[2][0], first)
    assert relative_error(first, directional_central(lambda p: f(p, y0, weights), q, v)) <= 1e-5


@pytest.mark.slow
def test_state_and_args_arrays_as_arguments():
    """Second order with respect to the initial state and an args= array (argnums)."""
    def f(y0, w):
        sol = solve_ivp(lambda t, y, w: -w * y ** 2, (0.0, 1.0), y0, method="DOP853", args=(w,), rtol=1e-10,
                        atol=1e-12)
        return np.sum(sol.y[:, -1])

    def exact(y0, w):  # y' = -w y^2: y(1) = y0 / (1 + w y0)
        return np.sum(y0 / (1.0 + w * y0))

    y0, w = np.array([1.0, 2.0]), np.array([0.5])
    blocks, expected = yb.hessian(f, argnums=(0, 1))(y0, w), yb.hessian(exact, argnums=(0, 1))(y0, w)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(blocks[i][j], expected[i][j], rtol=1e-8, atol=1e-10)


def test_unused_result():
    """A solve whose result is not used adds nothing (and solves nothing backward)."""
    def unused(k):
        solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0])
        return k ** 3

    assert yb.hessian(unused)(0.5) == yb.hessian(lambda k: k ** 3)(0.5)
