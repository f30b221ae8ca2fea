"""SciPy solvers and integrators called with a callback that calls other nested functions
(helpers, two and three deep), in reverse mode, forward mode (``yb.jvp``, ``yb.jacobian(mode="fwd")``)
and second order, against central differences of the whole solve.

Two mechanisms are checked. A helper reading only globals captures cells in generated code
(``np`` is a local there) and has no tangent, as ``zero_tangent`` decides
(``transform/globals_and_cells.without_tangent``): the pass used to give it an empty one, which
the solvers' ``yb.jvp`` of the callback refused ("has tangent NoTangent, got Tangent[function]").
A callback and the helper it calls capturing the same variable share its cell, and so one tangent
box (``boxes_by_cell``): two boxes were refused as "aliasing differs"."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import yuebing as yb
from yuebing.testing.second_order import check_second_order

TIMES = np.linspace(0, 1, 8)
TIGHT = {"xtol": 1e-14, "ftol": 1e-14, "gtol": 1e-14}


def least_squares_helper(y):
    """The reported case: the residual calls a nested model that reads only globals."""
    def curve(q):
        return q[0] * np.exp(-q[1] * TIMES)

    def resid(q):
        return curve(q) - y
    return np.sum(so.least_squares(resid, np.array([1.0, 1.0]), **TIGHT).x)


def least_squares_three_deep(y):
    def basis(q):
        return np.exp(-q[1] * TIMES)

    def curve(q):
        return q[0] * basis(q)

    def resid(q):
        return curve(q) - y
    return np.sum(so.least_squares(resid, np.array([1.0, 1.0]), **TIGHT).x)


def least_squares_shared_capture(y):
    """The model and the residual both read ``y``: one cell, one tangent box."""
    def curve(q):
        return q[0] * np.exp(-q[1] * TIMES) + 0.1 * y

    def resid(q):
        return curve(q) - y
    return np.sum(so.least_squares(resid, np.array([1.0, 1.0]), **TIGHT).x)


def minimize_helper(p):
    def square(u):
        return u * u

    def quartic(u):
        return square(square(u))

    def objective(x):
        return np.sum(square(x - p)) + 0.1 * np.sum(quartic(x))
    return np.sum(so.minimize(objective, np.zeros(3), method="BFGS", options={"gtol": 1e-12}).x ** 2)


def root_helper(p):
    def cube(x):
        return x ** 3

    def equations(x):
        return cube(x) + x - p
    return np.sum(so.root(equations, np.ones(3), tol=1e-13).x)


def fsolve_helper(p):
    def cube(x):
        return x ** 3

    def equations(x):
        return cube(x) + x - p
    return np.sum(so.fsolve(equations, np.ones(3), xtol=1e-13))


def brentq_helper(p):
    def shift():
        return np.sum(p)

    def equation(x):
        return x ** 3 + x - shift()
    return so.brentq(equation, -10.0, 10.0, xtol=1e-14)


def quad_helper(p):
    def weight(s):
        return np.exp(-s)

    def integrand(s):
        return weight(s) * np.sin(p[0] * s) + p[1] * s
    return si.quad(integrand, 0.0, 1.0, epsabs=1e-13, epsrel=1e-13)[0]


def solve_ivp_shared_capture(p):
    """The right-hand side and its helper both capture ``p``."""
    def decay(y):
        return -p[0] * y

    def rhs(s, y):
        return decay(y) + p[1]
    return si.solve_ivp(rhs, (0.0, 1.0), np.array([1.0]), rtol=1e-11, atol=1e-12).y[0, -1]


Y = 2.0 * np.exp(-1.3 * TIMES)
CASES = [
    (least_squares_helper, Y),
    (least_squares_three_deep, Y),
    (least_squares_shared_capture, Y),
    (minimize_helper, np.array([0.3, -0.2, 0.5])),
    (root_helper, np.array([0.3, 1.2, 2.0])),
    (fsolve_helper, np.array([0.3, 1.2, 2.0])),
    (brentq_helper, np.array([0.3, 1.2])),
    (quad_helper, np.array([1.3, 0.4])),
    (solve_ivp_shared_capture, np.array([0.7, 0.4])),
]
IDS = [f.__name__ for f, _ in CASES]


def central_gradient(f, a, h=1e-5):
    return np.array([(f(a + h * e) - f(a - h * e)) / (2 * h) for e in np.eye(a.size)])


@pytest.mark.parametrize("f, a", CASES, ids=IDS)
def test_first_order_modes_match_differences(f, a):
    expected = central_gradient(f, a)
    direction = np.linspace(0.5, 1.5, a.size)
    np.testing.assert_allclose(yb.grad(f)(a), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.jvp(f, (a,), (direction,))[1], expected @ direction, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(a), expected, rtol=1e-5, atol=1e-7)


#: second order of a minimiser's solution takes third derivatives of the objective, through the
#: variables it captures and through a helper capturing them (checked on their own below)
REFUSED_IN_SECOND_ORDER = {least_squares_shared_capture: "curve"}


@pytest.mark.parametrize("f, a", [c for c in CASES if c[0] not in REFUSED_IN_SECOND_ORDER],
                         ids=[i for i, c in zip(IDS, CASES) if c[0] not in REFUSED_IN_SECOND_ORDER])
def test_hvp_matches_differences_of_the_gradient(f, a):
    check_second_order(f, a, rtol=1e-4, atol=1e-6)


def minimize_helper_capturing(p):
    def bowl(x):
        return np.sum((x - p) ** 2)

    def objective(x):
        return bowl(x) + 0.1 * np.sum(x ** 4)
    return np.sum(so.minimize(objective, np.zeros(3), method="BFGS", options={"gtol": 1e-12}).x ** 2)


REFUSED_IN_SECOND_ORDER[minimize_helper_capturing] = "bowl"


@pytest.mark.parametrize("f, a", [(minimize_helper_capturing, np.array([0.3, -0.2, 0.5])),
                                  (least_squares_shared_capture, Y)], ids=["minimize", "least_squares"])
def test_second_order_through_a_helper_capturing_the_parameters(f, a):
    """Second order needs third derivatives of the objective through a helper capturing the
    parameters (refused before): the helper's plain program is opened where the objective's calls it."""
    expected = central_gradient(f, a)
    np.testing.assert_allclose(yb.grad(f)(a), expected, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(a), expected, rtol=1e-5, atol=1e-7)
    check_second_order(f, a, rtol=1e-4, atol=1e-6)


def brentq_helper_in_args(p):
    """The callback and the helper handed to it in ``args=`` both capture ``p``: refused."""
    def scale(x):
        return p[0] * x

    def equation(x, helper):
        return x ** 3 + helper(x) - p[1]
    return so.brentq(equation, -10.0, 10.0, args=(scale,), xtol=1e-14)


def brentq_helper_called_by_name(p):
    """docs/limitations.md's first advice: the callback calls the helper it captures."""
    def scale(x):
        return p[0] * x

    def equation(x):
        return x ** 3 + scale(x) - p[1]
    return so.brentq(equation, -10.0, 10.0, xtol=1e-14)


def module_scale(x, q):
    return q[0] * x


def brentq_everything_in_args(p):
    """docs/limitations.md's second advice: nothing captured, everything in ``args=``."""
    def equation(x, helper, q):
        return x ** 3 + helper(x, q) - q[1]
    return so.brentq(equation, -10.0, 10.0, args=(module_scale, p), xtol=1e-14)


def test_a_variable_shared_by_the_callback_and_its_args_is_refused_and_the_advice_works():
    p = np.array([0.3, 1.2])
    for run in (lambda: yb.grad(brentq_helper_in_args)(p), lambda: yb.jvp(brentq_helper_in_args, (p,), (p,))):
        with pytest.raises(TypeError, match="are the same cell"):
            run()
    for f in (brentq_helper_called_by_name, brentq_everything_in_args):
        expected = central_gradient(f, p)
        np.testing.assert_allclose(yb.grad(f)(p), expected, rtol=1e-6)
        np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(p), expected, rtol=1e-6)
        check_second_order(f, p, rtol=1e-4, atol=1e-6)
