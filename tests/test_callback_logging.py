"""A SciPy solver's or integrator's callable that logs (``logging.getLogger(__name__).debug(...)``,
``logger.info(...)``) while a handler is listening, in every mode against central differences.

Second order differentiates the callable itself, and reading ``logger.info`` gave the bound
method a zero tangent, walking the logger to its handlers' locks: "yuebing has no tangent type
for _thread.RLock" under ``yb.hvp`` (and ``yb.jvp`` of ``minimize`` with ``jac=``). Locks are
threads' state, never a derivative's: they are non-differentiable values (``tangents/kinds.py``),
never copied or given tangents."""
import io
import logging

import numpy as np
import pytest
import scipy.integrate as si
import scipy.optimize as so

import yuebing as yb

LOGGER = logging.getLogger(__name__)
X = np.array([0.4, 0.9])
V = np.array([1.0, -0.5])


@pytest.fixture
def log():
    """A handler listening at DEBUG (so the calls format and write: the handler's lock is taken)."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    level, propagate = LOGGER.level, LOGGER.propagate
    LOGGER.addHandler(handler)
    LOGGER.setLevel(logging.DEBUG)
    LOGGER.propagate = False
    yield stream
    LOGGER.removeHandler(handler)
    LOGGER.setLevel(level)
    LOGGER.propagate = propagate


def minimize(x):
    def objective(p):
        logging.getLogger(__name__).debug("objective at %s", p)
        return np.sum((p - x) ** 2) + np.sum(p ** 4)

    def gradient(p):  # (without jac=, second order takes third derivatives: refused by name)
        LOGGER.info("gradient at %s", p)
        return 2 * (p - x) + 4 * p ** 3
    return so.minimize(objective, np.zeros(2), jac=gradient, method="BFGS", options={"gtol": 1e-12}).x.sum()


def solve_ivp(x):
    def rhs(t, y):
        LOGGER.debug("rhs at t=%s", t)
        return -x[0] * y * (1.0 + 0.1 * y)
    return si.solve_ivp(rhs, (0.0, 1.0), [1.0, 2.0], rtol=1e-11, atol=1e-12).y[:, -1].sum() * x[1]


def quad(x):
    def integrand(t):
        LOGGER.info("t=%s", t)
        return np.sin(t * x[0]) * x[1] ** 2
    return si.quad(integrand, 0.0, 1.0, epsabs=1e-12, epsrel=1e-12)[0]


FUNCTIONS = [minimize, solve_ivp, quad]


def _differences(f, x, v, h=1e-4):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


@pytest.mark.parametrize("g", FUNCTIONS)
def test_reverse_and_forward_mode(g, log):
    expected = _differences(g, X, V)
    assert yb.grad(g)(X.copy()) @ V == pytest.approx(expected, rel=1e-5)
    assert yb.jvp(g, (X.copy(),), (V,))[1] == pytest.approx(expected, rel=1e-5)
    assert log.getvalue()  # (the callable logged)


@pytest.mark.parametrize("g", FUNCTIONS)
def test_second_order(g, log):
    gradient = yb.grad(g)
    _, (first,), (product,) = yb.hvp(g, (X.copy(),), (V,))
    np.testing.assert_allclose(first, gradient(X.copy()), rtol=1e-8)
    np.testing.assert_allclose(product, _differences(gradient, X, V), rtol=1e-5, atol=1e-7)


def test_logging_objects_have_no_tangent_and_are_never_walked():
    """A logger's tangent walk reached its manager's dict of every logger in the process: with
    the ~2000 loggers a test run's libraries make, yb.hvp of ``solve_ivp`` above took 100 s, not
    0.5 s. Loggers, handlers, their manager, formatters and adapters are non-differentiable."""
    from yuebing.tangents import kinds

    handler = logging.StreamHandler(io.StringIO())
    handler.setFormatter(logging.Formatter("%(message)s"))
    for value in (LOGGER, logging.getLogger(), logging.Logger.manager, handler, handler.formatter,
                  logging.LoggerAdapter(LOGGER, {"x": 1.5})):
        assert kinds.primal_kind(value) == kinds.NONDIFF, value
        assert yb.tangents.zero_tangent(value) is yb.NoTangent, value
