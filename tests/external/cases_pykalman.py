"""pykalman cases: the log-likelihood, filtered and smoothed means of pykalman's Kalman filters
(the standard one, its Cholesky and Bierman square-root forms, the unscented and additive
unscented filters and the square-root additive one) as functions of the model's matrices and
covariances or of the observations; one online ``filter_update`` step; two EM iterations.

Each case is a few lines of wiring: ``t`` unpacked into a transition matrix near
``[[1, 0.5], [0, 0.9]]``, an observation matrix near ``[[1, 0]]``, covariances built as
``L Lᵀ + c I`` (``cases_filterpy.covariance``) and observations near a fixed series; the outputs
weighted into one number by ``cases_filterpy.total``. Everything on ``t`` is pykalman's code:
its parameter conversion (``preprocess_arguments``, ``check_random_state``), masked observations
(``np.ma.atleast_2d``), ``scipy.linalg`` solves and Cholesky factors, the sigma points.
"""
from __future__ import annotations

import numpy as np

from .cases import CaseSpec, Problem, interior_point
from .cases_filterpy import covariance, total

PREFIXES = ("pykalman.", __name__)
OBSERVATIONS = np.array([0.3, 0.9, 1.4, 2.2, 2.6])
MISSING = np.array([False, False, True, False, False])


def _model_arguments(t) -> dict:
    """Matrices and covariances from ``t[0:8]`` (all near a stable constant-velocity model)."""
    return dict(
        transition_matrices=np.array([[1.0, 0.5 + 0.2 * t[0]], [0.1 * t[1], 0.9 + 0.05 * t[2]]]),
        observation_matrices=np.array([[1.0 + 0.2 * t[3], 0.3 * t[4]]]),
        transition_covariance=0.1 * covariance(t[5], t[6], 0.3),
        observation_covariance=np.array([[0.5 + t[7] ** 2]]),
        initial_state_mean=np.array([0.2, 0.4]),
        initial_state_covariance=np.eye(2))


FIXED_MODEL = np.zeros(8)


def _standard(t, kind: str = ""):
    import pykalman
    import pykalman.sqrt
    cls = {"": pykalman.KalmanFilter, "cholesky": pykalman.sqrt.CholeskyKalmanFilter,
           "bierman": pykalman.sqrt.BiermanKalmanFilter}[kind]
    return cls(**_model_arguments(t))


def _observed(t):
    return (OBSERVATIONS + 0.3 * t[:5])[:, None]


def loglikelihood_in_model(t):
    return _standard(t).loglikelihood(OBSERVATIONS[:, None])


def loglikelihood_in_observations(t):
    return _standard(FIXED_MODEL).loglikelihood(_observed(t))


def loglikelihood_with_a_missing_observation(t):
    observed = np.ma.array(_observed(t), mask=MISSING[:, None])
    return _standard(FIXED_MODEL).loglikelihood(observed)


def _moments(t, method: str, in_observations: bool, kind: str = ""):
    """The filtered or smoothed means and covariances, weighted: in the model (``t``'s) or in the
    observations (the fixed model)."""
    model = _standard(FIXED_MODEL if in_observations else t, kind)
    means, covariances = getattr(model, method)(_observed(t) if in_observations else OBSERVATIONS[:, None])
    return total(means, covariances)


def filter_in_model(t):
    return _moments(t, "filter", False)


def filter_in_observations(t):
    return _moments(t, "filter", True)


def smooth_in_model(t):
    return _moments(t, "smooth", False)


def smooth_in_observations(t):
    return _moments(t, "smooth", True)


def filter_update_step(t):
    mean, cov = _standard(FIXED_MODEL).filter_update(t[0:2], covariance(t[2], t[3], t[4]), np.array([t[5]]))
    return total(mean, cov)


def em_two_iterations(t):
    model = _standard(FIXED_MODEL).em(_observed(t), n_iter=2, em_vars=["transition_covariance",
                                                                       "observation_covariance",
                                                                       "initial_state_mean"])
    return total(model.transition_covariance, model.observation_covariance, model.initial_state_mean)


def cholesky_loglikelihood_in_model(t):
    return _standard(t, "cholesky").loglikelihood(OBSERVATIONS[:, None])


def cholesky_smooth_in_observations(t):
    return _moments(t, "smooth", True, "cholesky")


def bierman_loglikelihood_in_model(t):
    return _standard(t, "bierman").loglikelihood(OBSERVATIONS[:, None])


def bierman_filter_in_observations(t):
    return _moments(t, "filter", True, "bierman")


def _transition(state, noise=0.0):
    return np.array([state[0] + 0.5 * np.sin(state[1]), 0.9 * state[1]]) + noise


def _observation(state, noise=0.0):
    return np.array([np.sqrt(1.0 + state[0] ** 2)]) + noise


def _unscented(t, kind: str):
    import pykalman
    import pykalman.sqrt
    cls = {"general": pykalman.UnscentedKalmanFilter, "additive": pykalman.AdditiveUnscentedKalmanFilter,
           "sqrt_additive": pykalman.sqrt.AdditiveUnscentedKalmanFilter}[kind]
    arguments = _model_arguments(t)
    return cls(_transition, _observation, arguments["transition_covariance"], arguments["observation_covariance"],
               arguments["initial_state_mean"], arguments["initial_state_covariance"])


def _unscented_moments(t, kind: str, method: str, in_observations: bool):
    """The filtered or smoothed means and covariances, weighted: in the covariances (``t``'s
    model) or in the observations (the fixed model)."""
    model = _unscented(FIXED_MODEL if in_observations else t, kind)
    observed = 1.0 + (_observed(t) if in_observations else OBSERVATIONS[:, None])[:3]
    means, covariances = getattr(model, method)(observed)
    return total(means, covariances)


def unscented_filter_in_covariances(t):
    return _unscented_moments(t, "general", "filter", False)


def unscented_smooth_in_observations(t):
    return _unscented_moments(t, "general", "smooth", True)


def additive_unscented_filter_in_covariances(t):
    return _unscented_moments(t, "additive", "filter", False)


def additive_unscented_smooth_in_observations(t):
    return _unscented_moments(t, "additive", "smooth", True)


def sqrt_additive_unscented_filter_in_covariances(t):
    return _unscented_moments(t, "sqrt_additive", "filter", False)


FUNCTIONS = (loglikelihood_in_model, loglikelihood_in_observations, loglikelihood_with_a_missing_observation,
             filter_in_model, filter_in_observations, smooth_in_model, smooth_in_observations, filter_update_step,
             em_two_iterations, cholesky_loglikelihood_in_model, cholesky_smooth_in_observations,
             bierman_loglikelihood_in_model, bierman_filter_in_observations, unscented_filter_in_covariances,
             unscented_smooth_in_observations, additive_unscented_filter_in_covariances,
             additive_unscented_smooth_in_observations, sqrt_additive_unscented_filter_in_covariances)


def _spec(function) -> CaseSpec:
    def build(attempt: int) -> Problem:
        point = interior_point(-np.ones(8), np.ones(8), spec.seed(attempt))
        return Problem(function, point, PREFIXES, None)

    spec = CaseSpec("pykalman", function.__name__, build, all_modes=True)
    return spec


def pykalman_cases() -> list[CaseSpec]:
    return [_spec(function) for function in FUNCTIONS]
