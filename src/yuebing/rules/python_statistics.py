"""Python's ``statistics`` module: ``mean``, ``fmean``, ``variance``, ``pvariance``, ``stdev``,
``pstdev``, ``geometric_mean`` and ``harmonic_mean``.

The module sums exactly: it turns each float into a ``Fraction`` through ``as_integer_ratio``
(two ints, no derivative), so following its source would lose every derivative, and yuebing
refused ``as_integer_ratio`` there. Each function is written here with floats instead and
differentiated like user code in every mode (``second_order.defined_as``), after the module's
own function has run on the primals of the points (``_check``: its ``StatisticsError`` for too
few points, a negative value of ``geometric_mean``...; the data is made a list first, so an
iterator is read once). The values agree with the module's to rounding (a sum rounded once
more, as ``fmean``'s), and so does their type. ``median``, ``quantiles``, ``correlation``, ``covariance``,
``linear_regression`` and ``NormalDist`` need no definition: their source is differentiated.
"""
from __future__ import annotations

import math
import statistics
from typing import Any

import numpy as np

from .cases import Case, randn, randpos
from .declare import nondifferentiable
from .second_order import defined_as


def check(function: Any, points: list, *rest: Any) -> Any:
    """``function`` itself on the points' values: its errors, and its exact value (used for data
    without floats, ints or fractions, whose result's type is the module's: ``mean([1, 2, 3])`` is 2)."""
    return function(list(points), *rest)


def no_floats(values: list) -> bool:
    return not any(isinstance(v, (float, complex, np.inexact, np.ndarray)) for v in values)


def _points(function: Any, data: Any, *rest: Any) -> tuple:
    xs = list(data)
    return xs, check(function, xs, *rest)


def _mean(data: Any) -> Any:
    xs, exact = _points(statistics.mean, data)
    return exact if no_floats(xs) else sum(xs) / len(xs)


def _fmean(data: Any, weights: Any = None) -> Any:
    if weights is None:
        xs, exact = _points(statistics.fmean, data)
        return exact if no_floats(xs) else float(sum(xs) / len(xs))
    xs, ws = list(data), list(weights)
    exact = check(statistics.fmean, xs, ws)
    return exact if no_floats(xs + ws) else float(sum(w * x for w, x in zip(ws, xs)) / sum(ws))


def _squares_about(xs: list, centre: Any) -> Any:
    return sum((x - centre) ** 2 for x in xs)


def _variance(data: Any, xbar: Any = None) -> Any:
    xs, exact = _points(statistics.variance, data, xbar)
    if no_floats(xs + [xbar]):
        return exact
    centre = sum(xs) / len(xs) if xbar is None else xbar
    return _squares_about(xs, centre) / (len(xs) - 1)


def _pvariance(data: Any, mu: Any = None) -> Any:
    xs, exact = _points(statistics.pvariance, data, mu)
    if no_floats(xs + [mu]):
        return exact
    centre = sum(xs) / len(xs) if mu is None else mu
    return _squares_about(xs, centre) / len(xs)


def _stdev(data: Any, xbar: Any = None) -> Any:
    xs, exact = _points(statistics.stdev, data, xbar)
    return exact if no_floats(xs + [xbar]) else math.sqrt(_variance(xs, xbar))


def _pstdev(data: Any, mu: Any = None) -> Any:
    xs, exact = _points(statistics.pstdev, data, mu)
    return exact if no_floats(xs + [mu]) else math.sqrt(_pvariance(xs, mu))


def _geometric_mean(data: Any) -> Any:
    xs, exact = _points(statistics.geometric_mean, data)
    if no_floats(xs):
        return exact
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _harmonic_mean(data: Any, weights: Any = None) -> Any:
    xs = list(data)
    ws = [1.0] * len(xs) if weights is None else list(weights)
    exact = check(statistics.harmonic_mean, xs, None if weights is None else ws)
    if no_floats(xs if weights is None else xs + ws):
        return exact
    if any(x == 0 for x in xs):
        return 0.0 * sum(xs)  # the module's 0 where a value is 0 (its derivative there: none to give)
    return sum(ws) / sum(w / x for w, x in zip(ws, xs))


nondifferentiable(check, no_floats)
for _target, _definition in [
        (statistics.mean, _mean), (statistics.fmean, _fmean), (statistics.variance, _variance),
        (statistics.pvariance, _pvariance), (statistics.stdev, _stdev), (statistics.pstdev, _pstdev),
        (statistics.geometric_mean, _geometric_mean), (statistics.harmonic_mean, _harmonic_mean)]:
    defined_as(_target, _definition)


CASES = [
    Case(statistics.mean, randn(5)),
    Case(statistics.fmean, randn(4)),
    Case(statistics.fmean, randn(4), [0.5, 1.0, 2.0, 0.25], name="fmean(weights=)"),
    Case(statistics.variance, randn(5)),
    Case(statistics.variance, randn(4), 0.3, name="variance(xbar=)"),
    Case(statistics.pvariance, randn(5)),
    Case(statistics.stdev, randn(5)),
    Case(statistics.pstdev, randn(5), 0.1, name="pstdev(mu=)"),
    Case(statistics.geometric_mean, randpos(4)),
    Case(statistics.harmonic_mean, randpos(4)),
    Case(statistics.harmonic_mean, randpos(3), [1.0, 2.0, 0.5], name="harmonic_mean(weights=)"),
]
