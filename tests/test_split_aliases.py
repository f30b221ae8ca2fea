"""A callable given to a SciPy solver or integrator capturing an array of an enclosing function
that is not differentiated, where that array is the very argument passed to ``yb.grad``
(``api/split_aliases.py``): the captured array is held constant, as every captured variable of
code outside the differentiation is, in reverse mode as in forward mode and second order. Reverse
mode differentiated the callable as one value whose two cells held one array, and added the
captured array's path into the argument's gradient (twice the right gradient for these
functions). Checked against central differences of ``g`` with the captured array fixed."""
import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import yuebing as yb

X = np.array([0.3, -0.7, 1.1])


def _integrand(x, kind):
    """``g(y)`` whose callable reads both the captured ``x`` and ``g``'s argument ``y``."""
    def g(y):
        if kind == "quad":
            return si.quad(lambda t: np.sin(t * x[0]) * y[0] ** 2, 0.0, 1.0, epsabs=1e-13)[0]
        if kind == "quad_vec":
            return si.quad_vec(lambda t: np.sin(t * x[0]) * y[:2] ** 2, 0.0, 1.0, epsabs=1e-13)[0].sum()
        if kind == "solve_ivp":
            return si.solve_ivp(lambda t, u: -x[0] * u * y[0], (0, 1), [1.0], rtol=1e-11, atol=1e-12).y[0, -1]
        if kind == "odeint":
            return si.odeint(lambda u, t: -x[0] * u * y[0], [1.0], [0, 1.0], rtol=1e-11, atol=1e-12)[-1, 0]
        if kind == "brentq":
            return so.brentq(lambda r: r ** 3 - x[0] * y[0] - 0.1 * r, 0.0, 3.0, xtol=1e-14)
        if kind == "minimize":
            return so.minimize(lambda p: (p[0] - x[0] * y[0]) ** 2 + p[0] ** 4, [0.1], method="BFGS",
                               options={"gtol": 1e-12}).x[0]
        if kind == "root":
            return so.root(lambda p: p ** 3 + p - x[0] * y[0], [0.1], tol=1e-14).x[0]
        if kind == "least_squares":
            return so.least_squares(lambda p: [p[0] - x[0] * y[0], p[0] ** 2], [0.1], xtol=1e-15, ftol=1e-15,
                                    gtol=1e-15).x[0]
        if kind == "dblquad":
            return si.dblquad(lambda a, b: a * x[0] * y[0] ** 2, 0, 1, 0, 1)[0]
        if kind == "tplquad":
            return si.tplquad(lambda a, b, c: a * b * x[0] * y[0] ** 2 + c * y[1], 0, 1, 0, 1, 0, 1)[0]
        if kind == "nquad":
            return si.nquad(lambda a, b: np.sin(a * b * x[1]) * y[1] ** 2 + a * x[0] * y[0], [[0, 1], [0, 2]])[0]
    return g


def _held_constant(g, y, h=1e-5):
    """Central differences of ``g`` at ``y``, each point a new array (the captured one fixed)."""
    e = np.eye(y.size) * h
    return np.array([(g(y + e[k]) - g(y - e[k])) / (2 * h) for k in range(y.size)])


NQUAD = ["dblquad", "tplquad", "nquad"]  # (the callable reaches quad through nquad's _NQuad object)
KINDS = ["quad", "quad_vec", "solve_ivp", "odeint", "brentq", "minimize", "root", "least_squares"] + NQUAD


# tplquad's reverse rule nests three adaptive quadratures of pullbacks (some 10**4 of them): minutes
SLOW = {"tplquad": pytest.mark.slow}


@pytest.mark.parametrize("kind", [pytest.param(kind, marks=SLOW.get(kind, ())) for kind in KINDS])
def test_reverse_mode_holds_the_captured_array_constant(kind):
    x = X.copy()
    g = _integrand(x, kind)
    np.testing.assert_allclose(yb.grad(g)(x), _held_constant(g, X.copy()), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("kind", NQUAD)
def test_forward_mode_holds_the_captured_array_constant(kind):
    x = X.copy()
    g = _integrand(x, kind)
    v = np.array([1.0, 0.5, -0.25])
    assert yb.jvp(g, (x,), (v,))[1] == pytest.approx(_held_constant(g, X.copy()) @ v, rel=1e-6)


def test_nquad_results_are_scipys():
    """The objects copied to split the integrand get back what SciPy's run wrote on them: the
    error estimate nquad keeps on its object is the plain call's."""
    x = X.copy()

    def g(y):
        return si.dblquad(lambda a, b: np.sin(a * b * x[0]) * y[0] ** 2, 0, 1, 0, 1)

    value, pullback = yb.vjp(g, x)
    assert value == g(x.copy())
    np.testing.assert_allclose(pullback((1.0, 0.0))[0], _held_constant(lambda y: g(y)[0], X.copy()), atol=1e-8)


@pytest.mark.parametrize("kind", ["quad", "brentq", "dblquad"])
def test_every_mode_agrees(kind):
    x = X.copy()
    g = _integrand(x, kind)
    v = np.array([1.0, 0.5, -0.25])
    gradient = yb.grad(g)(x)
    assert yb.jvp(g, (x,), (v,))[1] == pytest.approx(gradient @ v, rel=1e-7)
    assert yb.hvp(g, (x,), (v,))[1][0] == pytest.approx(gradient, rel=1e-7)
