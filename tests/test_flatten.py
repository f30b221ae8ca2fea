"""flatten/unflatten for optimisers, and gradients through scipy.optimize.minimize(jac=True)."""
import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import compare


@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: float
    name: str


def test_round_trip_keeps_structure_and_values():
    shared = np.arange(3.0)
    x = {"layer": Layer(np.ones((2, 2)), 0.5, "l1"), "shared": [shared, shared], "n": 3, "t": (1.5, shared[1:])}
    v, unflatten = yb.flatten(x)
    assert v.dtype == np.float64 and v.size == 4 + 1 + 3 + 1  # the view of `shared` counts once
    y = unflatten(v)
    assert compare(x, y) is None  # same values, types, aliasing and views
    z = unflatten(v + 1.0)
    assert z["layer"].b == 1.5 and np.all(z["layer"].w == 2.0) and z["shared"][0] is z["shared"][1]
    assert z["n"] == 3 and z["layer"].name == "l1"
    assert np.shares_memory(z["t"][1], z["shared"][0])


def test_flatten_tangent_matches_layout():
    x = {"a": np.array([1.0, 2.0]), "b": 3.0}
    g = {"a": np.array([10.0, 20.0]), "b": 30.0}
    v, _ = yb.flatten(x)
    np.testing.assert_array_equal(yb.flatten_tangent(x, g)[np.argsort(v)], [10.0, 20.0, 30.0])


def test_unflatten_checks_length():
    _, unflatten = yb.flatten([1.0, np.ones(2)])
    with pytest.raises(ValueError, match="expected a vector of 3"):
        unflatten(np.zeros(4))


def rosenbrock_model(p):
    a, b = p["a"], p["rest"]["b"]
    return (1.0 - a) ** 2 + 100.0 * np.sum((b - a * a) ** 2)


def test_scipy_minimize_with_yuebing_gradients():
    scipy_optimize = pytest.importorskip("scipy.optimize")
    params = {"a": -1.2, "rest": {"b": np.array([1.0])}}
    v0, unflatten = yb.flatten(params)

    def fun(v):
        value, g = yb.value_and_grad(rosenbrock_model)(unflatten(v))
        return value, yb.flatten_tangent(params, g)

    result = scipy_optimize.minimize(fun, v0, jac=True, method="BFGS")
    assert result.success
    best = unflatten(result.x)
    assert best["a"] == pytest.approx(1.0, abs=1e-4) and best["rest"]["b"][0] == pytest.approx(1.0, abs=1e-4)


def test_unflatten_is_differentiable_in_every_mode():
    shared = np.array([0.4, -1.2, 0.7])
    x = {"layer": Layer(np.array([[0.5, -1.0], [2.0, 0.3]]), 0.5, "l1"), "shared": [shared, shared],
         "t": (1.5, shared[1:])}
    v0, unflatten = yb.flatten(x)

    def loss(v):
        m = unflatten(v)
        return (np.sum(m["layer"].w ** 2) * m["layer"].b + np.sum(m["shared"][0] * m["t"][1].sum())
                + m["t"][0] ** 3)

    rng = np.random.default_rng(0)
    direction = rng.standard_normal(v0.shape)
    h = 1e-6
    finite = (loss(v0 + h * direction) - loss(v0 - h * direction)) / (2 * h)
    assert np.dot(yb.grad(loss)(v0), direction) == pytest.approx(finite, rel=1e-6)
    assert yb.jvp(loss, (v0,), (direction,))[1] == pytest.approx(finite, rel=1e-6)
    hessian = yb.hessian(loss)(v0)
    grad = yb.grad(loss)
    finite_columns = np.stack([(grad(v0 + h * e) - grad(v0 - h * e)) / (2 * h) for e in np.eye(v0.size)], axis=1)
    np.testing.assert_allclose(hessian, finite_columns, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(hessian, hessian.T, atol=1e-10)
