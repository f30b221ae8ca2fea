"""A callable SciPy calls (an ODE's right-hand side, an objective, an equation, an integrand) that
writes float state the differentiated code reads afterwards is refused by name in reverse mode and
second order, and gives a NaN (unknown) derivative in forward mode, never a silent one
(api/callback_writes.py); int counters keep working in every mode, a float history never read
again in reverse mode."""

import numpy as np
import pytest
from scipy.integrate import odeint, quad, solve_ivp
from scipy.optimize import brentq, least_squares, minimize, root

import yuebing as yb

K = 0.7


class Box:
    pass


def _keeper(form, seen, box, kept):
    """The callback's write of a float, as ``form`` says (no string captured: a closure over one
    is another matter, see the report)."""
    if form == "list":
        return seen.append
    if form == "attribute":
        def keep(v):
            box.last = v
        return keep
    if form == "array":
        def keep(v):
            kept[0] = v
        return keep
    return None


def program(driver, form):
    """f(k): ``driver``'s solution plus, for ``form``, what the callback kept (a float it wrote)."""

    def f(k):
        seen, box, kept = [], Box(), np.zeros(1)
        box.last = 0.0
        total = 0.0

        def keep_total(v):
            nonlocal total
            total = v

        keep = keep_total if form == "nonlocal" else _keeper(form, seen, box, kept)
        if driver == "solve_ivp":
            def rhs(t, y):
                keep(k * y[0])
                return -k * y
            out = solve_ivp(rhs, (0, 1), np.array([1.0]), rtol=1e-10, atol=1e-12).y[0, -1]
        elif driver == "odeint":
            def rhs(y, t):
                keep(k * y[0])
                return -k * y
            out = odeint(rhs, np.array([1.0]), [0.0, 1.0], rtol=1e-10, atol=1e-12)[-1, 0]
        elif driver == "quad":
            def rhs(t):
                keep(k * t)
                return k * t * t
            out = quad(rhs, 0, 1)[0]
        elif driver == "brentq":
            def rhs(t):
                keep(k * t)
                return t - k
            out = brentq(rhs, -5, 5, xtol=1e-14)
        elif driver == "root":
            def rhs(x):
                keep(k * x[0])
                return x - k
            out = root(rhs, np.array([0.0]), tol=1e-14).x[0]
        elif driver == "minimize":
            def rhs(x):
                keep(k * x[0])
                return np.sum((x - k) ** 2)
            out = minimize(rhs, np.array([0.0]), method="BFGS", options={"gtol": 1e-12}).x[0]
        else:
            def rhs(x):
                keep(k * x[0])
                return x - k
            out = least_squares(rhs, np.array([0.0]), xtol=1e-15, ftol=1e-15, gtol=1e-15).x[0]
        if form == "list":
            return out + seen[-1]
        if form == "attribute":
            return out + box.last
        if form == "nonlocal":
            return out + total
        return out + kept[0]

    return f


DRIVERS = ["solve_ivp", "odeint", "quad", "brentq", "root", "minimize", "least_squares"]
SECOND_ORDER = ["solve_ivp", "odeint", "quad", "brentq", "root"]  # (minimize's, least_squares' need jac=)
FORMS = ["list", "attribute", "nonlocal", "array"]


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("driver", DRIVERS)
def test_written_float_state_read_afterwards(driver, form):
    f = program(driver, form)
    with pytest.raises(ValueError, match=r"rhs \(.*test_callback_writes.py:\d+\) writes float state"):
        yb.grad(f)(K)
    try:  # an unknown derivative, not a silent one
        assert np.isnan(yb.jvp(f, (K,), (1.0,))[1])
    except ValueError as refused:  # (an item appended: the rule's own tangent no longer fits)
        assert "writes float state" in str(refused) and form == "list"
    if driver in SECOND_ORDER:
        with pytest.raises(Exception, match="writes float state"):
            yb.hvp(f, (K,), (1.0,))




def quiet_program(driver):
    """The same solve, whose callback writes state without float data: int counters, nonlocal and
    on an object."""

    def f(k):
        calls = 0
        box = Box()
        box.calls = 0
        if driver == "solve_ivp":
            def rhs(t, y):
                nonlocal calls
                calls += 1
                box.calls = box.calls + 1
                return -k * y * y
            out = solve_ivp(rhs, (0, 1), np.array([1.0]), rtol=1e-11, atol=1e-12).y[0, -1]
        elif driver == "brentq":
            def rhs(t):
                nonlocal calls
                calls += 1
                box.calls = box.calls + 1
                return t ** 3 - k
            out = brentq(rhs, -5, 5, xtol=1e-14)
        else:
            def rhs(t):
                nonlocal calls
                calls += 1
                box.calls = box.calls + 1
                return np.sin(k * t)
            out = quad(rhs, 0, 1, epsabs=1e-13, epsrel=1e-13)[0]
        assert calls > 0 and box.calls > 0
        return out * out

    return f


def test_float_history_not_read_keeps_the_gradient():
    """Reverse mode refuses only a read; forward mode and second order refuse the appends by name."""
    def f(k):
        history = []

        def g(t):
            history.append(k * t)
            return t ** 3 - k
        return brentq(g, -5, 5, xtol=1e-14) ** 2

    h = 1e-6
    np.testing.assert_allclose(yb.grad(f)(K), (f(K + h) - f(K - h)) / (2 * h), rtol=1e-6)
    with pytest.raises(ValueError, match="cannot follow the items it appended"):
        yb.jvp(f, (K,), (1.0,))
    with pytest.raises(Exception, match="cannot follow the items it appended"):
        yb.hvp(f, (K,), (1.0,))


@pytest.mark.parametrize("driver", ["solve_ivp", "brentq", "quad"])
def test_state_without_derivatives_keeps_working(driver):
    f = quiet_program(driver)
    h = 1e-5
    difference = (f(K + h) - f(K - h)) / (2 * h)
    gradient = yb.grad(f)(K)
    np.testing.assert_allclose(gradient, difference, rtol=1e-5)
    np.testing.assert_allclose(yb.jvp(f, (K,), (1.0,))[1], gradient, rtol=1e-8)
    second = (yb.grad(f)(K + h) - yb.grad(f)(K - h)) / (2 * h)
    np.testing.assert_allclose(yb.hvp(f, (K,), (1.0,))[2], second, rtol=1e-4, atol=1e-7)
