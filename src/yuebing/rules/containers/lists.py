"""Rules for the methods of ``list``: ``append``, ``extend``, ``insert``, ``pop``, ``remove``,
``clear``, ``reverse``, ``sort``, ``copy`` (the mutation convention: ``common.py``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ... import tangents as T
from ...tangents import NoFData, NoRData, NoTangent
from ..cases import Case, randc, randn
from .._comparisons import compares_through, goes_through
from .._key_functions import sort_calling_key
from ..comparing_calls import remove_comparing
from ..core import CoDual, Dual, frule, frule_for, primal, rrule_for
from ..second_order import defined_by, linear
from ..util import defined_rrule, output
from .common import (
    _NOT_PASSED, _Elements, _counted, _element_fdata, _restored, _self_containing, _shallow_copy_rrule,
    _shared_array_list, _slot, _with_rdata,
)

# ------------------------------------------------------------------------------------------------
# list
# ------------------------------------------------------------------------------------------------


def _position(index: Any, n: int) -> int:
    """The position an insert/pop index refers to, as Python computes it."""
    i = index + n if index < 0 else index
    return min(max(i, 0), n)


@rrule_for((list, "append"))
def _list_append(self, x):
    lst, fd = self.primal, self.fdata
    lst.append(x.primal)
    fd.append(_slot(x.primal, x.fdata))

    def pullback(dy):
        slot = fd.pop()
        lst.pop()
        return NoRData, NoRData, T.rdata(slot)

    return output(None), pullback


@frule_for((list, "append"))
def _list_append_frule(self, x):
    self.primal.append(x.primal)
    self.tangent.append(x.tangent)
    return Dual(None, NoTangent)


@rrule_for((list, "extend"))
def _list_extend(self, iterable):
    lst, fd = self.primal, self.fdata
    source = _Elements(iterable, "list.extend")
    n = len(lst)
    lst.extend(source.values)
    fd.extend(_slot(v, f) for v, f in zip(source.values, source.fdatas))

    def pullback(dy):
        slots = fd[n:]
        del fd[n:], lst[n:]  # restore first: the source may be the list itself
        return NoRData, NoRData, source.deliver([T.rdata(s) for s in slots])

    return output(None), pullback


@frule_for((list, "extend"))
def _list_extend_frule(self, iterable):
    source = _Elements(iterable, "list.extend")
    self.primal.extend(source.values)
    self.tangent.extend(source.tangents())
    return Dual(None, NoTangent)


@rrule_for((list, "insert"))
def _list_insert(self, index, x):
    lst, fd = self.primal, self.fdata
    i = _position(primal(index), len(lst))
    lst.insert(i, x.primal)
    fd.insert(i, _slot(x.primal, x.fdata))

    def pullback(dy):
        slot = fd.pop(i)
        lst.pop(i)
        return NoRData, NoRData, NoRData, T.rdata(slot)

    return output(None), pullback


@frule_for((list, "insert"))
def _list_insert_frule(self, index, x):
    i = _position(primal(index), len(self.primal))
    self.primal.insert(i, x.primal)
    self.tangent.insert(i, x.tangent)
    return Dual(None, NoTangent)


@rrule_for((list, "pop"))
def _list_pop(self, index=_NOT_PASSED):
    lst, fd = self.primal, self.fdata
    idx = -1 if index is _NOT_PASSED else primal(index)
    i = idx + len(lst) if idx < 0 else idx
    v = lst.pop(idx)  # raises IndexError as Python does
    slot = fd.pop(i)

    def pullback(dy):
        lst.insert(i, v)
        fd.insert(i, _with_rdata(slot, v, dy))
        return _counted(NoRData, NoRData, index if index is _NOT_PASSED else NoRData)

    return CoDual(v, _element_fdata(slot)), pullback


@frule_for((list, "pop"))
def _list_pop_frule(self, index=_NOT_PASSED):
    idx = -1 if index is _NOT_PASSED else primal(index)
    i = idx + len(self.primal) if idx < 0 else idx
    v = self.primal.pop(idx)
    return Dual(v, self.tangent.pop(i))


@rrule_for((list, "remove"))
def _list_remove(self, x):
    if compares_through([self.primal, x.primal]):  # an __eq__ that changes data: as user code
        return defined_rrule(remove_comparing, self, x)
    lst, fd = self.primal, self.fdata
    i = lst.index(x.primal)  # raises ValueError as Python does
    v = lst.pop(i)
    slot = fd.pop(i)

    def pullback(dy):
        lst.insert(i, v)
        fd.insert(i, _restored(slot, v))  # the removed value is discarded: cotangent zero
        return NoRData, NoRData, NoRData  # x is only compared

    return output(None), pullback


@frule_for((list, "remove"))
def _list_remove_frule(self, x):
    if compares_through([self.primal, x.primal]):
        return frule(remove_comparing, self, x)
    i = self.primal.index(x.primal)
    del self.primal[i], self.tangent[i]
    return Dual(None, NoTangent)


@rrule_for((list, "clear"))
def _list_clear(self):
    lst, fd = self.primal, self.fdata
    saved, saved_fd = lst[:], fd[:]
    lst.clear()
    fd.clear()

    def pullback(dy):
        lst[:] = saved
        fd[:] = [_restored(s, v) for s, v in zip(saved_fd, saved)]
        return NoRData, NoRData

    return output(None), pullback


@frule_for((list, "clear"))
def _list_clear_frule(self):
    self.primal.clear()
    self.tangent.clear()
    return Dual(None, NoTangent)


@rrule_for((list, "reverse"))
def _list_reverse(self):
    lst, fd = self.primal, self.fdata
    lst.reverse()
    fd.reverse()

    def pullback(dy):
        lst.reverse()
        fd.reverse()  # cotangents travel back with their elements
        return NoRData, NoRData

    return output(None), pullback


@frule_for((list, "reverse"))
def _list_reverse_frule(self):
    self.primal.reverse()
    self.tangent.reverse()
    return Dual(None, NoTangent)


def _sort_order(lst: list, key: Any, reverse: Any) -> list:
    """The permutation ``list.sort`` applies (stable, also with ``reverse=True``)."""
    key_fn = None if key is _NOT_PASSED else primal(key)
    descending = False if reverse is _NOT_PASSED else bool(primal(reverse))
    if key_fn is None:
        return sorted(range(len(lst)), key=lst.__getitem__, reverse=descending)
    return sorted(range(len(lst)), key=lambda i: key_fn(lst[i]), reverse=descending)


def _sort_goes_through(lst: Any, key: Any) -> bool:
    """A key, or comparisons of the items, that may change data: the sort then runs as
    ``sort_calling_key`` (``ordering.py``, ``_comparisons.py``)."""
    return goes_through(primal(lst), None if key is _NOT_PASSED else primal(key))


def _passed(key: Any, reverse: Any, no_key: Any) -> tuple:
    """The arguments after the list, as received (``no_key``: None as a codual or dual, where
    ``reverse=`` was passed without a key)."""
    if key is _NOT_PASSED and reverse is _NOT_PASSED:
        return ()
    key = no_key if key is _NOT_PASSED else key
    return (key,) if reverse is _NOT_PASSED else (key, reverse)


@rrule_for((list, "sort"))
def _list_sort(self, key=_NOT_PASSED, reverse=_NOT_PASSED):
    if _sort_goes_through(self, key):
        return defined_rrule(sort_calling_key, self, *_passed(key, reverse, CoDual(None, NoFData)))
    # key only orders the elements: it is not differentiated
    lst, fd = self.primal, self.fdata
    order = _sort_order(lst, key, reverse)
    saved = lst[:]
    lst[:] = [saved[i] for i in order]
    fd[:] = [fd[i] for i in order]

    def pullback(dy):
        sorted_fd = fd[:]
        for j, i in enumerate(order):
            fd[i] = sorted_fd[j]
        lst[:] = saved
        return _counted(NoRData, NoRData, key, reverse)

    return output(None), pullback


@frule_for((list, "sort"))
def _list_sort_frule(self, key=_NOT_PASSED, reverse=_NOT_PASSED):
    if _sort_goes_through(self, key):
        return frule(sort_calling_key, self, *_passed(key, reverse, Dual(None, NoTangent)))
    lst, t = self.primal, self.tangent
    order = _sort_order(lst, key, reverse)
    lst[:] = [lst[i] for i in order]
    t[:] = [t[i] for i in order]
    return Dual(None, NoTangent)


@rrule_for((list, "copy"))
def _list_copy(self):
    new = self.primal.copy()
    new_fd = [NoTangent] * len(new)
    return _shallow_copy_rrule(new, list(enumerate(new)), self.fdata, new_fd)


@frule_for((list, "copy"))
def _list_copy_frule(self):
    return Dual(self.primal.copy(), list(self.tangent))


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------

# the tangent call mirrors the mutation on the tangent list (append, extend, insert, pop,
# reverse, copy: declared in second_order.py)
linear((list, "clear"))


# the position or permutation must come from the primal (a tangent call would compare or order
# the tangents): these are written with covered functions, whose second order follows the
# primal's choices
def _list_remove(lst, value):
    lst.pop(lst.index(value))


defined_by((list, "sort"), sort_calling_key)
defined_by((list, "remove"), _list_remove)


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


_shared, _a = _shared_array_list()
_C = Case

CASES = [
    # list.append: float, array (aliasing: the same array appended twice), tuple, self
    _C(list.append, [randn(), randn()], randn()),
    _C(list.append, [], randn(), name="list.append(empty, float)"),
    _C(list.append, [randn(3)], randn(2, 2), name="list.append(list of arrays, array)"),
    _C(list.append, _shared, _a, name="list.append(the same array again)"),
    _C(list.append, [1, randn()], (randn(3), randn(), 2), name="list.append(tuple of array, float, int)"),
    _C(list.append, [randn()], randc(), name="list.append(complex)"),
    _C(list.append, _self_containing(), randn(), name="list.append(list containing itself)"),
    _C(list.append, [randn()], [randn(), randn(2)], name="list.append(list)"),
    _C(list.append, [randn()], randn(3, dtype=np.float32), name="list.append(float32 array)"),
    # extend: from a list, a tuple, an array (scalars and rows), a range, itself
    _C(list.extend, [randn()], [randn(), randn(2), 3]),
    _C(list.extend, [randn()], (randn(), randn(2)), name="list.extend(tuple)"),
    _C(list.extend, [randn()], randn(3), name="list.extend(1-d array)"),
    _C(list.extend, [randn()], randn(2, 3), name="list.extend(2-d array: rows are views)"),
    _C(list.extend, [randn()], range(3), name="list.extend(range)"),
    _C(list.extend, [randn(), randn(2)], [], name="list.extend(empty)"),
    # insert, pop, remove
    _C(list.insert, [randn(), randn(), randn()], 1, randn()),
    _C(list.insert, [randn(), randn()], -1, randn(2), name="list.insert(negative index, array)"),
    _C(list.insert, [randn()], 10, randn(), name="list.insert(past the end)"),
    _C(list.insert, [randn()], -10, randn(), name="list.insert(before the start)"),
    _C(list.pop, [randn(), randn(), randn()]),
    _C(list.pop, [randn(), randn(), randn()], 0, name="list.pop(0)"),
    _C(list.pop, [randn(), randn(3), randn()], -2, name="list.pop(-2: array)"),
    _C(list.pop, [randn(), (randn(2), randn())], name="list.pop(tuple element)"),
    _C(list.pop, [randc(), randc()], 0, name="list.pop(complex)"),
    _C(list.remove, *(lambda a: ([a, randn(), a], a))(randn(2)), name="list.remove(array, by identity)"),
    _C(list.remove, [2, randn(), 3], 3, name="list.remove(int)"),
    # clear, reverse, sort, copy
    _C(list.clear, [randn(), randn(2), (randn(), 1)]),
    _C(list.reverse, [randn(), randn(2), randn(), 4]),
    _C(list.reverse, _shared_array_list()[0], name="list.reverse(aliased arrays)"),
    _C(list.sort, [randn() for _ in range(6)]),
    _C(list.sort, [3.0, 1.0, 2.0, 1.5], kwargs={"reverse": True}, name="list.sort(reverse=True)"),
    _C(list.sort, [randn(2) for _ in range(4)], kwargs={"key": lambda a: a[0]}, name="list.sort(arrays, key=)"),
    _C(list.sort, [(randn(), 2), (randn(), 1)], kwargs={"key": lambda p: p[1]}, name="list.sort(tuples, key=)"),
    _C(list.copy, [randn(), randn(3), [randn()], 2]),
    _C(list.copy, _self_containing(), name="list.copy(list containing itself)"),
]
