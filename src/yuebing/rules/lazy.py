"""Rule modules for heavy optional libraries (SciPy), loaded the first time their library is seen.

Importing SciPy's stats, signal, linalg and integrate costs more than a second, which a user of
plain NumPy should not pay on ``import yuebing``. So a rule module for such a library is
*deferred*: declared here with its trigger, the package whose functions it covers
(``"scipy.special"``), and imported only once that package is in ``sys.modules``.

No rule can be missed by this: a function of ``scipy.special`` exists only once ``scipy.special``
has been imported, so every place that may meet one first calls ``load_imported``, whose check is
one ``len(sys.modules)`` comparison while nothing new was imported: the rule tables' lookup on a
miss (``core.RuleTable.lookup``), registration by users (so a later load cannot overwrite a user's
rule), the tangent classification of a new type (``tangents.kinds``; SciPy's distribution
objects are declared non-differentiable by their rule module) and the transformation of a
function's source (``transform.protocols.SourceFunction``). A deferred module may only register
rules for functions and types defined under its trigger, or defined in itself
(``tests/test_lazy_rules.py`` checks this for every one).

``load_all`` imports every deferred module: whatever lists rules (``rule_modules``,
``python -m yuebing rules``, the rule tests) calls it.
"""
from __future__ import annotations

import importlib
import sys
import threading
import warnings
from typing import Any, Callable

from ..tangents import kinds

#: trigger package -> what to do once it is imported (import a rule module, by default)
_PENDING: dict[str, list[Callable[[], None]]] = {}
#: every deferred module's name -> its trigger (for the tests and ``load_all``)
DEFERRED: dict[str, str] = {}
#: Rule modules that failed to import, with the error (warned once; the test suite fails on any)
LOAD_ERRORS: dict[str, BaseException] = {}

_state = {"seen": -1, "enabled": False}
_lock = threading.RLock()
_loading = threading.local()


def defer(trigger: str, *modules: str) -> None:
    """Import the rule modules ``modules`` (dotted names) once package ``trigger`` is imported."""
    for name in modules:
        DEFERRED[name] = trigger
        _PENDING.setdefault(trigger, []).append(lambda name=name: import_rule_module(name))
    _state["seen"] = -1  # the trigger may be imported already: look again at the next check


def when_imported(trigger: str, action: Callable[[], None]) -> None:
    """Run ``action`` once package ``trigger`` is imported (a table of refusals naming its functions)."""
    _PENDING.setdefault(trigger, []).append(action)
    _state["seen"] = -1


def enable() -> None:
    """Start loading (called once every eagerly loaded rule module is in: a deferred module
    imports them, so none may load while they are half-initialised)."""
    _state["enabled"] = True
    kinds.BEFORE_NEW_TYPE.append(load_imported)
    load_imported()


def load_imported() -> bool:
    """Load the deferred modules whose trigger is imported; whether any was. Cheap when nothing
    new was imported."""
    if len(sys.modules) == _state["seen"] or not _PENDING or not _state["enabled"]:
        return False
    if getattr(_loading, "active", False):  # a deferred module's own registrations
        return False
    if _deferred_module_initializing():  # one imported directly (its error class): after it, not inside
        return False
    with _lock:
        _loading.active = True
        loaded = False
        try:
            while True:  # a loaded module may import the trigger of another
                seen = len(sys.modules)
                for trigger in [t for t in _PENDING if t in sys.modules]:
                    for action in _PENDING.pop(trigger, ()):
                        action()
                        loaded = True
                if len(sys.modules) == seen:
                    _state["seen"] = seen
                    return loaded
        finally:
            _loading.active = False


def _deferred_module_initializing() -> bool:
    """Whether a deferred module is being imported by a plain ``import`` (``from
    yuebing.rules.scipy_stats import UnsupportedDistributionError`` after SciPy): loading the
    others now would import its siblings, which import it half made."""
    for name in DEFERRED:
        module = sys.modules.get(name)
        if module is not None and getattr(getattr(module, "__spec__", None), "_initializing", False):
            return True
    return False


def load_all() -> None:
    """Import every deferred module now (and the libraries they cover)."""
    with _lock:
        for trigger in list(_PENDING):
            try:
                importlib.import_module(trigger)
            except ImportError:  # the optional library is not installed: its rules stay away
                _PENDING.pop(trigger, None)
        _state["seen"] = -1
        load_imported()


def import_rule_module(name: str) -> Any:
    """Import one rule module; on failure record and warn, and return None (one broken domain
    must not take every other rule down with it)."""
    try:
        return importlib.import_module(name)
    except Exception as error:  # noqa: BLE001 - reported, and fails the test suite
        if name not in LOAD_ERRORS:
            LOAD_ERRORS[name] = error
            warnings.warn(f"yuebing could not load rule module {name}: {error!r}", RuntimeWarning)
        return None
