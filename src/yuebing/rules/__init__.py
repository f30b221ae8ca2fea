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
from .declare import elementwise, make_elementwise_rules, nondifferentiable, nondifferentiable_methods

_INFRASTRUCTURE = {"core", "cases", "declare", "util", "table", "second_order", "third_order"}


#: Rule modules that failed to import, with the error (a warning is issued for each; the test
#: suite fails on any). One broken domain must not take every other rule down with it.
LOAD_ERRORS: dict[str, BaseException] = {}


def rule_modules() -> list:
    """Every domain rule module (each registers its rules on import and ends with ``CASES``)."""
    import importlib
    import pkgutil
    import warnings

    modules = []
    for info in sorted(pkgutil.iter_modules(__path__), key=lambda m: m.name):
        if info.name in _INFRASTRUCTURE or info.name.startswith("_"):
            continue
        name = f"{__name__}.{info.name}"
        try:
            modules.append(importlib.import_module(name))
        except Exception as error:  # noqa: BLE001 - reported, and fails the test suite
            if name not in LOAD_ERRORS:
                LOAD_ERRORS[name] = error
                warnings.warn(f"yuebing could not load rule module {name}: {error!r}", RuntimeWarning)
    return modules


rule_modules()

__all__ = [
    "CoDual", "Dual", "MissingRuleError", "RuleArgumentError", "elementwise", "frule", "frule_for",
    "has_frule", "has_rrule", "make_elementwise_rules", "nondifferentiable", "rule_modules", "nondifferentiable_methods", "primal",
    "register_frule", "register_rrule", "rrule", "rrule_for",
]
