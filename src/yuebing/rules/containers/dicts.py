"""Rules for the methods of ``list`` and ``dict``, and for ``copy.copy`` / ``copy.deepcopy``.

Methods are ``(type, name)`` rules with ``self`` first. ``list.index``/``count`` and
``tuple.index``/``count`` are in ``nondifferentiable.py``; operators (``+``, ``[]``, ``+=``) belong
to the operator rules, so dunder methods are not registered here.

The mutation convention of docs/writing-rules.md, for containers: a list's (dict's) fdata is a
list (dict) of its elements' full tangents, mutated in parallel with the primal. An element that
is identified by identity (array, list, dict, object) has its *own fdata object* in the slot, so
``lst.append(a); lst.append(a)`` stores one tangent array twice (aliasing). An element identified
by value (float, complex) gets a fresh slot that starts at zero; its cotangent accumulates there
and the pullback returns it as the element's rdata (or adds it to the source container's slot).
Tuples and frozen objects in a slot are split the same way, field by field.

Pullbacks restore both the primal and the fdata exactly: removed elements are reinserted at
their position (dict key order too) with their old tangent object, whose value-typed parts are
set to the pre-call cotangent (zero for overwritten or discarded values, the output cotangent for
a popped element).
"""
from __future__ import annotations

import copy
from typing import Any

import numpy as np

from .. import tangents as T
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent
from ..tangents import kinds as K
from .cases import Case, randc, randn
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .second_order import defined_by, linear, zero
from .util import add_rdata_to, output, sum_rdata, tangent

_NOT_PASSED = object()  # the default of optional parameters: tells whether they were passed

# ------------------------------------------------------------------------------------------------
# Slots: the tangent a container keeps for one element
# ------------------------------------------------------------------------------------------------


def _slot(v: Any, fd: Any) -> Any:
    """The tangent slot for element ``v`` with fdata ``fd``: ``fd`` itself for identity-typed
    elements, zeros for the value-typed parts (floats, floats inside tuples)."""
    kind = K.primal_kind(v)
    if kind is K.FLOAT:
        return 0.0
    if kind is K.COMPLEX:
        return 0j
    if kind is K.NONDIFF:
        return NoTangent
    if fd is NoFData:  # a constant without fdata (not from a traced value): a fresh zero tangent
        return T.zero_tangent(v)
    if kind in K.MUTABLE_KINDS or kind is K.ARRAY:
        return fd
    return T.join(fd, T.zero_rdata(v))


def _overwriting_slot(old_slot: Any, v: Any, fd: Any) -> Any:
    """The slot for ``v`` assigned over an element whose slot was ``old_slot``. A float (complex)
    slot keeps its value: in a reverse pass it is zero at forward time, unless the caller put the
    cotangent of the post-call state there before the call, which then belongs to ``v``."""
    if type(old_slot) is float and type(v) is float or type(old_slot) is complex and type(v) is complex:
        return old_slot
    return _slot(v, fd)


def _restored(slot: Any, v: Any) -> Any:
    """Slot ``slot`` of element ``v`` with its value-typed parts reset to zero (its pre-call
    cotangent when ``v`` was overwritten or discarded); identity-typed parts are kept."""
    if type(slot) is float:
        return 0.0
    return _slot(v, T.fdata(slot))


def _with_rdata(slot: Any, v: Any, r: Any) -> Any:
    """``_restored(slot, v)`` plus the rdata ``r``."""
    return _restored(slot, v) if r is NoRData else T.join(T.fdata(slot), r)




def _element_fdata(t: Any) -> Any:
    """The fdata part of element tangent ``t`` (fast for floats and arrays)."""
    if type(t) is float or t is NoTangent:
        return NoFData
    if type(t) is np.ndarray:
        return t
    return T.fdata(t)


def _counted(*rdatas: Any) -> tuple:
    """Pullback result: one rdata per argument received. ``_NOT_PASSED`` marks parameters left
    at their default: trailing ones were not received, inner ones were (filled in by keyword
    binding) and get ``NoRData``."""
    n = len(rdatas)
    while n and rdatas[n - 1] is _NOT_PASSED:
        n -= 1
    return tuple(NoRData if r is _NOT_PASSED else r for r in rdatas[:n])


# ------------------------------------------------------------------------------------------------
# Elements of an iterable argument (list.extend, dict.update): values, their fdata, delivery
# ------------------------------------------------------------------------------------------------


class _Elements:
    """The elements of a sequence argument, their fdata, and delivery of their rdata back to it.

    Lists give their slots' fdata and take rdata into their slots; tuples take it as their own
    rdata; arrays give rows (views of the tangent) or scalars. Other iterables are accepted only
    when nothing in them is differentiable (ranges, strings, dict keys)."""

    def __init__(self, arg: Any, name: str) -> None:
        self.arg = arg
        x = primal(arg)
        fd = arg.fdata if isinstance(arg, CoDual) else NoFData
        self.kind = type(x)
        if isinstance(x, list):
            self.values = list(x)
            self.fdatas = [_element_fdata(t) for t in fd] if fd is not NoFData else [NoFData] * len(x)
        elif isinstance(x, tuple):
            self.values = list(x)
            self.fdatas = list(fd) if fd is not NoFData else [NoFData] * len(x)
        elif isinstance(x, np.ndarray) and x.ndim >= 1:
            self.values = list(x)
            self.fdatas = list(fd) if fd is not NoFData and x.ndim > 1 else [NoFData] * len(x)
        else:
            self.values = list(x)
            if any(K.primal_kind(v) is not K.NONDIFF for v in self.values):
                raise RuleArgumentError(
                    f"{name}: yuebing can follow derivatives through a list, tuple or array here, "
                    f"not through a {type(x).__qualname__}; convert it with list(...) first"
                )
            self.fdatas = [NoFData] * len(self.values)

    def deliver(self, rdatas: list) -> Any:
        """Add rdata ``rdatas[i]`` to element ``i``; return the argument's own rdata."""
        x = primal(self.arg)
        if not isinstance(self.arg, CoDual):
            return NoRData
        fd = self.arg.fdata
        if isinstance(x, list):
            for i, r in enumerate(rdatas):
                if r is not NoRData:
                    fd[i] = add_rdata_to(fd[i], r)
            return NoRData
        if isinstance(x, tuple):
            return NoRData if all(r is NoRData for r in rdatas) else tuple(rdatas)
        if isinstance(x, np.ndarray) and x.ndim == 1 and fd is not NoFData:
            for i, r in enumerate(rdatas):
                if r is not NoRData:
                    fd[i] += r
        return NoRData

    def tangents(self) -> list:
        """Forward mode: each element's tangent."""
        x, t = primal(self.arg), tangent(self.arg)
        if t is NoTangent:
            return [T.zero_tangent(v) for v in self.values]
        if isinstance(x, np.ndarray) and x.ndim == 1:
            return [complex(ti) if x.dtype.kind == "c" else float(ti) for ti in t]
        return list(t)


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


@rrule_for((list, "sort"))
def _list_sort(self, key=_NOT_PASSED, reverse=_NOT_PASSED):
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
    lst, t = self.primal, self.tangent
    order = _sort_order(lst, key, reverse)
    lst[:] = [lst[i] for i in order]
    t[:] = [t[i] for i in order]
    return Dual(None, NoTangent)


def _shallow_copy_rrule(new: Any, items: list, fd: Any, new_fd: Any) -> tuple[CoDual, Any]:
    """A new container ``new`` holding ``items`` (pairs key, value) of a container with fdata
    ``fd``: fresh slots in ``new_fd``; the pullback adds their rdata back into ``fd``."""
    for key, v in items:
        new_fd[key] = _slot(v, _element_fdata(fd[key]))

    def pullback(dy):
        for key, _ in items:
            r = T.rdata(new_fd[key])
            if r is not NoRData:
                fd[key] = add_rdata_to(fd[key], r)
        return NoRData, NoRData

    return CoDual(new, new_fd), pullback


@rrule_for((list, "copy"))
def _list_copy(self):
    new = self.primal.copy()
    new_fd = [NoTangent] * len(new)
    return _shallow_copy_rrule(new, list(enumerate(new)), self.fdata, new_fd)


@frule_for((list, "copy"))
def _list_copy_frule(self):
    return Dual(self.primal.copy(), list(self.tangent))


# ------------------------------------------------------------------------------------------------
# dict
# ------------------------------------------------------------------------------------------------


def _reinsert(d: dict, key: Any, value: Any, position: int | None) -> None:
    """Put ``key`` back at ``position`` in ``d``'s order (``None``: at the end)."""
    if position is None or position == len(d):
        dict.__setitem__(d, key, value)
        return
    items = list(d.items())
    items.insert(position, (key, value))
    d.clear()
    d.update(items)


def _position_of(d: dict, key: Any) -> int | None:
    """``key``'s position in ``d``, or None when it is the last key (the cheap common case)."""
    if next(reversed(d)) is key:
        return None
    return next(i for i, k in enumerate(d) if k is key or k == key)


@rrule_for((dict, "get"))
def _dict_get(self, key, default=_NOT_PASSED):
    d, fd = self.primal, self.fdata
    k = primal(key)
    missing = object()
    v = dict.get(d, k, missing)
    if v is missing:
        return _passthrough_default(default, 3)

    def pullback(dy):
        if dy is not NoRData:
            fd[k] = add_rdata_to(fd[k], dy)
        return _counted(NoRData, NoRData, NoRData, default if default is _NOT_PASSED else NoRData)

    return CoDual(v, _element_fdata(fd[k])), pullback


def _passthrough_default(default: Any, n_before: int) -> tuple[CoDual, Any]:
    """Return the ``default`` argument itself (its rdata is the output's)."""
    if default is _NOT_PASSED:
        return output(None), lambda dy: (NoRData,) * n_before
    if not isinstance(default, CoDual):
        return output(default), lambda dy: (NoRData,) * (n_before + 1)
    return CoDual(default.primal, default.fdata), lambda dy: (NoRData,) * n_before + (dy,)


@frule_for((dict, "get"))
def _dict_get_frule(self, key, default=_NOT_PASSED):
    d, k = self.primal, primal(key)
    if k in d:
        return Dual(d[k], self.tangent[k])
    if default is _NOT_PASSED:
        return Dual(None, NoTangent)
    return Dual(primal(default), tangent(default) if isinstance(default, Dual) else T.zero_tangent(default))


@rrule_for((dict, "setdefault"))
def _dict_setdefault(self, key, default=_NOT_PASSED):
    d, fd = self.primal, self.fdata
    k = primal(key)
    if k in d:
        return _dict_get(self, key, default)
    v = None if default is _NOT_PASSED else primal(default)
    v_fd = default.fdata if isinstance(default, CoDual) else NoFData
    dict.__setitem__(d, k, v)
    fd[k] = _slot(v, v_fd)

    def pullback(dy):
        slot = fd.pop(k)
        dict.__delitem__(d, k)
        return _counted(NoRData, NoRData, NoRData,
                        default if default is _NOT_PASSED else sum_rdata(T.rdata(slot), dy))

    return CoDual(v, _element_fdata(fd[k]) if v_fd is NoFData else v_fd), pullback


@frule_for((dict, "setdefault"))
def _dict_setdefault_frule(self, key, default=_NOT_PASSED):
    d, k = self.primal, primal(key)
    if k not in d:
        v = None if default is _NOT_PASSED else primal(default)
        d[k] = v
        self.tangent[k] = tangent(default) if isinstance(default, Dual) else T.zero_tangent(v)
    return Dual(d[k], self.tangent[k])


@rrule_for((dict, "pop"))
def _dict_pop(self, key, default=_NOT_PASSED):
    d, fd = self.primal, self.fdata
    k = primal(key)
    if k not in d:
        if default is _NOT_PASSED:
            raise KeyError(k)
        return _passthrough_default(default, 3)
    position = _position_of(d, k)
    v = dict.pop(d, k)
    slot = fd.pop(k)

    def pullback(dy):
        _reinsert(d, k, v, position)
        fd[k] = _with_rdata(slot, v, dy)
        return _counted(NoRData, NoRData, NoRData, default if default is _NOT_PASSED else NoRData)

    return CoDual(v, _element_fdata(slot)), pullback


@frule_for((dict, "pop"))
def _dict_pop_frule(self, key, default=_NOT_PASSED):
    d, k = self.primal, primal(key)
    if k not in d and default is not _NOT_PASSED:
        return Dual(primal(default), tangent(default) if isinstance(default, Dual) else T.zero_tangent(default))
    v = dict.pop(d, k)
    return Dual(v, self.tangent.pop(k))


@rrule_for((dict, "popitem"))
def _dict_popitem(self):
    d, fd = self.primal, self.fdata
    k, v = d.popitem()  # raises KeyError on an empty dict, as Python does
    slot = fd.pop(k)
    v_fd = _element_fdata(slot)

    def pullback(dy):
        dict.__setitem__(d, k, v)  # it was the last key: order is restored
        fd[k] = _with_rdata(slot, v, NoRData if dy is NoRData else dy[1])
        return NoRData, NoRData

    return CoDual((k, v), NoFData if v_fd is NoFData else (NoFData, v_fd)), pullback


@frule_for((dict, "popitem"))
def _dict_popitem_frule(self):
    k, v = self.primal.popitem()
    t = self.tangent.pop(k)
    return Dual((k, v), NoTangent if t is NoTangent else (NoTangent, t))


def _pair_sources(other: Any) -> tuple[list, Any]:
    """``dict.update``'s positional argument as ``[(key, value, fdata)]`` and a function that
    takes the values' rdata and returns the argument's rdata."""
    x = primal(other)
    fd = other.fdata if isinstance(other, CoDual) else NoFData
    if isinstance(x, dict):
        keys = list(x)
        entries = [(k, x[k], NoFData if fd is NoFData else _element_fdata(fd[k])) for k in keys]

        def deliver(rdatas: list) -> Any:
            for k, r in zip(keys, rdatas):
                if r is not NoRData and fd is not NoFData:
                    fd[k] = add_rdata_to(fd[k], r)
            return NoRData

        return entries, deliver
    if not isinstance(x, (list, tuple)):
        raise RuleArgumentError(
            f"dict.update: yuebing supports a dict, a list or tuple of pairs, and keywords, not a "
            f"{type(x).__qualname__}; convert it with dict(...) first"
        )
    pairs = _Elements(other, "dict.update")
    entries, makers = [], []
    for pair, pair_fd in zip(pairs.values, pairs.fdatas):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise RuleArgumentError(f"dict.update: expected (key, value) pairs, got {pair!r:.60}")
        if isinstance(pair, tuple):
            entries.append((pair[0], pair[1], NoFData if pair_fd is NoFData else pair_fd[1]))
            makers.append(lambda r: NoRData if r is NoRData else (NoRData, r))
        else:  # a list pair: its tangent list holds the value's slot
            entries.append((pair[0], pair[1], _element_fdata(pair_fd[1])))
            makers.append(lambda r, t=pair_fd: (t.__setitem__(1, add_rdata_to(t[1], r)), NoRData)[1])
    return entries, lambda rdatas: pairs.deliver([m(r) for m, r in zip(makers, rdatas)])


@rrule_for((dict, "update"))
def _dict_update(self, *args, **kwargs):
    d, fd = self.primal, self.fdata
    if len(args) > 1:
        raise TypeError(f"update expected at most 1 argument, got {len(args)}")
    entries, deliver = _pair_sources(args[0]) if args else ([], None)
    entries += [(name, primal(c), c.fdata if isinstance(c, CoDual) else NoFData) for name, c in kwargs.items()]
    log = []  # (key, existed, old value, old slot), in assignment order
    for k, v, v_fd in entries:
        existed = k in d
        log.append((k, existed, d[k] if existed else None, fd[k] if existed else None))
        dict.__setitem__(d, k, v)
        fd[k] = _overwriting_slot(fd[k], v, v_fd) if existed else _slot(v, v_fd)

    def pullback(dy):
        rdatas = [NoRData] * len(entries)
        for j in range(len(log) - 1, -1, -1):
            k, existed, old, old_slot = log[j]
            rdatas[j] = T.rdata(fd[k])
            if existed:
                dict.__setitem__(d, k, old)
                fd[k] = _restored(old_slot, old)
            else:
                dict.__delitem__(d, k)
                del fd[k]
        n = len(entries) - len(kwargs)
        other_rdata = (deliver(rdatas[:n]),) if args else ()
        return (NoRData, NoRData, *other_rdata, *rdatas[n:])

    return output(None), pullback


@frule_for((dict, "update"))
def _dict_update_frule(self, *args, **kwargs):
    d, t = self.primal, self.tangent
    if args:
        x, xt = primal(args[0]), tangent(args[0])
        if isinstance(x, dict):
            pairs = [(k, x[k], T.zero_tangent(x[k]) if xt is NoTangent else xt[k]) for k in x]
        else:
            elements = _Elements(args[0], "dict.update")
            pairs = [(p[0], p[1], T.zero_tangent(p[1]) if pt is NoTangent else pt[1])
                     for p, pt in zip(elements.values, elements.tangents())]
    else:
        pairs = []
    pairs += [(name, primal(c), tangent(c) if isinstance(c, Dual) else T.zero_tangent(c)) for name, c in kwargs.items()]
    for k, v, vt in pairs:
        dict.__setitem__(d, k, v)
        t[k] = vt
    return Dual(None, NoTangent)


@rrule_for((dict, "copy"))
def _dict_copy(self):
    new = self.primal.copy()
    return _shallow_copy_rrule(new, list(new.items()), self.fdata, {})


@frule_for((dict, "copy"))
def _dict_copy_frule(self):
    return Dual(self.primal.copy(), dict(self.tangent))


@rrule_for((dict, "clear"))
def _dict_clear(self):
    d, fd = self.primal, self.fdata
    saved, saved_fd = list(d.items()), dict(fd)
    d.clear()
    fd.clear()

    def pullback(dy):
        d.update(saved)
        fd.update((k, _restored(saved_fd[k], v)) for k, v in saved)
        return NoRData, NoRData

    return output(None), pullback


@frule_for((dict, "clear"))
def _dict_clear_frule(self):
    self.primal.clear()
    self.tangent.clear()
    return Dual(None, NoTangent)


# keys(), values() and items() return live views. Their fdata is the same live view of the dict's
# fdata (a float value's slot is read through it), and their pullback has nothing to add: the
# cotangents flow through the dict's own slots. check_rule cannot run on them (views have no
# tangent type), so they have no CASES.
def _view_rules(name: str) -> None:
    def rrule(self):
        view = getattr(self.primal, name)()
        return CoDual(view, getattr(self.fdata, name)()), lambda dy: (NoRData, NoRData)

    def frule(self):
        return Dual(getattr(self.primal, name)(), getattr(self.tangent, name)())

    rrule_for((dict, name))(rrule)
    frule_for((dict, name))(frule)


for _name in ("keys", "values", "items"):
    _view_rules(_name)

# ------------------------------------------------------------------------------------------------
# copy.copy and copy.deepcopy
# ------------------------------------------------------------------------------------------------


def _children_shared(x: Any, y: Any, kind: str) -> bool:
    """Whether ``y`` is a shallow copy of ``x``: same keys, every child the same object (or an
    equal number)."""
    x_keys, x_children, _ = K.parts(x, kind)
    y_keys, y_children, _ = K.parts(y, kind)
    if x_keys != y_keys:
        return False
    for a, b in zip(x_children, y_children):
        if a is not b and not (isinstance(a, (float, complex, np.number)) and type(a) is type(b) and a == b):
            return False
    return True


def _copy_kind(x: Any, y: Any) -> str:
    kind = K.primal_kind(x)
    if kind in (K.FLOAT, K.COMPLEX, K.NONDIFF, K.ARRAY) or y is x:
        return kind
    if not _children_shared(x, y, kind):
        raise RuleArgumentError(
            f"copy.copy: {type(x).__qualname__} defines a copy that does not share its parts with "
            "the original (a custom __copy__ or __reduce__); yuebing cannot follow derivatives "
            "through it. Write the copy in Python (it will be differentiated from source)"
        )
    return kind


@rrule_for(copy.copy)
def _copy_rrule(x):
    v = x.primal
    y = copy.copy(v)
    kind = _copy_kind(v, y)
    if kind is K.ARRAY:
        out = output(y)

        def pullback(dy):
            x.fdata += out.fdata
            return NoRData, NoRData

        return out, pullback
    if kind is K.LIST:
        return _shallow_copy_rrule(y, list(enumerate(y)), x.fdata, [NoTangent] * len(y))
    if kind is K.DICT:
        return _shallow_copy_rrule(y, list(y.items()), x.fdata, {})
    if kind is K.OBJECT or kind is K.CELL:
        new_fd = MutableTangent(type(y))
        out, pullback = _shallow_copy_rrule(y, list(K.object_fields(y).items()), _FieldsView(x.fdata),
                                            _FieldsView(new_fd))
        return CoDual(y, new_fd), pullback
    # immutable (numbers, tuples, frozen objects, functions): every part is shared
    return CoDual(y, x.fdata), lambda dy: (NoRData, dy)


class _FieldsView:
    """Item access to a ``MutableTangent``'s fields (missing fields read as NoTangent)."""

    __slots__ = ("fields",)

    def __init__(self, t: MutableTangent) -> None:
        self.fields = t.fields

    def __getitem__(self, name: str) -> Any:
        return self.fields.get(name, NoTangent)

    def __setitem__(self, name: str, value: Any) -> None:
        self.fields[name] = value


@frule_for(copy.copy)
def _copy_frule(x):
    v, t = x.primal, x.tangent
    y = copy.copy(v)
    kind = _copy_kind(v, y)
    if kind is K.ARRAY:
        return Dual(y, t.copy())
    if kind is K.LIST:
        return Dual(y, list(t))
    if kind is K.DICT:
        return Dual(y, dict(t))
    if kind is K.OBJECT or kind is K.CELL:
        return Dual(y, MutableTangent(type(y), dict(t.fields)))
    return Dual(y, t)


def _mutable_ids(x: Any) -> dict[int, Any]:
    """Every object with a tangent of its own (lists, dicts, objects, cells, float arrays)
    reachable from ``x``, by id."""
    found: dict[int, Any] = {}
    stack = [x]
    while stack:
        v = stack.pop()
        kind = K.primal_kind(v)
        if kind in (K.FLOAT, K.COMPLEX, K.NONDIFF):
            continue
        mutable = kind in K.MUTABLE_KINDS or kind is K.ARRAY
        if mutable:
            if id(v) in found:
                continue
            found[id(v)] = v
        if kind is not K.ARRAY:
            stack.extend(K.parts(v, kind)[1])
    return found


def _deepcopy(x: Any, memo: Any) -> Any:
    if memo is not _NOT_PASSED and primal(memo) is not None:
        raise RuleArgumentError(
            "copy.deepcopy: yuebing does not support the memo argument (a custom __deepcopy__ "
            "calling copy.deepcopy(value, memo)); call copy.deepcopy(value) instead"
        )
    y = copy.deepcopy(x)
    shared = _mutable_ids(x).keys() & _mutable_ids(y).keys()
    if shared:
        raise RuleArgumentError(
            "copy.deepcopy: the copy shares a mutable part with the original (a custom "
            "__deepcopy__, or a closure's cells); yuebing cannot give them one tangent. "
            "Copy the parts explicitly instead"
        )
    return y


@rrule_for(copy.deepcopy)
def _deepcopy_rrule(x, memo=_NOT_PASSED):
    y = _deepcopy(x.primal, memo)
    out = CoDual(y, T.fdata(T.zero_tangent(y)))  # mirrors the copy's aliasing, cycles and views

    def pullback(dy):
        x_full = T.join(x.fdata, T.zero_rdata(x.primal))
        # the copy depends on the original element by element: add its tangent into the
        # original's (arrays and float slots in place; value-typed parts come back as rdata)
        total = T.increment(x_full, T.join(out.fdata, dy))
        return _counted(NoRData, T.rdata(total), memo if memo is _NOT_PASSED else NoRData)

    return out, pullback


@frule_for(copy.deepcopy)
def _deepcopy_frule(x, memo=_NOT_PASSED):
    y = _deepcopy(x.primal, memo)
    return Dual(y, T.increment(T.zero_tangent(y), x.tangent))


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


def _self_containing() -> list:
    lst = [randn(), randn()]
    lst.append(lst)
    return lst


def _shared_array_list() -> tuple[list, np.ndarray]:
    a = randn(3)
    return [a, randn(), a], a


@__import__("dataclasses").dataclass
class _Point:
    x: float
    y: Any


_shared, _a = _shared_array_list()
_C = Case


# ---------------------------------------------------------------- sets (no tangent: undo only)


@rrule_for((set, "add"))
def _set_add_rrule(s, item):
    target, value = primal(s), primal(item)
    added = value not in target
    target.add(value)

    def pullback(dy):
        if added:
            target.discard(value)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@frule_for((set, "add"))
def _set_add_frule(s, item):
    primal(s).add(primal(item))
    return Dual(None, NoTangent)


@rrule_for((set, "discard"))
def _set_discard_rrule(s, item):
    target, value = primal(s), primal(item)
    present = value in target
    target.discard(value)

    def pullback(dy):
        if present:
            target.add(value)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@frule_for((set, "discard"))
def _set_discard_frule(s, item):
    primal(s).discard(primal(item))
    return Dual(None, NoTangent)


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------

# the tangent call mirrors the mutation on the tangent containers (append, extend, insert, pop,
# reverse, copy, get, __getitem__, __setitem__, keys/values/items: declared in second_order.py)
linear((list, "clear"), (dict, "pop"), (dict, "popitem"), (dict, "clear"), copy.copy, copy.deepcopy)
linear((dict, "setdefault"), stored=(2,))  # the default is written into the dict
zero((set, "add"), (set, "discard"), (str, "__getitem__"), (bytes, "__getitem__"), (range, "__getitem__"))


# the position or permutation must come from the primal (a tangent call would compare or order
# the tangents), and a list of (key, value) pairs has no tangent for its keys: these are written
# with covered functions, whose second order follows the primal's choices
def _list_sort(lst, key=None, reverse=False):
    lst[:] = sorted(lst, key=key, reverse=reverse)


def _list_remove(lst, value):
    lst.pop(lst.index(value))


def _dict_update(d, other=()):
    for key, value in dict(other).items():
        d[key] = value


defined_by((list, "sort"), _list_sort)
defined_by((list, "remove"), _list_remove)
defined_by((dict, "update"), _dict_update)


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
    # dict
    _C(dict.get, {"a": randn(), "b": randn(2)}, "a"),
    _C(dict.get, {"a": randn(), "b": randn(2)}, "b", name="dict.get(array value)"),
    _C(dict.get, {"a": randn()}, "z", name="dict.get(missing)"),
    _C(dict.get, {"a": randn()}, "z", randn(), name="dict.get(missing, default)"),
    _C(dict.get, {"a": randn()}, "a", randn(), name="dict.get(present, default)"),
    _C(dict.setdefault, {"a": randn()}, "a", randn()),
    _C(dict.setdefault, {"a": randn()}, "b", randn(), name="dict.setdefault(new key)"),
    _C(dict.setdefault, {"a": randn()}, "b", randn(3), name="dict.setdefault(new key, array)"),
    _C(dict.setdefault, {"a": randn()}, "b", name="dict.setdefault(new key, None)"),
    _C(dict.pop, {"a": randn(), "b": randn(2), "c": randn()}, "a", name="dict.pop(first key)"),
    _C(dict.pop, {"a": randn(), "b": randn(2)}, "b", name="dict.pop(last key, array)"),
    _C(dict.pop, {"a": randn()}, "z", randn(), name="dict.pop(missing, default)"),
    _C(dict.pop, {"a": randn(), "b": randn()}, "a", randn(), name="dict.pop(present, default)"),
    _C(dict.popitem, {"a": randn(), "b": randn()}),
    _C(dict.popitem, {"a": randn(), "b": randn(3)}, name="dict.popitem(array)"),
    _C(dict.update, {"a": randn(), "b": randn(2)}, {"b": randn(2), "c": randn()}),
    _C(dict.update, {"a": randn()}, [("a", randn()), ("b", randn(2)), ("a", randn())], name="dict.update(pairs, repeated key)"),
    _C(dict.update, {"a": randn()}, (("b", randn()), ["c", randn()]), name="dict.update(tuple of pairs, list pair)"),
    _C(dict.update, {"a": randn(), "b": randn()}, kwargs={"a": 2.5, "c": 1.0}, name="dict.update(keywords)"),
    _C(dict.update, {"a": randn()}, {"a": randn()}, kwargs={"b": 3.0}, name="dict.update(dict and keywords)"),
    _C(dict.copy, {"a": randn(), "b": randn(2), "c": [randn()]}),
    _C(dict.clear, {"a": randn(), "b": randn(2)}),
    # copy
    _C(copy.copy, [randn(), randn(2), [randn()]]),
    _C(copy.copy, {"a": randn(), "b": randn(2)}, name="copy.copy(dict)"),
    _C(copy.copy, randn(3, 2), name="copy.copy(array)"),
    _C(copy.copy, randn(), name="copy.copy(float)"),
    _C(copy.copy, (randn(), randn(2)), name="copy.copy(tuple)"),
    _C(copy.copy, _Point(randn(), randn(2)), name="copy.copy(object)"),
    _C(copy.deepcopy, [randn(), randn(2), [randn()], (randn(), 1)]),
    _C(copy.deepcopy, _shared_array_list()[0], name="copy.deepcopy(aliased arrays)"),
    _C(copy.deepcopy, _self_containing(), name="copy.deepcopy(list containing itself)"),
    _C(copy.deepcopy, {"a": randn(), "b": (randn(2), randn())}, name="copy.deepcopy(dict)"),
    _C(copy.deepcopy, _Point(randn(), [randn(), randn(2)]), name="copy.deepcopy(object)"),
    _C(copy.deepcopy, (lambda a: [a, a[1:]])(randn(4)), name="copy.deepcopy(array and its view)"),
    _C(copy.deepcopy, randn(), name="copy.deepcopy(float)"),
    # sets carry no tangent; their mutations are undone
    _C(set.add, {1, 2}, 3, name="set.add(new)"),
    _C(set.add, {1, 2}, 2, name="set.add(present)"),
    _C(set.discard, {1, 2}, 2, name="set.discard(present)"),
]
