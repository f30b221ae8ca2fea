"""yuebing's second order (``yb.hvp``, ``yb.hessian``) driving ``scipy.optimize.minimize``.

Newton-CG takes ``hessp=`` (a Hessian-vector product, one forward-over-reverse pass) and
trust-ncg takes ``hess=`` (the full Hessian); each optimum is checked against a reference found
without yuebing's second order (BFGS on yuebing gradients, or a closed form).
"""
import numpy as np
import pytest
import scipy.optimize

import yuebing as yb

# --------------------------------------------------------------------------------------------
# Regularised logistic regression: 200 samples x 5 features, labels in {-1, +1}
# --------------------------------------------------------------------------------------------

_rng = np.random.default_rng(20240611)
X = _rng.normal(size=(200, 5))
W_TRUE = np.array([1.5, -2.0, 0.5, 0.0, 1.0])
Y = np.where(_rng.uniform(size=200) < 1.0 / (1.0 + np.exp(-(X @ W_TRUE))), 1.0, -1.0)
LAM = 0.05


def logistic_loss(w):
    """mean(log(1 + exp(-y * Xw))) + lam/2 |w|^2, stable for large |margin|:
    log(1 + exp(z)) = max(z, 0) + log1p(exp(-|z|))."""
    z = -Y * (X @ w)
    return np.mean(np.maximum(z, 0.0) + np.log1p(np.exp(-np.abs(z)))) + 0.5 * LAM * np.sum(w ** 2)


def logistic_loss_data(w, X, y, lam):
    """The same loss with the data passed as arguments (held fixed with NoTangent)."""
    z = -y * (X @ w)
    return np.mean(np.logaddexp(0.0, z)) + 0.5 * lam * np.sum(w * w)


def fun_and_grad(w):
    value, g = yb.value_and_grad(logistic_loss)(w)
    return float(value), g


def hessp(w, p):
    _, _, (hv,) = yb.hvp(logistic_loss, (w,), (p,))
    return hv


def hess(w):
    return yb.hessian(logistic_loss)(w)


@pytest.fixture(scope="module")
def logistic_reference():
    """The optimum by BFGS on yuebing gradients (no second order), tight tolerance."""
    result = scipy.optimize.minimize(fun_and_grad, np.zeros(5), jac=True, method="BFGS",
                                     options={"gtol": 1e-11, "maxiter": 1000})
    # (BFGS may report "precision loss" this close to the optimum: check the gradient instead)
    assert np.linalg.norm(fun_and_grad(result.x)[1]) < 1e-8
    return result.x


def test_value_and_grad_matches_plain_numpy():
    w = np.linspace(-1.0, 1.0, 5)
    value, g = yb.value_and_grad(logistic_loss)(w)
    margins = Y * (X @ w)
    assert value == pytest.approx(np.mean(np.log(1.0 + np.exp(-margins))) + 0.5 * LAM * w @ w, rel=1e-12)
    sigma = 1.0 / (1.0 + np.exp(margins))  # d/dm log(1 + exp(-m)) = -sigma
    np.testing.assert_allclose(g, -(X.T @ (Y * sigma)) / len(Y) + LAM * w, rtol=1e-10, atol=1e-14)


def test_newton_cg_with_hvp(logistic_reference):
    result = scipy.optimize.minimize(fun_and_grad, np.zeros(5), jac=True, hessp=hessp, method="Newton-CG",
                                     options={"xtol": 1e-10})
    assert result.success, result.message
    assert result.nhev > 0  # scipy did use the Hessian-vector products
    assert np.linalg.norm(fun_and_grad(np.zeros(5))[1]) > 0.1
    assert np.linalg.norm(fun_and_grad(result.x)[1]) < 1e-7
    np.testing.assert_allclose(result.x, logistic_reference, rtol=1e-6, atol=1e-7)
    # a far-from-trivial optimum: the loss dropped from log(2) and the fit recovers W_TRUE's signs
    assert result.fun < 0.75 * np.log(2.0)
    assert np.all(np.sign(result.x[[0, 1, 2, 4]]) == np.sign(W_TRUE[[0, 1, 2, 4]]))


def test_trust_ncg_with_hessian(logistic_reference):
    result = scipy.optimize.minimize(fun_and_grad, np.zeros(5), jac=True, hess=hess, method="trust-ncg",
                                     options={"gtol": 1e-10})
    assert result.success, result.message
    assert result.nhev > 0
    assert np.linalg.norm(fun_and_grad(result.x)[1]) < 1e-9
    np.testing.assert_allclose(result.x, logistic_reference, rtol=1e-6, atol=1e-7)


def test_newton_cg_with_data_arguments_held_fixed(logistic_reference):
    """Data as extra arguments (scipy's args=): NoTangent holds them fixed in hvp, and
    argnums=0 restricts the Hessian to w."""
    args = (X, Y, LAM)

    def fun(w, *data):
        value, g = yb.value_and_grad(logistic_loss_data)(w, *data)
        return float(value), g

    def hessp_data(w, p, X, y, lam):
        value, grads, hvps = yb.hvp(logistic_loss_data, (w, X, y, lam), (p, yb.NoTangent, yb.NoTangent,
                                                                         yb.NoTangent))
        assert len(grads) == len(hvps) == 4
        return hvps[0]

    result = scipy.optimize.minimize(fun, np.zeros(5), args=args, jac=True, hessp=hessp_data,
                                     method="Newton-CG", options={"xtol": 1e-10})
    assert result.success, result.message
    np.testing.assert_allclose(result.x, logistic_reference, rtol=1e-6, atol=1e-7)
    H = yb.hessian(logistic_loss_data, argnums=0)(result.x, *args)
    np.testing.assert_allclose(H, hess(result.x), rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------------------------
# Hessian checks on the logistic loss
# --------------------------------------------------------------------------------------------

W0 = np.array([0.3, -0.7, 1.1, 0.2, -0.4])


def test_hessian_matches_finite_differences_of_grad():
    H = yb.hessian(logistic_loss)(W0)
    assert H.shape == (5, 5)
    grad = yb.grad(logistic_loss)
    eps = 1e-5
    columns = []
    for k in range(5):
        e = np.zeros(5)
        e[k] = eps
        columns.append((grad(W0 + e) - grad(W0 - e)) / (2 * eps))
    H_fd = np.stack(columns, axis=1)
    np.testing.assert_allclose(H, H_fd, rtol=1e-5, atol=1e-7 * np.max(np.abs(H)))


def test_hessian_is_symmetric_positive_definite():
    H = yb.hessian(logistic_loss)(W0)
    np.testing.assert_allclose(H, H.T, rtol=1e-12, atol=1e-15)
    # convex loss + ridge: every eigenvalue is at least lam
    assert np.min(np.linalg.eigvalsh(H)) >= LAM * (1 - 1e-10)


def test_hessian_matches_closed_form():
    margins = Y * (X @ W0)
    s = 1.0 / (1.0 + np.exp(-margins))
    H_exact = (X.T * (s * (1 - s))) @ X / len(Y) + LAM * np.eye(5)
    np.testing.assert_allclose(yb.hessian(logistic_loss)(W0), H_exact, rtol=1e-10, atol=1e-14)


def test_hvp_equals_hessian_times_vector():
    H = yb.hessian(logistic_loss)(W0)
    rng = np.random.default_rng(3)
    for _ in range(3):
        v = rng.normal(size=5)
        value, (g,), (hv,) = yb.hvp(logistic_loss, (W0,), (v,))
        np.testing.assert_allclose(hv, H @ v, rtol=1e-10, atol=1e-14)
        assert value == pytest.approx(logistic_loss(W0), rel=1e-14)
        np.testing.assert_allclose(g, yb.grad(logistic_loss)(W0), rtol=1e-12, atol=1e-15)


def test_hvp_and_hessian_leave_arguments_unchanged():
    w, v = W0.copy(), np.ones(5)
    yb.hvp(logistic_loss, (w,), (v,))
    yb.hessian(logistic_loss)(w)
    np.testing.assert_array_equal(w, W0)
    np.testing.assert_array_equal(v, np.ones(5))


# --------------------------------------------------------------------------------------------
# Structured parameters: {"W": 3x2, "b": 2}, a small nonlinear least-squares model
# --------------------------------------------------------------------------------------------

_rng2 = np.random.default_rng(7)
A = _rng2.normal(size=(40, 3))
TARGETS = np.tanh(A @ np.array([[0.8, -0.5], [0.3, 1.2], [-1.0, 0.4]]) + np.array([0.1, -0.2])) \
    + 0.05 * _rng2.normal(size=(40, 2))
RIDGE = 1e-3
PARAMS0 = {"W": np.zeros((3, 2)), "b": np.zeros(2)}


def model_loss(p):
    """0.5 * mean squared residual of tanh(A W + b), plus a small ridge on W."""
    r = np.tanh(A @ p["W"] + p["b"]) - TARGETS
    return 0.5 * np.mean(np.sum(r * r, axis=1)) + 0.5 * RIDGE * np.sum(p["W"] ** 2)


def flat_loss(x):
    """model_loss on the flat vector, slicing it in yb.flatten's order (W then b).

    Differentiating through ``unflatten`` itself does not work (see the report); flatten and
    unflatten move between the dict and the vector outside the differentiated function."""
    W = x[:6].reshape(3, 2)
    b = x[6:]
    r = np.tanh(A @ W + b) - TARGETS
    return 0.5 * np.mean(np.sum(r * r, axis=1)) + 0.5 * RIDGE * np.sum(W ** 2)


@pytest.fixture(scope="module")
def structured_reference():
    v0, unflatten = yb.flatten(PARAMS0)

    def fun(v):
        value, g = yb.value_and_grad(model_loss)(unflatten(v))
        return float(value), yb.flatten_tangent(PARAMS0, g)

    result = scipy.optimize.minimize(fun, v0, jac=True, method="BFGS", options={"gtol": 1e-11, "maxiter": 2000})
    assert np.linalg.norm(fun(result.x)[1]) < 1e-8
    return result.x


def test_flatten_layout_is_w_then_b():
    v0, unflatten = yb.flatten({"W": np.arange(6.0).reshape(3, 2), "b": np.array([6.0, 7.0])})
    np.testing.assert_array_equal(v0, np.arange(8.0))
    x = np.linspace(-1.0, 1.0, 8)
    assert flat_loss(x) == pytest.approx(model_loss(unflatten(x)), rel=1e-14)


def test_structured_newton_cg_on_flat_model(structured_reference):
    v0, unflatten = yb.flatten(PARAMS0)

    def fun(x):
        value, g = yb.value_and_grad(flat_loss)(x)
        return float(value), g

    def hessp_flat(x, p):
        return yb.hvp(flat_loss, (x,), (p,))[2][0]

    result = scipy.optimize.minimize(fun, v0, jac=True, hessp=hessp_flat, method="Newton-CG",
                                     options={"xtol": 1e-10})
    assert result.success, result.message
    assert np.linalg.norm(fun(v0)[1]) > 0.1
    assert np.linalg.norm(fun(result.x)[1]) < 1e-7
    np.testing.assert_allclose(result.x, structured_reference, rtol=1e-5, atol=1e-6)
    best = unflatten(result.x)
    assert best["W"].shape == (3, 2) and best["b"].shape == (2,)
    assert model_loss(best) < 0.1 * model_loss(PARAMS0)


def test_structured_newton_cg_with_dict_hvp(structured_reference):
    """hvp takes the dict directly: unflatten the point and the direction, flatten the results."""
    v0, unflatten = yb.flatten(PARAMS0)

    def fun(v):
        value, g = yb.value_and_grad(model_loss)(unflatten(v))
        return float(value), yb.flatten_tangent(PARAMS0, g)

    def hessp_dict(v, p):
        _, _, (hv,) = yb.hvp(model_loss, (unflatten(v),), (unflatten(p),))
        return yb.flatten_tangent(PARAMS0, hv)

    result = scipy.optimize.minimize(fun, v0, jac=True, hessp=hessp_dict, method="Newton-CG",
                                     options={"xtol": 1e-10})
    assert result.success, result.message
    assert np.linalg.norm(fun(result.x)[1]) < 1e-7
    np.testing.assert_allclose(result.x, structured_reference, rtol=1e-5, atol=1e-6)


def test_structured_dict_hvp_equals_flat_hessian():
    v, unflatten = yb.flatten({"W": np.array([[0.2, -0.1], [0.4, 0.3], [-0.5, 0.6]]), "b": np.array([0.1, -0.3])})
    H = yb.hessian(flat_loss)(v)
    np.testing.assert_allclose(H, H.T, rtol=1e-10, atol=1e-14)
    p = np.random.default_rng(11).normal(size=8)
    value, (g,), (hv,) = yb.hvp(model_loss, (unflatten(v),), (unflatten(p),))
    assert set(hv) == {"W", "b"} and hv["W"].shape == (3, 2)
    np.testing.assert_allclose(yb.flatten_tangent(unflatten(v), hv), H @ p, rtol=1e-10, atol=1e-14)
    np.testing.assert_allclose(yb.flatten_tangent(unflatten(v), g), yb.grad(flat_loss)(v), rtol=1e-12, atol=1e-15)


# --------------------------------------------------------------------------------------------
# Errors
# --------------------------------------------------------------------------------------------


def vector_valued(w):
    return X @ w


def test_hessian_of_vector_output_raises():
    with pytest.raises(TypeError, match="scalar"):
        yb.hessian(vector_valued)(W0)


def test_hvp_mismatched_lengths_raises():
    with pytest.raises(TypeError, match="2 primals but 1 tangents"):
        yb.hvp(logistic_loss_data, (W0, X), (np.ones(5),))
    with pytest.raises(TypeError):
        yb.hvp(logistic_loss, (W0,), (np.ones(5), np.ones(5)))


def test_hvp_direction_of_wrong_shape_raises():
    with pytest.raises(TypeError, match="direction for argument 0"):
        yb.hvp(logistic_loss, (W0,), (np.ones(4),))


def test_hessian_of_dict_argument_points_to_flatten():
    with pytest.raises(TypeError, match="flatten"):
        yb.hessian(model_loss)(PARAMS0)
