"""solve_ivp and odeint inside differentiated code (api/ode.py): the continuous adjoint (reverse) and
the sensitivity equations (forward), against closed forms (exponential decay, the damped
oscillator's) and central finite differences (Lotka-Volterra), at tight solver tolerances
(rtol=1e-10, atol=1e-12). Measured (exponential decay, every method, relative to the closed form's
derivative): reverse 6e-12 (Radau) to 1e-9 (BDF), forward 2e-12 (RK45) to 7e-10 (BDF)."""
import dataclasses

import numpy as np
import pytest
from scipy.integrate import odeint, solve_ivp

import yuebing as yb

TIGHT = {"rtol": 1e-10, "atol": 1e-12}
TIMES = np.linspace(0.0, 2.0, 5)
Y0 = np.array([1.0, 2.0])
K = 0.7


def central_differences(f, x, h=1e-5):
    """The gradient of scalar ``f`` at vector ``x`` by central differences (step relative to x)."""
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        step = h * max(1.0, abs(x[i]))
        e = np.zeros_like(x)
        e[i] = step
        g[i] = (f(x + e) - f(x - e)) / (2 * step)
    return g


def relative_error(a, b):
    flat = lambda v: np.concatenate([np.ravel(np.asarray(p, float)) for p in (v if isinstance(v, tuple) else (v,))])  # noqa: E731
    a, b = flat(a), flat(b)
    return float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300))


# --------------------------------------------------------------------------------------------
# Exponential decay y' = -k y: closed form y0 exp(-k (t - t0))
# --------------------------------------------------------------------------------------------


def decay_loss(method, tolerances):
    def loss(y0, k, t_eval, t0):
        sol = solve_ivp(lambda t, y, k: -k * y, (t0, 2.0), y0, method=method, t_eval=t_eval, args=(k,), **tolerances)
        return np.sum(np.sin(sol.y) * np.arange(1.0, 6.0))

    return loss


def decay_exact(y0, k, t_eval, t0):
    return np.sum(np.sin(y0[:, None] * np.exp(-k * (t_eval - t0))) * np.arange(1.0, 6.0))


ARGS = (Y0, K, TIMES, 0.0)
DIRECTION = (np.array([1.0, -0.5]), 0.3, np.linspace(0.2, 1.0, 5), 0.4)
METHODS = [("RK45", TIGHT), ("RK23", {"rtol": 1e-8, "atol": 1e-10}), ("DOP853", TIGHT), ("BDF", TIGHT),
           ("Radau", TIGHT), ("LSODA", TIGHT)]


@pytest.mark.parametrize("method,tolerances", METHODS, ids=[m for m, _ in METHODS])
def test_decay_reverse_matches_closed_form(method, tolerances):
    got = yb.grad(decay_loss(method, tolerances), argnums=(0, 1, 2, 3))(*ARGS)
    want = yb.grad(decay_exact, argnums=(0, 1, 2, 3))(*ARGS)
    bound = 1e-6 if method == "RK23" else 1e-8
    for g, w in zip(got, want):
        assert relative_error(g, w) < bound


@pytest.mark.parametrize("method,tolerances", METHODS, ids=[m for m, _ in METHODS])
def test_decay_forward_matches_closed_form(method, tolerances):
    value, tangent = yb.jvp(decay_loss(method, tolerances), ARGS, DIRECTION)
    exact_value, exact_tangent = yb.jvp(decay_exact, ARGS, DIRECTION)
    bound = 1e-6 if method == "RK23" else 1e-8
    assert abs(value - exact_value) < bound * abs(exact_value)
    assert relative_error(tangent, exact_tangent) < bound


def test_decay_odeint_both_modes():
    def loss(y0, k, t):
        return np.sum(np.sin(odeint(lambda y, t, k: -k * y, y0, t, args=(k,), **TIGHT)).T * np.arange(1.0, 6.0))

    def exact(y0, k, t):
        return decay_exact(y0, k, t, t[0])

    times = TIMES + 0.25
    got = yb.grad(loss, argnums=(0, 1, 2))(Y0, K, times)
    want = yb.grad(exact, argnums=(0, 1, 2))(Y0, K, times)
    for g, w in zip(got, want):
        assert relative_error(g, w) < 1e-8
    direction = (np.array([1.0, -0.5]), 0.3, np.linspace(0.2, 1.0, 5))
    assert relative_error(yb.jvp(loss, (Y0, K, times), direction)[1], yb.jvp(exact, (Y0, K, times), direction)[1]) < 1e-8


def test_odeint_tfirst_and_list_state():
    def loss(a, b, k):
        ys = odeint(lambda t, y: [-k * y[0], -2.0 * k * y[1]], [a, b], TIMES, tfirst=True, **TIGHT)
        return np.sum(ys[-1] ** 2)

    def exact(a, b, k):
        return (a * np.exp(-2.0 * k)) ** 2 + (b * np.exp(-4.0 * k)) ** 2

    assert relative_error(yb.grad(loss, argnums=(0, 1, 2))(1.0, 2.0, K), yb.grad(exact, argnums=(0, 1, 2))(1.0, 2.0, K)) < 1e-8


# --------------------------------------------------------------------------------------------
# Lotka-Volterra, parameters closed over: against finite differences
# --------------------------------------------------------------------------------------------


def lotka_volterra_loss(theta, y0, method="RK45"):
    a, b, c, d = theta

    def rhs(t, y):
        prey, predator = y
        return np.array([a * prey - b * prey * predator, c * prey * predator - d * predator])

    sol = solve_ivp(rhs, (0.0, 3.0), y0, method=method, t_eval=np.linspace(0.0, 3.0, 7), **TIGHT)
    return np.sum((sol.y - 1.0) ** 2)


THETA = np.array([1.1, 0.4, 0.3, 0.8])
LV_Y0 = np.array([2.0, 1.0])


@pytest.mark.parametrize("method", ["DOP853", "BDF", "LSODA"])
def test_lotka_volterra_against_finite_differences(method):
    grad_theta, grad_y0 = yb.grad(lotka_volterra_loss, argnums=(0, 1))(THETA, LV_Y0, method)
    assert relative_error(grad_theta, central_differences(lambda th: lotka_volterra_loss(th, LV_Y0, method), THETA)) < 1e-6
    assert relative_error(grad_y0, central_differences(lambda y: lotka_volterra_loss(THETA, y, method), LV_Y0)) < 1e-6


def test_lotka_volterra_forward_and_reverse_agree():
    """A dot-product test: <reverse gradient, v> equals the forward derivative along v."""
    v_theta, v_y0 = np.array([0.3, -0.2, 0.5, 0.1]), np.array([-0.4, 0.7])
    grad_theta, grad_y0 = yb.grad(lotka_volterra_loss, argnums=(0, 1))(THETA, LV_Y0, "DOP853")
    _, forward = yb.jvp(lambda th, y: lotka_volterra_loss(th, y, "DOP853"), (THETA, LV_Y0), (v_theta, v_y0))
    assert abs(forward - (grad_theta @ v_theta + grad_y0 @ v_y0)) < 1e-8 * max(1.0, abs(forward))


# --------------------------------------------------------------------------------------------
# A damped oscillator: parameters in args= and in a closure, the same derivative
# --------------------------------------------------------------------------------------------


def oscillator(t, y, omega, zeta):
    x, v = y
    return [v, -2.0 * zeta * omega * v - omega ** 2 * x]


def oscillator_exact(omega, zeta, x0, t):
    """x(t) of the underdamped oscillator started at rest from x0."""
    wd = omega * np.sqrt(1.0 - zeta ** 2)
    return x0 * np.exp(-zeta * omega * t) * (np.cos(wd * t) + zeta * omega / wd * np.sin(wd * t))


def oscillator_in_args(omega, zeta, x0):
    sol = solve_ivp(oscillator, (0.0, 4.0), [x0, 0.0], t_eval=[1.0, 2.5, 4.0], args=(omega, zeta), method="DOP853",
                    **TIGHT)
    return np.sum(sol.y[0] ** 2)


def oscillator_in_closure(omega, zeta, x0):
    sol = solve_ivp(lambda t, y: oscillator(t, y, omega, zeta), (0.0, 4.0), [x0, 0.0], t_eval=[1.0, 2.5, 4.0],
                    method="DOP853", **TIGHT)
    return np.sum(sol.y[0] ** 2)


def oscillator_closed_form(omega, zeta, x0):
    return np.sum(oscillator_exact(omega, zeta, x0, np.array([1.0, 2.5, 4.0])) ** 2)


@pytest.mark.parametrize("loss", [oscillator_in_args, oscillator_in_closure], ids=["args", "closure"])
def test_damped_oscillator(loss):
    point = (1.3, 0.2, 0.8)
    want = yb.grad(oscillator_closed_form, argnums=(0, 1, 2))(*point)
    assert relative_error(yb.grad(loss, argnums=(0, 1, 2))(*point), want) < 1e-8
    direction = (0.5, -1.0, 0.25)
    assert relative_error(yb.jvp(loss, point, direction)[1], yb.jvp(oscillator_closed_form, point, direction)[1]) < 1e-8


@dataclasses.dataclass
class Model:
    omega: float
    zeta: float

    def rhs(self, t, y):
        return oscillator(t, y, self.omega, self.zeta)


def test_bound_method_parameters():
    def loss(model, x0):
        sol = solve_ivp(model.rhs, (0.0, 4.0), [x0, 0.0], t_eval=[1.0, 2.5, 4.0], method="DOP853", **TIGHT)
        return np.sum(sol.y[0] ** 2)

    g_model, g_x0 = yb.grad(loss, argnums=(0, 1))(Model(1.3, 0.2), 0.8)
    want = yb.grad(oscillator_closed_form, argnums=(0, 1, 2))(1.3, 0.2, 0.8)
    assert relative_error([g_model.omega, g_model.zeta, g_x0], want) < 1e-8


# --------------------------------------------------------------------------------------------
# Times: without t_eval the ends of t_span are differentiated; sol.t carries its tangent
# --------------------------------------------------------------------------------------------


def test_end_time_without_t_eval():
    def final(t1, k):
        sol = solve_ivp(lambda t, y: -k * y, (0.0, t1), [1.5], **TIGHT)
        return sol.y[0, -1] + 0.1 * sol.t[-1]

    def exact(t1, k):
        return 1.5 * np.exp(-k * t1) + 0.1 * t1

    assert relative_error(yb.grad(final, argnums=(0, 1))(1.7, K), yb.grad(exact, argnums=(0, 1))(1.7, K)) < 1e-8
    assert relative_error(yb.jvp(final, (1.7, K), (1.0, -0.5))[1], yb.jvp(exact, (1.7, K), (1.0, -0.5))[1]) < 1e-8


def test_backwards_in_time():
    def loss(y0, k):
        return np.sum(solve_ivp(lambda t, y: -k * y, (2.0, 0.0), y0, t_eval=[1.0, 0.0], **TIGHT).y)

    def exact(y0, k):
        return np.sum(y0 * (np.exp(k) + np.exp(2.0 * k)))

    assert relative_error(yb.grad(loss, argnums=(0, 1))(Y0, K), yb.grad(exact, argnums=(0, 1))(Y0, K)) < 1e-8


# --------------------------------------------------------------------------------------------
# Refusals: never a silent zero
# --------------------------------------------------------------------------------------------


def test_refusals():
    def dense(k):
        return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0], dense_output=True).y[0, -1]

    def events(k):
        return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0], events=lambda t, y: y[0] - 0.5).y[0, -1]

    def full(k):
        return odeint(lambda y, t: -k * y, [1.0], [0.0, 1.0], full_output=True)[0][-1, 0]

    def nfev(k):
        return solve_ivp(lambda t, y: -k * y, (0.0, 1.0), [1.0]).nfev * k

    for f, match in ((dense, "dense_output"), (events, "events"), (full, "full_output")):
        with pytest.raises(ValueError, match=match):
            yb.grad(f)(0.5)
        with pytest.raises(ValueError, match=match):
            yb.jvp(f, (0.5,), (1.0,))
        with pytest.raises(ValueError, match=match):  # second order: tests/test_ode_second_order.py
            yb.hessian(f)(0.5)
    assert yb.grad(nfev)(0.5) == solve_ivp(lambda t, y: -0.5 * y, (0.0, 1.0), [1.0]).nfev  # an int: no derivative
