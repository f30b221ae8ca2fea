"""The items of ``f(*x)`` for an ``x`` that is not a tuple, list, deque or array, whose tangent
the call sites cannot split into the items' (a deque made in the function, a set, an iterator,
``d.values()``, an instance of a user class with ``__iter__``): refused when an item carries a
derivative, which would be dropped; ``f(*list(x))`` lists it with its derivatives first.

This module registers no rule: the runtimes of reverse and forward mode (and second order,
through reverse mode's expansion) call ``star_items``.
"""
from __future__ import annotations

import collections
from typing import Any

from ..tangents import kinds as K
from .core import RuleArgumentError


def star_items(x: Any) -> list:
    """``list(x)``, if none of its items carries a derivative."""
    items = list(x)
    for v in items:
        if K.primal_kind(v) is not K.NONDIFF:
            name = _named(x)
            raise RuleArgumentError(
                f"yuebing cannot follow derivatives through *args given a {name}: write *list(...) "
                f"to pass the items of the {name} with their derivatives")
    return items


def _named(x: Any) -> str:
    if isinstance(x, collections.deque):
        return "deque"  # (one made in the function is a TrackedDeque: rules/containers/deques.py)
    return "iterator" if hasattr(type(x), "__next__") else type(x).__qualname__


CASES: list = []  # tests/test_deque_arguments.py checks the refusal and its advice in every mode
