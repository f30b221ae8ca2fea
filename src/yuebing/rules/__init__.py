"""Differentiation rules for primitives (DESIGN.md §4).

``core`` holds the interface (``CoDual``, ``Dual``, the registries, ``rrule``/``frule``
dispatch, ``MissingRuleError``); ``declare`` the one-line rule makers (``elementwise``,
``nondifferentiable``); ``util`` the helpers rule files share. The rule files themselves are
grouped by domain and each ends with ``CASES``, its own list of ``check_rule`` test cases.
Importing this package registers every rule.
"""
from .core import (
    CoDual,
    Dual,
    MissingRuleError,
    RuleArgumentError,
    frule,
    frule_for,
    has_frule,
    has_rrule,
    primal,
    register_frule,
    register_rrule,
    rrule,
    rrule_for,
)
from .declare import elementwise, nondifferentiable, nondifferentiable_methods

__all__ = [
    "CoDual", "Dual", "MissingRuleError", "RuleArgumentError", "elementwise", "frule", "frule_for",
    "has_frule", "has_rrule", "nondifferentiable", "nondifferentiable_methods", "primal",
    "register_frule", "register_rrule", "rrule", "rrule_for",
]
