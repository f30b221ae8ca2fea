"""Comparisons whose result only decides a branch: ``if a < b:``, ``while a < b:``, the links
of a chain ``a < b < c`` in such a test, a comprehension filter, ``assert a < b``.

CPython evaluates ``if a < b:`` as two calls: ``a.__lt__(b)`` (or the reflected ``b.__gt__(a)``),
then the truth test of its result, which for a result other than a bool calls that object's
``__bool__`` (or ``__len__``). The normaliser (``frontend/truth_tests.py``) makes such a
comparison one call of the function below, whose value is that truth. For numbers it is the
comparison itself (the templates of every mode inline it as ``a < b``); when a comparison may
reach user code, ``rules/comparing_calls.py`` runs ``bool(a < b)`` as user code in every mode,
so a dunder that returns an object whose ``__bool__`` writes keeps that work's derivatives.
"""
from __future__ import annotations

import operator
from typing import Any


def tested_lt(a: Any, b: Any) -> bool:
    """The truth of ``a < b``."""
    return bool(a < b)


def tested_le(a: Any, b: Any) -> bool:
    """The truth of ``a <= b``."""
    return bool(a <= b)


def tested_gt(a: Any, b: Any) -> bool:
    """The truth of ``a > b``."""
    return bool(a > b)


def tested_ge(a: Any, b: Any) -> bool:
    """The truth of ``a >= b``."""
    return bool(a >= b)


def tested_eq(a: Any, b: Any) -> bool:
    """The truth of ``a == b``."""
    return bool(a == b)


def tested_ne(a: Any, b: Any) -> bool:
    """The truth of ``a != b``."""
    return bool(a != b)


#: each comparison operator -> the function giving its truth
TESTED = {operator.lt: tested_lt, operator.le: tested_le, operator.gt: tested_gt, operator.ge: tested_ge,
          operator.eq: tested_eq, operator.ne: tested_ne}
#: each truth function -> its comparison operator
COMPARISON_OF = {tested: comparison for comparison, tested in TESTED.items()}

__all__ = ["COMPARISON_OF", "TESTED"] + [f.__name__ for f in TESTED.values()]
