"""properscoring cases: proper scoring rules of probabilistic forecasts (``crps_gaussian``,
``crps_ensemble``, ``crps_quadrature``, ``brier_score``, ``threshold_brier_score``) as functions
of the forecasts and the observations.

Each case is a few lines of wiring: ``t`` unpacked into observations, means, spreads
(``0.5 + t**2``), ensemble members or weights (``exp(t)``), probabilities (``expit(t)``), the
scores weighted into one number by ``cases_filterpy.total``. Without numba (not in the test
extra) properscoring runs its NumPy versions: ``crps_ensemble`` sorts the members, takes
``E|X - x| - E|X - X'|/2`` with ``nanmean`` and ``abs``; the threshold Brier score compares and
casts (a zero derivative almost everywhere). The members are kept apart, so the sort and the
absolute values are smooth at the point. ``crps_gaussian(..., grad=True)`` returns properscoring's
own derivative in the mean and the spread: a third oracle (``test_against_properscorings_own_gradient``).
"""
from __future__ import annotations

import numpy as np

from .cases import CaseSpec, Problem, interior_point
from .cases_filterpy import total

PREFIXES = ("properscoring.", __name__)
OBSERVED = np.array([0.3, -1.1, 0.8, 2.0])
OUTCOMES = np.array([0.0, 1.0, 1.0, 0.0])
THRESHOLDS = np.array([-0.5, 0.25, 1.0])


def _expit(t):
    return 1.0 / (1.0 + np.exp(-t))


def _members(t):
    """Four ensembles of three members each, kept apart (gaps of at least 0.2)."""
    offsets = np.array([0.0, 1.0, 2.0])
    return t[:4, None] + offsets[None, :] + 0.3 * np.tanh(t[4:16].reshape(4, 3))


def crps_gaussian(t):
    from properscoring import crps_gaussian
    return total(crps_gaussian(OBSERVED, t[0:4], 0.5 + t[4:8] ** 2))


def crps_gaussian_in_observations(t):
    from properscoring import crps_gaussian
    return total(crps_gaussian(t[0:4], 0.4, 1.3))


def crps_gaussian_scalar(t):
    from properscoring import crps_gaussian
    return crps_gaussian(t[0], t[1], 0.5 + t[2] ** 2)


def crps_ensemble(t):
    from properscoring import crps_ensemble
    return total(crps_ensemble(OBSERVED, _members(t)))


def crps_ensemble_in_observations(t):
    from properscoring import crps_ensemble
    members = np.array([[-1.0, 0.5, 2.0], [0.0, 1.0, 3.0], [-2.0, -0.5, 0.4], [1.5, 2.5, 3.5]])
    return total(crps_ensemble(t[0:4], members))


def crps_ensemble_weighted(t):
    from properscoring import crps_ensemble
    return total(crps_ensemble(OBSERVED, _members(t), weights=np.exp(t[4:16].reshape(4, 3))))


def crps_ensemble_sorted_along_axis_0(t):
    from properscoring import crps_ensemble
    return total(crps_ensemble(OBSERVED, _members(t).T, issorted=True, axis=0))


def crps_ensemble_deterministic(t):
    from properscoring import crps_ensemble
    return total(crps_ensemble(OBSERVED, OBSERVED + 0.5 + t[0:4] ** 2))


def crps_quadrature(t):
    import scipy.stats
    from properscoring import crps_quadrature
    spread = 0.5 + t[1] ** 2
    distribution = scipy.stats.norm(loc=t[0], scale=spread)
    return total(crps_quadrature(OBSERVED[:2], distribution, xmin=t[0] - 10 * spread, xmax=t[0] + 10 * spread))


def brier_score(t):
    from properscoring import brier_score
    return total(brier_score(OUTCOMES, _expit(t[0:4])))


def threshold_brier_score(t):
    from properscoring import threshold_brier_score
    return total(threshold_brier_score(OBSERVED, _members(t), THRESHOLDS)) + np.sum(t ** 2)


FUNCTIONS = (crps_gaussian, crps_gaussian_in_observations, crps_gaussian_scalar, crps_ensemble,
             crps_ensemble_in_observations, crps_ensemble_weighted, crps_ensemble_sorted_along_axis_0,
             crps_ensemble_deterministic, crps_quadrature, brier_score, threshold_brier_score)
SIZES = {crps_gaussian: 8, crps_gaussian_in_observations: 4, crps_gaussian_scalar: 3, crps_ensemble: 16,
         crps_ensemble_in_observations: 4, crps_ensemble_weighted: 16, crps_ensemble_sorted_along_axis_0: 16,
         crps_ensemble_deterministic: 4, crps_quadrature: 2, brier_score: 4, threshold_brier_score: 16}


def _spec(function) -> CaseSpec:
    size = SIZES[function]

    def build(attempt: int) -> Problem:
        point = interior_point(-np.ones(size), np.ones(size), spec.seed(attempt))
        return Problem(function, point, PREFIXES, None)

    spec = CaseSpec("properscoring", function.__name__, build, all_modes=True)
    return spec


def properscoring_cases() -> list[CaseSpec]:
    return [_spec(function) for function in FUNCTIONS]
