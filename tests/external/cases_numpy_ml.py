"""numpy-ml cases: the pure-NumPy machine-learning code of ``numpy_ml`` (David Bourgin's reference
implementations), none of it written here: neural-net activations and losses, kernels, distance
metrics, linear and Gaussian-process models, a GMM's and an HMM's log-likelihoods, optimiser steps,
bandits' rewards and a LinUCB policy's steps, matrix factorisations, preprocessing and signal-processing transforms (this
module), and layers' and modules' forward
passes (``cases_numpy_ml_layers``).

numpy-ml 0.1.2 imports ``collections.Hashable``, which Python 3.10 removed: this module
puts the alias back (``collections.abc.Hashable``, the same class) before the first import, the
only change the harness makes to the package's world (``restore_collections_hashable``).

Each case is a few lines of wiring: ``t`` unpacked into the arguments (probabilities as
``softmax``/``expit`` of ``t``, variances as ``exp(t)``), the outputs weighted into one number by
``cases_filterpy.total``. Piecewise functions (ReLU, HardSigmoid, ``chebyshev``, max pooling) are
evaluated away from their kinks: points move by a few percent around a fixed grid with no point on
an edge. Every case is checked in every mode (``all_modes``: gradient, ``yb.jvp``, Hessian,
``yb.hvp``, arguments restored). Activations' and losses' own ``grad``/``grad2`` are a third oracle
(tests/test_external_numpy_ml.py).
"""
from __future__ import annotations

import collections
import collections.abc
import warnings
from typing import Callable

import numpy as np

from .cases import CaseSpec, Problem, interior_point
from .cases_filterpy import total

PREFIXES = ("numpy_ml.", __name__)
GRID = np.array([-1.37, -0.61, 0.23, 0.71, 1.18, 1.93])
POSITIVE = np.array([0.34, 0.62, 0.87, 1.26, 1.71, 2.45])


def restore_collections_hashable() -> None:
    """``collections.Hashable``, removed in Python 3.10, as numpy-ml 0.1.2 imports it (the same
    class as ``collections.abc.Hashable``). Run when this module is imported, so that
    ``cases.installed("numpy_ml")`` and every case's import see it."""
    if not hasattr(collections, "Hashable"):
        collections.Hashable = collections.abc.Hashable


def import_numpy_ml_quietly() -> None:
    """Import numpy-ml once with its own warnings silenced. Without ``gym`` or ``matplotlib`` it
    warns at import with ``numpy_ml.utils.testing.DependencyWarning``; a pytest-xdist worker then
    sends that warning to the controller, which imports the warning's module to rebuild it, fails
    on ``collections.Hashable`` (the alias lives in the worker only) and stops the whole run."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", module=r"numpy_ml(\.|$)")
        try:
            import numpy_ml  # noqa: F401  (cached in sys.modules for every case's import)
        except ImportError:
            pass  # not installed: cases.installed("numpy_ml") reports it


restore_collections_hashable()
import_numpy_ml_quietly()


def fixed(shape, seed: int) -> np.ndarray:
    """Fixed data of a given shape (the parts of a problem that are not differentiated)."""
    return np.random.default_rng(seed).uniform(-1.0, 1.0, size=shape)


def softmax_rows(t):
    shifted = np.exp(t - np.max(t, axis=-1, keepdims=True))
    return shifted / np.sum(shifted, axis=-1, keepdims=True)


def expit(t):
    return 1.0 / (1.0 + np.exp(-t))


def spec_around(package: str, name: str, function: Callable, centre, spread: float = 0.03) -> CaseSpec:
    """A case at a point a few percent from ``centre``: each piece of a piecewise function stays the
    piece it is on."""
    return spec_made(package, name, lambda: function, centre, spread)


def spec_made(package: str, name: str, make: Callable[[], Callable], centre, spread: float = 0.03,
              jax_twin: bool = True) -> CaseSpec:
    """As ``spec_around``, the function made at build time (a layer initialised once, outside the
    differentiated call, as a user's model is). ``jax_twin`` False: no jax twin (a model keeping its
    inputs would keep the twin's jax arrays, which the next call then meets)."""
    centre = np.asarray(centre, float).ravel()

    def build(attempt: int) -> Problem:
        width = spread * np.maximum(np.abs(centre), 0.3)
        point = interior_point(centre - width, centre + width, spec.seed(attempt))
        np.random.seed(0)   # the layers' initialisers draw from NumPy's global generator
        return Problem(make(), point, PREFIXES if jax_twin else None, None)

    spec = CaseSpec(package, name, build, all_modes=True)
    return spec


# ---------------------------------------------------------------------------- activations

ACTIVATIONS = {"Sigmoid": {}, "ReLU": {}, "LeakyReLU": {"alpha": 0.3}, "Tanh": {},
               "Affine": {"slope": 1.7, "intercept": -0.4}, "Identity": {}, "ELU": {"alpha": 1.3},
               "Exponential": {}, "SELU": {}, "HardSigmoid": {}, "SoftPlus": {}}


def _activation(name: str):
    from numpy_ml.neural_nets import activations
    return getattr(activations, name)(**ACTIVATIONS[name])


def _activation_cases() -> list[CaseSpec]:
    specs = []
    for name in ACTIVATIONS:
        for method in ("fn", "grad", "grad2"):
            specs.append(spec_made("numpy_ml", f"activation_{name}_{method}", _activation_maker(name, method),
                                   GRID.reshape(2, 3)))
        specs.append(spec_made("numpy_ml", f"activation_{name}_called", _activation_maker(name, "__call__"),
                               GRID[:4]))
    return specs


def _activation_maker(name: str, method: str) -> Callable[[], Callable]:
    def make():
        bound = getattr(_activation(name), method)

        def activation(t):
            return total(bound(t.reshape(2, -1)))
        activation.__name__ = f"activation_{name}_{method}"
        return activation
    return make


# ---------------------------------------------------------------------------------- losses

Y_ONE_HOT = np.eye(3)[[0, 2, 1, 2]]
Y_BINARY = np.array([[1.0, 0.0, 1.0], [0.0, 0.0, 1.0]])


def squared_error_in_prediction(t):
    from numpy_ml.neural_nets.losses import SquaredError
    return SquaredError.loss(fixed((3, 2), 1), t.reshape(3, 2))


def squared_error_called(t):
    from numpy_ml.neural_nets.losses import SquaredError
    return SquaredError()(t[:6].reshape(3, 2), t[6:].reshape(3, 2))


def cross_entropy_of_softmax(t):
    from numpy_ml.neural_nets.losses import CrossEntropy
    return CrossEntropy.loss(Y_ONE_HOT, softmax_rows(t.reshape(4, 3)))


def vae_loss_in_reconstruction(t):
    from numpy_ml.neural_nets.losses import VAELoss
    return VAELoss.loss(Y_BINARY, expit(t.reshape(2, 3)), fixed((2, 2), 2), fixed((2, 2), 3))


def vae_loss_in_latent(t):
    from numpy_ml.neural_nets.losses import VAELoss
    return VAELoss.loss(Y_BINARY, expit(fixed((2, 3), 4)), t[:4].reshape(2, 2), t[4:].reshape(2, 2))


def tree_mse_loss(t):
    from numpy_ml.trees.losses import MSELoss
    return MSELoss()(t[:4], t[4:])


def tree_cross_entropy_loss(t):
    from numpy_ml.trees.losses import CrossEntropyLoss
    return CrossEntropyLoss()(Y_ONE_HOT, softmax_rows(t.reshape(4, 3)))


LOSSES = {squared_error_in_prediction: GRID, squared_error_called: np.concatenate([GRID, POSITIVE]),
          cross_entropy_of_softmax: np.resize(GRID, 12), vae_loss_in_reconstruction: GRID,
          vae_loss_in_latent: np.resize(GRID, 8) * 0.5, tree_mse_loss: np.resize(GRID, 8),
          tree_cross_entropy_loss: np.resize(GRID, 12)}


# --------------------------------------------------------------------- kernels and distances

X_POINTS = fixed((4, 2), 5)


def linear_kernel(t):
    from numpy_ml.utils.kernels import LinearKernel
    return total(LinearKernel(c0=0.5)(t.reshape(3, 2), X_POINTS))


def polynomial_kernel(t):
    from numpy_ml.utils.kernels import PolynomialKernel
    return total(PolynomialKernel(d=3, gamma=0.7, c0=1.0)(t.reshape(3, 2), X_POINTS))


def polynomial_kernel_default_gamma(t):
    from numpy_ml.utils.kernels import PolynomialKernel
    return total(PolynomialKernel(d=2)(t.reshape(3, 2)))


def rbf_kernel_in_points(t):
    from numpy_ml.utils.kernels import RBFKernel
    return total(RBFKernel(sigma=1.3)(t.reshape(3, 2), X_POINTS))


def rbf_kernel_in_sigma(t):
    from numpy_ml.utils.kernels import RBFKernel
    return total(RBFKernel(sigma=t[0])(X_POINTS))


def pairwise_l2_distances(t):
    from numpy_ml.utils.kernels import pairwise_l2_distances
    return total(pairwise_l2_distances(t.reshape(3, 2), X_POINTS))


def euclidean(t):
    from numpy_ml.utils.distance_metrics import euclidean
    return euclidean(t[:3], t[3:])


def manhattan(t):
    from numpy_ml.utils.distance_metrics import manhattan
    return manhattan(t[:3], t[3:])


def chebyshev(t):
    from numpy_ml.utils.distance_metrics import chebyshev
    return chebyshev(t[:3], t[3:])


def minkowski(t):
    from numpy_ml.utils.distance_metrics import minkowski
    return minkowski(t[:3], t[3:], 3)


# distance cases: the two points' differences kept well apart from 0 and from each other
APART = np.array([0.3, -1.1, 0.8, 1.4, 0.2, -0.3])
KERNELS = {linear_kernel: GRID, polynomial_kernel: GRID, polynomial_kernel_default_gamma: GRID,
           rbf_kernel_in_points: GRID, rbf_kernel_in_sigma: [1.3], pairwise_l2_distances: GRID,
           euclidean: APART, manhattan: APART, chebyshev: APART, minkowski: APART}


# ------------------------------------------------------------------- linear and GP models

X_DESIGN = fixed((6, 2), 6)
X_NEW = fixed((3, 2), 7)


def linear_regression_in_targets(t):
    from numpy_ml.linear_models import LinearRegression
    model = LinearRegression(fit_intercept=True)
    model.fit(X_DESIGN, t)
    return total(model.predict(X_NEW))


def linear_regression_in_design(t):
    from numpy_ml.linear_models import LinearRegression
    model = LinearRegression(fit_intercept=False)
    model.fit(t.reshape(6, 2), GRID)
    return total(model.beta)


def ridge_regression_in_targets(t):
    from numpy_ml.linear_models import RidgeRegression
    model = RidgeRegression(alpha=0.5)
    model.fit(X_DESIGN, t)
    return total(model.predict(X_NEW))


def ridge_regression_in_design(t):
    from numpy_ml.linear_models import RidgeRegression
    model = RidgeRegression(alpha=0.5, fit_intercept=False)
    model.fit(t.reshape(6, 2), GRID)
    return total(model.beta)


def _logistic_nll(penalty: str):
    from numpy_ml.linear_models import LogisticRegression
    from numpy_ml.linear_models.lm import sigmoid
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 0.0])

    def logistic_nll(t):
        model = LogisticRegression(penalty=penalty, gamma=0.3, fit_intercept=False)
        model.beta = t
        return model._NLL(X_DESIGN, y, sigmoid(X_DESIGN @ t))
    return logistic_nll


def bayesian_regression_known_variance(t):
    from numpy_ml.linear_models import BayesianLinearRegressionKnownVariance
    model = BayesianLinearRegressionKnownVariance(b_mean=0.0, b_sigma=1.5)
    model.fit(X_DESIGN, t)
    mean = model.predict(X_NEW)
    return total(model.posterior["b"]["mu"], model.posterior["b"]["cov"], mean, model.posterior_predictive["cov"])


def bayesian_regression_unknown_variance(t):
    from numpy_ml.linear_models import BayesianLinearRegressionUnknownVariance
    model = BayesianLinearRegressionUnknownVariance(alpha=1.0, beta=2.0, b_mean=0.0)
    model.fit(X_DESIGN, t)
    return total(model.beta, model.predict(X_NEW))


def gp_regression_predict(t):
    from numpy_ml.nonparametric import GPRegression
    model = GPRegression(kernel="RBFKernel(sigma=1.1)", alpha=0.1)
    model.fit(X_DESIGN, t)
    mean, conf = model.predict(X_NEW)
    return total(mean, conf)


def gp_regression_in_inputs(t):
    from numpy_ml.nonparametric import GPRegression
    model = GPRegression(kernel="RBFKernel(sigma=1.1)", alpha=0.1)
    model.fit(X_DESIGN, GRID)
    mean, conf, cov = model.predict(t.reshape(3, 2), return_cov=True)
    return total(mean, cov)


def gp_marginal_log_likelihood(t):
    from numpy_ml.nonparametric import GPRegression
    model = GPRegression(kernel="RBFKernel(sigma=1.1)", alpha=0.1)
    model.fit(X_DESIGN, t)
    return model.marginal_log_likelihood()


def kernel_regression(t):
    from numpy_ml.nonparametric import KernelRegression
    model = KernelRegression(kernel="RBFKernel(sigma=0.8)")
    model.fit(X_DESIGN, t)
    return total(model.predict(X_NEW))


MODELS = {linear_regression_in_targets: GRID, linear_regression_in_design: X_DESIGN,
          ridge_regression_in_targets: GRID, ridge_regression_in_design: X_DESIGN,
          bayesian_regression_known_variance: GRID, bayesian_regression_unknown_variance: GRID,
          gp_regression_predict: GRID, gp_regression_in_inputs: X_NEW,
          gp_marginal_log_likelihood: GRID, kernel_regression: GRID}
LOGISTIC = {"logistic_nll_l2": ("l2", [0.7, -0.4]), "logistic_nll_l1": ("l1", [0.7, -0.4])}


# ----------------------------------------------------------------------- GMM, HMM, optimisers

def gmm_log_gaussian_pdf(t):
    from numpy_ml.gmm.gmm import log_gaussian_pdf
    root = np.array([[1.0 + t[4] ** 2, 0.0], [t[5], 1.0]])
    return log_gaussian_pdf(t[:2], t[2:4], root @ root.T)


def gmm_logsumexp(t):
    from numpy_ml.gmm.gmm import logsumexp
    return total(logsumexp(t.reshape(2, 3), axis=1))


def gmm_likelihood_lower_bound(t):
    from numpy_ml.gmm import GMM
    model = GMM(C=2, seed=0)
    model.N, model.d, model.X = 4, 2, X_DESIGN[:4]
    model.pi = softmax_rows(t[:2])
    model.mu = t[2:6].reshape(2, 2)
    model.sigma = np.array([np.eye(2) * (1.0 + t[6] ** 2), np.eye(2) * (1.0 + t[7] ** 2)])
    model.Q = softmax_rows(fixed((4, 2), 8))
    return model.likelihood_lower_bound()


def hmm_log_likelihood(t):
    from numpy_ml.hmm import MultinomialHMM
    model = MultinomialHMM(A=softmax_rows(t[:4].reshape(2, 2)), B=softmax_rows(t[4:10].reshape(2, 3)),
                           pi=softmax_rows(t[10:12]))
    return model.log_likelihood(np.array([0, 2, 1, 1, 0]))


def _optimizer_step(name: str, settings: dict):
    def optimizer_step(t):
        from numpy_ml.neural_nets import optimizers
        optimizer = getattr(optimizers, name)(**settings)
        param, gradient = t[:3].reshape(1, 3), t[3:].reshape(1, 3)
        once = optimizer(param, gradient, "W")
        return total(optimizer(once, gradient * 0.5, "W"))
    return optimizer_step


OPTIMIZERS = {"SGD": {"lr": 0.1, "momentum": 0.9}, "AdaGrad": {"lr": 0.1}, "RMSProp": {"lr": 0.1},
              "Adam": {"lr": 0.1}, "SGD_clipped": {"lr": 0.1, "clip_norm": 0.5}}

# bandits: rewards drawn from NumPy's global generator (the harness reseeds it before every call)
CONTEXTS = [fixed((2, 3), 11 + k) for k in range(3)]


def _linear_bandit(t):
    from numpy_ml.bandits import ContextualLinearBandit
    bandit = ContextualLinearBandit(K=3, D=2, payoff_variance=0.5)
    bandit.thetas = t.reshape(2, 3)
    return bandit


def contextual_linear_bandit_pulls(t):
    bandit = _linear_bandit(t)
    return total(np.array([bandit.pull(arm, CONTEXTS[arm]) for arm in range(3)]))


def contextual_linear_bandit_oracle_payoff(t):
    """The best arm's expected reward (``oracle_payoff`` reads the arms' values of the last pull)."""
    bandit = _linear_bandit(t)
    reward = bandit.pull(1, CONTEXTS[0])
    return bandit.oracle_payoff(CONTEXTS[0])[0] + 0.5 * reward


def linucb_policy(t):
    from numpy_ml.bandits.policies import LinUCB
    bandit, policy = _linear_bandit(t), LinUCB(alpha=0.5)
    rewards = [policy.act(bandit, context)[0] for context in CONTEXTS]
    return total(np.array(rewards), *policy.b)


# matrix factorisation: a few iterations from given factors (the random initialisation of numpy-ml's
# _fit is never used: it reads the W and H it was given, None without them)
W_START, H_START = 0.5 + 0.5 * np.abs(fixed((4, 2), 12)), 0.5 + 0.5 * np.abs(fixed((2, 3), 13))


def alternating_least_squares(t):
    from numpy_ml.factorization import VanillaALS
    model = VanillaALS(K=2, alpha=0.5, max_iter=3)
    model.fit(t.reshape(4, 3), W=W_START.copy(), H=H_START.copy())
    return total(model.W, model.H)


def nonnegative_matrix_factorisation(t):
    from numpy_ml.factorization import NMF
    model = NMF(K=2, max_iter=3)
    model.fit(t.reshape(4, 3), W=W_START.copy(), H=H_START.copy())
    return total(model.W, model.H)


OTHER = {gmm_log_gaussian_pdf: [0.3, -0.2, 0.1, 0.4, 0.5, 0.2], gmm_logsumexp: GRID,
         gmm_likelihood_lower_bound: [0.2, -0.1, 0.3, 0.1, -0.4, 0.2, 0.5, 0.3],
         hmm_log_likelihood: np.resize(GRID, 12), contextual_linear_bandit_pulls: GRID,
         contextual_linear_bandit_oracle_payoff: GRID, linucb_policy: GRID,
         alternating_least_squares: np.resize(POSITIVE, 12), nonnegative_matrix_factorisation: np.resize(POSITIVE, 12)}


# ------------------------------------------------------------------------------ preprocessing

SIGNAL = np.sin(np.linspace(0.0, 5.0, 16)) + 0.3 * np.cos(np.linspace(0.0, 17.0, 16))


def standardizer(t):
    from numpy_ml.preprocessing.general import Standardizer
    scaler = Standardizer()
    scaler.fit(t.reshape(4, 3))
    return total(scaler.transform(X_DESIGN[:, :1] @ np.ones((1, 3))))


def dct(t):
    from numpy_ml.preprocessing.dsp import DCT
    return total(DCT(t))


def dct_not_orthonormal(t):
    from numpy_ml.preprocessing.dsp import DCT
    return total(DCT(t, orthonormal=False))


def dft_magnitude(t):
    from numpy_ml.preprocessing.dsp import DFT
    return total(np.abs(DFT(t)))


def power_spectrum(t):
    from numpy_ml.preprocessing.dsp import power_spectrum, to_frames
    return total(power_spectrum(to_frames(t, 8, 4), scale=True))


def autocorrelate(t):
    from numpy_ml.preprocessing.dsp import autocorrelate1D
    return total(autocorrelate1D(t))


def preemphasis(t):
    from numpy_ml.preprocessing.dsp import preemphasis
    return total(preemphasis(t, 0.95))


def cepstral_lifter(t):
    from numpy_ml.preprocessing.dsp import cepstral_lifter
    return total(cepstral_lifter(t.reshape(2, 8), 6))


def mel_spectrogram(t):
    from numpy_ml.preprocessing.dsp import mel_spectrogram
    spectrogram, energy = mel_spectrogram(t, fs=800, window_duration=0.01, stride_duration=0.005,
                                          n_filters=4, center=False)
    return total(np.log(spectrogram + 1.0), energy)


def mfcc(t):
    from numpy_ml.preprocessing.dsp import mfcc
    return total(mfcc(t, fs=800, n_mfccs=3, window_duration=0.01, stride_duration=0.005, n_filters=4,
                      center=False))


def bilinear_interpolate_in_values(t):
    from numpy_ml.preprocessing.dsp import bilinear_interpolate
    return total(bilinear_interpolate(t.reshape(4, 4, 1), np.array([0.4, 1.3, 2.6]), np.array([0.7, 2.2, 1.5])))


def bilinear_interpolate_in_coordinates(t):
    from numpy_ml.preprocessing.dsp import bilinear_interpolate
    return total(bilinear_interpolate(fixed((4, 4, 1), 9), t[:3], t[3:]))


def batch_resample(t):
    from numpy_ml.preprocessing.dsp import batch_resample
    return total(batch_resample(t.reshape(1, 4, 4, 1), (3, 5), mode="bilinear"))


PREPROCESSING = {standardizer: np.resize(GRID, 12), dct: SIGNAL, dct_not_orthonormal: SIGNAL,
                 dft_magnitude: SIGNAL + 2.0, power_spectrum: SIGNAL, autocorrelate: SIGNAL[:8],
                 preemphasis: SIGNAL, cepstral_lifter: SIGNAL, mel_spectrogram: SIGNAL + 0.5,
                 mfcc: SIGNAL + 0.5, bilinear_interpolate_in_values: SIGNAL,
                 bilinear_interpolate_in_coordinates: [0.4, 1.3, 2.6, 0.7, 2.2, 1.5], batch_resample: SIGNAL}


def numpy_ml_cases() -> list[CaseSpec]:
    from .cases_numpy_ml_layers import layer_cases
    functions = {**LOSSES, **KERNELS, **MODELS, **OTHER, **PREPROCESSING}
    specs = _activation_cases()
    specs += [spec_around("numpy_ml", function.__name__, function, centre) for function, centre in functions.items()]
    specs += [spec_made("numpy_ml", name, lambda penalty=penalty: _logistic_nll(penalty), centre)
              for name, (penalty, centre) in LOGISTIC.items()]
    specs += [spec_around("numpy_ml", f"optimizer_{name}", _optimizer_step(name.split("_")[0], settings),
                          np.concatenate([GRID[:3], POSITIVE[:3]])) for name, settings in OPTIMIZERS.items()]
    specs += layer_cases()
    return sorted(specs, key=lambda spec: spec.name)
