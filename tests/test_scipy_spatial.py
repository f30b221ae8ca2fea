"""``scipy.spatial.distance`` (rules/scipy_spatial.py): the NumPy definitions give SciPy's values
for every covered metric, and ``cdist``/``pdist``/``squareform`` inside a function are
differentiated in every mode (grad, jvp, jacobian(mode="fwd"), hvp, hessian) against central
differences; what is not covered is refused by name; the norm metrics have gradient 0 at
coincident points (docs/conventions.md); a pybind11 function without a rule is named as its
module's function."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.spatial import _distance_pybind
from scipy.spatial.distance import cdist, pdist, squareform

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules import MissingRuleError, RuleArgumentError
from yuebing.rules.scipy_spatial import _cdist, _pdist, _squareform

_rng = np.random.default_rng(7)
XA, XB, W = _rng.normal(size=(4, 3)), _rng.normal(size=(5, 3)), _rng.uniform(0.5, 2.0, 3)
POSITIVE_A, POSITIVE_B = _rng.uniform(0.2, 2.0, (4, 3)), _rng.uniform(0.2, 2.0, (5, 3))

METRICS = [
    ("euclidean", {}), ("sqeuclidean", {}), ("cityblock", {}), ("chebyshev", {}), ("cosine", {}),
    ("correlation", {}), ("braycurtis", {}), ("canberra", {}), ("seuclidean", {}), ("mahalanobis", {}),
    ("minkowski", {"p": 3.0}), ("minkowski", {"p": 1.5, "w": W}), ("euclidean", {"w": W}),
    ("sqeuclidean", {"w": W}), ("cityblock", {"w": W}), ("chebyshev", {"w": W}), ("cosine", {"w": W}),
    ("correlation", {"w": W}), ("braycurtis", {"w": W}), ("canberra", {"w": W}),
    ("seuclidean", {"V": W}), ("mahalanobis", {"VI": np.diag(W)}),
]


@pytest.mark.parametrize("metric, kwargs", METRICS)
def test_definitions_give_scipys_values(metric, kwargs):
    xa, xb = (POSITIVE_A, POSITIVE_B) if metric == "braycurtis" else (XA, XB)
    xa = np.concatenate([xa, _rng.normal(size=(3, 3))])  # mahalanobis's default VI needs more rows than columns
    np.testing.assert_allclose(_cdist(xa, xb, metric, **kwargs), cdist(xa, xb, metric, **kwargs), rtol=1e-12, atol=1e-13)
    np.testing.assert_allclose(_pdist(xa, metric, **kwargs), pdist(xa, metric, **kwargs), rtol=1e-12, atol=1e-13)


@pytest.mark.parametrize("metric", ["jensenshannon", "hamming", "jaccard", "dice", "yule"])
def test_other_metrics_give_scipys_values(metric):
    xa, xb = (POSITIVE_A, POSITIVE_B) if metric == "jensenshannon" else (XA > 0.2, XB > 0.2)
    np.testing.assert_allclose(_cdist(xa, xb, metric), cdist(xa, xb, metric), rtol=1e-12)
    np.testing.assert_allclose(_pdist(xa, metric), pdist(xa, metric), rtol=1e-12)


@pytest.mark.parametrize("vector", [np.zeros(0), np.arange(1.0, 2.0), np.arange(1.0, 7.0)])
def test_squareform_gives_scipys_values(vector):
    np.testing.assert_array_equal(_squareform(vector), squareform(vector))
    np.testing.assert_array_equal(_squareform(squareform(vector)), squareform(squareform(vector)))


def _flat(f, shape):
    return lambda z: f(z.reshape(shape))


@pytest.mark.parametrize("metric, kwargs", [
    ("euclidean", {}), ("sqeuclidean", {}), ("cityblock", {}), ("minkowski", {"p": 3.0}), ("cosine", {}),
    ("chebyshev", {}), ("seuclidean", {}), ("mahalanobis", {}), ("euclidean", {"w": W}), ("correlation", {}),
])
def test_cdist_every_mode(metric, kwargs):
    weights = np.linspace(0.5, 1.5, 20).reshape(4, 5)
    xb = np.concatenate([XB, XA[:1] + [3.0, 1.0, -2.0]])  # mahalanobis's default VI: enough rows
    f = lambda xa: np.sum(np.sin(cdist(xa, xb, metric, **kwargs)) * np.resize(weights, (4, 6)))  # noqa: E731
    check_every_mode(_flat(f, XA.shape), XA.ravel())


def test_cdist_weights_and_variances_are_differentiated():
    check_every_mode(lambda w: np.sum(cdist(XA, XB, "minkowski", p=3.0, w=w) ** 2), W)
    check_every_mode(lambda v: np.sum(cdist(XA, XB, "seuclidean", V=v)), W)


@pytest.mark.parametrize("metric", ["euclidean", "cosine", "canberra", "seuclidean"])
def test_pdist_and_squareform_every_mode(metric):
    f = lambda x: np.sum(squareform(pdist(x, metric)) @ XB[:4]) + np.sum(pdist(x, metric) ** 2)  # noqa: E731
    check_every_mode(_flat(f, XA.shape), XA.ravel())


def test_callable_metric_is_differentiated_as_user_code():
    scale = np.array([1.0, 2.0, 0.5])

    def metric(u, v):
        return np.sum(scale * (u - v) ** 4) ** 0.25

    f = lambda x: np.sum(cdist(x, XB, metric)) + np.sum(pdist(x, metric))  # noqa: E731
    check_every_mode(_flat(f, XA.shape), XA.ravel())
    # the metric's captured array is differentiated too
    g = lambda s: np.sum(cdist(XA, XB, lambda u, v: np.sum(s * (u - v) ** 2)))  # noqa: E731
    check_every_mode(g, scale)


def test_norm_metrics_have_gradient_zero_at_coincident_points():
    xb = XA[:2].copy()  # XA[0] and XA[1] coincide with the rows of xb
    for metric in ("euclidean", "minkowski", "seuclidean", "mahalanobis"):
        kwargs = {"VI": np.eye(3)} if metric == "mahalanobis" else {}
        f = lambda x: cdist(x, xb, metric, **kwargs)[0, 0]  # noqa: B023, E731
        np.testing.assert_array_equal(yb.grad(f)(XA.copy()), np.zeros_like(XA))
        _, tangent = yb.jvp(f, (XA.copy(),), (np.ones_like(XA),))
        assert tangent == 0.0


@pytest.mark.parametrize("call, message", [
    (lambda x: cdist(x, XB, "foo"), "no derivative for metric='foo'"),
    (lambda x: pdist(x, "dice", w=W), "metric='dice' without w="),
    (lambda x: cdist(x, XB, out=np.zeros((4, 5))), "does not differentiate out="),
])
def test_refusals_name_the_call(call, message):
    with pytest.raises(RuleArgumentError, match=message):
        yb.grad(lambda x: np.sum(call(x)))(XA.copy())


def test_a_pybind11_function_without_a_rule_is_named_as_its_modules():
    with pytest.raises(MissingRuleError, match=r"rule for scipy\.spatial\._distance_pybind\.cdist_euclidean:"):
        yb.grad(lambda x: np.sum(_distance_pybind.cdist_euclidean(x, XB)))(XA.copy())


def test_distances_of_two_vectors_and_scipy_linalg_norm_every_mode():
    """scipy.linalg.norm of a vector (SciPy calls BLAS's nrm2) was refused ('setattr ... fortran'),
    and with it distance.euclidean and seuclidean: now numpy.linalg.norm's rules."""
    import scipy.linalg
    from scipy.spatial import distance

    x = XA[0]
    check_every_mode(lambda v: scipy.linalg.norm(v) ** 3 + scipy.linalg.norm(np.outer(v, v), 1), x)
    check_every_mode(lambda v: distance.euclidean(v, XB[0]) + distance.seuclidean(v, XB[1], W) ** 2, x)
