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

from .cases import Case, randn, randpos
from .declare import nondifferentiable
from .second_order import defined_as


def check(function: Any, points: list, *rest: Any) -> None:
    """``function`` itself on the points' values, for its errors (its value is not used)."""
    function(list(points), *rest)


def _points(function: Any, data: Any, *rest: Any) -> list:
    xs = list(data)
    check(function, xs, *rest)
    return xs


def _mean(data: Any) -> Any:
    xs = _points(statistics.mean, data)
    return sum(xs) / len(xs)


def _fmean(data: Any, weights: Any = None) -> Any:
    if weights is None:
        xs = _points(statistics.fmean, data)
        return float(sum(xs) / len(xs))
    xs, ws = list(data), list(weights)
    check(statistics.fmean, xs, ws)
    return float(sum(w * x for w, x in zip(ws, xs)) / sum(ws))


def _squares_about(xs: list, centre: Any) -> Any:
    return sum((x - centre) ** 2 for x in xs)


def _variance(data: Any, xbar: Any = None) -> Any:
    xs = _points(statistics.variance, data, xbar)
    centre = sum(xs) / len(xs) if xbar is None else xbar
    return _squares_about(xs, centre) / (len(xs) - 1)


def _pvariance(data: Any, mu: Any = None) -> Any:
    xs = _points(statistics.pvariance, data, mu)
    centre = sum(xs) / len(xs) if mu is None else mu
    return _squares_about(xs, centre) / len(xs)


def _stdev(data: Any, xbar: Any = None) -> Any:
    xs = _points(statistics.stdev, data, xbar)
    return math.sqrt(_variance(xs, xbar))


def _pstdev(data: Any, mu: Any = None) -> Any:
    xs = _points(statistics.pstdev, data, mu)
    return math.sqrt(_pvariance(xs, mu))


def _geometric_mean(data: Any) -> Any:
    xs = _points(statistics.geometric_mean, data)
    return math.exp(sum(math.log(x) for x in xs) / len(xs))


def _harmonic_mean(data: Any, weights: Any = None) -> Any:
    xs = list(data)
    ws = [1.0] * len(xs) if weights is None else list(weights)
    check(statistics.harmonic_mean, xs, None if weights is None else ws)
    if any(x == 0 for x in xs):
        return 0.0 * sum(xs)  # the module's 0 where a value is 0 (its derivative there: none to give)
    return sum(ws) / sum(w / x for w, x in zip(ws, xs))


nondifferentiable(check)
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
