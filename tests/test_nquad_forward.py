"""scipy.integrate.dblquad/tplquad/nquad in forward mode: SciPy's ``_NQuad`` integrates a partial of
its own bound method, and the plain run of the outer quad turns the object's ``abserr`` from the int
0 into a float; the tangent taken before that run is refreshed (tangents/stale.py: a leaf that
appeared or changed gets a NaN tangent, its derivative unknown). Each against finite differences
in reverse, forward and forward Jacobian; a quad whose integrand writes state the code then reads
gets a NaN tangent and is refused in reverse mode, never a silent number. Second order
differentiates nquad as the nested quad calls SciPy makes (``api/nquad.py``), against central
differences of ``yb.grad``; so is a nested quad whose inner call gets ``args=(t, *rest)``, which
second order's tuple building gave the node ``t`` as its own tangent (a wrong Hessian, silently,
before ``implicit_second_order.constant4`` gave a node a zero tangent)."""
import functools

import numpy as np
import pytest
import scipy.integrate as si

import yuebing as yb

X0 = np.array([0.7, 0.35, 1.2])
V = np.array([0.3, -0.5, 0.8])


def central_differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def dblquad_constant_limits(x):
    return si.dblquad(lambda y, t: x[0] * t * y + x[1], 0, 1, 0, 1)[0]


def dblquad_moving_limits(x):
    return si.dblquad(lambda y, t: np.exp(x[0] * t * y), 0, x[1] + 1, lambda t: 0.0, lambda t: x[2] * t)[0]


def tplquad_(x):
    return si.tplquad(lambda z, y, t: x[0] * t * y * z + np.sin(x[1] * z), 0, 1, 0, 1, 0, 1)[0]


def nquad_opts(x):
    return si.nquad(lambda a, b: np.cos(x[0] * a) * b + x[2], [[0, 1], [0, x[1] + 1]], opts={"epsabs": 1e-10})[0]


def nquad_args(x):
    return si.nquad(lambda a, b, c: c * a * b + x[2] * a, [[0, 1], [0, 1]], args=(x[0],))[0]


CASES = [dblquad_constant_limits, dblquad_moving_limits, tplquad_, nquad_opts, nquad_args]


# reverse mode of tplquad nests three quad_vec's of pullbacks: about 100 s
REVERSE_CASES = [pytest.param(f, marks=pytest.mark.slow) if f is tplquad_ else f for f in CASES]


@pytest.mark.parametrize("f", REVERSE_CASES, ids=lambda f: getattr(f, "__name__", "tplquad_"))
def test_gradient_matches_differences(f):
    np.testing.assert_allclose(yb.grad(f)(X0.copy()), central_differences(f, X0), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_jvp_matches_differences(f):
    value, tangent = yb.jvp(f, (X0.copy(),), (V,))
    assert value == pytest.approx(f(X0))
    assert tangent == pytest.approx(central_differences(f, X0) @ V, rel=1e-5, abs=1e-7)


@pytest.mark.parametrize("f", CASES[:2], ids=lambda f: f.__name__)
def test_forward_jacobian_matches_reverse(f):
    forward = yb.jacobian(f, mode="fwd", chunk_size=1)(X0.copy())
    np.testing.assert_allclose(forward, central_differences(f, X0), rtol=1e-5, atol=1e-7)


# second order nests quadratures of dual pullbacks (and the differences take reverse-mode
# gradients): a minute per double integral, more for tplquad; moving limits and args= run by default
QUICK = (dblquad_moving_limits, nquad_args)
SECOND_ORDER_CASES = [f if f in QUICK else pytest.param(f, marks=pytest.mark.slow) for f in CASES]


def _gradient_differences(f, x, v, h=1e-4):
    gradient = yb.grad(f)
    return (gradient(x + h * v) - gradient(x - h * v)) / (2 * h)


@pytest.mark.parametrize("f", SECOND_ORDER_CASES, ids=lambda f: getattr(f, "__name__", "tplquad_"))
def test_second_order_matches_differences(f):
    value, (gradient,), (hv,) = yb.hvp(f, (X0.copy(),), (V,))
    assert value == f(X0)  # (the same quad calls as SciPy's: the same value)
    np.testing.assert_allclose(gradient, yb.grad(f)(X0.copy()), rtol=1e-8)
    np.testing.assert_allclose(hv, _gradient_differences(f, X0, V), rtol=1e-5, atol=1e-7)


def nested_with_star_args(x):
    """nquad's definition: the inner quad's args=(t, *rest) is built by star-unpacking."""
    def f(a, b, c):
        return (a * x[0]) ** 2 * b * x[1] + c * x[2] * a  # (a polynomial: one pass of each quad)

    def inner(t, *rest):
        return si.quad(f, 0.0, 1.0, args=(t, *rest))[0]
    return si.quad(inner, 0.0, 2.0, args=(x[0],))[0]


def test_nested_quad_with_star_args_in_second_order():
    _, _, (hv,) = yb.hvp(nested_with_star_args, (X0.copy(),), (V,))
    np.testing.assert_allclose(hv, _gradient_differences(nested_with_star_args, X0, V), rtol=1e-5, atol=1e-7)


class Recorder:
    """An integrand that keeps the last value it computed (state the plain run changes)."""

    def __init__(self, k):
        self.k = k
        self.last = 0

    def f(self, t):
        self.last = self.k * t
        return np.sin(self.k * t)


def test_state_written_by_the_integrand_has_no_silent_tangent():
    """``a.last`` is written by quad's undifferentiated run: its tangent is NaN, not a stale 0."""
    def f(x):
        a = Recorder(x[0])
        return si.quad(a.f, 0, 1)[0] + a.last

    _, tangent = yb.jvp(f, (X0.copy(),), (V,))
    assert np.isnan(tangent)
    with pytest.raises(ValueError, match="writes float state"):  # reverse mode: refused, not dropped
        yb.grad(f)(X0.copy())


def test_state_written_by_a_vector_integrand_is_refused_in_reverse_mode():
    def f(x):
        a = Recorder(x[0])
        return np.sum(si.quad_vec(lambda t: np.array([a.f(t), t]), 0, 1)[0]) + a.last

    with pytest.raises(ValueError, match="writes float state"):
        yb.grad(f)(X0.copy())
    assert np.isnan(yb.jvp(f, (X0.copy(),), (V,))[1])


@pytest.mark.parametrize("bind", ["method", "partial"])
def test_state_written_but_unused_keeps_the_derivative(bind):
    def f(x):
        a = Recorder(x[0])
        integrand = a.f if bind == "method" else functools.partial(Recorder.f, a)
        return si.quad(integrand, 0, x[1])[0]

    want = central_differences(f, X0)
    assert yb.jvp(f, (X0.copy(),), (V,))[1] == pytest.approx(want @ V, rel=1e-6)
    np.testing.assert_allclose(yb.grad(f)(X0.copy()), want, rtol=1e-6, atol=1e-8)
    _, _, (hv,) = yb.hvp(f, (X0.copy(),), (V,))
    h = 1e-4
    np.testing.assert_allclose(hv, (central_differences(f, X0 + h * V) - central_differences(f, X0 - h * V)) / (2 * h),
                               rtol=2e-3, atol=1e-4)


def test_batched_forward_jacobian_is_refused_with_advice_that_works():
    """The refreshed tangent is written in place (fdata), which the batched forward Jacobian cannot
    carry back per direction: refused, and its advice (chunk_size=1) is what the test above runs."""
    with pytest.raises(NotImplementedError, match="chunk_size=1"):
        yb.jacobian(dblquad_constant_limits, mode="fwd")(X0.copy())
