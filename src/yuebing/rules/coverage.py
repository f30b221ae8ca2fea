"""The NumPy coverage table (issue 14): every public name, with its modes or why it has none.

``coverage()`` walks the public namespace of ``numpy``, ``numpy.linalg``, ``numpy.fft`` and the
public methods and attributes of ``ndarray``, and gives each name one ``Entry``, computed at run
time from the registries, so a rule registered anywhere shows up without editing this file:

* ``rule`` -- a registered rule: reverse, forward if it has a forward rule, the second-order class
  (``second_order.py``; ``—`` when second order refuses it) and whether that class has third
  derivatives (``transform/third_order.py`` lifts the same classes);
* ``zero`` -- a declared zero derivative (``nondifferentiable``), in every mode;
* ``refused`` -- no derivative, with the reason from ``numpy_coverage.REFUSED``;
* ``works`` -- no rule needed (``numpy_coverage.WORKS``: a context manager, slice builders);
* ``derived`` -- a Python function or a NumPy dispatcher with a Python implementation,
  differentiated from its source in every mode;

``numpy_coverage.GAPS`` marks the modes a rule or a derivation does not cover yet.
* ``view``/``attribute`` -- an ndarray attribute read by the ``getattr`` rule (a view of the
  array, or a shape-like value with zero derivative);
* ``constant``/``submodule`` -- not a function (``np.pi``, ``np.random``: see its own rules);
* ``missing`` -- none of these: ``tests/test_numpy_coverage.py`` fails on it.
"""
from __future__ import annotations

import dataclasses
import types
from typing import Any, Iterator

import numpy as np

from . import lazy
from .core import FRULES, RRULES
from .declare import ZERO_DERIVATIVE
from .numpy_coverage import (GAPS, LIMITS, REFUSED, THIRD_ORDER_INHERITED, THIRD_ORDER_MAPS_FOLLOWED, THIRD_ORDER_PARTLY,
                             THIRD_ORDER_REFUSED, WORKS)

NAMESPACES = (("numpy", np), ("numpy.linalg", np.linalg), ("numpy.fft", np.fft))
NO = "—"

#: second-order classes that third order lifts (``transform/third_order.jvp_rule``)
_THIRD_ORDER_CLASSES = {"linear", "multilinear", "elementwise", "zero", "python"}
_VIEW_ATTRIBUTES = ("T", "mT", "real", "imag")  # the getattr rule's views (objects.py)
_SHAPE_ATTRIBUTES = ("shape", "ndim", "size", "dtype", "strides", "flags", "itemsize", "nbytes")
_SUBMODULE_NOTES = {"random": "its own rules: rules/numpy_random.py"}


@dataclasses.dataclass(frozen=True)
class Entry:
    """One public name: its status, and per mode whether (or how) it is differentiated."""

    name: str
    status: str
    reverse: str = NO
    forward: str = NO
    second: str = NO
    third: str = NO
    note: str = ""

    @property
    def has_derivative(self) -> bool:
        return self.status in ("rule", "zero", "derived", "works", "view", "attribute", "constant", "submodule")


def public_names(module: types.ModuleType) -> list[str]:
    """The public names of a NumPy namespace: its ``__all__``, else its names without ``_``."""
    names = getattr(module, "__all__", None) or [n for n in dir(module) if not n.startswith("_")]
    return sorted(set(names))


def ndarray_names() -> list[str]:
    """The public methods and attributes of ``np.ndarray`` (operators are in the rule table)."""
    return sorted(n for n in dir(np.ndarray) if not n.startswith("_"))


# --------------------------------------------------------------------------------------------
# One entry
# --------------------------------------------------------------------------------------------


def _lookup(table: Any, target: Any) -> bool:
    try:
        return table.lookup(target) is not None
    except TypeError:  # an unhashable object
        return False


def _is_zero(target: Any, method_key: tuple | None) -> bool:
    """Declared with a zero derivative, and that declaration is still the rule (a real rule
    registered after it replaces it: ``histogram_bin_edges``)."""
    try:
        declared = target in ZERO_DERIVATIVE or method_key in ZERO_DERIVATIVE
    except TypeError:
        return False
    found = RRULES.lookup(target) if declared else None
    return found is not None and "(zero derivative)" in getattr(found[0], "__qualname__", "")


def is_derived(target: Any) -> bool:
    """A Python function, or a NumPy dispatcher whose implementation is Python (the transforms
    derive it from NumPy's own source: ``transform/protocols.python_implementation``)."""
    if isinstance(target, types.FunctionType):
        return True
    return type(target).__name__ == "_ArrayFunctionDispatcher" and isinstance(
        getattr(target, "_implementation", None), types.FunctionType)


def third_order(target: Any) -> str:
    """Whether ``target``'s second-order class has third derivatives (``transform/third_order``
    lifts the classes; some calls of a covered class may still be refused, e.g. keywords). Third
    order refuses a cotangent map that calls its own primitive again; those whose map reaches a
    refused primitive through helpers, on the paths calls take, are data:
    ``numpy_coverage.THIRD_ORDER_REFUSED``, checked by ``tests/test_numpy_higher_order_table.py``."""
    from .second_order import JVP_DEFINITIONS, declaration_of

    try:
        if target in THIRD_ORDER_REFUSED:
            return NO
        if target in THIRD_ORDER_PARTLY:
            return "partly"
        if target in JVP_DEFINITIONS:
            return "yes"
    except TypeError:
        pass
    found = declaration_of(target)
    if found is None:
        return NO
    declaration = found[0]
    if declaration.label in _THIRD_ORDER_CLASSES:
        return "yes"
    if declaration.kind == "vjp":  # refused when the cotangent map calls the primitive again,
        # or a primitive whose third order is refused (eigvalsh's map calls eigh)
        refused = set() if _followed(target) else {getattr(declaration.function, "__name__", None)}
        refused |= {getattr(f, "__name__", None) for f in THIRD_ORDER_INHERITED}
        return NO if refused & set(declaration.vjp.__code__.co_names) else "yes"
    return NO


def _followed(target: Any) -> bool:
    """Whether third order follows ``target``'s cotangent map although it calls ``target``
    (``numpy_coverage.THIRD_ORDER_MAPS_FOLLOWED``)."""
    lazy.load_imported()
    try:
        return target in THIRD_ORDER_MAPS_FOLLOWED
    except TypeError:
        return False


def second_order_kind(target: object) -> str:
    """The class of ``target``'s second-order rule (``second_order.py``), ``—`` for none."""
    from .second_order import declaration_of

    try:
        found = declaration_of(target)
    except Exception:  # noqa: BLE001 - unusual targets have none
        found = None
    return NO if found is None else found[0].label


def _rule_entry(name: str, target: Any) -> Entry:
    second = second_order_kind(target)
    third = third_order(target) if second != NO else NO
    return Entry(name, "rule", reverse="yes", forward="yes" if _lookup(FRULES, target) else NO,
                 second=second, third=third, note=_third_order_note(target, third))


def _third_order_note(target: Any, third: str) -> str:
    try:
        if third == NO and target in THIRD_ORDER_REFUSED:
            return f"third order: {THIRD_ORDER_REFUSED[target]}"
        if third == "partly":
            return THIRD_ORDER_PARTLY[target]
    except TypeError:
        pass
    return ""


def _zero_entry(name: str) -> Entry:
    return Entry(name, "zero", "zero", "zero", "zero", "zero", "zero derivative")


def entry(name: str, target: Any, method_key: tuple | None = None) -> Entry:
    """The entry of public name ``name`` (qualified), whose object is ``target``; ``method_key``
    is ``(np.ndarray, method)`` for an ndarray method."""
    if _is_zero(target, method_key):
        return _zero_entry(name)
    if callable(target) and _lookup(RRULES, target):
        return _rule_entry(name, target)
    if name in REFUSED:
        return Entry(name, "refused", note=REFUSED[name])
    if name in WORKS:
        return Entry(name, "works", "yes", "yes", "yes", NO, WORKS[name])
    if is_derived(target):
        return _with_gaps(_derived_entry(name, target))
    if isinstance(target, types.ModuleType):
        note = _SUBMODULE_NOTES.get(name.rsplit(".", 1)[-1], "a submodule, not walked here")
        return Entry(name, "submodule", note=note)
    if not callable(target) and _is_constant(target):
        return Entry(name, "constant", note="a constant, not a function")
    return Entry(name, "missing", note="no rule, no declared zero derivative and no reason in rules/numpy_coverage.py")


def _derived_entry(name: str, target: Any) -> Entry:
    """Differentiated from its Python source (a Python function, or the Python implementation
    behind a NumPy dispatcher) in every mode, third order too unless it refuses the target."""
    if target in THIRD_ORDER_REFUSED:
        third, note = NO, f"; third order: {THIRD_ORDER_REFUSED[target]}"
    else:
        third, note = "derived", ""
    return Entry(name, "derived", "derived", "derived", "derived", third,
                 "differentiated from NumPy's Python source" + note)


def _with_gaps(e: Entry) -> Entry:
    """Derived entry ``e`` with the inputs ``numpy_coverage.LIMITS`` refuses and the modes
    ``GAPS`` lists as not covered yet, and why (a rule's own declarations give its modes)."""
    if e.name in LIMITS:
        e = dataclasses.replace(e, note=f"{e.note}; {LIMITS[e.name]}")
    gaps = GAPS.get(e.name)
    if not gaps:
        return e
    modes = {mode: NO for mode in gaps}
    if "second" in gaps:
        modes["third"] = NO  # third order lifts second order's rules
    note = "; ".join(f"{mode}: {why}" for mode, why in gaps.items())
    return dataclasses.replace(e, **modes, note=f"{e.note}; {note}" if e.note else note)


def _is_constant(value: Any) -> bool:
    """Numbers, strings, None, containers of types and the like: values, not functions."""
    return isinstance(value, (int, float, complex, str, bytes, bool, np.generic, type(None), list, tuple, dict))


def _attribute_entry(name: str, attribute: str) -> Entry:
    if name in REFUSED:
        return Entry(name, "refused", note=REFUSED[name])
    if name in WORKS:  # x.flat, as np.ravel(x) (numpy_iterators.py, checked up to third order there)
        return Entry(name, "works", "yes", "yes", "yes", "yes", WORKS[name])
    if attribute in _VIEW_ATTRIBUTES:
        return Entry(name, "view", "yes", "yes", "yes", NO, "a view of the array (the getattr rule)")
    if attribute in _SHAPE_ATTRIBUTES:
        return Entry(name, "attribute", "zero", "zero", "zero", "zero", "zero derivative (the getattr rule)")
    return Entry(name, "missing", note="an ndarray attribute with no entry")


# --------------------------------------------------------------------------------------------
# The walk
# --------------------------------------------------------------------------------------------


def _namespace_entries(prefix: str, module: types.ModuleType) -> Iterator[Entry]:
    for name in public_names(module):
        target = getattr(module, name, None)
        if prefix == "numpy" and isinstance(target, types.ModuleType) and target in (np.linalg, np.fft):
            continue  # walked as namespaces of their own
        yield entry(f"{prefix}.{name}", target)


def _ndarray_entries() -> Iterator[Entry]:
    for name in ndarray_names():
        attribute = getattr(np.ndarray, name)
        qualified = f"numpy.ndarray.{name}"
        if callable(attribute):
            yield entry(qualified, attribute, (np.ndarray, name))
        else:
            yield _attribute_entry(qualified, name)


def coverage() -> dict[str, list[Entry]]:
    """Every public NumPy name's entry, by namespace (``numpy``, ``numpy.linalg``, ``numpy.fft``,
    ``numpy.ndarray``)."""
    from . import rule_modules

    rule_modules()  # every rule registered (importing yuebing.rules does it; this is cheap)
    table = {prefix: list(_namespace_entries(prefix, module)) for prefix, module in NAMESPACES}
    table["numpy.ndarray"] = list(_ndarray_entries())
    return table


def stale_reasons() -> list[str]:
    """Names in ``numpy_coverage.REFUSED``, ``GAPS`` or ``LIMITS`` that have a rule now (the
    table shows the rule; the entry is left over and should be deleted)."""
    stale = []
    for prefix, module in NAMESPACES + (("numpy.ndarray", np.ndarray),):
        for name in dir(module):
            qualified = f"{prefix}.{name}"
            target = getattr(module, name, None)
            noted = qualified in REFUSED or qualified in GAPS or qualified in LIMITS
            if noted and callable(target) and _lookup(RRULES, target):
                stale.append(qualified)
    return sorted(stale)


# --------------------------------------------------------------------------------------------
# Markdown
# --------------------------------------------------------------------------------------------

_HEADER = """# NumPy coverage

Every public name of `numpy`, `numpy.linalg`, `numpy.fft` and `numpy.ndarray`, computed from the
rule registries by `python -m yuebing rules` (`rules/coverage.py`; the reasons are data in
`rules/numpy_coverage.py`). Columns: reverse mode, forward mode, second order (`yb.hvp`,
`yb.hessian`: the rule's class, as above), third order (`yb.hvp` of a function calling
`yb.grad`: `yes`, `partly` for some arguments only, or `—` with the reason). `zero`: a declared
zero derivative; `derived`: differentiated from NumPy's Python source; `—`: not differentiated,
with the reason. Third order is claimed for real inputs. `python -m yuebing rules --missing` lists only the names without a
derivative. `tests/test_jax_numpy_oracle.py` and `tests/test_numpy_higher_order_table.py` check
these columns against JAX and finite differences.
"""


def _summary(table: dict[str, list[Entry]]) -> str:
    counts: dict[str, int] = {}
    for entries in table.values():
        for e in entries:
            counts[e.status] = counts.get(e.status, 0) + 1
    return ", ".join(f"{counts[s]} {s}" for s in sorted(counts, key=lambda s: (-counts[s], s)))


def entry_row(e: Entry) -> str:
    return f"| `{e.name}` | {e.reverse} | {e.forward} | {e.second} | {e.third} | {e.note} |"


def coverage_table(only_missing: bool = False) -> str:
    """The coverage table as Markdown; ``only_missing``: only names without a derivative."""
    table = coverage()
    lines = [_HEADER, f"In all: {_summary(table)}.", ""]
    for prefix, entries in table.items():
        shown = [e for e in entries if not (only_missing and e.has_derivative)]
        lines += [f"## `{prefix}` ({len(shown)})", "",
                  "| name | reverse | forward | second order | third order | note |", "|---|---|---|---|---|---|"]
        lines += [entry_row(e) for e in shown]
        lines.append("")
    return "\n".join(lines)


CASES: list = []  # the table's own machinery: no rules here
