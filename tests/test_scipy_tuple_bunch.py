"""SciPy's result tuples with attributes (``scipy._lib._bunch`` "tuple bunches": PearsonRResult,
LinregressResult, TtestResult) made in differentiated code: their fields carry derivatives in
reverse, forward and second order, and so do attributes set on them afterwards; ``stdtr`` and kendalltau's pair count reached from
statistics."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .all_modes import check_all_modes

st = pytest.importorskip("scipy.stats")
special = pytest.importorskip("scipy.special")

X0 = np.array([0.7, 0.35, 1.2, -0.4, 0.9])
W = np.array([1.0, 2.0, 3.5, 3.9, 5.2])
V = np.array([0.3, -0.5, 0.8, 0.1, 0.2])


def differences(f, x, h=1e-6):
    return np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)])


def pearson_statistic(x):
    return st.pearsonr(x, x ** 3).statistic


def pearson_item(x):
    return st.pearsonr(W, x)[0] * x[1]


def spearman_pvalue(x):
    return st.spearmanr(x, W).pvalue


def t_cdf(x):
    return np.sum(special.stdtr(3.5, x) + special.stdtrit(4.0, special.expit(x)))


@pytest.mark.parametrize("f", [pearson_statistic, pearson_item, spearman_pvalue, t_cdf])
def test_every_mode_against_differences(f):
    check_all_modes(f, X0.copy())


def shifted_pearson(x):
    res = st.pearsonr(W, x)
    res.shifted = res.statistic * 2.0 + np.sum(x) * 0.1  # set after the construction (rules/bunch_records.py)
    return res.shifted ** 2 + res.statistic


def shifted_twice(x):
    res = st.pearsonr(W, x)
    res.shifted = res.statistic + 1.0
    first = res.shifted * x[0]
    res.shifted = np.sin(res.pvalue) * x[1]  # a second value under the same name
    return first + res.shifted ** 2 + getattr(res, "shifted") * x[2]


def attribute_of_a_result_made_here_from_its_items(x):
    res = st.pearsonr(W, x)
    setattr(res, "pair", (res.statistic, x[0] * res.pvalue))  # a tuple of floats, set with setattr
    return res.pair[0] * res.pair[1]


@pytest.mark.parametrize("f", [shifted_pearson, shifted_twice, attribute_of_a_result_made_here_from_its_items])
def test_attribute_set_after_the_construction_in_every_mode(f):
    check_all_modes(f, X0.copy())
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(X0.copy()), yb.grad(f)(X0.copy()), rtol=1e-10)


def test_a_field_still_cannot_be_set():
    def f(x):
        res = st.pearsonr(W, x)
        res.statistic = 1.0
        return res.statistic

    with pytest.raises(AttributeError, match="can't set attribute"):
        yb.grad(f)(X0.copy())


def test_stdtr_refuses_moving_degrees_of_freedom():
    with pytest.raises(RuleArgumentError, match="degrees of freedom"):
        yb.jvp(lambda d: special.stdtr(d, 0.5), (3.0,), (1.0,))


def pearson_correlation(x):
    """``correlation`` is set to the statistic itself by PearsonRResult's ``__init__``."""
    return st.pearsonr(x, np.sin(x)).correlation


def test_attribute_that_is_an_item_in_every_mode():
    check_all_modes(pearson_correlation, X0.copy())


def test_returned_result_tangent_has_the_alias():
    """The tangent of a returned PearsonRResult holds its items' tangents, and ``correlation`` as
    the statistic's."""
    _, t = yb.jvp(lambda x: st.pearsonr(x, np.sin(x)), (X0.copy(),), (V,))
    want = differences(pearson_correlation, X0) @ V
    np.testing.assert_allclose([t.statistic, t.correlation], [want, want], rtol=1e-5, atol=1e-8)

