"""Derived-rule corpus: realistic programs (an MLP with parameters in a dict, a Gaussian process
log likelihood with Cholesky, ...)."""
import numpy as np

from yuebing.testing.cases import randn
from . import corpus_registry

CORPUS, case = corpus_registry()


def relu(h):
    return h * (h > 0)


@case({"W1": randn(4, 3), "b1": randn(4), "W2": randn(1, 4), "b2": randn(1)}, randn(3, 5), randn(1, 5))
def mlp_params_in_dict(params, x, y):
    h = relu(params["W1"] @ x + params["b1"][:, None])
    out = params["W2"] @ h + params["b2"][:, None]
    return np.mean((out - y) ** 2)


@case(0.2 * np.arange(6.0), randn(6), 0.7)
def gp_log_likelihood(x, y, noise):
    d = x[:, None] - x[None, :]
    k = np.exp(-0.5 * d * d) + noise * np.eye(len(x))
    chol = np.linalg.cholesky(k)
    alpha = np.linalg.solve(chol.T, np.linalg.solve(chol, y))
    return -0.5 * y @ alpha - np.sum(np.log(np.diag(chol))) - 0.5 * len(x) * np.log(2 * np.pi)
