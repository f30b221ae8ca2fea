"""scipy.integrate.dblquad/tplquad/nquad in forward mode: SciPy's ``_NQuad`` integrates a partial of
its own bound method, and the plain run of the outer quad turns the object's ``abserr`` from the int
0 into a float; the tangent taken before that run is refreshed (tangents/stale.py: a leaf that
appeared or changed gets a NaN tangent, its derivative unknown). Each against finite differences
in reverse, forward and forward Jacobian; a quad whose integrand writes state the code then reads
gets a NaN tangent and is refused in reverse mode, never a silent number. Second order is refused with advice (nested quad) that
the test runs."""
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


def test_second_order_is_refused_with_advice_that_works():
    with pytest.raises(yb.SecondOrderError, match="nest quad"):
        yb.hvp(nquad_opts, (X0.copy(),), (V,))

    def nested(x):  # the advice, for nquad_opts's integral
        return si.quad(lambda b: si.quad(lambda a: np.cos(x[0] * a) * b + x[2], 0, 1, epsabs=1e-10)[0],
                       0, x[1] + 1, epsabs=1e-10)[0]

    assert nested(X0) == pytest.approx(nquad_opts(X0), rel=1e-10)
    _, _, (hv,) = yb.hvp(nested, (X0.copy(),), (V,))
    h = 1e-4
    want = (central_differences(nested, X0 + h * V) - central_differences(nested, X0 - h * V)) / (2 * h)
    np.testing.assert_allclose(hv, want, rtol=2e-3, atol=1e-4)


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
