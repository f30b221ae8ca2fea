"""Builtins that run the dunders of user objects as they compare or convert them (issue 13):
``==``/``<``... of tuples and lists holding such objects, ``x in items``, ``operator.countOf``
and ``indexOf``, ``list.index``/``count``/``remove``, ``tuple.index``/``count``, dict and set
lookups, ``round``/``math.floor``/``hash``/``bool``/``str``... of an object, and truth tests:
``operator.truth`` (what ``if obj:``, ``while obj:``... call: ``frontend/truth_tests.py``),
``not obj``, ``any``/``all`` of a list or tuple, by the ``__bool__`` or else ``__len__`` that
CPython calls; and a comparison tested by an ``if``/``while`` (``tested_lt(a, b)``,
``ir/tested_comparisons.py``): its dunder, then the truth test of what the dunder returned.

These have zero derivative as values (a bool, an index, a count), so they run as plain Python;
but a dunder that writes (an ``__eq__`` appending to a log, a ``__round__`` accumulating into an
attribute) does work with derivatives, which plain Python would drop. So when a value compared
is an object whose dunders may change data (``_comparisons.compares_through``, the static check
of ``_pure_code.py``), the call runs as a Python definition below instead, differentiated like
user code in every mode: each ``==`` or ``<`` of an element reaches the user's dunder through
the machinery, in the order CPython makes them (``is`` first, then ``item == x``, for each item
in turn). ``comparing_call`` is what the call protocol asks (``transform/protocols.dispatch``).

Refused by name, where the comparisons Python makes cannot be followed: a dict or set looked up
with a key whose ``__hash__`` or ``__eq__`` may change data (which keys a lookup compares depends
on the table's hashes).
"""
from __future__ import annotations

import builtins
import math
import operator
import sys
import types
from typing import Any, Callable

from ._comparisons import _PLAIN, dunder_may_change_data, compares_through, equal, greater, less, same, sequence_pair
from .core import Dual, RuleArgumentError, frule, frule_for, primal, rrule_for
from .declare import ZERO_DERIVATIVE, nondifferentiable
from ..ir import tested_comparisons as tested
from .second_order import selection
from .util import defined_rrule, output
from ..ir.generators import is_lazy
from ..tangents import NoRData, NoTangent

# --------------------------------------------------------------------------------------------
# The definitions (differentiated like user code)
# --------------------------------------------------------------------------------------------


def not_equal(a, b):
    """``a != b``, element by element for tuples and lists."""
    return not equal(a, b) if sequence_pair(a, b) else a != b


def less_equal(a, b):
    """``a <= b``: tuples and lists by their first elements that differ."""
    if sequence_pair(a, b):
        for x, y in zip(a, b):
            if not same(x, y):
                return x <= y
        return len(a) <= len(b)
    return a <= b


def greater_equal(a, b):
    """``a >= b``."""
    if sequence_pair(a, b):
        for x, y in zip(a, b):
            if not same(x, y):
                return x >= y
        return len(a) >= len(b)
    return a >= b


def contains(items, x):
    """``x in items`` (a list or tuple): each item ``is`` or ``==`` ``x``, in turn."""
    for item in items:
        if same(item, x):
            return True
    return False


def count_of(items, x):
    """``items.count(x)``, ``operator.countOf(items, x)``."""
    n = 0
    for item in items:
        if same(item, x):
            n += 1
    return n


def index_of(items, x, start=0, stop=sys.maxsize):
    """``items.index(x, start, stop)``, ``operator.indexOf(items, x)``."""
    n = len(items)
    start = max(start + n, 0) if start < 0 else start
    stop = max(stop + n, 0) if stop < 0 else stop
    for i in range(start, min(stop, n)):
        if same(items[i], x):
            return i
    raise ValueError(f"{x!r} is not in {type(items).__name__}" if type(items) is tuple else f"{x!r} is not in list")


def remove_comparing(items, x):
    """``items.remove(x)``: the first item that ``is`` or ``==`` ``x``."""
    del items[index_of(items, x)]


def not_equal_by_eq(a, b):
    """``a != b`` by ``object.__ne__``: ``__eq__`` (then the reflected one), its truth negated."""
    result = type(a).__eq__(a, b)
    if result is NotImplemented:
        result = type(b).__eq__(b, a)
        if result is NotImplemented:
            return a is not b
    return not result


def contained_by_dunder(items, x):
    """``x in items`` of a user class: its ``__contains__``, then the truth of what it returned."""
    return bool(type(items).__contains__(items, x))


def truth_by_length(value):
    """``bool(value)`` of an object whose class has ``__len__`` and no ``__bool__``."""
    return len(value) != 0


def negated_truth(value):
    """``not value``: its ``__bool__`` (or ``__len__``) called through ``bool``."""
    return not bool(value)


def truth_of_less(a, b):
    """``if a < b:``: ``a < b`` (by the dunders Python picks), then the truth of its result."""
    return bool(a < b)


def truth_of_less_equal(a, b):
    return bool(a <= b)


def truth_of_greater(a, b):
    return bool(a > b)


def truth_of_greater_equal(a, b):
    return bool(a >= b)


def truth_of_equal(a, b):
    return bool(a == b)


def truth_of_not_equal(a, b):
    return bool(a != b)


def any_of(items):
    """``any(items)``: each item's truth tested in turn, up to the first true one."""
    for item in items:
        if item:
            return True
    return False


def all_of(items):
    """``all(items)``: each item's truth tested in turn, up to the first false one."""
    for item in items:
        if not item:
            return False
    return True


# --------------------------------------------------------------------------------------------
# Which calls run them
# --------------------------------------------------------------------------------------------

_SEQUENCE_OPERATORS = {operator.eq: equal, operator.ne: not_equal, operator.lt: less, operator.gt: greater,
                       operator.le: less_equal, operator.ge: greater_equal}
_SEARCHES = {operator.contains: contains, operator.countOf: count_of, operator.indexOf: index_of}
_LOOKUPS = (operator.getitem, operator.setitem, operator.delitem, operator.contains)
_TABLES = (dict, set, frozenset)
#: builtins of zero derivative that call one dunder of their argument
_CONVERSIONS = {builtins.round: "__round__", math.floor: "__floor__", math.ceil: "__ceil__", math.trunc: "__trunc__",
                builtins.hash: "__hash__", builtins.bool: "__bool__", operator.truth: "__bool__",
                builtins.str: "__str__", builtins.repr: "__repr__", builtins.format: "__format__",
                builtins.int: "__int__", operator.index: "__index__", builtins.len: "__len__"}


def _python_method(value: Any, name: str) -> types.FunctionType | None:
    method = getattr(type(value), name, None)
    return method if type(method) is types.FunctionType else None


def _refuse_table(fn: Any, table: Any, key: Any) -> None:
    for name in ("__hash__", "__eq__"):
        if dunder_may_change_data(_python_method(key, name)):
            raise RuleArgumentError(
                f"a {type(table).__name__} looked up ({getattr(fn, '__name__', fn)}) with a key of class "
                f"{type(key).__qualname__}, whose {name} changes data: which keys a lookup compares depends on the "
                f"table's hashes, which yuebing does not follow; key the {type(table).__name__} by numbers or "
                f"strings (a field of the object), or make {name} write nothing")


#: the truth tests: ``if obj:`` and ``while obj:`` are ``operator.truth(obj)`` calls
#: (``frontend/truth_tests.py``), ``not obj`` is ``operator.not_(obj)``
_TRUTH = (builtins.bool, operator.truth, operator.not_)
_TRUTHS = {builtins.any: any_of, builtins.all: all_of}
_ASKED = frozenset((*_SEQUENCE_OPERATORS, *_SEARCHES, *_LOOKUPS, *_CONVERSIONS, *_TRUTH, *_TRUTHS))
#: the truth of a comparison an ``if`` tests, by the definition that runs its dunders as user code
_TESTED = {tested.tested_lt: truth_of_less, tested.tested_le: truth_of_less_equal, tested.tested_gt: truth_of_greater,
           tested.tested_ge: truth_of_greater_equal, tested.tested_eq: truth_of_equal,
           tested.tested_ne: truth_of_not_equal}
nondifferentiable(*_TESTED)  # (as a value: a bool; what its dunders write goes through the definition)
#: the calls that may stop stepping an iterator early, by their definitions that step it
_STEPPING = {builtins.any: any_of, builtins.all: all_of, operator.contains: contains}


def may_compare(fn: Any) -> bool:
    """Whether a call of ``fn`` is one ``comparing_call`` looks into (a cheap test first)."""
    kind = type(fn)
    return (kind is types.BuiltinFunctionType or kind is type) and fn in _ASKED \
        or kind is types.FunctionType and fn in _TESTED


def comparing_call(fn: Any, primals: list) -> Callable | None:
    """The Python definition (or user dunder) a call ``fn(*primals)`` runs instead of its plain
    rule, because what it compares or converts may change data; None for the plain rule."""
    definition = _TESTED.get(fn)
    if definition is not None:
        return definition if len(primals) == 2 and _tested_through(fn, primals) else None
    if fn is operator.ne and len(primals) == 2 and _negated_eq_through(primals):
        return not_equal_by_eq
    definition = _SEQUENCE_OPERATORS.get(fn)
    if definition is not None:
        if len(primals) == 2 and (type(primals[0]) in (tuple, list) or type(primals[1]) in (tuple, list)) \
                and compares_through(primals):
            return definition
        return None
    if fn in _LOOKUPS and primals and type(primals[0]) in _TABLES and len(primals) > 1:
        _refuse_table(fn, primals[0], primals[1])
        return None
    if fn in _STEPPING and primals and is_lazy(primals[0]):
        # a lazy generator (frontend/generators.py): stepped by the definition's loop, item by
        # item through its differentiated body, only as far as Python's call steps it
        return _STEPPING[fn]
    definition = _SEARCHES.get(fn)
    if fn is operator.contains and len(primals) == 2 and _contains_through(primals):
        return contained_by_dunder
    if definition is not None:
        return definition if type(primals[0]) in (list, tuple) and compares_through(primals) else None
    if fn in _TRUTH and len(primals) == 1:
        return _truth_definition(fn, primals[0])
    if fn in _TRUTHS and len(primals) == 1:
        return _TRUTHS[fn] if truths_may_change_data(primals[0]) else None
    name = _CONVERSIONS.get(fn)
    if name is not None and len(primals) >= 1:
        method = _python_method(primals[0], name)
        return method if dunder_may_change_data(method) else None
    return None




def _tested_through(fn: Any, primals: list) -> bool:
    """Whether the comparison ``fn`` tests (``tested_lt``: ``a < b``), or the truth test of its
    result, may run Python code that changes data."""
    if _PLAIN.issuperset(map(type, primals)):  # (numbers, arrays, strings: the common case first)
        return False
    if compares_through(primals):
        return True
    try:  # pure dunders, or C ones: comparing once more to look changes nothing
        result = tested.COMPARISON_OF[fn](*primals)
    except Exception:  # noqa: BLE001 - the plain rule raises it again, as Python would
        return False
    return type(result) is not bool and _truth_definition(builtins.bool, result) is not None


def _negated_eq_through(primals: list) -> bool:
    """Whether ``a != b``, where neither class defines ``__ne__`` (``object.__ne__`` calls
    ``__eq__`` and negates the truth of its result), runs Python code that may change data."""
    if any(type(v).__ne__ is not object.__ne__ for v in primals):
        return False
    methods = [m for m in (_python_method(v, "__eq__") for v in primals) if m is not None]
    if not methods:
        return False
    if any(dunder_may_change_data(m) for m in methods):
        return True
    try:  # pure __eq__s: comparing once more to look changes nothing
        result = primals[0] == primals[1]
    except Exception:  # noqa: BLE001 - the plain rule raises it again, as Python would
        return False
    return type(result) is not bool and _truth_definition(builtins.bool, result) is not None


def _contains_through(primals: list) -> bool:
    """Whether ``x in items`` of a user class runs Python code that may change data: its
    ``__contains__``, or the truth test CPython makes of what that returned."""
    method = _python_method(primals[0], "__contains__")
    if method is None:
        return False
    if dunder_may_change_data(method):
        return True
    try:  # a pure __contains__: calling it once more to look changes nothing
        result = method(*primals)
    except Exception:  # noqa: BLE001 - the plain rule raises it again, as Python would
        return False
    return type(result) is not bool and _truth_definition(builtins.bool, result) is not None


def truths_may_change_data(items: Any) -> bool:
    """Whether testing the truth of an item of the list or tuple ``items`` may change data
    (``any``, ``all``, ``filter(None, items)``)."""
    return type(items) in (list, tuple) and any(
        type(item) not in (bool, float, int) and _truth_definition(builtins.bool, item) is not None for item in items)


def _truth_definition(fn: Any, value: Any) -> Callable | None:
    """What a truth test of ``value`` runs when the dunder Python calls for it (``__bool__``, or
    ``__len__`` when the class has no ``__bool__``) may change data; None for the plain rule."""
    if type(value) in (bool, float, int) or getattr(type(value), "__bool__", None) is None \
            and _python_method(value, "__len__") is None:
        return None
    method = _python_method(value, "__bool__")
    if method is None and getattr(type(value), "__bool__", None) is None:
        method = _python_method(value, "__len__")
        if not dunder_may_change_data(method):
            return None
        return negated_truth if fn is operator.not_ else truth_by_length
    if not dunder_may_change_data(method):
        return None
    return negated_truth if fn is operator.not_ else method

# --------------------------------------------------------------------------------------------
# list.index/count, tuple.index/count (methods: their rules decide; zero_derivative.py leaves them)
# --------------------------------------------------------------------------------------------


def _method_rules(tp: type, name: str, plain: Callable, definition: Callable) -> None:
    def rrule(self, *args):
        if _compares_through((self, *args)):
            return defined_rrule(definition, self, *args)
        value = plain(primal(self), *(primal(a) for a in args))
        n = len(args)
        return output(value), lambda dy: (NoRData,) * (n + 2)

    def frule_(self, *args):
        if _compares_through((self, *args)):
            return frule(definition, self, *args)
        return Dual(plain(primal(self), *(primal(a) for a in args)), NoTangent)

    def _compares_through(args: tuple) -> bool:
        return compares_through([primal(a) for a in args[:2]])

    rrule.__qualname__, frule_.__qualname__ = f"rrule[{tp.__name__}.{name}]", f"frule[{tp.__name__}.{name}]"
    # batched forward mode runs the definition on the batched tangents (the looped fallback would
    # run the comparisons once per direction)
    frule_.definition, frule_.check = definition, lambda args, kwargs: None  # type: ignore[attr-defined]
    rrule_for((tp, name))(rrule)
    frule_for((tp, name))(frule_)
    ZERO_DERIVATIVE.add((tp, name))  # (as a value: what the comparisons write goes through the definition)
    selection((tp, name), calling_key=definition)


for _tp in (list, tuple):
    _method_rules(_tp, "index", _tp.index, index_of)
    _method_rules(_tp, "count", _tp.count, count_of)
