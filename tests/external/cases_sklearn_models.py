"""scikit-learn cases, continued: estimators fitted inside the function (preprocessing, linear
models, kernel ridge, covariance, decomposition, discriminant analysis, naive Bayes, mixtures,
kernel approximation) and the linear models' loss objects, as functions of the data.

A fit is differentiable in its data where the estimator computes a closed form (a mean, a
solve, an SVD at distinct singular values); the harness builds the estimator, fits it on a data
matrix made from ``t`` (or targets ``t``) and weights what it learns or returns into one number.
"""
from __future__ import annotations

import numpy as np

from .cases_filterpy import total
from .cases_sklearn import LABELS, X_FIXED, Y_FIXED

BASE = np.random.default_rng(7).uniform(-1.0, 1.0, size=(6, 3))   # data matrices are BASE + 0.3 t
CLASSES = np.array([0, 1, 0, 1, 1, 0])
TARGETS = np.array([0.3, -0.8, 1.2, 0.5, -0.1, 0.9])


def _data(t, shape=(6, 3)):
    return BASE[:shape[0], :shape[1]] + 0.3 * t.reshape(shape)


# ----------------------------------------------------------------------------------- preprocessing

def standard_scaler_fit_transform(t):
    from sklearn.preprocessing import StandardScaler
    return total(StandardScaler().fit_transform(_data(t, (4, 3))))


def standard_scaler_transform(t):
    from sklearn.preprocessing import StandardScaler
    scaler = StandardScaler().fit(BASE)
    return total(scaler.transform(_data(t, (4, 3))), scaler.inverse_transform(_data(t, (4, 3))))


def scale(t):
    from sklearn.preprocessing import scale
    return total(scale(_data(t, (4, 3))))


def min_max_scaler(t):
    from sklearn.preprocessing import MinMaxScaler
    return total(MinMaxScaler().fit_transform(_data(t, (4, 3))))


def max_abs_scaler(t):
    from sklearn.preprocessing import MaxAbsScaler
    return total(MaxAbsScaler().fit_transform(_data(t, (4, 3))))


def robust_scaler(t):
    from sklearn.preprocessing import RobustScaler
    return total(RobustScaler().fit_transform(_data(t, (4, 3))))


def normalize(t):
    from sklearn.preprocessing import normalize
    return total(normalize(_data(t, (4, 3))), normalize(_data(t, (4, 3)), norm="l1"))


def polynomial_features(t):
    from sklearn.preprocessing import PolynomialFeatures
    return total(PolynomialFeatures(degree=3).fit_transform(_data(t, (4, 3))))


def spline_transformer(t):
    from sklearn.preprocessing import SplineTransformer
    spline = SplineTransformer(n_knots=4, degree=3).fit(BASE)
    return total(spline.transform(0.8 * _data(t, (4, 3))))


def kernel_centerer(t):
    from sklearn.metrics.pairwise import rbf_kernel
    from sklearn.preprocessing import KernelCenterer
    K = rbf_kernel(_data(t, (4, 3)))
    centred = KernelCenterer().fit_transform(K)
    return total(centred ** 2)   # (total's weights, linear in the index, sum to 0 over a centred matrix)


def power_transformer_yeo_johnson(t):
    from sklearn.preprocessing import PowerTransformer
    transformer = PowerTransformer(standardize=False)
    transformer.fit(BASE)
    return total(transformer.transform(_data(t, (4, 3))))


def function_transformer(t):
    from sklearn.preprocessing import FunctionTransformer
    return total(FunctionTransformer(np.log1p, inverse_func=np.expm1).fit_transform(np.exp(t)))


PREPROCESSING = (standard_scaler_fit_transform, standard_scaler_transform, scale, min_max_scaler,
                 max_abs_scaler, robust_scaler, normalize, polynomial_features, spline_transformer,
                 kernel_centerer, power_transformer_yeo_johnson, function_transformer)


# ----------------------------------------------------------------------------------- linear models

def ridge_in_targets(t):
    from sklearn.linear_model import Ridge
    model = Ridge(alpha=0.5).fit(BASE, t[:6])
    return total(model.coef_, model.intercept_, model.predict(Y_FIXED[:, [0, 1, 1]]))


def ridge_in_data(t):
    from sklearn.linear_model import Ridge
    model = Ridge(alpha=0.5).fit(_data(t, (6, 2)), TARGETS)
    return total(model.coef_, model.intercept_)


def _ridge_regression(solver):
    def ridge_regression(t):
        from sklearn.linear_model import ridge_regression
        return total(ridge_regression(_data(t, (6, 2)), TARGETS, alpha=0.7, solver=solver))
    ridge_regression.__name__ = f"ridge_regression_{solver}"
    return ridge_regression


def linear_regression(t):
    from sklearn.linear_model import LinearRegression
    model = LinearRegression().fit(_data(t, (6, 2)), TARGETS)
    return total(model.coef_, model.intercept_)


def kernel_ridge(t):
    from sklearn.kernel_ridge import KernelRidge
    model = KernelRidge(alpha=0.3, kernel="rbf", gamma=0.8).fit(BASE[:, :2], t[:6])
    return total(model.predict(Y_FIXED))


def kernel_ridge_in_points(t):
    from sklearn.kernel_ridge import KernelRidge
    model = KernelRidge(alpha=0.3, kernel="rbf", gamma=0.8).fit(BASE[:, :2], TARGETS)
    return total(model.predict(t.reshape(4, 2)))


def _loss(name, *arguments):
    def loss(t):
        from sklearn._loss import loss as losses
        instance = getattr(losses, name)(*arguments)
        y_true = np.abs(TARGETS) + 0.2 if name in ("HalfPoissonLoss", "HalfGammaLoss", "HalfTweedieLoss") \
            else CLASSES.astype(float) if name in ("HalfBinomialLoss", "ExponentialLoss") else TARGETS
        return instance(y_true, t[:6])
    loss.__name__ = f"loss_{name}"
    return loss


def linear_model_loss(t):
    from sklearn._loss.loss import HalfBinomialLoss
    from sklearn.linear_model._linear_loss import LinearModelLoss
    objective = LinearModelLoss(base_loss=HalfBinomialLoss(), fit_intercept=True)
    return objective.loss(t[:4], BASE, CLASSES.astype(float), l2_reg_strength=0.3)


def logistic_regression_predict_proba(t):
    from sklearn.linear_model import LogisticRegression
    model = LogisticRegression().fit(BASE, CLASSES)
    return total(model.predict_proba(_data(t, (4, 3))))


LINEAR_MODELS = (ridge_in_targets, ridge_in_data, _ridge_regression("cholesky"), _ridge_regression("svd"),
                 linear_regression, kernel_ridge, kernel_ridge_in_points,
                 _loss("HalfSquaredError"), _loss("AbsoluteError"), _loss("PinballLoss", None, 0.3),
                 _loss("HuberLoss"), _loss("HalfPoissonLoss"), _loss("HalfGammaLoss"),
                 _loss("HalfTweedieLoss", None, 1.5), _loss("HalfBinomialLoss"), _loss("ExponentialLoss"),
                 linear_model_loss, logistic_regression_predict_proba)


# ------------------------------------------------------------------------- covariance, decomposition

def empirical_covariance(t):
    from sklearn.covariance import empirical_covariance
    return total(empirical_covariance(_data(t, (6, 2))))


def ledoit_wolf(t):
    from sklearn.covariance import ledoit_wolf
    covariance, shrinkage = ledoit_wolf(_data(t, (6, 2)))
    return total(covariance, shrinkage)


def oas(t):
    from sklearn.covariance import oas
    covariance, shrinkage = oas(_data(t, (6, 2)))
    return total(covariance, shrinkage)


def covariance_score(t):
    from sklearn.covariance import EmpiricalCovariance
    model = EmpiricalCovariance().fit(_data(t, (6, 2)))
    return model.score(X_FIXED) + total(model.mahalanobis(Y_FIXED))


def pca_fit_transform(t):
    from sklearn.decomposition import PCA
    pca = PCA(n_components=2, svd_solver="full")
    return total(np.abs(pca.fit_transform(_data(t, (6, 3)))), pca.explained_variance_)


def pca_explained_variance(t):
    from sklearn.decomposition import PCA
    return total(PCA(svd_solver="full").fit(_data(t, (6, 3))).explained_variance_)


def kernel_pca(t):
    from sklearn.decomposition import KernelPCA
    model = KernelPCA(n_components=2, kernel="rbf", gamma=0.5).fit(_data(t, (6, 3)))
    return total(model.eigenvalues_)


def linear_discriminant_analysis(t):
    from sklearn.discriminant_analysis import LinearDiscriminantAnalysis
    model = LinearDiscriminantAnalysis(solver="lsqr").fit(_data(t, (6, 2)), CLASSES)
    return total(model.predict_proba(Y_FIXED))


def quadratic_discriminant_analysis(t):
    from sklearn.discriminant_analysis import QuadraticDiscriminantAnalysis
    model = QuadraticDiscriminantAnalysis(reg_param=0.3).fit(BASE[:, :2], CLASSES)
    return total(model.predict_log_proba(t.reshape(4, 2)))


def gaussian_nb(t):
    from sklearn.naive_bayes import GaussianNB
    model = GaussianNB().fit(_data(t, (6, 2)), CLASSES)
    return total(model.predict_log_proba(Y_FIXED))


def gaussian_mixture_log_prob(t):
    from sklearn.mixture._gaussian_mixture import _compute_precision_cholesky, _estimate_log_gaussian_prob
    A = t.reshape(2, 2, 2)
    covariances = np.einsum("kij,klj->kil", A, A) + np.eye(2)
    precisions_chol = _compute_precision_cholesky(covariances, "full")
    return total(_estimate_log_gaussian_prob(X_FIXED, Y_FIXED[:2], precisions_chol, "full"))


def rbf_sampler(t):
    from sklearn.kernel_approximation import RBFSampler
    sampler = RBFSampler(gamma=0.5, n_components=5, random_state=0).fit(X_FIXED)
    return total(sampler.transform(t.reshape(4, 2)))


def nystroem(t):
    from sklearn.kernel_approximation import Nystroem
    sampler = Nystroem(gamma=0.5, n_components=4, random_state=0).fit(X_FIXED)
    return total(sampler.transform(t.reshape(4, 2)))


MODELS = (empirical_covariance, ledoit_wolf, oas, covariance_score, pca_fit_transform,
          pca_explained_variance, kernel_pca, linear_discriminant_analysis,
          quadratic_discriminant_analysis, gaussian_nb, gaussian_mixture_log_prob, rbf_sampler, nystroem)

MODEL_FUNCTIONS = PREPROCESSING + LINEAR_MODELS + MODELS

# the number of variables of each case (its vector t)
MODEL_SIZES = {"ridge_in_targets": 6, "kernel_ridge": 6, "linear_model_loss": 4, "function_transformer": 6,
               "ridge_in_data": 12, "ridge_regression_cholesky": 12, "ridge_regression_svd": 12,
               "linear_regression": 12, "empirical_covariance": 12, "ledoit_wolf": 12, "oas": 12,
               "covariance_score": 12, "pca_fit_transform": 18, "pca_explained_variance": 18,
               "kernel_pca": 18, "linear_discriminant_analysis": 12, "gaussian_nb": 12,
               "gaussian_mixture_log_prob": 8, "rbf_sampler": 8, "nystroem": 8, "kernel_ridge_in_points": 8,
               "quadratic_discriminant_analysis": 8, "logistic_regression_predict_proba": 12}


def model_size(name: str) -> int:
    if name.startswith("loss_"):
        return 6
    return MODEL_SIZES.get(name, 12)
