"""What the container rule modules (``lists``, ``dicts``, ``copies``) and ``objects`` share: the
tangent slot a container keeps for each element, the elements of an iterable argument, shallow
copies, and putting a key back in its place in a dict.

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

This module registers no rule.
"""
from __future__ import annotations

from collections import OrderedDict, deque
from typing import Any

import numpy as np

from ... import tangents as T
from ...tangents import MutableTangent, NoFData, NoRData, NoTangent, SetTangent
from ...tangents import kinds as K
from ..cases import randn
from ..core import CoDual, RuleArgumentError, primal
from ..util import add_rdata_to, tangent

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




#: tangents that are identity data whole: their fdata is themselves (no walk needed)
_WHOLE_FDATA = frozenset({np.ndarray, list, dict, deque, MutableTangent, SetTangent})


def _element_fdata(t: Any) -> Any:
    """The fdata part of element tangent ``t`` (fast for floats, arrays and mutable tangents)."""
    if type(t) is float or t is NoTangent:
        return NoFData
    if type(t) in _WHOLE_FDATA:
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
# Shallow copies (list.copy, dict.copy, copy.copy)
# ------------------------------------------------------------------------------------------------


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


# ------------------------------------------------------------------------------------------------
# Dicts keep their key order
# ------------------------------------------------------------------------------------------------


def _reinsert(d: dict, key: Any, value: Any, position: int | None) -> None:
    """Put ``key`` back at ``position`` in ``d``'s order (``None``: at the end)."""
    if position is None or position == len(d):
        _store(d, key, value)
        return
    items = list(d.items())
    items.insert(position, (key, value))
    d.clear()
    for k, v in items:  # (not d.update: a Counter's adds, and would count pairs)
        _store(d, k, v)


def _store(d: dict, key: Any, value: Any) -> None:
    """``dict.__setitem__``, bypassing a subclass's override, except an ``OrderedDict``'s (it
    keeps its order in a list of its own, which ``dict``'s method would leave behind)."""
    (OrderedDict.__setitem__ if isinstance(d, OrderedDict) else dict.__setitem__)(d, key, value)


def _remove(d: dict, key: Any) -> Any:
    """``dict.pop(d, key)``, an ``OrderedDict``'s own for one (``_store``)."""
    return (OrderedDict.pop if isinstance(d, OrderedDict) else dict.pop)(d, key)


# ------------------------------------------------------------------------------------------------
# Case data shared by the container modules' CASES
# ------------------------------------------------------------------------------------------------


def _self_containing() -> list:
    lst = [randn(), randn()]
    lst.append(lst)
    return lst


def _shared_array_list() -> tuple[list, np.ndarray]:
    a = randn(3)
    return [a, randn(), a], a

