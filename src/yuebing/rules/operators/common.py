"""What the operator rules (``arithmetic``, ``in_place``) and ``builtins`` share: the
classification of operands (numbers and arrays, values without a tangent, repeat counts) and the
element helpers that take the elements of lists, tuples and arrays apart and build new lists and
tuples of them (concatenation, repetition, ``list()``, ``zip()``, ``sorted()``...).

A full tangent of a list element lives in the list's fdata (a list of full tangents). When an
element is put into a new container, the new container's slot gets a *fresh* tangent: the same
object for mutable parts (so aliasing is kept and cotangents land in place) and zero for value
parts (floats), whose cotangent is sent back to the source slot by the pullback.

This module registers no rule.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ... import tangents as T
from ...tangents import MutableTangent, NoFData, NoRData, NoTangent, SetTangent
from ...tangents import kinds as K
from ...tangents.dict_views import dict_of_view, view_name
from ..core import CoDual, Dual, RuleArgumentError, primal
from ..util import add_rdata_to, sum_rdata, tangent

# ============================================================================================
# Classifying operands
# ============================================================================================


_NUMBER_TYPES = (int, float, complex, np.number, np.bool_)


def _is_numeric(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind != "O"
    return isinstance(x, _NUMBER_TYPES)


def tangent_free(x: Any) -> bool:
    """Whether primal ``x`` carries no tangent at all (ints, strings, lists of ints...)."""
    stack, seen = [x], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        try:
            kind = K.primal_kind(v)
        except TypeError:
            return False
        if kind is K.NONDIFF:
            continue
        if kind in (K.LIST, K.TUPLE, K.DICT):
            stack.extend(v.values() if kind is K.DICT else v)
            continue
        return False
    return True


def _unsupported(name: str, *xs: Any) -> RuleArgumentError:
    types_ = ", ".join(type(x).__qualname__ for x in xs)
    return RuleArgumentError(
        f"{name}: yuebing has no rule for operands of type ({types_}) that carry derivatives. "
        "Convert lists of numbers with np.asarray, or register a rule for the type's operator "
        "method with yuebing.rules.register_rrule"
    )


def _is_count(n: Any) -> bool:
    return isinstance(n, (int, np.integer)) and not isinstance(n, (float, complex))


# ============================================================================================
# Elements of sequences
# ============================================================================================


_IDENTITY_TANGENTS = (np.ndarray, list, dict, MutableTangent)
_SCALARS = (float, complex, np.floating, np.complexfloating)


def fdata_part(t: Any) -> Any:
    """The fdata half of a full tangent (fast paths for the common leaves)."""
    if t is NoTangent or isinstance(t, _SCALARS):
        return NoFData
    if isinstance(t, _IDENTITY_TANGENTS):
        return t
    return T.fdata(t)


def rdata_part(t: Any) -> Any:
    """The rdata half of a full tangent."""
    if t is NoTangent or isinstance(t, _IDENTITY_TANGENTS):
        return NoRData
    if isinstance(t, _SCALARS):
        return t
    return T.rdata(t)


def fresh_tangent(p: Any, fd: Any) -> Any:
    """A full tangent of element ``p`` with fdata ``fd`` and zero rdata."""
    if fd is NoFData:
        if isinstance(p, (float, np.floating)):
            return 0.0
        if isinstance(p, (complex, np.complexfloating)):
            return 0j
        return T.zero_tangent(p)
    if isinstance(fd, _IDENTITY_TANGENTS):
        return fd
    return T.join(fd, T.rdata(T.zero_tangent(p)))


class Elements:
    """The elements of an iterable argument in reverse mode: their primals (``items``), the fdata
    a codual of each carries (``fdatas``), and where an element's cotangent goes (``deliver``).
    ``rdata()`` is the argument's rdata once every element's cotangent has been delivered.

    Lists: elements' full tangents are the list's fdata slots. Tuples: fdata per element, rdata
    collected here. 1-D arrays: NumPy scalars whose cotangents go into the array's fdata;
    k-D arrays: row views whose fdata is the same row of the array's fdata. Sets of floats: their
    elements, whose cotangents go into the set's ``SetTangent`` (keyed by element); a
    ``SetTangent`` itself (the tangent call of a linear rule in second order) iterates its values,
    as the set iterates its elements. Dicts iterate keys and other iterables (ranges, strings,
    sets of labels, generators of ints) must carry no tangent.
    """

    __slots__ = ("items", "fdatas", "_x", "_fd", "_kind", "_r", "_keys")

    def __init__(self, c: Any, name: str) -> None:
        x = primal(c)
        fd = c.fdata if isinstance(c, CoDual) else NoFData
        self._x, self._fd, self._r = x, fd, None
        if isinstance(x, list) and isinstance(fd, list):
            self._kind = "list"
            self.items = list(x)
            self.fdatas = [fdata_part(t) for t in fd]
        elif isinstance(x, tuple):
            self._kind = "tuple"
            self.items = list(x)
            self.fdatas = list(fd) if isinstance(fd, tuple) else [NoFData] * len(x)
            self._r = [NoRData] * len(x)
        elif isinstance(fd, K.VALUE_CARRYING_DICT_VIEWS) and isinstance(x, K.VALUE_CARRYING_DICT_VIEWS):
            self._kind = view_name(fd)  # "values" or "items": cotangents go to the dict's slots
            self._fd = dict_of_view(fd)
            self.items = list(x)
            self._keys = list(self._fd)
            slots = [self._fd[k] for k in self._keys]
            if self._kind == "values":
                self.fdatas = [fdata_part(t) for t in slots]
            else:
                self.fdatas = [(NoFData, fdata_part(t)) if fdata_part(t) is not NoFData else NoFData for t in slots]
        elif isinstance(x, (set, frozenset)) and isinstance(fd, dict) or type(x) is SetTangent:
            self._kind = "set"
            self._keys = list(x)
            # (a SetTangent walked in a linear rule's tangent call: an int label's tangent is 0, as a
            # tangent call sees ints read as numbers)
            self.items = [0 if t is NoTangent and isinstance(k, (int, np.integer)) else t for k, t in x.items()] \
                if type(x) is SetTangent else self._keys
            # (an element whose tangent is identity data, an object's, carries it as its fdata)
            self.fdatas = [NoFData] * len(self.items) if type(x) is SetTangent else \
                [fdata_part(fd.get(k, NoTangent)) for k in self._keys]
        elif isinstance(x, np.ndarray) and isinstance(fd, np.ndarray):
            self.items = list(x)
            if x.ndim == 1:
                self._kind = "vector"
                self.fdatas = [NoFData] * len(self.items)
            else:
                self._kind = "rows"
                self.fdatas = [fd[i] for i in range(len(self.items))]
        else:
            self._kind = "constant"
            self.items = list(x)
            if not isinstance(x, (dict, np.ndarray)) and not all(map(tangent_free, self.items)) \
                    and not isinstance(x, (set, frozenset)):  # (a constant set of floats)
                raise RuleArgumentError(
                    f"{name}: yuebing cannot follow derivatives through the elements of a "
                    f"{type(x).__qualname__}; pass a list or tuple instead (e.g. a list comprehension)"
                )
            self.fdatas = [NoFData] * len(self.items)

    def __len__(self) -> int:
        return len(self.items)

    def codual(self, i: int) -> CoDual:
        return CoDual(self.items[i], self.fdatas[i])

    def deliver(self, i: int, r: Any) -> None:
        if r is NoRData:
            return
        kind = self._kind
        if kind == "list":
            self._fd[i] = add_rdata_to(self._fd[i], r)
        elif kind == "tuple":
            self._r[i] = sum_rdata(self._r[i], r)
        elif kind == "vector":
            self._fd[i] += r if self._fd.dtype.kind == "c" else np.real(r)
        elif kind == "set":
            if isinstance(self._fd, dict):
                key = self._keys[i]
                self._fd[key] = add_rdata_to(self._fd[key], r)
        elif kind in ("values", "items"):
            value_r = r if kind == "values" else (r[1] if isinstance(r, tuple) else NoRData)
            key = self._keys[i]
            self._fd[key] = add_rdata_to(self._fd[key], value_r)

    def rdata(self) -> Any:
        if self._kind != "tuple" or all(r is NoRData for r in self._r):
            return NoRData
        tp = type(self._x)
        return tuple.__new__(tp, self._r) if hasattr(tp, "_fields") else tuple(self._r)


def forward_elements(d: Any, name: str) -> list[tuple[Any, Any]]:
    """``(primal, tangent)`` of each element of a forward-mode iterable argument."""
    x = primal(d)
    t = tangent(d)
    if isinstance(x, list):
        return list(zip(x, t if isinstance(t, list) else [NoTangent] * len(x)))
    if isinstance(x, tuple):
        return list(zip(x, t if isinstance(t, tuple) else [NoTangent] * len(x)))
    if isinstance(x, K.VALUE_CARRYING_DICT_VIEWS) and isinstance(t, K.VALUE_CARRYING_DICT_VIEWS):
        if isinstance(x, K.DICT_VALUES):
            return list(zip(x, t))
        return [((k, v), (NoTangent, tv)) for (k, v), (_, tv) in zip(x, t)]
    if isinstance(x, (set, frozenset)):  # a set of floats: each element's tangent from the SetTangent
        return [(v, t.get(v, NoTangent) if isinstance(t, dict) else NoTangent) for v in x]
    if isinstance(x, np.ndarray) and isinstance(t, np.ndarray):
        if x.ndim == 1:
            cast = complex if x.dtype.kind == "c" else float
            return [(v, cast(dv)) for v, dv in zip(x, t)]
        return [(x[i], t[i]) for i in range(len(x))]
    items = list(x)
    if not isinstance(x, (dict, np.ndarray)) and not all(map(tangent_free, items)):
        raise RuleArgumentError(
            f"{name}: yuebing cannot follow derivatives through the elements of a "
            f"{type(x).__qualname__}; pass a list or tuple instead (e.g. a list comprehension)"
        )
    return [(v, NoTangent) for v in items]


# Output elements: (primal, fdata, back). ``back`` says where the element's cotangent goes:
# None (nowhere), (Elements, i), a list of backs (a tuple element built of parts), or a callable
# (always called, also with NoRData: e.g. a per-element pullback of map()).


def ref(src: Elements, i: int) -> tuple:
    return src.items[i], src.fdatas[i], (src, i)


def const(p: Any) -> tuple:
    return p, NoFData, None


def tuple_of(parts: list) -> tuple:
    fds = tuple(fd for _, fd, _ in parts)
    fd = NoFData if all(f is NoFData for f in fds) else fds
    return tuple(p for p, _, _ in parts), fd, [b for _, _, b in parts]


def send(back: Any, r: Any) -> None:
    if back is None:
        return
    if type(back) is tuple:
        if r is not NoRData:
            back[0].deliver(back[1], r)
    elif type(back) is list:
        if r is not NoRData:
            for b, rk in zip(back, r):
                send(b, rk)
    else:
        back(r)


def list_output(nodes: list) -> tuple[CoDual, Callable[[], None]]:
    """A new list of ``nodes`` and ``send_back()``, which sends each slot's cotangent back."""
    out = CoDual([p for p, _, _ in nodes], [fresh_tangent(p, fd) for p, fd, _ in nodes])

    def send_back() -> None:
        slots = out.fdata
        for j in range(len(nodes) - 1, -1, -1):
            send(nodes[j][2], rdata_part(slots[j]))

    return out, send_back


def tuple_output(nodes: list) -> tuple[CoDual, Callable[[Any], None]]:
    """A new tuple of ``nodes`` and ``send_back(dy)`` for its rdata ``dy``."""
    p, fd, backs = tuple_of(nodes)

    def send_back(dy: Any) -> None:
        if dy is NoRData:
            dy = (NoRData,) * len(backs)
        for j in range(len(backs) - 1, -1, -1):
            send(backs[j], dy[j])

    return CoDual(p, fd), send_back


def forward_sequence(kind: type, items: list[tuple[Any, Any]]) -> Dual:
    """A forward-mode list or tuple of ``(primal, tangent)`` items."""
    if kind is list:
        return Dual([p for p, _ in items], [fit_element(p, t) for p, t in items])
    ts = tuple(fit_element(p, t) for p, t in items)
    return Dual(tuple(p for p, _ in items), NoTangent if all(t is NoTangent for t in ts) else ts)


def fit_element(p: Any, t: Any) -> Any:
    """A tangent for element ``p`` (zero where the source had none)."""
    if t is NoTangent and isinstance(p, _SCALARS):
        return 0j if isinstance(p, (complex, np.complexfloating)) else 0.0
    return t

