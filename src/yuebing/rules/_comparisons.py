"""Comparisons that may change data (issue 13): ``sorted``, ``list.sort``, ``min``, ``max``,
``bisect``, ``itertools.groupby`` and ``functools.cmp_to_key`` comparing objects of user classes
whose comparison dunders (``__lt__``, ``__eq__``...) are Python code that writes (appends to a
log, accumulates into an attribute) or calls something that could.

Python runs such a dunder once per comparison the algorithm makes, so what it writes depends on
which comparisons are made, in which order. The rules' plain path compares the primals as plain
Python and would drop that work; instead the comparisons are made by differentiated Python code
(``_key_functions.py``), each ``a < b`` reaching the user's dunder through the machinery as any
operator of user code does:

* ``compares_through(values)`` is the check: some value compared (an item, a key's value, an
  element of a tuple key, an attribute a pure dunder compares) is an object of a class whose
  comparison dunder may change data, by the static check of ``calls_through``. Numbers, arrays,
  strings, ``dataclass(order=True)`` and a pure ``__lt__`` stay on the plain path.
* ``comparison_plan``: the comparisons CPython's own sort makes (timsort: which pairs, in which
  order, for every length), asked one at a time. Below 64 values its algorithm is written out
  (``count_run``, then binary insertion: checked against this Python's sort once); beyond,
  CPython's ``list.sort`` runs in a helper thread on stand-ins for the positions, and each
  comparison it wants is handed back to the differentiated code, which compares the real values
  and hands the answer in. So the user's dunders run exactly as in a plain call, and the order
  they give is the one ``sorted`` gives.
* ``less``/``equal``: ``<`` and ``==`` of tuples and lists written out (the first elements that
  differ, found by ``is`` or ``==``, as CPython's tuple comparison does), so that the dunders of
  their elements are reached by differentiated code too.
* ``CmpKey``/``CmpToKey``: ``functools.cmp_to_key`` as the Python code of ``functools.py``, so a
  ``cmp`` function that writes is called like user code; a C key object made outside the
  differentiated function is rebuilt as one (``python_cmp_key``).

This module is not part of the machinery: ``less``, ``equal`` and the ``CmpKey`` methods are
ordinary code for the transforms to differentiate; the plan and the check have zero derivative
(declared in ``ordering.py``).
"""
from __future__ import annotations

import functools
import gc
import operator
import queue
import threading
import types
from typing import Any, Generator

import numpy as np

from .core import RuleArgumentError
from ._pure_code import WRAPPING_KEYS, calls_through

#: the rich comparison dunders a comparison may reach (reflected ones included)
_DUNDERS = ("__lt__", "__gt__", "__le__", "__ge__", "__eq__", "__ne__")
#: types whose comparisons run no Python code
_PLAIN = frozenset({float, int, bool, complex, str, bytes, type(None), np.ndarray, np.float64, np.float32,
                    np.int64, np.int32, np.bool_, np.complex128, range, type})
#: ``functools.total_ordering``'s methods: they call the class's own dunders, which are checked
_TOTAL_ORDERING = frozenset(getattr(functools, name).__code__ for name in dir(functools)
                            if name.startswith(("_gt_from", "_lt_from", "_ge_from", "_le_from")))
#: objects looked at before giving up and calling the comparisons through (conservative)
_LOOK_LIMIT = 200_000


def dunder_may_change_data(function: Any) -> bool:
    if type(function) is not types.FunctionType or function.__code__ in _TOTAL_ORDERING:
        return False
    return calls_through(function)


def _python_dunders(tp: type) -> list:
    """The comparison dunders of ``tp`` written in Python (none for builtin and C types)."""
    found = []
    for name in _DUNDERS:
        function = getattr(tp, name, None)
        if type(function) is types.FunctionType:
            found.append(function)
    return found


def _class_compares_through(tp: type, memo: dict) -> bool | None:
    """True when a comparison dunder of ``tp`` may change data, False when it has Python
    dunders that are pure (they may compare the object's attributes), None when it has none."""
    if tp not in memo:
        dunders = _python_dunders(tp)
        memo[tp] = None if not dunders else any(dunder_may_change_data(f) for f in dunders)
    return memo[tp]


def _attributes(value: Any) -> list:
    found = list(getattr(value, "__dict__", {}).values())
    for klass in type(value).__mro__:
        for name in klass.__dict__.get("__slots__", ()):
            if isinstance(name, str) and hasattr(value, name):
                found.append(getattr(value, name))
    return found


def compares_through(values: Any) -> bool:
    """Whether comparing ``values`` (and what their comparisons compare) may run Python code
    that changes data: the comparisons must then be made by differentiated code."""
    if _PLAIN.issuperset(map(type, values)):  # (the common case first: numbers, arrays, strings)
        return False
    stack, seen, memo = list(values), set(), {}
    looked = 0
    while stack:
        value = stack.pop()
        tp = type(value)
        if tp in _PLAIN or id(value) in seen or isinstance(value, np.generic):
            continue
        seen.add(id(value))
        looked += 1
        if looked > _LOOK_LIMIT:
            return True
        if tp is tuple or tp is list:
            stack.extend(value)
        elif tp is dict:
            stack.extend(value.values())
        elif tp is CmpKey:
            if calls_through(value.cmp):
                return True
            stack.append(value.obj)
        else:
            through = _class_compares_through(tp, memo)
            if through:
                return True
            if through is not None:  # pure dunders: they may compare the attributes
                stack.extend(_attributes(value))
    return False


# --------------------------------------------------------------------------------------------
# CPython's sort, one comparison at a time
# --------------------------------------------------------------------------------------------


class _Abandoned(Exception):
    """The differentiated code stopped asking (a comparison raised): the sort thread ends."""


class _Position:
    """Stands for the value at position ``i`` in the sort thread: comparing two asks the
    differentiated code for the answer."""

    __slots__ = ("i", "questions", "answers")

    def __init__(self, i: int, questions: queue.SimpleQueue, answers: queue.SimpleQueue) -> None:
        self.i, self.questions, self.answers = i, questions, answers

    def __lt__(self, other: _Position) -> Any:
        self.questions.put(("compare", self.i, other.i))
        answer = self.answers.get()
        if answer is _Abandoned:
            raise _Abandoned
        return answer


def _sort_positions(n: int, reverse: bool, questions: queue.SimpleQueue, answers: queue.SimpleQueue) -> None:
    try:
        order = list(range(n))
        order.sort(key=lambda i: _Position(i, questions, answers), reverse=reverse)
        questions.put(("done", order))
    except _Abandoned:
        pass
    except BaseException as error:  # noqa: BLE001 - an answer's truth value raised: the caller's
        questions.put(("raised", error))


def _threaded_sort(n: int, reverse: bool) -> Generator:
    """CPython's sort itself, in a helper thread on stand-ins: yields each pair it compares,
    receives the answer, returns the order."""
    questions: queue.SimpleQueue = queue.SimpleQueue()
    answers: queue.SimpleQueue = queue.SimpleQueue()
    threading.Thread(target=_sort_positions, args=(n, reverse, questions, answers), name="yuebing sort plan",
                     daemon=True).start()
    try:
        while True:
            message = questions.get()
            if message[0] == "done":
                return message[1]
            if message[0] == "raised":
                raise message[1]
            answers.put((yield message[1], message[2]))
    except GeneratorExit:  # the differentiated code stopped asking (a comparison raised): the thread ends
        answers.put(_Abandoned)
        raise


def _binary_insertion_sort(n: int, reverse: bool) -> Generator:
    """CPython's sort of fewer than 64 values, written out (``listobject.c``: ``count_run``,
    then ``binarysort`` of the rest): the same comparisons in the same order, without a thread."""
    a = list(range(n))
    if reverse:  # (as CPython: reversed first and last, so equal values keep their order)
        a.reverse()
    run = 1
    if n > 1:
        run, descending = 2, (yield a[1], a[0])
        while run < n and bool((yield a[run], a[run - 1])) == bool(descending):
            run += 1
        if descending:
            a[:run] = a[run - 1::-1]
    for start in range(run, n):
        pivot, low, high = a[start], 0, start
        while low < high:
            middle = (low + high) >> 1
            if (yield pivot, a[middle]):
                high = middle
            else:
                low = middle + 1
        a[low + 1:start + 1] = a[low:start]
        a[low] = pivot
    if reverse:
        a.reverse()
    return a


def _comparisons_of(steps: Generator, values: list) -> tuple:
    """The pairs ``steps`` compares on ``values``, and its order."""
    pairs, answer = [], None
    try:
        while True:
            pair = steps.send(answer) if pairs else next(steps)
            pairs.append(pair)
            answer = values[pair[0]] < values[pair[1]]
    except StopIteration as stop:
        return pairs, stop.value


@functools.lru_cache(maxsize=1)
def _written_out_sort_is_cpythons() -> bool:
    """Whether ``_binary_insertion_sort`` makes this Python's comparisons (checked once, on
    runs, ties and shuffles; else every sort takes the thread)."""
    rng = np.random.default_rng(0)
    for n in (2, 3, 4, 5, 8, 13, 31, 63):
        for values in (list(rng.integers(0, n // 2 + 1, n)), list(range(n)), list(range(n, 0, -1)), [1] * n,
                       [3, 2, 1] + list(range(n - 3)), list(rng.permutation(n))):
            for reverse in (False, True):
                asked = []
                order = sorted(range(n), key=lambda i: _Recorded(i, values, asked), reverse=reverse)
                if _comparisons_of(_binary_insertion_sort(n, reverse), values) != (asked, order):
                    return False
    return True


class _Recorded:
    __slots__ = ("i", "values", "asked")

    def __init__(self, i: int, values: list, asked: list) -> None:
        self.i, self.values, self.asked = i, values, asked

    def __lt__(self, other: _Recorded) -> bool:
        self.asked.append((self.i, other.i))
        return self.values[self.i] < self.values[other.i]


class ComparisonPlan:
    """The comparisons ``sorted`` makes on ``n`` values, asked one at a time, and at the end its
    order: written out below 64 values, CPython's own sort in a thread beyond."""

    def __init__(self, n: int, reverse: bool) -> None:
        self.order: list | None = list(range(n)) if n < 2 else None
        small = n < 64 and _written_out_sort_is_cpythons()
        self._steps = _binary_insertion_sort(n, reverse) if small else _threaded_sort(n, reverse)
        self._started = False

    def next_pair(self, answer: Any) -> tuple | None:
        if self.order is not None:
            return None
        try:
            pair = self._steps.send(answer) if self._started else next(self._steps)
        except StopIteration as stop:
            self.order = stop.value
            return None
        self._started = True
        return pair


def comparison_plan(n: int, reverse: Any) -> ComparisonPlan:
    return ComparisonPlan(n, bool(reverse))


def next_comparison(plan: ComparisonPlan, answer: Any) -> tuple | None:
    """The positions ``(i, j)`` of the next ``values[i] < values[j]`` the sort asks for (after
    ``answer``, that of the previous one), or None when it is done."""
    return plan.next_pair(answer)


def planned_order(plan: ComparisonPlan) -> list:
    return plan.order


# --------------------------------------------------------------------------------------------
# Comparisons written out (differentiated like user code)
# --------------------------------------------------------------------------------------------


def sequence_pair(a: Any, b: Any) -> bool:
    return type(a) is type(b) and (type(a) is tuple or type(a) is list)


def holds_sequences(values: list) -> bool:
    """Whether some of ``values`` are tuples or lists (compared element by element)."""
    return any(type(v) is tuple or type(v) is list for v in values)


def same(a, b):
    """``a == b`` as containers and ``groupby`` ask it (``is`` first: no dunder for one object)."""
    return a is b or equal(a, b)


def equal(a, b):
    """``a == b``, element by element for tuples and lists."""
    if sequence_pair(a, b):
        if len(a) != len(b):
            return False
        for x, y in zip(a, b):
            if not same(x, y):
                return False
        return True
    return a == b


def less(a, b):
    """``a < b``, for tuples and lists: the first elements that differ decide."""
    if sequence_pair(a, b):
        for x, y in zip(a, b):
            if not same(x, y):
                return less(x, y)
        return len(a) < len(b)
    return a < b


def greater(a, b):
    """``a > b`` (``max``'s comparison), for tuples and lists as ``less``."""
    if sequence_pair(a, b):
        for x, y in zip(a, b):
            if not same(x, y):
                return greater(x, y)
        return len(a) > len(b)
    return a > b


# --------------------------------------------------------------------------------------------
# functools.cmp_to_key as Python code
# --------------------------------------------------------------------------------------------


class CmpKey:
    """What ``functools.cmp_to_key(cmp)(obj)`` returns: compared by calling ``cmp``."""

    __slots__ = ("obj", "cmp")
    __hash__ = None  # type: ignore[assignment]

    def __init__(self, obj, cmp):
        self.obj = obj
        self.cmp = cmp

    def __lt__(self, other):
        return self.cmp(self.obj, other.obj) < 0

    def __gt__(self, other):
        return self.cmp(self.obj, other.obj) > 0

    def __eq__(self, other):
        return self.cmp(self.obj, other.obj) == 0

    def __le__(self, other):
        return self.cmp(self.obj, other.obj) <= 0

    def __ge__(self, other):
        return self.cmp(self.obj, other.obj) >= 0


class CmpToKey:
    """``functools.cmp_to_key(cmp)``: the key making ``CmpKey`` objects."""

    __slots__ = ("cmp",)

    def __init__(self, cmp):
        self.cmp = cmp

    def __call__(self, obj):
        return CmpKey(obj, self.cmp)


def cmp_to_key(mycmp):
    """``functools.cmp_to_key``, differentiated like user code (``functools.py``'s own)."""
    return CmpToKey(mycmp)


_C_KEY_MAKER = type(functools.cmp_to_key(lambda a, b: 0))


def python_cmp_key(key: Any) -> Any:
    """A C ``cmp_to_key`` key made outside the differentiated function, as ``CmpToKey`` of the
    same ``cmp`` (which the C object holds but does not expose: its referents), when ``cmp`` may
    change data; any other key as it is."""
    if type(key) is not _C_KEY_MAKER:
        return key
    referents = [r for r in gc.get_referents(key) if callable(r) and not isinstance(r, type)]
    if len(referents) != 1 or not calls_through(referents[0]):
        return key
    return CmpToKey(referents[0])


def get_attributes(names, obj):
    """``operator.attrgetter(*names)(obj)``."""
    found = []
    for name in names:
        value = obj
        for part in name.split("."):
            value = getattr(value, part)
        found.append(value)
    return found[0] if len(found) == 1 else tuple(found)


def get_items(keys, obj):
    """``operator.itemgetter(*keys)(obj)``."""
    return obj[keys[0]] if len(keys) == 1 else tuple(obj[k] for k in keys)


_GETTERS = {operator.attrgetter: get_attributes, operator.itemgetter: get_items}


def is_builtin_key(key: Any) -> bool:
    return type(key) is _C_KEY_MAKER or type(key) in _GETTERS


def python_key(key: Any) -> Any:
    """A C key the definitions call (a ``cmp_to_key`` key, ``attrgetter``, ``itemgetter``) as
    the Python code that does the same, which every mode differentiates (these hold no data:
    nothing of the key itself has a derivative)."""
    if type(key) is _C_KEY_MAKER:
        referents = [r for r in gc.get_referents(key) if callable(r) and not isinstance(r, type)]
        return CmpToKey(referents[0]) if len(referents) == 1 else key
    getter = _GETTERS.get(type(key))
    return key if getter is None else functools.partial(getter, key.__reduce__()[1])


WRAPPING_KEYS[CmpToKey] = lambda key: key.cmp


# --------------------------------------------------------------------------------------------
# The decision of the rules
# --------------------------------------------------------------------------------------------

#: iterables that listing does not consume
_SEQUENCES = (list, tuple, range, np.ndarray, str, set, frozenset, dict, type({}.keys()), type({}.values()),
              type({}.items()))


def goes_through(items: Any, key: Any) -> bool:
    """Whether a call ordering or choosing among ``items`` (primals: the iterable, or the
    arguments of ``max(a, b)``) with ``key`` must run its differentiated definition: the key may
    change data, or comparing the items (a pure key's values) may. An iterable that listing
    would consume (a generator) goes through, since it cannot be looked at first."""
    if key is not None:
        key = python_cmp_key(key)
        if calls_through(key):
            return True
    if not isinstance(items, _SEQUENCES):
        return True
    if key is None and type(items) is np.ndarray and items.dtype.kind != "O":
        return False  # (numbers: not looked at one by one)
    values = items if key is None else [key(item) for item in items]  # (a pure key: no side effect)
    return compares_through(values)


def refuse_comparing_through(values: list, name: str) -> None:
    """Refuse ``name`` comparing ``values`` whose dunders may change data, where the comparisons
    it makes depend on how its result is consumed (``groupby``) or follow a heap's (``heapq``)."""
    if compares_through(values):
        raise RuleArgumentError(
            f"{name} compares objects whose comparison dunders (__eq__, __lt__...) change data, and yuebing "
            f"cannot make the same comparisons {name} makes; give it a key= returning numbers or strings "
            f"(key=lambda o: o.value), or make the dunders write nothing")


def selection_goes_through(args: list, key: Any) -> bool:
    """``goes_through`` for the primal arguments of ``sorted(items)``, ``max(items)`` or
    ``max(a, b, ...)``."""
    return goes_through(args[0] if len(args) == 1 else args, key)
