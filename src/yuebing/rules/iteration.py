"""Iteration helpers of the standard library, differentiated as Python code (``defined_as``):
``functools.reduce``, ``itertools`` (``accumulate``, ``chain``, ``product``, ``combinations``
(also ``with_replacement``),
``permutations``, ``pairwise``, ``starmap``, ``islice``, ``zip_longest``, ``repeat``, ``count``,
``cycle``), ``iter``/``next``, ``reversed`` (lazy over a list or array), the lazy
``map``/``filter``/``zip``/``enumerate`` (``lazy_definition``), and loops over instances of user
classes with ``__iter__``/``__next__`` (``iterate_to_list``, called by the loops' ``as_sequence``
rules).

``product``, the ``combinations`` and ``permutations`` copy their inputs when they are made, as
CPython's do: they are evaluated eagerly, into the list of what they would yield. The others are
CPython's lazy iterators, written in Python (``ir/lazy_iterators.py``, ``ir/lazy_itertools.py``):
``chain``, ``accumulate``, ``pairwise``, ``starmap``, ``zip_longest``, ``islice``, ``compress``,
``takewhile``, ``dropwhile``, ``filterfalse``, the endless
``count``, ``cycle`` and ``repeat`` without ``times``, and ``map``, ``filter``, ``zip``,
``enumerate`` where their iterator is kept (``frontend/kept_iterators.py``), given an iterator,
or (``map``, ``filter``) given a function that may change data: an item is read when it is taken.
``iter(x)`` is a ``SequenceIterator``
(``ir/generators.py``): a position in ``x`` that ``next``, ``for`` loops, ``zip`` and ``islice``
advance in turn, as they advance Python's iterator. Values, order and derivatives are those of
the plain call. Index patterns (which elements go together) are computed by ``itertools``
itself on ``range``s: integers, with no derivative.
"""
from __future__ import annotations

import collections
import functools
import itertools
import linecache
import math
import types
from typing import Any, Callable

import numpy as np

from ..ir.dict_views import mapping_kind
from ..ir.generators import STEPS_BY_ADVANCE, Generator, drain, is_lazy, reversed_mapping
from ..ir.lazy_iterators import (
    Count, Cycle, Islice, LazyReversed, Repeat, iterator_of, lazy_enumerate as _lazy_enumerate,
    lazy_filter as _lazy_filter, lazy_map as _lazy_map, lazy_zip as _lazy_zip, listed_reversed, sequences_only,
)
from ..ir.lazy_itertools import (
    lazy_accumulate, lazy_chain, lazy_chain_from_iterable, lazy_compress, lazy_dropwhile, lazy_filterfalse,
    lazy_pairwise, lazy_starmap, lazy_takewhile, lazy_zip_longest,
)
from ..ir.primitives import EAGER_ITEMS_LIMIT, python_iterable
from ..tangents import register_nondifferentiable_type
from ._pure_code import _pure, calls_through
from .comparing_calls import truths_may_change_data
from .cases import Case, randn
from .declare import nondifferentiable
from .second_order import defined_as


def _combination_indices(n: int, r: int) -> list:
    return list(itertools.combinations(range(n), r))


def _repeated_combination_indices(n: int, r: int) -> list:
    return list(itertools.combinations_with_replacement(range(n), r))


def _permutation_indices(n: int, r: Any) -> list:
    return list(itertools.permutations(range(n), r))


def _product_indices(sizes: list) -> list:
    return list(itertools.product(*[range(k) for k in sizes]))


nondifferentiable(_combination_indices, _repeated_combination_indices, _permutation_indices, _product_indices)


def iterate_to_list(iterable: Any) -> list:
    """``list(iterable)`` for a user class's iterator protocol, written out so that its
    ``__iter__`` and ``__next__`` are differentiated as user code (an ``iter(...)`` of a sequence
    inside them is a ``SequenceIterator``, listed without stepping it)."""
    if type(iterable) is Generator:  # a generator made lazy (frontend/generators.py)
        return drain(iterable)
    iterator = type(iterable).__iter__(iterable)
    if type(iterator) is list:
        return iterator
    if getattr(type(iterator), STEPS_BY_ADVANCE, False):  # iter(x) of a sequence, a lazy map...: what is left
        return iterator.rest()
    items = []
    advance = type(iterator).__next__
    while True:
        try:
            item = advance(iterator)
        except StopIteration:
            break
        items.append(item)
        if len(items) > EAGER_ITEMS_LIMIT:
            raise RuntimeError(_endless(iterable, type(iterator).__next__))
    return items


#: builtins that walk an iterable argument; given an instance of a user class whose iterator is
#: Python code, they walk it through ``iterate_to_list`` (``listing_user_iterators``)
_CONSUMERS = {id(f): f for f in (sum, list, tuple, min, max, sorted, enumerate, zip, any, all, set, frozenset,
                                 dict, map, filter, math.fsum, math.prod)}
#: methods that walk an iterable argument, bound to their container (``ys.extend(m)``): the same
_CONSUMING_METHODS = frozenset({
    (list, "extend"), (dict, "update"), (set, "update"), (set, "union"), (set, "intersection"),
    (set, "difference"), (set, "symmetric_difference"), (set, "intersection_update"), (set, "difference_update"),
    (set, "symmetric_difference_update"), (frozenset, "union"), (frozenset, "intersection"),
    (frozenset, "difference"), (collections.deque, "extend"), (collections.deque, "extendleft")})
_LISTINGS: dict = {}


def is_consumer(fn: Any) -> bool:
    return _CONSUMERS.get(id(fn)) is fn or consuming_method(fn)


def consuming_method(fn: Any) -> bool:
    """``ys.extend``, ``d.update``... bound to a list, dict, set or deque (of a subclass too)."""
    if type(fn) is not types.BuiltinMethodType:
        return False
    owner = getattr(fn, "__self__", None)
    return any((tp, fn.__name__) in _CONSUMING_METHODS for tp in type(owner).__mro__)


def listing_user_iterators(fn: Any, args: list) -> Callable | None:
    """For ``sum(it)`` (or another consumer of iterables, ``ys.extend(it)`` too) given an instance
    of a user class with ``__iter__``/``__next__`` (a lazy generator's or lazy ``map``'s too): a
    Python function the modes derive, which lists those arguments by their own ``__next__``
    (differentiated, bounded) and calls ``fn`` on the lists. Without it the rule would list the
    object natively: without derivatives, and forever for an endless one. None for every other call."""
    lazy = lazy_definition(fn, args)
    if lazy is not None:
        return lazy
    positions = tuple(i for i, a in enumerate(args) if python_iterable(a))
    if not positions:
        return None
    if _CONSUMERS.get(id(fn)) is not fn:
        return call_listed  # a bound method (ys.extend): passed to it, with its owner's derivatives
    key = (id(fn), positions)
    found = _LISTINGS.get(key)
    if found is None:
        found = _LISTINGS[key] = _listed_call(fn, positions)
    return found


def call_listed(method: Callable, *args: Any, **kwargs: Any) -> Any:
    """``method(*args, **kwargs)`` with each user or lazy iterator argument listed first
    (``iterate_to_list``): for a consumer bound to its container, ``ys.extend(m)``, which the
    call site passes in as the first argument (``listing_user_iterators``)."""
    return method(*[iterate_to_list(a) if python_iterable(a) else a for a in args], **kwargs)


def _listed_call(fn: Callable, positions: tuple) -> Callable:
    def call(*args, **kwargs):
        args = list(args)
        for i in positions:
            args[i] = iterate_to_list(args[i])
        return fn(*args, **kwargs)

    return call


def lazy_definition(fn: Any, args: list) -> Callable | None:
    """For ``map``, ``filter``, ``zip`` or ``enumerate`` whose laziness can be seen: the Python
    definition that makes the lazy iterator of ``ir/lazy_iterators.py`` (differentiated as user
    code, an item made each time one is asked for). That is when an argument is an iterator (a
    lazy generator, ``iter(x)``, a user class's, another lazy ``map``...), which CPython advances
    only as far as the items taken, or when ``map``'s function or ``filter``'s predicate is Python
    code that may change data (``calls_through``), which CPython calls only on the items taken, or
    a pure one raises on some item (``_raises_on_an_item``), which CPython raises only if it is
    taken. None otherwise: a pure function over lists or arrays is called on every item at once
    by the rule, whose result nobody can tell apart (unless a list is changed before the map is
    consumed: not followed, docs/limitations.md)."""
    if fn is map:
        if len(args) < 2:
            return None  # (map's own TypeError)
        if calls_through(args[0]) or any(python_iterable(a) for a in args[1:]) or _raises_on_an_item(args[0], args[1:]):
            return _lazy_map
        return None
    if fn is filter:
        if len(args) != 2:
            return None
        predicate, iterable = args
        changes_data = calls_through(predicate) or predicate is None and truths_may_change_data(iterable)
        return _lazy_filter if changes_data or python_iterable(iterable) else None
    if fn is zip or fn is enumerate:
        if any(python_iterable(a) for a in args):
            return _lazy_zip if fn is zip else _lazy_enumerate
    return None


def _raises_on_an_item(function: Any, iterables: list) -> bool:
    """Whether ``map``'s function, pure (Python code writing and calling nothing, or a builtin such
    as ``math.log``: ``_pure_code.py``), raises on one of the items: CPython raises only when that
    item is taken (``next(map(math.log, [1.0, -1.0]))`` gives 0.0), so the map is then the lazy
    one. Tried on the primals, without derivatives; any other function is not called here."""
    if not (type(function) is types.FunctionType or _pure(function)):
        return False
    try:
        for items in zip(*iterables):
            function(*items)
    except Exception:  # noqa: BLE001 - whatever it raises, CPython raises it only at that item
        return True
    return False


def _count(start: Any = 0, step: Any = 1) -> Count:
    return Count(start, step)


def _cycle(iterable: Any) -> Cycle:
    return Cycle(iterator_of(iterable))


def _endless(iterable: Any, advance: Callable) -> str:
    """The error of an iterator evaluated eagerly that did not end: its class, the user's line."""
    code = getattr(advance, "__code__", None)
    where = "" if code is None else (f'  File "{code.co_filename}", line {code.co_firstlineno}\n'
                                     f"    {linecache.getline(code.co_filename, code.co_firstlineno).strip()}\n")
    return (f"yuebing stopped iterating over a {type(iterable).__qualname__} after {EAGER_ITEMS_LIMIT} items: "
            "under differentiation a loop over it, list() or sum() of it is evaluated eagerly into a list, and "
            f"its iterator did not end.\n{where}"
            "What to do: make its __next__ raise StopIteration after the items you need.")


def _reduce(function: Callable, iterable: Any, *initial: Any) -> Any:
    items = list(iterable)
    if initial:
        total, start = initial[0], 0
    elif items:
        total, start = items[0], 1
    else:
        raise TypeError("reduce() of empty iterable with no initial value")
    for i in range(start, len(items)):
        total = function(total, items[i])
    return total


def _product(*iterables: Any, repeat: int = 1) -> list:
    pools = [list(p) for p in iterables] * repeat
    return [tuple(pools[k][i] for k, i in enumerate(index)) for index in _product_indices([len(p) for p in pools])]


def _combinations(iterable: Any, r: int) -> list:
    pool = list(iterable)
    return [tuple(pool[i] for i in index) for index in _combination_indices(len(pool), r)]


def _combinations_with_replacement(iterable: Any, r: int) -> list:
    pool = list(iterable)
    return [tuple(pool[i] for i in index) for index in _repeated_combination_indices(len(pool), r)]


def _permutations(iterable: Any, r: Any = None) -> list:
    pool = list(iterable)
    return [tuple(pool[i] for i in index) for index in _permutation_indices(len(pool), r)]


def _check_islice_bounds(start: Any, stop: Any, step: Any) -> None:
    itertools.islice((), start, stop, step)  # Python's errors on bad bounds


nondifferentiable(_check_islice_bounds)


def _islice(iterable: Any, *bounds: Any) -> Any:
    """``islice``: an ``Islice`` that steps its iterable's iterator (a list's, a lazy generator,
    ``iter(x)``, a lazy ``map``, ``count()``, a user class's) only as far as the items taken (an
    endless one can be sliced, the rest stays for later; a list changed meanwhile is read as it
    is when an item is taken)."""
    bounds = slice(*bounds)
    _check_islice_bounds(bounds.start, bounds.stop, bounds.step)
    return Islice(iterator_of(iterable), bounds.start or 0, bounds.stop, bounds.step or 1)


def _repeat(value: Any, times: Any = None) -> Any:
    if times is None:
        return Repeat(value)
    return [value for _ in range(times)]


def _iter(iterable: Any, *sentinel: Any) -> Any:
    """``iter(x)``: an iterator as Python's, shared by everything that advances it (a ``for`` loop
    and a ``next`` in its body, ``zip(it, it)``, a second loop resuming where a ``break`` left
    the first): a ``SequenceIterator`` over ``x`` (``ir/generators.py``), which every consumer
    steps one item at a time. An iterator (a generator, a user class's ``__iter__``) is asked
    for its own, as Python asks it; ``iter(f, sentinel)`` calls ``f`` until it returns ``sentinel``."""
    if sentinel:
        return _call_until(iterable, sentinel[0])
    return iterator_of(iterable)


def _call_until(function: Callable, sentinel: Any) -> Any:
    while True:
        value = function()
        if value == sentinel:
            return
        yield value


def _has_python_next(iterator: Any) -> bool:
    return isinstance(getattr(type(iterator), "__next__", None), types.FunctionType)


def _has_python_reversed(seq: Any) -> bool:
    return isinstance(getattr(type(seq), "__reversed__", None), types.FunctionType)


def _read_lazily(seq: Any) -> bool:
    """Whether ``reversed(seq)`` could be told from the list of its items: a list or an array may be
    written or shrink before the iterator reaches an item (a tuple, string or range cannot)."""
    return isinstance(seq, (list, np.ndarray))


nondifferentiable(_has_python_next, _has_python_reversed, _read_lazily, python_iterable, is_lazy, sequences_only)


def _reversed(seq: Any) -> Any:
    """``reversed(seq)``: a user class's ``__reversed__`` (Python code, differentiated, as a
    ``TrackedDeque``'s), CPython's lazy iterator over a list or array (``LazyReversed``: an item is
    read when it is asked for) or over a dict or a view of one (``reversed_mapping``), else the
    list of the items, which nobody can tell from it."""
    if _has_python_reversed(seq):
        return type(seq).__reversed__(seq)
    if mapping_kind(seq) is not None:  # a dict or a view of one: read live
        return reversed_mapping(seq)
    if _read_lazily(seq):
        return LazyReversed(seq)
    return listed_reversed(seq)


def _native_next(iterator: Any, *default: Any) -> Any:
    """One item of an ``itertools.product`` made by code run without derivatives (``np.ndindex``
    holds one): tuples of its integers, stepped by CPython."""
    return next(iterator, *default)


nondifferentiable(_native_next)
register_nondifferentiable_type(itertools.product)


def _next(iterator: Any, *default: Any) -> Any:
    if type(iterator) is itertools.product:
        return _native_next(iterator, *default)
    if getattr(type(iterator), STEPS_BY_ADVANCE, False):  # iter(x), a lazy map...: stepped without StopIteration
        more, item = iterator.advance()
        if more:
            return item
        if default:
            return default[0]
        raise StopIteration
    if type(iterator) is not list:
        if _has_python_next(iterator):  # a user iterator, or a generator made lazy (ir/generators.py)
            if not default:
                return type(iterator).__next__(iterator)
            try:
                return type(iterator).__next__(iterator)
            except StopIteration:
                return default[0]
        raise TypeError(f"next(): yuebing iterates sequences under differentiation, not {type(iterator).__name__} "
                        "objects; build the iterator from a list, tuple, array or range")
    if iterator:
        return iterator.pop(0)
    if default:
        return default[0]
    raise StopIteration


for _target, _definition in [
    (functools.reduce, _reduce), (itertools.accumulate, lazy_accumulate), (itertools.chain, lazy_chain),
    (itertools.product, _product), (itertools.combinations, _combinations),
    (itertools.combinations_with_replacement, _combinations_with_replacement),
    (itertools.permutations, _permutations), (itertools.pairwise, lazy_pairwise), (itertools.starmap, lazy_starmap),
    (itertools.islice, _islice), (itertools.zip_longest, lazy_zip_longest), (itertools.repeat, _repeat),
    (itertools.count, _count), (itertools.cycle, _cycle), (itertools.compress, lazy_compress),
    (itertools.takewhile, lazy_takewhile), (itertools.dropwhile, lazy_dropwhile),
    (itertools.filterfalse, lazy_filterfalse),
    (iter, _iter), (next, _next), (reversed, _reversed),
]:
    defined_as(_target, _definition)


def _chain_from_iterable(cls: type, iterables: Any) -> Any:
    """``itertools.chain.from_iterable(iterables)`` (bound to the class)."""
    return lazy_chain_from_iterable(iterables)


defined_as((itertools.chain, "from_iterable"), _chain_from_iterable)


def _uses_itertools(x: float) -> float:
    pairs = sum(a * b for a, b in itertools.product([x, 2.0], [x, 0.5]))
    runs = sum(itertools.accumulate([x, x * x, 1.0]))
    it = iter([x, 3.0 * x])
    first = next(it)
    return pairs + runs + first * next(it) + functools.reduce(lambda a, b: a * b, [x, x, 2.0])


CASES = [
    Case(_uses_itertools, 0.7, name="itertools, iter/next and reduce, as list code"),
    Case(_uses_itertools, randn(), name="itertools, iter/next and reduce (random point)"),
]
