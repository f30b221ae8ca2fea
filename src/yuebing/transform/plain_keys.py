"""``sorted``, ``max``, ``min`` and ``list.sort`` with a ``key=`` in plain forward programs (third
derivatives through ``yb.grad``).

The key only decides an order (or which item wins): the result is items of the input, and its
tangent the same items of the input's tangent, picked by the order the keys give, which does
not change under a small perturbation (ties are kinks, as everywhere). So the pair ``(value,
tangent)`` is a short Python definition that calls the key on the items and picks values and
tangents by the order; second order differentiates it like user code. The key runs under second
order too, as the user's code calls it, so what it does besides (a counter, a cache) keeps its
derivatives; a key made inside the function under ``yb.grad`` (a closure over its variables)
runs through its own plain program (``plain_closures.py``), so that what it writes into the
function's variables keeps their tangents too.

The definitions are compiled from source here (yuebing's own files are not differentiated as user
code) under a file name of their own, so error messages show their lines.
"""
from __future__ import annotations

import builtins
import types
from typing import Any

from ..rules._comparisons import compares_through
from ..rules._pure_code import calls_through
from ..rules.core import describe_callable
from ..tangents import NoTangent
from . import plain_closures
from .plain_forward import _refusal
from .plain_objects import _owner
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function, _run_definition

_SOURCE = '''\
def keys_of(values, tangents, key, key_t, through_program):
    if through_program:  # a closure over the function's variables: its plain program keeps them
        return [key_t(key, key_t, value, tangent)[0] for value, tangent in zip(values, tangents)]
    return [key(value) for value in values]


def sorted_by_key(items, items_t, key, key_t, through_program, reverse):
    values = list(items)
    tangents = [NoTangent] * len(values) if items_t is NoTangent else list(items_t)
    keys = keys_of(values, tangents, key, key_t, through_program)
    order = sorted(range(len(values)), key=keys.__getitem__, reverse=reverse)
    return [values[k] for k in order], [tangents[k] for k in order]


def chosen_by_key(items, items_t, key, key_t, through_program, largest):
    values = list(items)
    tangents = [NoTangent] * len(values) if items_t is NoTangent else list(items_t)
    keys = keys_of(values, tangents, key, key_t, through_program)
    best = 0
    for k in range(1, len(values)):
        if (keys[k] > keys[best]) if largest else (keys[k] < keys[best]):
            best = k
    return values[best], tangents[best]


def identity(value):
    return value
'''

_FILENAME = "<third order key functions>"


_DEFINED = plain_closures.compiled_definitions(_SOURCE, _FILENAME, {"__name__": __name__, "NoTangent": NoTangent})
SORTED_BY_KEY: types.FunctionType = _DEFINED["sorted_by_key"]
CHOSEN_BY_KEY: types.FunctionType = _DEFINED["chosen_by_key"]
_IDENTITY: types.FunctionType = _DEFINED["identity"]  # (the key of a sort without one)


def keyed_call(call: _Call) -> Any:
    """The pair slot of ``sorted``/``max``/``min`` called with a key, or of ``lst.sort(...)``;
    None for other calls."""
    f = call.f
    key = call.keyword_slots.get("key")
    if f is builtins.sorted and key is not None and call.value(key[0]) is not None:
        return _sorted(call)
    if (f is builtins.max or f is builtins.min) and key is not None and call.value(key[0]) is not None:
        return _chosen(call, f is builtins.max)
    if isinstance(f, types.BuiltinMethodType) and type(f.__self__) is list and f.__name__ == "sort":
        return _sort_in_place(call)
    return None


def _keywords(call: _Call, allowed: set, what: str) -> dict:
    unknown = set(call.keyword_slots) - allowed
    if unknown:
        raise _refusal(f"{what} with {', '.join(sorted(unknown))}=", "pass only key= and reverse=")
    return {k: call.value(a) for k, (a, _) in call.keyword_slots.items()}


def _items(call: _Call, what: str) -> tuple[int, int]:
    """The slots of the one iterable argument and its tangent (a list, tuple or 1-d array)."""
    if len(call.arg_slots) != 1:
        raise _refusal(f"{what} of {len(call.arg_slots)} arguments", "pass one list")
    items, items_t = call.arg_slots[0]
    value = call.value(items)
    if not isinstance(value, (list, tuple)) and not (hasattr(value, "ndim") and value.ndim == 1):
        raise _refusal(f"{what} of a {type(value).__name__}", "make it a list first")
    return items, items_t


def _sorted(call: _Call) -> int:
    keywords = _keywords(call, {"key", "reverse"}, "sorted")
    items, items_t = _items(call, "sorted with key=")
    c = call.composition
    slots = [items, items_t, *_key(call, "sorted", items), c.add(_constant(bool(keywords.get("reverse", False))))]
    return _run_definition(call, SORTED_BY_KEY, slots)


def _key(call: _Call, what: str, items: int) -> list[int]:
    """The slots of the key, its tangent and whether it is called through its plain program (a
    closure made in the plain program: what it writes keeps its tangents).

    Any other key, and the items' own comparisons, must not change data: the definitions above
    run under second order on copies of the items, so what they write would be lost."""
    key, key_t = call.keyword_slots["key"]
    through_program = plain_closures.is_plain_closure(call.value(key_t))
    function = call.value(key)
    if not through_program and function is not _IDENTITY and calls_through(function):
        raise _refusal(f"{what} with key={describe_callable(function)}, which may change data",
                       "make the key a pure function of its item (do the writes in a loop before the call)")
    if not through_program and compares_through(_pure_keys(function, call.value(items))):
        raise _refusal(f"{what} of objects whose comparisons may change data",
                       "sort with key= a pure function of each item returning numbers")
    return [key, key_t, call.composition.add(_constant(through_program))]


def _pure_keys(key: Any, items: Any) -> list:
    """The keys a pure ``key`` gives ``items`` (calling it once more changes nothing)."""
    return list(items) if key is _IDENTITY else [key(item) for item in items]


def _chosen(call: _Call, largest: bool) -> int:
    """``max(items, key=k)`` or ``max(a, b, ..., key=k)``: the first item whose key wins."""
    name = "max" if largest else "min"
    _keywords(call, {"key"}, f"{name} with key=")
    c = call.composition
    if len(call.arg_slots) == 1:
        items, items_t = _items(call, f"{name} with key=")
    else:  # the arguments themselves: a tuple of them, and of their tangents
        items = c.pack([a for a, _ in call.arg_slots])
        items_t = c.pack([t for _, t in call.arg_slots])
    if not len(call.value(items)):
        raise ValueError(f"{name}() iterable argument is empty")
    slots = [items, items_t, *_key(call, name, items), c.add(_constant(largest))]
    return _run_definition(call, CHOSEN_BY_KEY, slots)


def _sort_in_place(call: _Call) -> tuple[int, int]:
    """``lst.sort(key=k, reverse=r)``: the sorted items and tangents written back into the list
    and its tangent (``lst[:] = ...``), by second order's own rule of the write."""
    import operator

    keywords = _keywords(call, {"key", "reverse"}, "list.sort")
    if call.arg_slots:
        raise TypeError("sort() takes no positional arguments")
    c = call.composition
    lst, lst_t = _owner(call, 0), _owner(call, 1)
    if call.value(lst_t) is NoTangent:
        raise _refusal("list.sort of a list without a tangent", "sort a copy: sorted(lst, ...)")
    if "key" not in call.keyword_slots or call.value(call.keyword_slots["key"][0]) is None:
        call.keyword_slots["key"] = (c.add(_function(_IDENTITY)), c.add(_constant(NoTangent)))
    slots = [lst, lst_t, *_key(call, "list.sort", lst), c.add(_constant(bool(keywords.get("reverse", False))))]
    pair = _run_definition(call, SORTED_BY_KEY, slots)
    everything = c.add(_constant(slice(None)))
    for k, target in enumerate((lst, lst_t)):
        part = c.call(_function(operator.getitem), [pair, c.add(_constant(k))])
        c.call(_function(operator.setitem), [target, everything, part])
    return c.add(_constant(None)), c.add(_constant(NoTangent))


FOLLOWED_CALLS.append(keyed_call)

__all__ = ["CHOSEN_BY_KEY", "SORTED_BY_KEY", "keyed_call"]
