"""Rules for builtins that take the elements of an iterable in an order or choose among them:
``list tuple reversed sorted filter min max``, ``heapq.nsmallest``/``nlargest`` and the heap
operations (``heappush``, ``heappop``, ``heapify``...: heapq's own Python code), ``bisect``'s
searches and insertions, ``itertools.groupby`` and ``functools.cmp_to_key`` (DESIGN.md §4).

Conventions:

* ``min``/``max`` (both ``max(a, b, ...)`` and ``max(iterable)``, with ``key=`` and ``default=``)
  send the whole cotangent to the element they returned: the first extreme one on ties, as
  Python returns it. If that element is an array (or any mutable object) the output *is* it.
* ``filter`` returns a **list** instead of an iterator, every item chosen at once, and so does
  ``reversed`` where nobody can tell (``listed_reversed``: of a tuple, a string, a range, or when
  a consumer takes every item); of a list or array it is CPython's lazy iterator
  (``ir/lazy_iterators.LazyReversed``, made by ``iteration.py``). ``filter`` of an iterator, or
  with a predicate (or, for None, items' truth) that may change data, makes CPython's lazy
  iterator instead (``iteration.lazy_definition``).
* Only the order (``sorted``) or the choice (``min``, ``max``, ``filter``) depends on a key's or
  predicate's value, which is piecewise constant: zero derivative. A builtin key (``abs``,
  ``operator.itemgetter``) and Python code that writes and calls nothing (``lambda p: p[0]``)
  run as plain Python on the primals. A key or predicate that is Python code writing or calling
  anything may change data on its way: the call then runs as the Python definition in
  ``_key_functions.py``, differentiated like user code, so what the key does gets its
  derivatives in every mode (``list.sort``'s rule does the same). So do items (or a pure key's
  values) whose comparison dunders may change data: the definitions make the comparisons like
  user code, as CPython makes them (``_comparisons.py``).
* Iterating an array (``list(a)``): a 1-D array gives NumPy scalars whose cotangents go into the
  array's fdata; a k-D array gives row *views* whose fdata are the same rows of the array's
  fdata. Other iterables (ranges, strings, sets, generators) must carry no derivative, else
  ``RuleArgumentError`` asks for a list.
"""
from __future__ import annotations

import bisect
import builtins
import collections
import functools
import heapq
import itertools
import operator
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..ir.lazy_iterators import listed_reversed
from ..tangents import NoFData, NoRData, NoTangent
from ._comparisons import ComparisonPlan, comparison_plan, compares_through, cmp_to_key, goes_through, \
    holds_sequences, sequence_pair, is_builtin_key, next_comparison, planned_order, python_key, refuse_comparing_through
from ._key_functions import calls_through, filter_calling_predicate, groupby_calling_key, key_order, \
    max_calling_key, min_calling_key, sorted_calling_key
from . import batched
from .cases import Case, ConventionCase, ListedCase, randc, randn
from .comparing_calls import truths_may_change_data
from .declare import nondifferentiable
from .core import CoDual, Dual, RuleArgumentError, frule, frule_for, primal, register_frule, register_rrule, \
    rrule_for
from .operators import Elements, fit_element, forward_elements, forward_sequence, list_output, ref, send, tuple_output
from .second_order import defined_as, defined_by, jvp_defined_by, linear, selection
from .util import defined_rrule, fit_tangent, output, tangent

_NOARG = object()  # "not passed", distinct from any value a caller could pass


def _kw(kwargs: dict, name: str, default: Any = None) -> Any:
    return primal(kwargs[name]) if name in kwargs else default


def _through_key_frule(definition: Callable, args: tuple, kwargs: dict) -> Dual:
    """The forward rule of a call whose key may change data: ``definition``'s derived one."""
    out = frule(definition, *args, **kwargs)
    if isinstance(out.primal, (np.floating, np.complexfloating)):  # a NumPy scalar's tangent: a number
        return Dual(out.primal, fit_tangent(out.tangent, out.primal))
    return out


# ============================================================================================
# list, tuple, reversed, sorted, filter
# ============================================================================================


def sequence_rules(name: str, build: Callable, kind: type) -> tuple[Callable, Callable]:
    """Rules for a builtin whose result is a list/tuple of the elements of its first argument,
    reordered or selected: ``build(primals, rest, kwargs) -> index order``."""

    def rrule(iterable=_NOARG, *rest, **kwargs):
        if iterable is _NOARG:
            return output(kind()), lambda dy: (NoRData,)
        src = Elements(iterable, name)
        order = build(src.items, rest, kwargs)
        nodes = [ref(src, i) for i in order]
        out, send_back = (list_output if kind is list else tuple_output)(nodes)
        n_after = len(rest) + len(kwargs)

        def pullback(dy):
            send_back() if kind is list else send_back(dy)
            return (NoRData, src.rdata()) + (NoRData,) * n_after

        return out, pullback

    def frule_(iterable=_NOARG, *rest, **kwargs):
        if iterable is _NOARG:
            return Dual(kind(), NoTangent if kind is tuple else [])
        items = forward_elements(iterable, name)
        order = build([p for p, _ in items], rest, kwargs)
        return forward_sequence(kind, [items[i] for i in order])

    rrule.__qualname__, frule_.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule_


def _all(items, rest, kwargs):
    return range(len(items))


def _reversed(items, rest, kwargs):
    return range(len(items) - 1, -1, -1)


def _sorted(items, rest, kwargs):
    key = _kw(kwargs, "key")
    reverse = bool(_kw(kwargs, "reverse", False))
    index_key = items.__getitem__ if key is None else (lambda i: key(items[i]))
    # sorting positions by their items' keys is stable like sorting the items, even reversed
    return sorted(range(len(items)), key=index_key, reverse=reverse)


def _filter(items, rest, kwargs):
    predicate = primal(rest[0])
    return [i for i, v in enumerate(items) if (predicate(v) if predicate is not None else v)]


nondifferentiable(key_order)  # the order a key's values give (_key_functions.py)
# which comparisons CPython's sort makes, and whether they may change data (_comparisons.py)
nondifferentiable(comparison_plan, next_comparison, planned_order, compares_through, is_builtin_key, python_key,
                  holds_sequences, sequence_pair, refuse_comparing_through)
T.register_nondifferentiable_type(ComparisonPlan)

for _f, _name, _build, _kind in ((builtins.list, "list", _all, list), (builtins.tuple, "tuple", _all, tuple)):
    _r, _fr = sequence_rules(_name, _build, _kind)
    register_rrule(_f, _r)
    register_frule(_f, _fr)

_Point = collections.namedtuple("_Point", "x y")  # for the cases
_TUPLE_RRULE, _TUPLE_FRULE = sequence_rules("tuple", _all, tuple)


def _tuple_class(cls: Any) -> type:
    kind = primal(cls)
    if not (isinstance(kind, type) and issubclass(kind, tuple)):
        raise TypeError("tuple.__new__(X): X is not a subtype of tuple")
    if kind is not tuple and tuple.__new__ is not getattr(kind, "__new__", None) \
            and not isinstance(getattr(kind, "_fields", None), tuple):
        raise RuleArgumentError(f"tuple.__new__({kind.__qualname__}, ...): yuebing differentiates it for tuple and "
                                f"namedtuple classes; {kind.__qualname__} has a __new__ of its own")
    return kind


def _tuple_new_rrule(cls, iterable=_NOARG):
    """``tuple.__new__(cls, iterable)``: the elements as ``tuple(iterable)`` takes them, in a tuple
    of class ``cls`` (namedtuple's ``_make`` and ``_replace`` call it); its fdata is a ``cls`` too,
    as a namedtuple constructed by calling its class has."""
    kind = _tuple_class(cls)
    out, pullback = _TUPLE_RRULE(iterable)
    fd = out.fdata
    out = CoDual(tuple.__new__(kind, out.primal), fd if fd is NoFData else tuple.__new__(kind, fd))

    def tuple_new_pullback(dy):
        return (NoRData, *pullback(tuple(dy) if isinstance(dy, tuple) else dy))

    return out, tuple_new_pullback


def _tuple_new_frule(cls, iterable=_NOARG):
    kind = _tuple_class(cls)
    out = _TUPLE_FRULE(iterable)
    t = out.tangent
    return Dual(tuple.__new__(kind, out.primal), t if t is NoTangent else tuple.__new__(kind, t))


register_rrule(tuple.__new__, _tuple_new_rrule)
register_frule(tuple.__new__, _tuple_new_frule)
linear(tuple.__new__)  # like tuple(iterable): the class is no value, the items keep their tangents

_RULES = {"reversed": sequence_rules("reversed", _reversed, list), "sorted": sequence_rules("sorted", _sorted, list),
          "filter": sequence_rules("filter", _filter, list)}


@rrule_for(listed_reversed)
def _reversed_rrule(seq):
    reversed(primal(seq))  # Python's check that seq is a sequence
    return _RULES["reversed"][0](seq)


@frule_for(listed_reversed)
def _reversed_frule(seq):
    reversed(primal(seq))
    return _RULES["reversed"][1](seq)


linear(listed_reversed)  # (reversed itself is its Python definition: iteration.py)


def _sorted_goes_through(args: tuple, kwargs: dict) -> bool:
    """``sorted``'s definition runs: its key, or comparing the items, may change data."""
    return bool(args) and goes_through(primal(args[0]), _kw(kwargs, "key"))


def _extreme_goes_through(args: tuple, kwargs: dict) -> bool:
    items = primal(args[0]) if len(args) == 1 else [primal(a) for a in args]
    return goes_through(items, _kw(kwargs, "key"))


@rrule_for(builtins.sorted)
def _sorted_rrule(*args, **kwargs):
    if _sorted_goes_through(args, kwargs):
        return defined_rrule(sorted_calling_key, *args, **kwargs)
    return _RULES["sorted"][0](*args, **kwargs)


@frule_for(builtins.sorted)
def _sorted_frule(*args, **kwargs):
    if _sorted_goes_through(args, kwargs):
        return _through_key_frule(sorted_calling_key, args, kwargs)
    return _RULES["sorted"][1](*args, **kwargs)


def _filter_calls_through(function: Any, iterable: Any) -> bool:
    """Whether ``filter``'s predicate (or, for None, the items' truth) may change data."""
    function = primal(function)
    return calls_through(function) or function is None and truths_may_change_data(primal(iterable))


@rrule_for(builtins.filter)
def _filter_rrule(function, iterable):
    if _filter_calls_through(function, iterable):
        return defined_rrule(filter_calling_predicate, function, iterable)
    out, pullback = _RULES["filter"][0](iterable, function)
    return out, lambda dy: (NoRData, NoRData, pullback(dy)[1])


@frule_for(builtins.filter)
def _filter_frule(function, iterable):
    if _filter_calls_through(function, iterable):
        return _through_key_frule(filter_calling_predicate, (function, iterable), {})
    return _RULES["filter"][1](iterable, function)


# ============================================================================================
# min / max
# ============================================================================================


def _extreme_rules(which: Callable, name: str, calling_key: Callable) -> tuple[Callable, Callable]:
    def rrule(*args, **kwargs):
        key = _kw(kwargs, "key")
        if args and _extreme_goes_through(args, kwargs):
            return defined_rrule(calling_key, *args, **kwargs)
        options = {"key": key} if key is not None else {}
        if "default" in kwargs:
            options["default"] = primal(kwargs["default"])
        n_kw = len(kwargs)
        if len(args) == 1:
            src = Elements(args[0], name)
            y = which(src.items, **options)
            if not src.items:  # the default was returned
                d = kwargs["default"]
                out = CoDual(y, d.fdata) if isinstance(d, CoDual) else output(y)
                keys = list(kwargs)

                def default_pullback(dy):
                    return (NoRData, NoRData, *(dy if k == "default" else NoRData for k in keys))

                return out, default_pullback
            i = _index_of(src.items, y)
            p, fd, back = ref(src, i)

            def pullback(dy):
                send(back, dy)
                return (NoRData, src.rdata()) + (NoRData,) * n_kw

            return CoDual(p, fd), pullback
        prims = [primal(a) for a in args]
        y = which(*prims, **options)
        i = _index_of(prims, y)
        chosen = args[i]
        n = len(args)

        def pullback(dy):
            return (NoRData, *(dy if j == i else NoRData for j in range(n))) + (NoRData,) * n_kw

        return CoDual(y, chosen.fdata if isinstance(chosen, CoDual) else NoFData), pullback

    def frule_(*args, **kwargs):
        key = _kw(kwargs, "key")
        if args and _extreme_goes_through(args, kwargs):
            return _through_key_frule(calling_key, args, kwargs)
        options = {"key": key} if key is not None else {}
        if "default" in kwargs:
            options["default"] = primal(kwargs["default"])
        if len(args) == 1:
            items = forward_elements(args[0], name)
            prims = [p for p, _ in items]
            y = which(prims, **options)
            if not prims:
                default = kwargs["default"]
                return Dual(y, tangent(default) if isinstance(default, Dual) else T.zero_tangent(y))
            return Dual(y, fit_element(y, items[_index_of(prims, y)][1]))
        prims = [primal(a) for a in args]
        y = which(*prims, **options)
        return Dual(y, fit_element(y, tangent(args[_index_of(prims, y)])))

    rrule.__qualname__, frule_.__qualname__ = f"rrule[{name}]", f"frule[{name}]"
    return rrule, frule_


def _index_of(items: list, y: Any) -> int:
    """Where ``min``/``max`` found ``y``: the first position holding that very object (Python
    returns the object itself, and an object equal to itself cannot beat its own first copy)."""
    for i, v in enumerate(items):
        if v is y:
            return i
    raise AssertionError("min/max returned an object that is not one of its arguments")


for _f, _name, _definition in ((builtins.max, "max", max_calling_key), (builtins.min, "min", min_calling_key)):
    _r, _fr = _extreme_rules(_f, _name, _definition)
    register_rrule(_f, _r)
    register_frule(_f, _fr)


# ============================================================================================
# heapq.nsmallest / nlargest (Python code over C heaps: defined by what their docs say they equal)
# ============================================================================================


def _heap_selection(n, iterable, key, reverse):
    """``heapq.nsmallest``/``nlargest`` (``reverse``) as their Python code: ``min``/``max`` for
    ``n == 1``, ``sorted(...)[:n]`` for a sized ``iterable`` of at most ``n`` items, else their
    heap of the first ``n`` items (keyed), each later item compared with its top: the same
    keys called and comparisons made. Items compared plainly without a key: ``sorted``'s first
    ``n``, the same items."""
    if n == 1:
        found = (max if reverse else min)(iterable, default=_HEAP_EMPTY, key=key)
        return [] if found is _HEAP_EMPTY else [found]
    if n <= 0:
        return []
    if has_length(iterable) and n >= len(iterable):
        return sorted(iterable, key=key, reverse=reverse)[:n]
    items = list(iterable)
    if key is None and not compares_through(items):
        return [items[i] for i in key_order(items, reverse)[:n]]
    return (_heap_largest if reverse else _heap_smallest)(n, items, key)


def _heap_smallest(n, items, key):
    """heapq.nsmallest's heap: a max-heap of the ``n`` smallest so far."""
    result = [(items[i], i) if key is None else (key(items[i]), i, items[i]) for i in range(min(n, len(items)))]
    if not result:
        return result
    _heapify_max(result)
    top = result[0][0]
    order = n
    for item in items[n:]:
        value = item if key is None else key(item)
        if value < top:
            _heapreplace_max(result, (value, order) if key is None else (value, order, item))
            top = result[0][0]
            order += 1
    result.sort()
    return [entry[-1] if key is not None else entry[0] for entry in result]


def _heap_largest(n, items, key):
    """heapq.nlargest's heap: a min-heap of the ``n`` largest so far."""
    result = [(items[i], -i) if key is None else (key(items[i]), -i, items[i]) for i in range(min(n, len(items)))]
    if not result:
        return result
    heapq.heapify(result)
    top = result[0][0]
    order = -n
    for item in items[n:]:
        value = item if key is None else key(item)
        if top < value:
            heapq.heapreplace(result, (value, order) if key is None else (value, order, item))
            top = result[0][0]
            order -= 1
    result.sort(reverse=True)
    return [entry[-1] if key is not None else entry[0] for entry in result]


def _heapify_max(heap):
    """heapq's C ``_heapify_max``, as its Python code."""
    for i in reversed(range(len(heap) // 2)):
        heapq._siftup_max(heap, i)


def _heapreplace_max(heap, item):
    """heapq's C ``_heapreplace_max``, as its Python code."""
    largest = heap[0]
    heap[0] = item
    heapq._siftup_max(heap, 0)
    return largest


_HEAP_EMPTY = object()


def has_length(iterable: Any) -> bool:
    try:
        len(iterable)
    except (TypeError, AttributeError):
        return False
    return True


def _heap_check(heap, *rest):
    """heapq's own check of its arguments (a list), without running the operation."""
    if not isinstance(heap, list):
        raise TypeError("heap argument must be a list")


def _nsmallest(n, iterable, key=None):
    """``heapq.nsmallest``: ``sorted(iterable, key=key)[:n]``, ``[]`` for ``n <= 0``."""
    return _heap_selection(n, iterable, key, False)


def _nlargest(n, iterable, key=None):
    """``heapq.nlargest``: ``sorted(iterable, key=key, reverse=True)[:n]``."""
    return _heap_selection(n, iterable, key, True)


nondifferentiable(has_length)
defined_as(heapq.nsmallest, _nsmallest)
defined_as(heapq.nlargest, _nlargest)


# heapq's heap operations (C functions): defined as the heapq module's own Python code, which
# makes the same comparisons (``_siftdown``/``_siftup`` stay Python in heapq and are derived from
# source), so float priorities and objects whose ``__lt__`` writes keep their derivatives


def _heappush(heap, item):
    """``heapq.heappush``."""
    heap.append(item)
    heapq._siftdown(heap, 0, len(heap) - 1)


def _heappop(heap):
    """``heapq.heappop``."""
    last = heap.pop()
    if heap:
        smallest = heap[0]
        heap[0] = last
        heapq._siftup(heap, 0)
        return smallest
    return last


def _heapreplace(heap, item):
    """``heapq.heapreplace``."""
    smallest = heap[0]
    heap[0] = item
    heapq._siftup(heap, 0)
    return smallest


def _heappushpop(heap, item):
    """``heapq.heappushpop``."""
    if heap and heap[0] < item:
        item, heap[0] = heap[0], item
        heapq._siftup(heap, 0)
    return item


def _heapify(heap):
    """``heapq.heapify``."""
    for i in reversed(range(len(heap) // 2)):
        heapq._siftup(heap, i)


for _f, _definition in ((heapq.heappush, _heappush), (heapq.heappop, _heappop), (heapq.heapreplace, _heapreplace),
                        (heapq.heappushpop, _heappushpop), (heapq.heapify, _heapify)):
    if type(_f) is not type(_definition):  # (C functions; a Python heapq keeps its own code)
        defined_as(_f, _definition, validate=_heap_check)


# ============================================================================================
# bisect (C functions: defined as the Python code of the bisect module they replace)
# ============================================================================================


def _bisect_right(a, x, lo=0, hi=None, *, key=None):
    """``bisect.bisect_right``: the same comparisons, the key called on the same items."""
    if lo < 0:
        raise ValueError("lo must be non-negative")
    if hi is None:
        hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if x < (a[mid] if key is None else key(a[mid])):
            hi = mid
        else:
            lo = mid + 1
    return lo


def _bisect_left(a, x, lo=0, hi=None, *, key=None):
    """``bisect.bisect_left``."""
    if lo < 0:
        raise ValueError("lo must be non-negative")
    if hi is None:
        hi = len(a)
    while lo < hi:
        mid = (lo + hi) // 2
        if (a[mid] if key is None else key(a[mid])) < x:
            lo = mid + 1
        else:
            hi = mid
    return lo


def _insort_right(a, x, lo=0, hi=None, *, key=None):
    """``bisect.insort_right``: ``x`` inserted after the items equal to it."""
    a.insert(_bisect_right(a, x if key is None else key(x), lo, hi, key=key), x)


def _insort_left(a, x, lo=0, hi=None, *, key=None):
    """``bisect.insort_left``."""
    a.insert(_bisect_left(a, x if key is None else key(x), lo, hi, key=key), x)


# ============================================================================================
# itertools.groupby and functools.cmp_to_key (C: defined as Python code calling the key or cmp)
# ============================================================================================

defined_as(itertools.groupby, groupby_calling_key)
defined_as(functools.cmp_to_key, cmp_to_key)
# keys holding names, no data: made without derivatives (the definitions call them as Python code)
nondifferentiable(operator.itemgetter, operator.attrgetter)
for _type in (operator.itemgetter, operator.attrgetter, type(functools.cmp_to_key(max))):
    T.register_nondifferentiable_type(_type)


for _f, _definition in ((bisect.bisect_right, _bisect_right), (bisect.bisect_left, _bisect_left),
                        (bisect.insort_right, _insort_right), (bisect.insort_left, _insort_left)):
    defined_as(_f, _definition)


# ============================================================================================
# Batched forward mode (rules/batched.py): a key that may change data runs once, batched
# ============================================================================================


def _batched_through_key(definition: Callable, goes: Callable) -> Callable:
    """The batched rule of a call whose key (or comparisons) may change data: ``definition`` run
    once on the batched tangents (the looped fallback would run the key once per direction). Any
    other call declines (the fallback then runs the plain rule per direction)."""
    def rule(args: tuple, kwargs: dict) -> Dual | None:
        if not goes(args, kwargs):
            return None
        return frule(definition, *args, **kwargs)  # (a NumPy scalar's batched tangent is an array)

    return rule


def _predicate_goes_through(args: tuple, kwargs: dict) -> bool:
    return bool(args) and calls_through(primal(args[0]))


for _f, _definition, _goes in ((builtins.sorted, sorted_calling_key, _sorted_goes_through),
                               (builtins.max, max_calling_key, _extreme_goes_through),
                               (builtins.min, min_calling_key, _extreme_goes_through),
                               (builtins.filter, filter_calling_predicate, _predicate_goes_through)):
    batched.register(_f, _batched_through_key(_definition, _goes))


# ============================================================================================
# Second order
# ============================================================================================
# max, min and sorted choose among their arguments by the primal values (``selection``); with a
# key that may change data, their definitions calling the key run instead. filter is always its
# definition (the predicate called like user code).

selection(builtins.max, calling_key=max_calling_key)
selection(builtins.min, calling_key=min_calling_key)
selection(builtins.sorted, calling_key=sorted_calling_key)
defined_by(builtins.filter, filter_calling_predicate)


def _chosen(pairs: tuple, position: Any) -> tuple:
    """``(value, tangent)`` of the item ``position`` chooses: among the arguments, or among the
    items of the one iterable argument (``max(xs)``)."""
    values, tangents = pairs[0::2], pairs[1::2]
    if len(values) == 1:
        items, item_tangents = list(values[0]), list(tangents[0])
        _refuse_third_order(items, "max or min")
        k = int(position(items))
        return items[k], item_tangents[k]
    _refuse_third_order(values, "max or min")
    k = int(position(list(values)))
    return values[k], tangents[k]


def _refuse_third_order(values: Any, name: str) -> None:
    """Third order follows ``max``/``min``/``sorted`` of numbers: comparisons that may change
    data (``_comparisons.py``) are refused by name."""
    if compares_through(values):
        raise RuleArgumentError(
            f"third derivatives (yb.hvp/yb.hessian of a function calling yb.grad) of {name} comparing objects "
            f"whose comparison dunders (__lt__, __eq__...) change data are not supported; take the Hessian of "
            f"the function itself (yb.hessian(f)), or give it a key= returning numbers (key=lambda o: o.value)")


def _max_jvp(*pairs):
    """Third order: ``max`` picks its first largest item, and that item's tangent."""
    return _chosen(pairs, np.argmax)


def _min_jvp(*pairs):
    return _chosen(pairs, np.argmin)


def _sorted_jvp(items, items_t, reverse, reverse_t):
    """Third order: ``sorted`` of numbers (no key), their tangents in the same stable order."""
    values = list(items)
    _refuse_third_order(values, "sorted")
    tangents = [NoTangent] * len(values) if items_t is NoTangent else list(items_t)
    order = sorted(range(len(values)), key=values.__getitem__, reverse=reverse)
    return [values[k] for k in order], [tangents[k] for k in order]


jvp_defined_by(builtins.max, _max_jvp)
jvp_defined_by(builtins.min, _min_jvp)
jvp_defined_by(builtins.sorted, _sorted_jvp)  # called with (items, items_t, reverse, _) by third order


# ============================================================================================
# Cases
# ============================================================================================


def _sequence_cases() -> list:
    shared = randn(3)
    m = randn(3, 2)
    return [
        Case(list, [1.5, shared, (2.0, randn(2))], name="list(list with array and tuple)"),
        Case(list, (1.5, randn(2), 3), name="list(tuple)"),
        Case(list, randn(4), name="list(1-d array): scalars"),
        Case(list, m, name="list(2-d array): row views"),
        Case(list, randc(3), name="list(complex array)"),
        Case(list, randn(3, dtype=np.float32), name="list(float32 array)"),
        Case(list, range(3), name="list(range)"),
        Case(tuple, [1.5, shared, shared], name="tuple(list with aliased array)"),
        Case(tuple, randn(2, 2), name="tuple(2-d array)"),
        Case(tuple, (1.5, 2.5)),
        Case(tuple.__new__, tuple, [1.5, randn(2)], name="tuple.__new__(tuple, list)"),
        Case(tuple.__new__, _Point, [randn(), randn(2)], name="tuple.__new__(namedtuple, list): _make"),
        Case(tuple.__new__, _Point, (randn(), 2), name="tuple.__new__(namedtuple, tuple with an int)"),
        Case(listed_reversed, [1.5, shared, -2.0], name="reversed(list), every item at once"),
        Case(listed_reversed, randn(3), name="reversed(array), every item at once"),
        Case(listed_reversed, (randn(), 2, randn(2)), name="reversed(tuple)"),
        Case(sorted, [2.5, -1.0, 0.5, 3.0], name="sorted(floats)"),
        Case(sorted, [2.5, -1.0, 0.5], kwargs={"reverse": True}, name="sorted(reverse=True)"),
        Case(sorted, [2.5, -1.0, 0.5], kwargs={"key": abs}, name="sorted(key=abs)"),
        Case(sorted, [(2.0, randn(2)), (1.0, randn(2))], kwargs={"key": lambda pair: pair[0]},
             name="sorted(tuples with arrays, key=lambda)"),
        Case(sorted, randn(4), name="sorted(array)"),
        ListedCase(builtins.filter, None, [1.5, 0, -2.5, (0.5, shared)], name="filter(None, ...)"),
        ListedCase(builtins.filter, np.isfinite, randn(3), name="filter(predicate, array)"),
    ]


def _extreme_cases() -> list:
    a, b = randn(3), randn(3)
    return [
        Case(max, 1.5, -0.5, 3.0, name="max(floats)"),
        Case(min, 1.5, -0.5, 3.0, name="min(floats)"),
        Case(max, 2, 1.5, name="max(int, float)"),
        Case(max, [1.5, -0.5, 3.0], name="max(list)"),
        Case(min, (1.5, -0.5, 3.0), name="min(tuple)"),
        Case(max, randn(5), name="max(array)"),
        Case(min, [a, b], kwargs={"key": lambda v: v[0]}, name="min(arrays, key): returns the array itself"),
        Case(max, a, b, kwargs={"key": np.sum}, name="max(a, b, key=np.sum)"),
        Case(max, [1.5, -2.5], kwargs={"key": abs}, name="max(key=abs)"),
        Case(max, [], kwargs={"default": 2.5}, name="max(empty, default)"),
        Case(max, randn(3, dtype=np.float32), name="max(float32 array)"),
        ConventionCase(max, 1.5, 1.5, expected=(1.0, 0.0), name="max tie: gradient to the first"),
        ConventionCase(min, [2.0, -1.0, -1.0], expected=([0.0, 1.0, 0.0],), name="min tie in a list: first"),
    ]


def _heapq_cases() -> list:
    return [
        Case(heapq.nsmallest, 2, [2.5, -1.0, 0.5, 3.0], name="heapq.nsmallest(2, floats)"),
        Case(heapq.nlargest, 2, [2.5, -1.0, 0.5, 3.0], kwargs={"key": abs}, name="heapq.nlargest(2, key=abs)"),
        Case(heapq.nsmallest, 1, [randn(2), randn(2)], kwargs={"key": lambda v: v[1]},
             name="heapq.nsmallest(1, arrays, key=lambda)"),
        Case(heapq.nlargest, 5, (1.5, -0.5), name="heapq.nlargest(n > len)"),
        Case(heapq.heappush, [-1.0, 0.5, 2.5], 0.7, name="heapq.heappush(floats)"),
        Case(heapq.heappop, [-1.0, 0.5, 2.5, 0.6], name="heapq.heappop(floats)"),
        Case(heapq.heapify, [2.5, -1.0, 0.5, 3.0, 0.2], name="heapq.heapify(floats)"),
        Case(heapq.heappushpop, [(-1.0, randn(2)), (0.5, randn(2))], (0.2, randn(2)), name="heapq.heappushpop(pairs)"),
        Case(heapq.heapreplace, [-1.0, 0.5, 2.5], 0.7, name="heapq.heapreplace(floats)"),
    ]


def _bisect_cases() -> list:
    return [
        Case(bisect.insort_right, [-1.0, 0.5, 2.5], 0.7, name="bisect.insort_right(floats)"),
        Case(bisect.insort_left, [(-1.0, randn(2)), (2.5, randn(2))], (0.5, randn(2)), kwargs={"key": lambda p: p[0]},
             name="bisect.insort_left(pairs, key=lambda)"),
        Case(bisect.bisect_left, [-1.0, 0.5, 2.5], 0.7, name="bisect.bisect_left(floats)"),
        Case(bisect.bisect_right, [-1.0, 0.5, 2.5], 0.5, 1, name="bisect.bisect_right(tie, lo=1)"),
    ]


CASES = [*_sequence_cases(), *_extreme_cases(), *_heapq_cases(), *_bisect_cases()]
