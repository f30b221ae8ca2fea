"""filterpy cases: Kalman filter steps, sigma points and Gaussian helpers as functions of their
parameters.

Each case is a few lines of harness wiring (a parameter vector unpacked into a state, a
covariance built as ``L Lᵀ + I`` so it stays positive definite, the outputs weighted into one
number); every computation on the parameters is filterpy's own code.
"""
from __future__ import annotations

import numpy as np

from .cases import CaseSpec, Problem, interior_point

PREFIXES = ("filterpy.", __name__)


def covariance(a, b, c):
    """A 2x2 symmetric positive definite matrix from three numbers."""
    lower = np.array([[1.0 + a * a, 0.0], [b, 1.0 + c * c]])
    return lower @ lower.T + 0.5 * np.eye(2)


def total(*values):
    """Outputs weighted into one number (distinct weights so no term can hide). The weight comes
    from the index, not carried across iterations (see ``cases.weighted_total``)."""
    result = 0.0
    for index in range(len(values)):
        value = values[index]
        spread = np.linspace(1.0, 2.0, np.size(value)).reshape(np.shape(value))
        result = result + (1.0 + 0.3 * index) * np.sum(value * spread)
    return result


F_CV = np.array([[1.0, 0.5], [0.0, 1.0]])
H_POS = np.array([[1.0, 0.0]])
ZS = np.array([0.3, 0.9, 1.4, 2.2])


def kalman_predict(t):
    from filterpy.kalman import predict
    from filterpy.common import Q_discrete_white_noise
    x, P = predict(t[0:2], covariance(t[2], t[3], t[4]), F_CV, Q_discrete_white_noise(2, 0.5, t[5] * t[5]))
    return total(x, P)


def kalman_update(t):
    from filterpy.kalman import update
    x, P = update(t[0:2], covariance(t[2], t[3], t[4]), np.array([t[5]]), np.array([[1.0 + t[0] ** 2]]), H_POS)
    return total(x, P)


def kalman_predict_update_loop(t):
    from filterpy.kalman import predict, update
    x, P = t[0:2], covariance(t[2], t[3], t[4])
    Q = np.eye(2) * (0.1 + t[5] ** 2)
    for z in ZS:
        x, P = predict(x, P, F_CV, Q)
        x, P = update(x, P, np.array([z]), np.array([[0.5]]), H_POS)
    return total(x, P)


def kalman_filter_object(t):
    from filterpy.kalman import KalmanFilter
    kf = KalmanFilter(dim_x=2, dim_z=1)
    kf.x = np.array([t[0], t[1]])
    kf.F = F_CV
    kf.H = H_POS
    kf.P = covariance(t[2], t[3], t[4])
    kf.R = np.array([[0.5 + t[5] ** 2]])
    kf.Q = np.eye(2) * 0.1
    for z in ZS:
        kf.predict()
        kf.update(np.array([z]))
    return total(kf.x, kf.P)


def kalman_batch_filter(t):
    from filterpy.kalman import KalmanFilter
    kf = KalmanFilter(dim_x=2, dim_z=1)
    kf.x = np.array([t[0], t[1]])
    kf.F, kf.H, kf.P = F_CV, H_POS, covariance(t[2], t[3], t[4])
    kf.R, kf.Q = np.array([[0.5]]), np.eye(2) * (0.1 + t[5] ** 2)
    means, covariances, _, _ = kf.batch_filter(ZS)
    return total(means, covariances)


def rts_smoother(t):
    from filterpy.kalman import KalmanFilter
    kf = KalmanFilter(dim_x=2, dim_z=1)
    kf.x = np.array([t[0], t[1]])
    kf.F, kf.H, kf.P = F_CV, H_POS, covariance(t[2], t[3], t[4])
    kf.R, kf.Q = np.array([[0.5]]), np.eye(2) * (0.1 + t[5] ** 2)
    means, covariances, _, _ = kf.batch_filter(ZS)
    smoothed, smoothed_cov, _, _ = kf.rts_smoother(means, covariances)
    return total(smoothed, smoothed_cov)


def q_discrete_white_noise(t):
    from filterpy.common import Q_discrete_white_noise
    return total(Q_discrete_white_noise(3, dt=0.5 + t[0] ** 2, var=1.0 + t[1] ** 2))


def q_continuous_white_noise(t):
    from filterpy.common import Q_continuous_white_noise
    return total(Q_continuous_white_noise(4, dt=0.5 + t[0] ** 2, spectral_density=1.0 + t[1] ** 2))


def mahalanobis(t):
    from filterpy.stats import mahalanobis
    return mahalanobis(t[0:2], np.array([t[5], -t[5]]), covariance(t[2], t[3], t[4]))


def log_likelihood(t):
    from filterpy.stats import log_likelihood
    return log_likelihood(np.array([t[5]]), t[0:2], covariance(t[2], t[3], t[4]), H_POS, np.array([[0.7]]))


def gaussian(t):
    from filterpy.stats import gaussian
    return gaussian(t[0], t[1], 1.0 + t[2] ** 2)


def gaussian_products(t):
    from filterpy.stats import add, mul
    mean, var = mul(t[0], 1.0 + t[1] ** 2, t[2], 1.0 + t[3] ** 2)
    mean2, var2 = add(mean, var, t[4], 1.0 + t[5] ** 2)
    return total(np.array([mean, var, mean2, var2]))


def multivariate_gaussian(t):
    from filterpy.stats import multivariate_gaussian
    return multivariate_gaussian(t[0:2], np.array([t[5], 0.2]), covariance(t[2], t[3], t[4]))


def multivariate_multiply(t):
    from filterpy.stats import multivariate_multiply
    mean, cov = multivariate_multiply(t[0:2], covariance(t[2], t[3], t[4]), np.array([t[5], 1.0]),
                                      covariance(t[4], t[5], t[0]))
    return total(mean, cov)


def merwe_sigma_points(t):
    from filterpy.kalman import MerweScaledSigmaPoints
    points = MerweScaledSigmaPoints(2, alpha=0.3, beta=2.0, kappa=1.0)
    return total(points.sigma_points(t[0:2], covariance(t[2], t[3], t[4])))


def julier_sigma_points(t):
    from filterpy.kalman import JulierSigmaPoints
    points = JulierSigmaPoints(2, kappa=1.0)
    return total(points.sigma_points(t[0:2], covariance(t[2], t[3], t[4])))


def simplex_sigma_points(t):
    from filterpy.kalman import SimplexSigmaPoints
    points = SimplexSigmaPoints(2)
    return total(points.sigma_points(t[0:2], covariance(t[2], t[3], t[4])))


def unscented_transform(t):
    from filterpy.kalman import MerweScaledSigmaPoints, unscented_transform
    points = MerweScaledSigmaPoints(2, alpha=0.3, beta=2.0, kappa=1.0)
    sigmas = points.sigma_points(t[0:2], covariance(t[2], t[3], t[4]))
    mean, cov = unscented_transform(np.sin(sigmas), points.Wm, points.Wc, np.eye(2) * t[5] ** 2)
    return total(mean, cov)


def _fx(x, dt):
    return F_CV @ x


def _hx(x):
    return np.array([np.sqrt(1.0 + x[0] ** 2)])


def unscented_kalman_filter(t):
    from filterpy.kalman import MerweScaledSigmaPoints, UnscentedKalmanFilter
    points = MerweScaledSigmaPoints(2, alpha=0.3, beta=2.0, kappa=1.0)
    ukf = UnscentedKalmanFilter(dim_x=2, dim_z=1, dt=0.5, hx=_hx, fx=_fx, points=points)
    ukf.x, ukf.P = np.array([t[0], t[1]]), covariance(t[2], t[3], t[4])
    ukf.R, ukf.Q = np.array([[0.5]]), np.eye(2) * (0.1 + t[5] ** 2)
    for z in ZS[:2]:
        ukf.predict()
        ukf.update(np.array([1.0 + z]))
    return total(ukf.x, ukf.P)


def extended_kalman_filter(t):
    from filterpy.kalman import ExtendedKalmanFilter
    ekf = ExtendedKalmanFilter(dim_x=2, dim_z=1)
    ekf.x, ekf.P = np.array([t[0], t[1]]), covariance(t[2], t[3], t[4])
    ekf.F, ekf.R, ekf.Q = F_CV, np.array([[0.5]]), np.eye(2) * (0.1 + t[5] ** 2)

    def jacobian(x):
        return np.array([[x[0] / np.sqrt(1.0 + x[0] ** 2), 0.0]])

    for z in ZS[:2]:
        ekf.predict()
        ekf.update(np.array([1.0 + z]), jacobian, _hx)
    return total(ekf.x, ekf.P)


def information_filter(t):
    from filterpy.kalman import InformationFilter
    inf = InformationFilter(dim_x=2, dim_z=1)
    inf.x = np.array([[t[0]], [t[1]]])
    inf.P_inv = np.linalg.inv(covariance(t[2], t[3], t[4]))
    inf.F, inf.H, inf.R_inv = F_CV, H_POS, np.array([[2.0 + t[5] ** 2]])
    inf.Q = np.eye(2) * 0.1
    for z in ZS[:2]:
        inf.predict()
        inf.update(np.array([[z]]))
    return total(inf.x, inf.P_inv)


def fading_kalman_filter(t):
    from filterpy.kalman import FadingKalmanFilter
    kf = FadingKalmanFilter(1.02, dim_x=2, dim_z=1)
    kf.x = np.array([[t[0]], [t[1]]])
    kf.F, kf.H, kf.P = F_CV, H_POS, covariance(t[2], t[3], t[4])
    kf.R, kf.Q = np.array([[0.5 + t[5] ** 2]]), np.eye(2) * 0.1
    for z in ZS[:3]:
        kf.predict()
        kf.update(np.array([[z]]))
    return total(kf.x, kf.P)


def gh_filter(t):
    from filterpy.gh import GHFilter
    filt = GHFilter(x=t[0], dx=t[1], dt=0.5, g=0.4, h=0.1 + 0.1 * t[2] ** 2)
    for z in ZS:
        filt.update(z)
    return total(np.array([filt.x, filt.dx]))


def ghk_filter(t):
    from filterpy.gh import GHKFilter
    filt = GHKFilter(x=t[0], dx=t[1], ddx=t[2], dt=0.5, g=0.4, h=0.1, k=0.01 + 0.01 * t[3] ** 2)
    for z in ZS:
        filt.update(z)
    return total(np.array([filt.x, filt.dx, filt.ddx]))


def discrete_bayes(t):
    from filterpy.discrete_bayes import normalize, update
    prior = normalize(np.exp(t))
    return total(update(np.exp(-t ** 2), prior))


def kinematic_state_transition(t):
    from filterpy.common import kinematic_state_transition
    return total(kinematic_state_transition(3, 0.5 + t[0] ** 2))


def van_loan_discretization(t):
    from filterpy.common import van_loan_discretization
    F = np.array([[0.0, 1.0], [-1.0 - t[0] ** 2, -0.2]])
    G = np.array([[0.0], [1.0 + t[1] ** 2]])
    phi, Q = van_loan_discretization(F, G, dt=0.3)
    return total(phi, Q)


FUNCTIONS = (kalman_predict, kalman_update, kalman_predict_update_loop, kalman_filter_object,
             kalman_batch_filter, rts_smoother, q_discrete_white_noise, q_continuous_white_noise,
             mahalanobis, log_likelihood, gaussian, gaussian_products, multivariate_gaussian,
             multivariate_multiply, merwe_sigma_points, julier_sigma_points, simplex_sigma_points,
             unscented_transform, unscented_kalman_filter, extended_kalman_filter, information_filter,
             fading_kalman_filter, gh_filter, ghk_filter, discrete_bayes, kinematic_state_transition,
             van_loan_discretization)


def _spec(function) -> CaseSpec:
    def build(attempt: int) -> Problem:
        point = interior_point(-np.ones(6), np.ones(6), spec.seed(attempt))
        return Problem(function, point, PREFIXES, None)

    spec = CaseSpec("filterpy", function.__name__, build)
    return spec


def filterpy_cases() -> list[CaseSpec]:
    return [_spec(function) for function in FUNCTIONS]
