"""Under the user's ``np.errstate(... 'raise')`` a derivative program raises where the plain call
raises, and only there (ir/float_errors.py): a tangent's inf or NaN (sqrt's derivative at 0, a
partial of arcsin at 1) is kept, a primal's division by zero still raises, in every mode."""
import numpy as np
import pytest

import yuebing as yb

X = np.array([0.5, -0.3, 1.0])
V = np.array([0.3, 1.0, -0.7])


def sqrt_at_zero_inside(x):  # the fuzzer's repro: y's tangent is 0.5 / sqrt(0)
    with np.errstate(divide="raise"):
        y = np.sqrt(x * 0.0)
    return np.sum(x * x) + np.sum(np.where(y > 0.0, y, 0.0))


def arcsin_at_one_inside(x):  # arcsin's partial 1 / sqrt(1 - 1), in an elementwise rule
    with np.errstate(all="raise"):
        y = np.arcsin(x * 0.0 + 1.0)
        z = np.sum(x * np.sin(x)) + np.sum(np.where(y > 2.0, y, 0.0))
    return z


def power_at_zero(x):  # (x * 0) ** 0.5: its tangent divides by zero in a power
    y = (x * 0.0) ** 0.5
    return np.sum(x * np.cos(x)) + np.sum(np.where(y > 0.0, y, 0.0))


def scalar_sqrt_at_zero(x):
    y = np.sqrt(x[0] * 0.0)
    return np.sum(x ** 3) + (y if y > 0.0 else 0.0)


def caught_primal_error(x):  # the user's code relies on the primal raising
    with np.errstate(divide="raise"):
        try:
            y = x / (x * 0.0)
        except FloatingPointError:
            y = np.sin(x)
    return np.sum(y * x)


TANGENT_ONLY = [sqrt_at_zero_inside, arcsin_at_one_inside, caught_primal_error]
CALLER_RAISES = [sqrt_at_zero_inside, arcsin_at_one_inside, power_at_zero, scalar_sqrt_at_zero, caught_primal_error]


def assert_matches_differences(f, gradient, x, h=1e-6):
    """gradient . d against a central difference of f along three directions."""
    for d in (V, np.array([1.0, 0.0, 0.0]), np.array([-0.2, 0.9, 0.4])):
        difference = (f(x + h * d) - f(x - h * d)) / (2 * h)
        np.testing.assert_allclose(np.dot(gradient, d), difference, rtol=1e-5, atol=1e-7)


def _all_modes(f):
    """gradient, jvp, forward Jacobian, hvp and Hessian of f at X along V."""
    value, jv = yb.jvp(f, (X,), (V,))
    _, (gradient,), (hv,) = yb.hvp(f, (X,), (V,))
    return {"grad": yb.grad(f)(X), "jvp": jv, "jacfwd": np.ravel(yb.jacobian(f, mode="fwd")(X)), "hvp_grad": gradient,
            "hvp": hv, "hessian": yb.hessian(f)(X), "value": value}


def _check_modes(f, results):
    assert_matches_differences(f, results["grad"], X)
    np.testing.assert_allclose(results["jvp"], results["grad"] @ V, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results["jacfwd"], results["grad"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results["hvp_grad"], results["grad"], rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(results["hvp"], results["hessian"] @ V, rtol=1e-10, atol=1e-12)
    assert_matches_differences(lambda x: yb.grad(f)(x) @ V, results["hvp"], X)


@pytest.mark.parametrize("f", TANGENT_ONLY, ids=lambda f: f.__name__)
def test_errstate_inside_raises_only_for_the_primal(f):
    f(X)  # the plain call runs
    _check_modes(f, _all_modes(f))


@pytest.mark.parametrize("f", CALLER_RAISES, ids=lambda f: f.__name__)
def test_callers_errstate_raises_only_for_the_primal(f):
    before = np.geterr()  # (not NumPy's default when an imported library changed it: compared, not assumed)
    with np.errstate(all="raise"):
        f(X)
        results = _all_modes(f)
    _check_modes(f, results)
    assert np.geterr() == before  # the caller's state is back


def _primal_divides_by_zero(x):
    with np.errstate(divide="raise"):
        y = 1.0 / (x * 0.0)
    return np.sum(x * x) + np.sum(y)


def _primal_log_of_zero(x):  # the primal of a rule (np.log) fails
    return np.sum(x * x) + np.sum(np.log(x * 0.0))


def _primal_scalar_division(x):
    s = x[0] * 0.0
    return np.sum(x * x) + np.float64(1.0) / s


RUNS = {"grad": lambda f: yb.grad(f)(X), "jvp": lambda f: yb.jvp(f, (X,), (V,)),
        "jacfwd": lambda f: yb.jacobian(f, mode="fwd")(X), "hvp": lambda f: yb.hvp(f, (X,), (V,)),
        "hessian": lambda f: yb.hessian(f)(X)}


@pytest.mark.parametrize("mode", sorted(RUNS))
def test_primal_error_still_raises(mode):
    with pytest.raises(FloatingPointError):
        _primal_divides_by_zero(X)
    with pytest.raises(FloatingPointError, match="divide by zero"):
        RUNS[mode](_primal_divides_by_zero)
    for f in (_primal_log_of_zero, _primal_scalar_division):
        with np.errstate(divide="raise"):
            with pytest.raises(FloatingPointError):
                f(X)
            with pytest.raises(FloatingPointError, match="divide by zero"):
                RUNS[mode](f)


def test_users_error_handler_is_kept():
    """A state calling the user's handler is left as it is: the handler sees the primal's error."""
    seen = []
    with np.errstate(divide="call", call=lambda kind, flag: seen.append(kind)):
        yb.grad(_primal_log_of_zero)(X)
    assert any(kind.startswith("divide") for kind in seen)
