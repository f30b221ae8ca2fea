"""SciPy result tuples keeping float data in attributes beside their items (tuple bunches:
``linregress``'s ``intercept_stderr``, a t test's ``df`` and the standard error and estimate its
``confidence_interval()`` reads), followed through the record made at their construction
(``rules/bunch_data.py``): items, unpacking and attributes against finite differences in reverse,
forward and second order; what is not an argument of the construction stays refused by name."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError
from yuebing.testing.third_order import check_third_order

from .all_modes import check_all_modes

st = pytest.importorskip("scipy.stats")
LinregressResult = pytest.importorskip("scipy.stats._stats_py").LinregressResult

X0 = np.array([0.7, 0.35, 1.2, -0.4, 0.9])
W = np.array([1.0, 2.0, 3.5, 3.9, 5.2])
V = np.array([0.3, -0.5, 0.8, 0.1, 0.2])


def slope(x):
    return st.linregress(W, x).slope


def intercept_item(x):
    return st.linregress(W, x)[1] * x[0]


def intercept_stderr(x):
    return st.linregress(W, x).intercept_stderr


def unpacked(x):
    s, i, r, p, se = st.linregress(W, x)
    return s * i + r + p + se


def both_samples_move(x):
    res = st.linregress(x, x ** 2 + W)
    return res.intercept_stderr * res.rvalue


def one_sample_t(x):
    return st.ttest_1samp(x, 0.1).statistic


def one_sample_p(x):
    return st.ttest_1samp(x, 0.1).pvalue


def independent_p(x):
    return st.ttest_ind(x, W).pvalue


def welch_statistic(x):
    return st.ttest_ind(x, W, equal_var=False).statistic


def related_t(x):
    return st.ttest_rel(x, W).statistic


def interval_low(x):
    return st.ttest_1samp(x, 0.1).confidence_interval().low


def interval_high(x):
    res = st.ttest_ind(x, W)
    return res.confidence_interval(0.9).high * res.df


def kendall(x):
    res = st.kendalltau(x, W)
    return res.statistic * x[0] + res.correlation * x[1] + res.pvalue


def made_in_the_function(x):
    res = LinregressResult(x[0], x[1], x[2], x[3], x[4], intercept_stderr=x[1] * x[2])
    return res.intercept_stderr * res.slope


CASES = [slope, intercept_item, intercept_stderr, unpacked, both_samples_move, one_sample_t, one_sample_p,
         independent_p, related_t, interval_low, interval_high, kendall, made_in_the_function]


@pytest.mark.parametrize("f", CASES)
def test_every_mode_against_differences(f):
    check_all_modes(f, X0.copy())


def test_welch_df_in_reverse_and_refused_moving_in_forward():
    """Welch's ``df`` depends on the data: its gradient matches differences; forward mode refuses
    it by name (the p-value's ``stdtr`` in a moving ``df``), never a silent zero."""
    for f in (welch_statistic, lambda x: st.ttest_ind(x, W, equal_var=False).df):
        h = 1e-6
        want = np.array([(f(X0 + h * e) - f(X0 - h * e)) / (2 * h) for e in np.eye(X0.size)])
        np.testing.assert_allclose(yb.grad(f)(X0.copy()), want, rtol=1e-5, atol=1e-7)
        with pytest.raises(RuleArgumentError, match="df"):
            yb.jvp(f, (X0.copy(),), (V,))


def test_jacobian_and_hessian_of_the_attribute():
    f = intercept_stderr
    rev = yb.jacobian(f)(X0.copy())
    _, fwd = yb.jvp(f, (X0.copy(),), (V,))
    np.testing.assert_allclose(rev @ V, fwd, rtol=1e-10, atol=1e-12)
    h = yb.hessian(f)(X0.copy())
    _, _, (hv,) = yb.hvp(f, (X0.copy(),), (V,))
    np.testing.assert_allclose(h @ V, hv, rtol=1e-8, atol=1e-10)


def test_third_order_is_refused_by_name():
    with pytest.raises(yb.NestedDifferentiationError, match="LinregressResult"):
        check_third_order(made_in_the_function, X0.copy())


def test_returned_result_tangent_has_its_items():
    _, t = yb.jvp(lambda x: st.linregress(W, x), (X0.copy(),), (V,))
    h = 1e-6
    want = (np.array(st.linregress(W, X0 + h * V)) - np.array(st.linregress(W, X0 - h * V))) / (2 * h)
    np.testing.assert_allclose(np.array(t), want, rtol=1e-5, atol=1e-8)


def attribute_set_later(x):
    res = st.linregress(W, x)
    res.scaled = res.intercept_stderr * 2.0  # set after the construction: recorded beside it too
    return res.scaled * res.slope


def test_attribute_set_later_in_every_mode():
    check_all_modes(attribute_set_later, X0.copy())


OUTSIDE = st.linregress(W, X0)


def read_outside(x):
    return x[0] * OUTSIDE.intercept_stderr  # made outside: its attributes' derivatives are not known


@pytest.mark.parametrize("f", [read_outside])
def test_other_float_attributes_are_refused(f):
    with pytest.raises(RuleArgumentError, match="LinregressResult"):
        yb.grad(f)(X0.copy())
    with pytest.raises(RuleArgumentError, match="LinregressResult"):
        yb.jvp(f, (X0.copy(),), (V,))
    with pytest.raises(RuleArgumentError, match="LinregressResult"):
        yb.hvp(f, (X0.copy(),), (V,))


def test_result_made_outside_is_refused():
    outside = st.linregress(W, X0)

    def f(x):
        return x[0] * outside.intercept_stderr

    with pytest.raises(RuleArgumentError, match="intercept_stderr"):
        yb.grad(f)(X0.copy())



@pytest.mark.parametrize("f", [intercept_stderr, interval_low, unpacked])
def test_batched_forward_mode_matches_reverse(f):
    """``yb.jacobian(mode="fwd")`` pushes every direction at once through the recorded attribute."""
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(X0.copy()), yb.jacobian(f)(X0.copy()), rtol=1e-10, atol=1e-12)
