"""Differentiation rules for primitives (DESIGN.md §4).

``core`` holds the interface (``CoDual``, ``Dual``, the registries, ``rrule``/``frule``
dispatch, ``MissingRuleError``); ``declare`` the one-line rule makers (``elementwise``,
``nondifferentiable``); ``util`` the helpers rule files share. The rule files themselves are
grouped by domain (a large domain is a package of them, e.g. ``linalg/``, with its shared helpers
in ``common.py``) and each ends with ``CASES``, its own list of ``check_rule`` test cases.
Importing this package registers every rule.
"""
import importlib
import pkgutil
import warnings
from typing import Any

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

#: Module names (the last part of the dotted name, at any depth) that hold machinery, not rules:
#: ``rule_modules`` does not list them. A domain split into a package (``rules/linalg/``) keeps
#: the helpers its modules share in ``common.py``.
_INFRASTRUCTURE = {"core", "cases", "common", "declare", "util", "table", "second_order", "numpy_arguments", "differentiated",
                   "outside_state"}


#: Rule modules that failed to import, with the error (a warning is issued for each; the test
#: suite fails on any). One broken domain must not take every other rule down with it.
LOAD_ERRORS: dict[str, BaseException] = {}


def _load(name: str) -> Any:
    """Import one module of ``rules/``; on failure record and warn, and return None."""
    try:
        return importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - reported, and fails the test suite
        if name not in LOAD_ERRORS:
            LOAD_ERRORS[name] = error
            warnings.warn(f"yuebing could not load rule module {name}: {error!r}", RuntimeWarning)
        return None


def _walk(path: list, prefix: str) -> list:
    """The rule modules under ``path`` in name order, descending into packages (a package's
    ``__init__`` only imports, so the package itself is not listed; its modules are)."""
    modules = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name in _INFRASTRUCTURE or info.name.startswith("_"):
            continue
        module = _load(prefix + info.name)
        if module is None:
            continue
        if info.ispkg:
            modules += _walk(module.__path__, f"{module.__name__}.")
        else:
            modules.append(module)
    return modules


def rule_modules() -> list:
    """Every domain rule module (each registers its rules on import and ends with ``CASES``),
    also those inside sub-packages (``yuebing.rules.linalg.solves``)."""
    return _walk(__path__, f"{__name__}.")


rule_modules()

__all__ = [
    "CoDual", "Dual", "MissingRuleError", "RuleArgumentError", "elementwise", "frule", "frule_for",
    "has_frule", "has_rrule", "make_elementwise_rules", "nondifferentiable", "rule_modules", "nondifferentiable_methods", "primal",
    "register_frule", "register_rrule", "rrule", "rrule_for",
]
