"""Lazy generators consumed whole by a builtin, in plain forward programs (third derivatives
through ``yb.grad``).

A generator function called in the function under ``yb.grad`` (a generator method, whose
consumer its own lowering cannot see) gives a lazy generator (``ir.generators.Generator``) in the
plain program (``plain_forward.py``). Iterating it with ``for`` or ``next`` is followed item by
item. A builtin that reads its argument to the end (``sum``, ``list``, ``sorted``, ``min``...)
is given the list of its items instead, drained at that point of the program by
``rules.differentiated.drained`` (a loop, followed like user code), where the builtin itself
would have drained it; then the builtin's own rule runs on the list. A builtin that may stop
early (``any``, ``zip``, ``itertools.islice``) is left as it is: draining would run the
generator further than Python does.

``map``, ``filter``, ``zip`` and ``enumerate`` whose laziness can be seen (``lazy_call``: an
argument is an iterator, or the function called may change data) are followed through the
definition every other mode runs (``rules.iteration.lazy_definition``), which makes the lazy
iterator of ``ir/lazy_iterators.py``: its items are made as they are taken, as in CPython.
"""
from __future__ import annotations

import builtins
import math
import operator
from typing import Any

import numpy as np

from ..rules.differentiated import drained
from ..rules.iteration import consuming_method, lazy_definition
from ..tangents import NoTangent
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function, _python_function
from .plain_forward import TANGENT_KEYWORD, jvp_call

#: builtins that read an iterable argument to its end
DRAINING = frozenset({builtins.sum, builtins.list, builtins.tuple, builtins.sorted, builtins.min, builtins.max,
                      builtins.set, builtins.frozenset, math.fsum, np.array, np.asarray})

_GETITEM = _function(operator.getitem)


def _is_lazy_generator(value: Any) -> bool:
    return getattr(type(value), "__yuebing_lazy_generator__", False)


def drained_call(call: _Call) -> Any:
    """A draining builtin given a lazy generator: ``_jvp(f, f_t, drained(gen), ...)``, the
    generator's items listed first; None for other calls."""
    try:
        if call.f not in DRAINING and not consuming_method(call.f):  # (ys.extend(it), d.update(it)...)
            return None
    except TypeError:  # an unhashable callable
        return None
    lazy = [k for k, (a, _) in enumerate(call.arg_slots) if _is_lazy_generator(call.value(a))]
    if not lazy:
        return None
    c = call.composition
    slots = [0, 1]
    for k, pair in enumerate(call.arg_slots):
        slots += _drain(call, pair) if k in lazy else list(pair)
    given = {}
    for name, pair in call.keyword_slots.items():
        given[name], given[TANGENT_KEYWORD + name] = pair
    return c.call(_function(jvp_call), slots, given)


def _drain(call: _Call, pair: tuple) -> list:
    """The slots of ``(items, items' tangent)`` of the generator in ``pair``."""
    c = call.composition
    items = c.call(_function(jvp_call), [c.add(_constant(drained)), c.add(_constant(NoTangent)), *pair])
    return [c.call(_GETITEM, [items, c.add(_constant(k))]) for k in (0, 1)]


_LAZY_BUILTINS = (builtins.map, builtins.filter, builtins.zip, builtins.enumerate)


def lazy_call(call: _Call) -> Any:
    """``map``/``filter``/``zip``/``enumerate`` made lazy in every other mode: the definition
    that makes its lazy iterator, followed like user code (the slot of its pair); None for
    other calls."""
    if not any(call.f is f for f in _LAZY_BUILTINS):
        return None
    definition = lazy_definition(call.f, [call.value(a) for a, _ in call.arg_slots])
    if definition is None:
        return None
    call.function_slot = call.composition.add(_function(definition))
    return _python_function(call, definition)


FOLLOWED_CALLS.insert(0, drained_call)  # before plain_keys, which refuses sorted/min/max of a generator
FOLLOWED_CALLS.insert(0, lazy_call)

__all__ = ["DRAINING", "drained_call", "lazy_call"]
