"""Object-dtype arrays holding float data, in every mode: the primitives that carry their derivatives.

An object array's tangent is an object array of the same shape holding each element's tangent
(``tangents/object_arrays.py``), mutated in parallel with the primal as a list's is
(``containers/common.py``: a float element has a float slot where its cotangent accumulates, an
array element its own tangent, a label ``NoTangent``). Five primitives move elements and their
tangents; every operation on object arrays is a Python definition over them
(``object_array_calls.py``), differentiated like user code:

* ``object_items(a)``: a new list of ``a``'s elements in C order (fresh slots whose cotangents go
  back to ``a``'s, like ``list(lst)``);
* ``object_store(a, items)``: ``a`` holds ``items`` in C order (the pullback puts the old elements
  and slots back, and sends the slots' cotangents to ``items``);
* ``object_item(a, index)``: one element, by a full integer index;
* ``object_view(a, how, extra)``: ``how(a, *extra)``, a view of ``a`` (a basic index, a reshape,
  a transpose), whose tangent is the same view of ``a``'s tangent;
* ``object_empty(shape)``: a new object array of ``None``, with a tangent of ``NoTangent``s
  (floats may be written into it).

An object array without a tangent (labels passed in, read as constants) cannot take values that
carry derivatives: refused by name, never dropped.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..tangents import NoFData, NoRData, NoTangent
from ..tangents.object_arrays import fill, is_object_array
from .batched import _ALWAYS
from .containers.common import _element_fdata, _restored, _slot
from .core import CoDual, Dual, RuleArgumentError, frule_for, rrule_for
from .second_order import _register
from .util import add_rdata_to


def object_items(a: np.ndarray) -> list:
    """A new list of object array ``a``'s elements in C order."""
    return list(a.flat)


def object_store(a: np.ndarray, items: list) -> None:
    """Make object array ``a`` (a view too) hold ``items`` in C order, each as one element."""
    fill(a, items)


def object_item(a: np.ndarray, index: Any) -> Any:
    """``a[index]`` for a full integer index: one element."""
    return a[index]


def object_view(a: np.ndarray, how: Callable, extra: tuple) -> np.ndarray:
    """``how(a, *extra)``, a view of object array ``a``."""
    return how(a, *extra)


def object_empty(shape: Any) -> np.ndarray:
    """A new object array of ``None``."""
    return np.empty(shape, dtype=object)


def labels_tangent(a: np.ndarray) -> np.ndarray:
    """The tangent of a new object array of labels: ``NoTangent`` in every slot."""
    t = np.empty(a.shape, dtype=object)
    t.fill(NoTangent)
    return t


def _tangent_of(t: Any, a: np.ndarray) -> Any:
    """``t`` if it is the tangent of object array ``a`` (an object array of its shape), else None
    (an array read as a constant)."""
    return t if is_object_array(t) and t.shape == a.shape else None


def refuse_into_constant(values: list, tangents: Any) -> None:
    """An object array without a tangent cannot take values carrying derivatives."""
    if tangents is not NoTangent and tangents is not NoFData \
            and any(T.primal_kind(v) is not T.kinds.NONDIFF for v in values):
        raise RuleArgumentError(
            "yuebing cannot follow derivatives through an object-dtype array it reads as a constant (made "
            "outside the function, holding labels only): writing float data into it would drop its derivative; "
            "make the array in the function (np.empty(n, dtype=object)) or keep the numbers in a float array")


def _send_back(slots: list, into: Any, places: Any) -> None:
    """Add the value parts (rdata) of ``slots`` to the slots of ``into`` at ``places``, in order."""
    for place, slot in zip(places, slots):
        r = T.rdata(slot)
        if r is not NoRData:
            into[place] = add_rdata_to(into[place], r)


@rrule_for(object_items)
def _object_items_rrule(a: CoDual) -> tuple:
    items, fd = list(a.primal.flat), _tangent_of(a.fdata, a.primal)
    if fd is None:
        return CoDual(items, [T.zero_tangent(v) for v in items]), lambda dy: (NoRData, NoRData)
    places = list(np.ndindex(fd.shape))
    slots = [_slot(v, _element_fdata(fd[p])) for v, p in zip(items, places)]

    def pullback(dy: Any) -> tuple:
        _send_back(slots, fd, places)
        return NoRData, NoRData

    return CoDual(items, slots), pullback


@frule_for(object_items)
def _object_items_frule(a: Dual) -> Dual:
    items, t = list(a.primal.flat), _tangent_of(a.tangent, a.primal)
    return Dual(items, [T.zero_tangent(v) for v in items] if t is None else list(t.flat))


@rrule_for(object_store)
def _object_store_rrule(a: CoDual, items: CoDual) -> tuple:
    target, fd = a.primal, _tangent_of(a.fdata, a.primal)
    values = list(items.primal)
    item_fd = items.fdata if isinstance(items.fdata, list) else None
    old_values = list(target.flat)
    if fd is None:
        refuse_into_constant(values, items.fdata)
        fill(target, values)

        def plain_pullback(dy: Any) -> tuple:
            fill(target, old_values)
            return NoRData, NoRData, NoRData

        return CoDual(None, NoFData), plain_pullback
    old_slots = list(fd.flat)
    fill(target, values)
    fill(fd, [_slot(v, NoFData if item_fd is None else _element_fdata(t)) for v, t in zip(values, item_fd or values)])

    def pullback(dy: Any) -> tuple:
        if item_fd is not None:
            _send_back(list(fd.flat), item_fd, range(len(item_fd)))
        fill(target, old_values)
        fill(fd, [_restored(s, v) for s, v in zip(old_slots, old_values)])
        return NoRData, NoRData, NoRData

    return CoDual(None, NoFData), pullback


@frule_for(object_store)
def _object_store_frule(a: Dual, items: Dual) -> Dual:
    values = list(items.primal)
    t = _tangent_of(a.tangent, a.primal)
    if t is None:
        refuse_into_constant(values, items.tangent)
    object_store(a.primal, values)
    if t is not None:
        tangents = items.tangent
        fill(t, [T.zero_tangent(v) for v in values] if not isinstance(tangents, (list, tuple)) else list(tangents))
    return Dual(None, NoTangent)


@rrule_for(object_item)
def _object_item_rrule(a: CoDual, index: CoDual) -> tuple:
    i, fd = index.primal, _tangent_of(a.fdata, a.primal)
    v = a.primal[i]
    if fd is None:
        return CoDual(v, _element_fdata(T.zero_tangent(v))), lambda dy: (NoRData, NoRData, NoRData)

    def pullback(dy: Any) -> tuple:  # (the array and its tangent are as they were at the read)
        if dy is not NoRData:
            fd[i] = add_rdata_to(fd[i], dy)
        return NoRData, NoRData, NoRData

    return CoDual(v, _element_fdata(fd[i])), pullback


@frule_for(object_item)
def _object_item_frule(a: Dual, index: Dual) -> Dual:
    v, t = a.primal[index.primal], _tangent_of(a.tangent, a.primal)
    return Dual(v, T.zero_tangent(v) if t is None else t[index.primal])


@rrule_for(object_view)
def _object_view_rrule(a: CoDual, how: CoDual, extra: CoDual) -> tuple:
    y = how.primal(a.primal, *extra.primal)
    fd = _tangent_of(a.fdata, a.primal)
    return CoDual(y, NoFData if fd is None else how.primal(fd, *extra.primal)), \
        lambda dy: (NoRData, NoRData, NoRData, NoRData)


@frule_for(object_view)
def _object_view_frule(a: Dual, how: Dual, extra: Dual) -> Dual:
    y = how.primal(a.primal, *extra.primal)
    t = _tangent_of(a.tangent, a.primal)
    return Dual(y, NoTangent if t is None else how.primal(t, *extra.primal))


@rrule_for(object_empty)
def _object_empty_rrule(shape: CoDual) -> tuple:
    y = object_empty(shape.primal)
    return CoDual(y, labels_tangent(y)), lambda dy: (NoRData, NoRData)


@frule_for(object_empty)
def _object_empty_frule(shape: Dual) -> Dual:
    y = object_empty(shape.primal)
    return Dual(y, labels_tangent(y))


def _object_empty_second_order(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: the new array's tangent and its fdata's are object arrays of ``NoTangent``
    too (the linear class would give it none: it holds no float yet)."""
    y = object_empty(args[0][0])
    nothing = (NoRData,) * (1 + len(args))
    return (y, labels_tangent(y), labels_tangent(y), labels_tangent(y)), lambda dy, dy_d: (nothing, nothing)


def _zero_object_tangent(a: np.ndarray) -> np.ndarray:
    """A zero tangent of an object array read as a constant (labels: ``NoTangent``s)."""
    t = np.empty(a.shape, dtype=object)
    fill(t, [T.zero_tangent(v) for v in a.flat])
    return t


def _tangent_side(value: tuple, data: bool) -> CoDual:
    """What the tangent call takes for one argument 4-tuple: a data argument's tangent and its
    fdata (an object array's, a list's), structure (an index, a shape) as it is."""
    if not data:
        return CoDual(value[0], value[1])
    if value[2] is NoTangent and is_object_array(value[0]):
        t = _zero_object_tangent(value[0])
        return CoDual(t, _zero_object_tangent(value[0]))
    return CoDual(value[2], value[3])


def _run_twice(primitive: Callable, data: tuple) -> Callable:
    """The second-order rule of a primitive linear in the arguments at ``data`` that only moves
    elements and tangents: its rule run on the primals and fdata, then on the tangents and their
    fdata (the linear class would pass an array holding no float yet as its primal: twice)."""
    from .core import rrule

    def rule(f: tuple, args: tuple, kwargs: dict) -> tuple:
        out1, pullback1 = rrule(CoDual(primitive, NoFData), *(CoDual(a[0], a[1]) for a in args))
        out2, pullback2 = rrule(CoDual(primitive, NoFData), *(_tangent_side(a, k in data) for k, a in enumerate(args)))
        return (out1.primal, out1.fdata, out2.primal, out2.fdata), lambda dy, dy_d: (pullback1(dy), pullback2(dy_d))

    rule.second_order_kind = "special"  # type: ignore[attr-defined]
    return rule


_object_empty_second_order.second_order_kind = "special"  # type: ignore[attr-defined]
_register((object_empty,), _object_empty_second_order)
_register((object_items,), _run_twice(object_items, (0,)))
_register((object_store,), _run_twice(object_store, (0, 1)))
_register((object_item,), _run_twice(object_item, (0,)))
_register((object_view,), _run_twice(object_view, (0,)))
_ALWAYS.update((object_items, object_store, object_item, object_view, object_empty))

CASES: list = []  # the definitions are differentiated from source: tests/test_object_array_tangents.py checks them
