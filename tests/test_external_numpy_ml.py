"""numpy-ml's own derivatives as a third oracle for its cases in the external corpus
(tests/external/cases_numpy_ml*.py): its activations' ``grad`` and ``grad2``, its losses' ``grad``
and its layers' hand-written ``backward``. yb.grad and yb.jvp are checked against the first
derivative numpy-ml writes, yb.hvp against the second where it writes one (``grad2``) and against
central differences of its first elsewhere. Nothing of numpy-ml is copied: its classes are called.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.external.cases import installed
from tests.external.cases_numpy_ml import ACTIVATIONS, expit, fixed, softmax_rows
from tests.external.cases_numpy_ml_layers import WORD_IDS, initialised

pytestmark = pytest.mark.skipif(not installed("numpy_ml"), reason="numpy-ml (the test extra) is not installed")

# away from ReLU's, LeakyReLU's and HardSigmoid's kinks (0 and +-2.5)
Z = np.array([[-1.37, -0.61, 0.23], [0.71, 1.18, 1.93]])
DIRECTION = np.array([[0.4, -1.1, 0.7], [1.3, 0.2, -0.6]])


def _activation(name):
    from numpy_ml.neural_nets import activations
    return getattr(activations, name)(**ACTIVATIONS[name])


@pytest.mark.parametrize("name", list(ACTIVATIONS))
def test_activations_against_their_own_grad_and_grad2(name: str) -> None:
    act = _activation(name)
    weights = np.linspace(0.5, 1.5, Z.size).reshape(Z.shape)

    def weighted(z):
        return np.sum(weights * act.fn(z))

    np.testing.assert_allclose(yb.grad(weighted)(Z.copy()), weights * act.grad(Z), rtol=1e-12, atol=1e-14)
    _, slope = yb.jvp(weighted, (Z.copy(),), (DIRECTION,))
    np.testing.assert_allclose(slope, np.sum(weights * act.grad(Z) * DIRECTION), rtol=1e-12, atol=1e-14)
    _, _, (product,) = yb.hvp(weighted, (Z.copy(),), (DIRECTION,))
    np.testing.assert_allclose(product, weights * act.grad2(Z) * DIRECTION, rtol=1e-10, atol=1e-12)


Y_ONE_HOT = np.eye(3)[[0, 2, 1, 2]]


def test_squared_error_against_its_own_grad() -> None:
    """``SquaredError.grad(y, y_pred, z, act_fn)``: the loss's gradient in the output layer's input."""
    from numpy_ml.neural_nets.activations import Tanh
    from numpy_ml.neural_nets.losses import SquaredError
    y, z, act = fixed((2, 3), 1), Z.copy(), Tanh()
    _check_first_order(lambda u: SquaredError.loss(y, act.fn(u)), z, lambda u: SquaredError.grad(y, act(u), u, act))


def test_cross_entropy_against_its_own_grad() -> None:
    """``CrossEntropy.grad(y, y_pred)``: the gradient in the logits of a softmax output."""
    from numpy_ml.neural_nets.losses import CrossEntropy
    z = fixed((4, 3), 2)
    _check_first_order(lambda u: CrossEntropy.loss(Y_ONE_HOT, softmax_rows(u)), z,
                       lambda u: CrossEntropy.grad(Y_ONE_HOT, softmax_rows(u)))


def test_vae_loss_against_its_own_grad() -> None:
    """``VAELoss.grad``: the gradients in the reconstruction, the log-variance and the mean."""
    from numpy_ml.neural_nets.losses import VAELoss
    y = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])
    y_pred, mean, log_var = expit(fixed((2, 3), 3)), fixed((2, 2), 4), fixed((2, 2), 5)
    _check_first_order(lambda u: VAELoss.loss(y, u, mean, log_var), y_pred,
                       lambda u: VAELoss.grad(y, u, mean, log_var)[0])
    _check_first_order(lambda u: VAELoss.loss(y, y_pred, mean, u), log_var,
                       lambda u: VAELoss.grad(y, y_pred, mean, u)[1])
    _check_first_order(lambda u: VAELoss.loss(y, y_pred, u, log_var), mean,
                       lambda u: VAELoss.grad(y, y_pred, u, log_var)[2])


def test_tree_losses_against_their_own_grad() -> None:
    """``MSELoss.grad`` divides by ``len(y)``, the mean's count for a vector of targets only (the
    regression trees' case): for a matrix it is off by the number of columns, so a vector here."""
    from numpy_ml.trees.losses import CrossEntropyLoss, MSELoss
    y, y_pred = fixed(5, 8), fixed(5, 9)
    _check_first_order(lambda u: MSELoss()(y, u), y_pred, lambda u: MSELoss().grad(y, u))
    probabilities = softmax_rows(fixed((4, 3), 6))
    _check_first_order(lambda u: CrossEntropyLoss()(Y_ONE_HOT, u), probabilities,
                       lambda u: CrossEntropyLoss().grad(Y_ONE_HOT, u))


def test_logistic_regression_nll_against_its_own_grad() -> None:
    """Unpenalised: numpy-ml's ``_NLL_grad`` subtracts the penalty's gradient ``gamma * beta / N``
    where ``_NLL`` adds the penalty (its sign is wrong; the corpus's ``logistic_nll_l2`` case, with
    ``gamma`` 0.3, agrees with central differences)."""
    from numpy_ml.linear_models import LogisticRegression
    from numpy_ml.linear_models.lm import sigmoid
    X, y, beta = fixed((6, 2), 7), np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0]), np.array([0.7, -0.4])
    model = LogisticRegression(penalty="l2", gamma=0.0, fit_intercept=False)

    def nll(b):
        model.beta = b
        return model._NLL(X, y, sigmoid(X @ b))

    def own_gradient(b):
        model.beta = b
        return model._NLL_grad(X, y, sigmoid(X @ b))

    _check_first_order(nll, beta, own_gradient)


def _check_first_order(f, x, own_gradient_at) -> None:
    """yb.grad and yb.jvp against numpy-ml's gradient, yb.hvp against central differences of it
    along the direction."""
    direction = np.linspace(-1.0, 1.0, x.size).reshape(x.shape)
    own_gradient = own_gradient_at(x.copy())
    scale = np.max(np.abs(own_gradient))
    np.testing.assert_allclose(yb.grad(f)(x.copy()), own_gradient, rtol=1e-10, atol=1e-12 * scale)
    _, slope = yb.jvp(f, (x.copy(),), (direction,))
    np.testing.assert_allclose(slope, np.sum(own_gradient * direction), rtol=1e-10, atol=1e-12 * scale)
    step = 1e-6
    expected = (own_gradient_at(x + step * direction) - own_gradient_at(x - step * direction)) / (2 * step)
    _, _, (product,) = yb.hvp(f, (x.copy(),), (direction,))
    np.testing.assert_allclose(product, expected, rtol=1e-5, atol=1e-6 * max(1.0, np.max(np.abs(expected))))


# ------------------------------------------------------------------------ layers' own backward

def _layers():
    from numpy_ml.neural_nets import layers
    return layers


# name -> (maker, input shapes (an array: as it is), parameters whose gradients backward accrues)
LAYERS = {
    "FullyConnected": (lambda: _layers().FullyConnected(n_out=3, act_fn="Tanh"), ((2, 4),), ("W", "b")),
    "Conv1D": (lambda: _layers().Conv1D(out_ch=2, kernel_width=3, pad="same", act_fn="Tanh"), ((1, 5, 2),),
               ("W", "b")),
    "Conv2D": (lambda: _layers().Conv2D(out_ch=2, kernel_shape=(2, 2), pad=1, stride=2), ((1, 3, 3, 2),),
               ("W", "b")),
    "Pool2D_max": (lambda: _layers().Pool2D(kernel_shape=(2, 2), stride=2, mode="max"), ((1, 4, 4, 1),), ()),
    "Pool2D_average": (lambda: _layers().Pool2D(kernel_shape=(2, 2), stride=1, mode="average"), ((1, 3, 3, 2),),
                       ()),
    "BatchNorm1D": (lambda: _layers().BatchNorm1D(), ((4, 3),), ("scaler", "intercept")),
    "LayerNorm1D": (lambda: _layers().LayerNorm1D(), ((3, 4),), ("scaler", "intercept")),
    "Softmax": (lambda: _layers().Softmax(), ((3, 3),), ()),
    "Embedding": (lambda: _layers().Embedding(n_out=2, vocab_size=5), (WORD_IDS,), ("W",)),
}


@pytest.mark.parametrize("name", list(LAYERS))
def test_layers_against_their_own_backward(name: str) -> None:
    """``forward`` then ``backward(dLdy)``: its input gradient and the parameter gradients it accrues
    against yb.grad of ``sum(dLdy * forward(...))`` in the input and in each parameter."""
    make, inputs, parameters = LAYERS[name]
    layer = initialised(make, inputs)
    X = inputs[0] if isinstance(inputs[0], np.ndarray) else fixed(inputs[0], 60)
    layer.flush_gradients()
    cotangent = fixed(np.shape(layer.forward(X)), 61)
    own_input_gradient = layer.backward(cotangent)
    own = {p: layer.gradients[p].copy() for p in parameters}
    if X.dtype.kind == "f":
        def in_input(x):
            return np.sum(cotangent * layer.forward(x))
        np.testing.assert_allclose(yb.grad(in_input)(X.copy()), own_input_gradient, rtol=1e-9, atol=1e-12)
    for name_ in parameters:
        np.testing.assert_allclose(yb.grad(_in_parameter(layer, name_, X, cotangent))(layer.parameters[name_].copy()),
                                   own[name_], rtol=1e-9, atol=1e-12, err_msg=name_)


def _in_parameter(layer, name: str, X, cotangent):
    def in_parameter(value):
        layer.parameters[name] = value
        return np.sum(cotangent * layer.forward(X))
    return in_parameter
