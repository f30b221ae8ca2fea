"""Differentiation rules for primitives (DESIGN.md §4).

``core`` holds the interface (``CoDual``, ``Dual``, the registries, ``rrule``/``frule``
dispatch, ``MissingRuleError``); ``declare`` the one-line rule makers (``elementwise``,
``nondifferentiable``); ``util`` the helpers rule files share. The rule files themselves are
grouped by domain (a large domain is a package of them, e.g. ``linalg/``, with its shared helpers
in ``common.py``) and each ends with ``CASES``, its own list of ``check_rule`` test cases.
Importing this package registers every rule, except those for SciPy: each of those modules is
loaded the first time its part of SciPy is imported (``lazy.py``, ``SCIPY_RULES`` below), so
``import yuebing`` does not import SciPy. ``load_all_rules`` loads them all.
"""
import pkgutil

from .core import (
    CoDual,
    Dual,
    MissingRuleError,
    NoDerivativeWarning,
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
from . import lazy

#: Module names (the last part of the dotted name, at any depth) that hold machinery, not rules:
#: ``rule_modules`` does not list them. A domain split into a package (``rules/linalg/``) keeps
#: the helpers its modules share in ``common.py``.
_INFRASTRUCTURE = {"core", "cases", "common", "declare", "util", "table", "second_order", "numpy_arguments", "differentiated",
                   "outside_state"}


#: The rule modules for SciPy, by the package whose functions they cover: each is imported when
#: that package is (``lazy.py``), not with yuebing. Each group is in name order, the order every
#: rule module was once imported in (a later registration of a function replaces an earlier).
SCIPY_RULES = {
    "scipy.fft": ("scipy_fft",),
    "scipy.integrate": ("scipy_integrate",),
    "scipy.interpolate": ("scipy_bsplines", "scipy_interpolate", "scipy_regular_grid",
                          "scipy_smoothing_spline"),
    "scipy.linalg": ("scipy_linalg_decomp", "scipy_linalg_solvers", "scipy_linalg_special", "scipy_linalg_third_order",
                     "scipy_rules"),
    "scipy.ndimage": ("scipy_ndimage",),
    "scipy.signal": ("scipy_signal",),
    "scipy.sparse": ("scipy_sparse", "scipy_sparse_structure"),
    "scipy.sparse.linalg": ("scipy_sparse_linalg",),
    "scipy.spatial": ("scipy_spatial",),
    "scipy.special": ("scipy_bessel", "scipy_special", "scipy_special_integrals", "scipy_special_outputs",
                      "scipy_special_third_order"),
    "scipy.stats": ("scipy_stats", "scipy_stats_continuous", "scipy_stats_discrete", "scipy_stats_multivariate"),
}
_DEFERRED = {name for names in SCIPY_RULES.values() for name in names}

#: Rule modules that failed to import, with the error (a warning is issued for each; the test
#: suite fails on any). One broken domain must not take every other rule down with it.
LOAD_ERRORS = lazy.LOAD_ERRORS
_load = lazy.import_rule_module


def _walk(path: list, prefix: str, deferred: bool) -> list:
    """The rule modules under ``path`` in name order, descending into packages (a package's
    ``__init__`` only imports, so the package itself is not listed; its modules are); the
    deferred ones (``SCIPY_RULES``) only if ``deferred``."""
    modules = []
    for info in sorted(pkgutil.iter_modules(path), key=lambda m: m.name):
        if info.name in _INFRASTRUCTURE or info.name.startswith("_"):
            continue
        if info.name in _DEFERRED and not deferred:
            continue
        module = _load(prefix + info.name)
        if module is None:
            continue
        if info.ispkg:
            modules += _walk(module.__path__, f"{module.__name__}.", deferred)
        else:
            modules.append(module)
    return modules


def load_all_rules() -> list:
    """Every domain rule module (each registers its rules on import and ends with ``CASES``),
    also those inside sub-packages (``yuebing.rules.linalg.solves``) and the deferred ones, which
    this imports (and SciPy with them). Whatever lists or checks every rule calls this."""
    lazy.load_all()
    return _walk(__path__, f"{__name__}.", deferred=True)


rule_modules = load_all_rules  # the name the tests and tools know

_walk(__path__, f"{__name__}.", deferred=False)
_PRESENT = {info.name for info in pkgutil.iter_modules(__path__)}
for _trigger, _names in SCIPY_RULES.items():
    lazy.defer(_trigger, *(f"{__name__}.{name}" for name in _names if name in _PRESENT))
lazy.enable()  # SciPy imported before yuebing: its rules load now

__all__ = [
    "CoDual", "Dual", "MissingRuleError", "RuleArgumentError", "elementwise", "frule", "frule_for",
    "has_frule", "has_rrule", "load_all_rules", "make_elementwise_rules", "nondifferentiable", "rule_modules", "nondifferentiable_methods", "primal",
    "register_frule", "register_rrule", "rrule", "rrule_for",
]
