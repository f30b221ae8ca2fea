"""scikit-learn cases: metrics, pairwise kernels, Gaussian-process kernels and likelihoods, the
neural network's activations and losses, ``utils.extmath``, as functions of their inputs.

Each case is a few lines of harness wiring: a parameter vector ``t`` unpacked into predictions,
a small data matrix or kernel hyperparameters (kept inside the functions' domains: predictions
``exp(t)`` where they must be positive, probabilities ``expit(t)``), the outputs weighted into
one number by ``cases_filterpy.total``. Every computation on ``t`` is scikit-learn's own code,
validation and dispatch included. The estimators' fits (preprocessing, linear models, covariance,
decomposition) are in ``cases_sklearn_models``.

There is no jax twin: scikit-learn dispatches on the array API namespace of its inputs, so
swapping the ``numpy`` its modules see is not the same code; central differences of the value,
of the gradient along directions (Hessian, ``yb.hvp``) and scikit-learn's own gradients
(``tests/test_external_corpus.py``) are the oracles.
"""
from __future__ import annotations

import numpy as np

from .cases import CaseSpec, Problem, interior_point
from .cases_filterpy import total


RNG = np.random.default_rng(20261204)
Y_TRUE = np.array([0.6, 1.3, 2.1, 0.4, 1.7, 0.9, 2.6, 1.1])
LABELS = np.array([0, 1, 1, 0, 1, 0, 0, 1])
LABELS_3 = np.array([0, 1, 2, 2, 1, 0])
X_FIXED = RNG.uniform(-1.0, 1.0, size=(5, 2))
Y_FIXED = RNG.uniform(-1.0, 1.0, size=(4, 2))
W_SAMPLES = np.array([1.0, 0.5, 2.0, 1.5, 0.7, 1.2, 0.9, 1.1])


def _expit(t):
    return 1.0 / (1.0 + np.exp(-t))


# ----------------------------------------------------------------------------------- metrics
# y_true fixed, y_pred = t (8 values); positive predictions as exp(t)

def mean_squared_error(t):
    from sklearn.metrics import mean_squared_error
    return mean_squared_error(Y_TRUE, t)


def mean_squared_error_weighted(t):
    from sklearn.metrics import mean_squared_error
    return mean_squared_error(Y_TRUE, t, sample_weight=W_SAMPLES)


def mean_squared_error_in_weights(t):
    from sklearn.metrics import mean_squared_error
    return mean_squared_error(Y_TRUE, np.sin(Y_TRUE), sample_weight=np.exp(t))


def root_mean_squared_error(t):
    from sklearn.metrics import root_mean_squared_error
    return root_mean_squared_error(Y_TRUE, t)


def mean_absolute_error(t):
    from sklearn.metrics import mean_absolute_error
    return mean_absolute_error(Y_TRUE, t)


def median_absolute_error(t):
    from sklearn.metrics import median_absolute_error
    return median_absolute_error(Y_TRUE, t)


def max_error(t):
    from sklearn.metrics import max_error
    return max_error(Y_TRUE, t)


def r2_score(t):
    from sklearn.metrics import r2_score
    return r2_score(Y_TRUE, t)


def r2_score_multioutput(t):
    from sklearn.metrics import r2_score
    return r2_score(Y_TRUE.reshape(4, 2), t.reshape(4, 2), multioutput="variance_weighted")


def r2_score_in_truth(t):
    from sklearn.metrics import r2_score
    return r2_score(t, Y_TRUE)


def explained_variance_score(t):
    from sklearn.metrics import explained_variance_score
    return explained_variance_score(Y_TRUE, t)


def mean_squared_log_error(t):
    from sklearn.metrics import mean_squared_log_error
    return mean_squared_log_error(Y_TRUE, np.exp(t))


def root_mean_squared_log_error(t):
    from sklearn.metrics import root_mean_squared_log_error
    return root_mean_squared_log_error(Y_TRUE, np.exp(t))


def mean_absolute_percentage_error(t):
    from sklearn.metrics import mean_absolute_percentage_error
    return mean_absolute_percentage_error(Y_TRUE, t)


def mean_pinball_loss(t):
    from sklearn.metrics import mean_pinball_loss
    return mean_pinball_loss(Y_TRUE, t, alpha=0.3)


def _tweedie(power):
    def tweedie(t):
        from sklearn.metrics import mean_tweedie_deviance
        return mean_tweedie_deviance(Y_TRUE, np.exp(t), power=power)
    tweedie.__name__ = f"mean_tweedie_deviance_power_{power}".replace(".", "_")
    return tweedie


def mean_poisson_deviance(t):
    from sklearn.metrics import mean_poisson_deviance
    return mean_poisson_deviance(Y_TRUE, np.exp(t))


def mean_gamma_deviance(t):
    from sklearn.metrics import mean_gamma_deviance
    return mean_gamma_deviance(Y_TRUE, np.exp(t))


def d2_tweedie_score(t):
    from sklearn.metrics import d2_tweedie_score
    return d2_tweedie_score(Y_TRUE, np.exp(t), power=1.5)


def d2_pinball_score(t):
    from sklearn.metrics import d2_pinball_score
    return d2_pinball_score(Y_TRUE, t, alpha=0.7)


def d2_absolute_error_score(t):
    from sklearn.metrics import d2_absolute_error_score
    return d2_absolute_error_score(Y_TRUE, t)


def log_loss(t):
    from sklearn.metrics import log_loss
    return log_loss(LABELS, _expit(t))


def log_loss_multiclass(t):
    from sklearn.metrics import log_loss
    from sklearn.utils.extmath import softmax
    return log_loss(LABELS_3, softmax(t.reshape(6, 3)))


def brier_score_loss(t):
    from sklearn.metrics import brier_score_loss
    return brier_score_loss(LABELS, _expit(t))


def hinge_loss(t):
    from sklearn.metrics import hinge_loss
    return hinge_loss(2 * LABELS - 1, t)


def d2_log_loss_score(t):
    from sklearn.metrics import d2_log_loss_score
    return d2_log_loss_score(LABELS, _expit(t))


METRICS = (mean_squared_error, mean_squared_error_weighted, mean_squared_error_in_weights,
           root_mean_squared_error, mean_absolute_error, median_absolute_error, max_error, r2_score,
           r2_score_multioutput, r2_score_in_truth, explained_variance_score, mean_squared_log_error,
           root_mean_squared_log_error, mean_absolute_percentage_error, mean_pinball_loss,
           _tweedie(0), _tweedie(1), _tweedie(1.5), _tweedie(2), _tweedie(3), mean_poisson_deviance,
           mean_gamma_deviance, d2_tweedie_score, d2_pinball_score, d2_absolute_error_score,
           log_loss, log_loss_multiclass, brier_score_loss, hinge_loss, d2_log_loss_score)


# ----------------------------------------------------------------------------------- pairwise
# X = t as 3 points in the plane against 4 fixed ones (no coinciding points: distances are smooth)

def _pairwise(name, **options):
    def pairwise(t):
        from sklearn.metrics import pairwise
        return total(getattr(pairwise, name)(t.reshape(3, 2), Y_FIXED, **options))
    pairwise.__name__ = name + "".join(f"_{key}" for key in options)
    return pairwise


def pairwise_distances_euclidean(t):
    from sklearn.metrics import pairwise_distances
    return total(pairwise_distances(t.reshape(3, 2), Y_FIXED, metric="euclidean"))


def pairwise_kernels_rbf(t):
    from sklearn.metrics.pairwise import pairwise_kernels
    return total(pairwise_kernels(t.reshape(3, 2), Y_FIXED, metric="rbf", gamma=0.7))


def rbf_kernel_in_gamma(t):
    from sklearn.metrics.pairwise import rbf_kernel
    return total(rbf_kernel(X_FIXED, Y_FIXED, gamma=np.exp(t[0])) * t[1])


def paired_euclidean_distances(t):
    from sklearn.metrics.pairwise import paired_euclidean_distances
    return total(paired_euclidean_distances(t.reshape(4, 2), Y_FIXED))


def haversine_distances(t):
    from sklearn.metrics.pairwise import haversine_distances
    return total(haversine_distances(0.5 * t.reshape(3, 2), 0.5 * Y_FIXED))


def nan_euclidean_distances(t):
    from sklearn.metrics.pairwise import nan_euclidean_distances
    X = t.reshape(3, 2).copy()
    Y = Y_FIXED.copy()
    Y[1, 0] = np.nan
    return total(nan_euclidean_distances(X, Y))


PAIRWISE = (_pairwise("euclidean_distances"), _pairwise("euclidean_distances", squared=True),
            _pairwise("rbf_kernel", gamma=0.7), _pairwise("laplacian_kernel", gamma=0.7),
            _pairwise("polynomial_kernel", degree=3, coef0=1.0), _pairwise("sigmoid_kernel", gamma=0.4),
            _pairwise("cosine_similarity"), _pairwise("cosine_distances"), _pairwise("linear_kernel"),
            _pairwise("manhattan_distances"), pairwise_distances_euclidean, pairwise_kernels_rbf,
            rbf_kernel_in_gamma, paired_euclidean_distances, haversine_distances, nan_euclidean_distances)


# ------------------------------------------------------------------------ Gaussian-process kernels
# each kernel on X = t (5 points in the plane), and as a function of its log-hyperparameters theta

def _kernels():
    from sklearn.gaussian_process import kernels as k
    return {
        "RBF": k.RBF(length_scale=[0.8, 1.3]),
        "Matern_0_5": k.Matern(length_scale=0.9, nu=0.5),
        "Matern_1_5": k.Matern(length_scale=0.9, nu=1.5),
        "Matern_2_5": k.Matern(length_scale=0.9, nu=2.5),
        "Matern_general": k.Matern(length_scale=0.9, nu=0.8),
        "RationalQuadratic": k.RationalQuadratic(length_scale=0.7, alpha=1.5),
        "ExpSineSquared": k.ExpSineSquared(length_scale=0.8, periodicity=2.5),
        "DotProduct": k.DotProduct(sigma_0=0.6),
        "ConstantKernel_times_RBF": k.ConstantKernel(1.7) * k.RBF(0.9),
        "RBF_plus_WhiteKernel": k.RBF(0.9) + k.WhiteKernel(0.3),
        "Exponentiation": k.Exponentiation(k.RationalQuadratic(0.7, 1.5), 2.0),
        "PairwiseKernel_laplacian": k.PairwiseKernel(gamma=0.7, metric="laplacian"),
        "PairwiseKernel_rbf": k.PairwiseKernel(gamma=0.7, metric="rbf"),
    }


def _kernel_on_x(name):
    def kernel_on_x(t):
        kernel = _kernels()[name]
        X = t.reshape(5, 2)
        return total(kernel(X, X_FIXED[:3]), kernel.diag(X))
    kernel_on_x.__name__ = f"kernel_{name}_on_X"
    return kernel_on_x


def _kernel_in_theta(name):
    def kernel_in_theta(t):
        kernel = _kernels()[name]
        theta = kernel.theta + 0.3 * t[:kernel.theta.size]
        return total(kernel.clone_with_theta(theta)(X_FIXED))
    kernel_in_theta.__name__ = f"kernel_{name}_in_theta"
    return kernel_in_theta


KERNEL_NAMES = ("RBF", "Matern_0_5", "Matern_1_5", "Matern_2_5", "Matern_general", "RationalQuadratic",
                "ExpSineSquared", "DotProduct", "ConstantKernel_times_RBF", "RBF_plus_WhiteKernel",
                "Exponentiation", "PairwiseKernel_laplacian", "PairwiseKernel_rbf")
# the kernel on the diagonal of K(X, X) has a kink (|x - x| = 0) for the Matern(0.5) and laplacian
# kernels: on X they are taken against other points only (``kernel(X, X_FIXED[:3])`` above)


def _fitted_gpr():
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF, WhiteKernel, ConstantKernel
    kernel = ConstantKernel(1.2) * RBF([0.8, 1.1]) + WhiteKernel(0.2)
    y = np.sin(2.0 * X_FIXED[:, 0]) + X_FIXED[:, 1]
    return GaussianProcessRegressor(kernel, optimizer=None).fit(X_FIXED, y)


def gpr_log_marginal_likelihood(t):
    gpr = _fitted_gpr()
    return gpr.log_marginal_likelihood(gpr.kernel_.theta + 0.3 * t[:4])


def gpr_predict_in_targets(t):
    from sklearn.gaussian_process import GaussianProcessRegressor
    from sklearn.gaussian_process.kernels import RBF
    gpr = GaussianProcessRegressor(RBF(0.9), alpha=0.1, optimizer=None, normalize_y=True)
    mean, std = gpr.fit(X_FIXED, t[:5]).predict(Y_FIXED, return_std=True)
    return total(mean, std)


def gpr_predict_in_points(t):
    gpr = _fitted_gpr()
    mean, std = gpr.predict(t.reshape(4, 2), return_std=True)
    return total(mean, std)


def gpr_predict_cov_in_points(t):
    gpr = _fitted_gpr()
    mean, cov = gpr.predict(t.reshape(4, 2), return_cov=True)
    return total(mean, cov)


GAUSSIAN_PROCESSES = tuple(_kernel_on_x(name) for name in KERNEL_NAMES) + tuple(
    _kernel_in_theta(name) for name in KERNEL_NAMES) + (
    gpr_log_marginal_likelihood, gpr_predict_in_targets, gpr_predict_in_points, gpr_predict_cov_in_points)


# ------------------------------------------------------------------------------ neural_network

def _activation(name):
    def activation(t):
        from sklearn.neural_network._base import ACTIVATIONS
        Z = t.reshape(2, 4).copy()
        ACTIVATIONS[name](Z)   # in place, as the network calls it
        return total(Z)
    activation.__name__ = f"activation_{name}"
    return activation


def _nn_loss(name, columns):
    def nn_loss(t):
        from sklearn.neural_network._base import LOSS_FUNCTIONS
        truth = (np.arange(8).reshape(8 // columns, columns) % 3 == 0).astype(float)
        prediction = t.reshape(truth.shape)
        if name != "squared_error":
            prediction = _expit(prediction)
        return LOSS_FUNCTIONS[name](truth, prediction)
    nn_loss.__name__ = f"nn_loss_{name}_{columns}_columns"
    return nn_loss


def _mlp(t_size_hint=None):
    from sklearn.neural_network import MLPRegressor
    X = X_FIXED
    y = np.sin(2.0 * X[:, 0]) + X[:, 1]
    return MLPRegressor(hidden_layer_sizes=(2,), activation="tanh", max_iter=1, random_state=0).fit(X, y)


def mlp_predict_in_points(t):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        mlp = _mlp()
    return total(mlp.predict(t.reshape(4, 2)))


NEURAL_NETWORK = tuple(_activation(name) for name in ("identity", "tanh", "logistic", "relu", "softmax")) + (
    _nn_loss("squared_error", 1), _nn_loss("log_loss", 2), _nn_loss("log_loss", 1),
    _nn_loss("binary_log_loss", 2), mlp_predict_in_points)


# ------------------------------------------------------------------------------ utils.extmath

def softmax(t):
    from sklearn.utils.extmath import softmax
    return total(softmax(t.reshape(2, 4)))


def row_norms(t):
    from sklearn.utils.extmath import row_norms
    return total(row_norms(t.reshape(2, 4)), row_norms(t.reshape(4, 2), squared=True))


def squared_norm(t):
    from sklearn.utils.extmath import squared_norm
    return squared_norm(t.reshape(2, 4))


def safe_sparse_dot(t):
    from sklearn.utils.extmath import safe_sparse_dot
    return total(safe_sparse_dot(t.reshape(4, 2), X_FIXED.T))


def fast_logdet(t):
    from sklearn.utils.extmath import fast_logdet
    A = t.reshape(2, 4)
    return fast_logdet(A @ A.T + np.eye(2))


def randomized_svd(t):
    from sklearn.utils.extmath import randomized_svd
    U, s, Vt = randomized_svd(t.reshape(4, 2) + X_FIXED[:4], n_components=2, random_state=0)
    return total(s)


def incremental_mean_and_var(t):
    from sklearn.utils.extmath import _incremental_mean_and_var
    mean, var, count = _incremental_mean_and_var(t.reshape(4, 2), np.zeros(2), np.zeros(2), np.zeros(2))
    return total(mean, var)


EXTMATH = (softmax, row_norms, squared_norm, safe_sparse_dot, fast_logdet, randomized_svd,
           incremental_mean_and_var)

# the number of variables each case takes (its vector t), where not 8
SIZES = {"rbf_kernel_in_gamma": 2, "gpr_predict_in_targets": 5, "gpr_log_marginal_likelihood": 4,
         "log_loss_multiclass": 18}


def _size(function) -> int:
    name = function.__name__
    if name in SIZES:
        return SIZES[name]
    if name.startswith("kernel_") and name.endswith("_on_X"):
        return 10
    if name.startswith("kernel_") and name.endswith("_in_theta"):
        return _kernels()[name[len("kernel_"):-len("_in_theta")]].theta.size
    if function in PAIRWISE and name != "paired_euclidean_distances":
        return 6
    return 8


def _spec(function, size: int) -> CaseSpec:
    def build(attempt: int) -> Problem:
        point = interior_point(-np.ones(size), np.ones(size), spec.seed(attempt))
        return Problem(function, point, None, None)   # no jax twin: see the module's docstring

    spec = CaseSpec("sklearn", function.__name__, build, all_modes=True)
    return spec


FUNCTIONS = METRICS + PAIRWISE + GAUSSIAN_PROCESSES + NEURAL_NETWORK + EXTMATH


def sklearn_cases() -> list[CaseSpec]:
    from .cases_sklearn_models import MODEL_FUNCTIONS, model_size
    return ([_spec(function, _size(function)) for function in FUNCTIONS]
            + [_spec(function, model_size(function.__name__)) for function in MODEL_FUNCTIONS])
