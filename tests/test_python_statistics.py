"""Python's ``statistics`` module in every mode against central differences (issue 13): the
functions that sum exactly through ``Fraction`` (``mean``, ``fmean``, ``variance``, ``pvariance``,
``stdev``, ``pstdev``, ``geometric_mean``, ``harmonic_mean``) by their float definitions
(``rules/python_statistics.py``; they were refused at ``float.as_integer_ratio``), and those whose
source is differentiated (``median``, ``quantiles``, ``correlation``, ``covariance``,
``linear_regression``, ``NormalDist``); the module's own errors raised as without yuebing."""
from __future__ import annotations

import statistics

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.testing.third_order import check_third_order

X = np.array([0.7, 0.35, 1.2, 0.9])


def _floats(x):
    return [float(v) for v in x]


def summaries(x):
    xs = _floats(x)
    return (statistics.mean(xs) * statistics.fmean(x) + statistics.variance(xs) + statistics.pstdev(xs)
            + statistics.stdev(x) * statistics.pvariance(xs, mu=0.5))


def weighted(x):
    xs = _floats(x)
    return statistics.fmean(xs, weights=[0.5, 1.0, 2.0, 0.25]) + statistics.harmonic_mean(xs, weights=xs)


def positive_means(x):
    xs = _floats(x * x + 0.1)
    return statistics.geometric_mean(xs) * statistics.harmonic_mean(xs)


def with_centres(x):
    xs = _floats(x)
    m = statistics.mean(xs)
    return statistics.variance(xs, xbar=m) + statistics.pvariance(xs, mu=m) ** 2


def from_source(x):
    xs = _floats(x)
    slope, intercept = statistics.linear_regression([1.0, 2.0, 3.0, 4.0], xs)
    return (statistics.median(xs) + sum(statistics.quantiles(xs, n=4)) + statistics.correlation(xs, [0.1, 0.5, 0.2, 2.0])
            + statistics.covariance(xs, xs[::-1]) + slope * intercept)


def normal_dist(x):
    d = statistics.NormalDist(mu=x[0], sigma=x[1] + 0.5)
    return d.pdf(x[2]) + d.cdf(x[3]) + d.zscore(0.3)


def generator_data(x):
    return statistics.mean(v * v for v in x) + statistics.pstdev(iter(_floats(x)))


CASES = [summaries, weighted, positive_means, with_centres, from_source, normal_dist, generator_data]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("f", [summaries, positive_means], ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X)


@pytest.mark.parametrize("name", ["mean", "fmean", "variance", "pvariance", "stdev", "pstdev", "geometric_mean",
                                  "harmonic_mean"])
def test_values_agree_with_the_module(name):
    f = getattr(statistics, name)
    xs = _floats(X)
    value, _ = yb.value_and_grad(lambda x: f(_floats(x)))(X)
    assert value == pytest.approx(f(xs), rel=1e-15, abs=0.0)
    assert type(yb.value_and_grad(lambda x: f(list(x)))(X)[0]) is type(f(list(X)))


@pytest.mark.parametrize("call, message", [
    (lambda x: statistics.variance([float(x[0])]), "variance requires at least two data points"),
    (lambda x: statistics.mean([]) * x[0], "mean requires at least one data point"),
    (lambda x: statistics.geometric_mean([float(x[0]), -1.0]), "positive"),
])
def test_the_module_errors(call, message):
    for run in (lambda: yb.grad(call)(X), lambda: yb.jvp(call, (X,), (X,))):
        with pytest.raises(statistics.StatisticsError, match=message):
            run()
