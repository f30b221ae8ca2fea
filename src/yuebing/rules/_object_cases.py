"""``check_rule``'s cases of ``objects.py`` (attribute reads, writes and deletions on plain,
slotted, frozen and namedtuple objects), with the classes they are made of."""
from __future__ import annotations

import collections
import dataclasses
from typing import Any

import numpy as np

from .cases import Case, randc, randn

_MISSING = object()


class _Body:
    """A plain object with float, array and list fields, and a method."""

    def __init__(self, x: float, a: np.ndarray, items: list) -> None:
        self.x = x
        self.a = a
        self.items = items

    def energy(self) -> float:
        return self.x * float(np.sum(self.a))


class _Slotted:
    __slots__ = ("p", "q")

    def __init__(self, p: float, q: Any = _MISSING) -> None:
        self.p = p
        if q is not _MISSING:
            self.q = q


@dataclasses.dataclass(frozen=True)
class _Frozen:
    w: np.ndarray
    b: float
    n: int = 3


_Pair = collections.namedtuple("_Pair", ["u", "v"])


def _body() -> _Body:
    return _Body(randn(), randn(3), [randn(), randn(2)])


_C = Case

CASES = [
    # getattr on a mutable object: float field (value), array and list fields (aliasing)
    Case(getattr, _body(), "x"),
    Case(getattr, _body(), "a", name="getattr(object, array field)"),
    Case(getattr, _body(), "items", name="getattr(object, list field)"),
    Case(getattr, _body(), "energy", name="getattr(object, method)"),
    Case(getattr, _body(), "x", 2.5, name="getattr(object, present, default)"),
    Case(getattr, _body(), "missing", randn(), name="getattr(object, missing, default)"),
    Case(getattr, _body(), "missing", randn(2), name="getattr(object, missing, array default)"),
    Case(object.__getattribute__, _body(), "x"),
    Case(object.__getattribute__, _body(), "a", name="object.__getattribute__(object, array field)"),
    # slots, frozen dataclass, namedtuple
    Case(getattr, _Slotted(randn(), randn(2)), "p", name="getattr(slots, float)"),
    Case(getattr, _Slotted(randn(), randn(2)), "q", name="getattr(slots, array)"),
    Case(getattr, _Slotted(randn()), "q", 1.5, name="getattr(slots, unassigned, default)"),
    Case(getattr, _Frozen(randn(3), randn()), "b", name="getattr(frozen, float)"),
    Case(getattr, _Frozen(randn(3), randn()), "w", name="getattr(frozen, array)"),
    Case(getattr, _Frozen(randn(3), randn()), "n", name="getattr(frozen, int)"),
    Case(getattr, _Pair(randn(), randn(2)), "u", name="getattr(namedtuple, float)"),
    Case(getattr, _Pair(randn(), randn(2)), "v", name="getattr(namedtuple, array)"),
    # ndarray views and non-differentiable attributes
    Case(getattr, randn(3, 4), "T", name="getattr(array, T)"),
    Case(getattr, randn(2, 3, 4, dtype=np.float32), "mT", name="getattr(float32 array, mT)"),
    Case(getattr, randc(3, 2), "T", name="getattr(complex array, T)"),
    Case(getattr, randc(3, 2), "real", name="getattr(complex array, real)"),
    Case(getattr, randc(3, 2), "imag", name="getattr(complex array, imag)"),
    Case(getattr, randn(4), "real", name="getattr(real array, real)"),
    Case(getattr, randn(4), "imag", name="getattr(real array, imag): read-only zeros"),
    Case(getattr, randn(), "real", name="getattr(float, real)"),
    Case(getattr, randc(), "real", name="getattr(complex, real)"),
    Case(getattr, randc(), "imag", name="getattr(complex, imag)"),
    Case(getattr, randn(0, 3), "T", name="getattr(empty array, T)"),
    Case(getattr, np.array(randn()), "T", name="getattr(0-d array, T)"),
    Case(getattr, randn(3, 4), "shape", name="getattr(array, shape)"),
    Case(getattr, randn(3, 4), "ndim", name="getattr(array, ndim)"),
    # bound builtin methods
    Case(getattr, randn(3), "sum", name="getattr(array, sum)"),
    Case(getattr, [randn(), randn(2)], "append", name="getattr(list, append)"),
    Case(getattr, {"k": randn()}, "get", name="getattr(dict, get)"),
    # reverse only: with nothing differentiable in (output, arguments), finite differences give
    # NoTangent, which check_rule's forward comparison does not accept for the tuple it builds
    Case(getattr, np, "sin", mode=("rev",), name="getattr(module, function)"),
    # setattr / delattr: existing and new attributes, floats and arrays, slots
    _C(setattr, _body(), "x", randn()),
    _C(setattr, _body(), "a", randn(2), name="setattr(object, array over array)"),
    _C(setattr, _body(), "new", randn(), name="setattr(object, new attribute)"),
    _C(setattr, _body(), "new", randn(2), name="setattr(object, new array attribute)"),
    _C(setattr, *(lambda b: (b, "x", b.a))(_body()), name="setattr(object, aliasing its own array)"),
    _C(setattr, _Slotted(randn(), randn(2)), "p", randn(), name="setattr(slots, assigned)"),
    _C(setattr, _Slotted(randn()), "q", randn(3), name="setattr(slots, unassigned)"),
    _C(object.__setattr__, _body(), "x", randc(), name="object.__setattr__(object, complex)"),
    _C(object.__setattr__, _body(), "z", randn(), name="object.__setattr__(object, new)"),
    _C(delattr, _body(), "x"),
    _C(delattr, _body(), "a", name="delattr(object, array, not last)"),
    _C(delattr, _Slotted(randn(), randn(2)), "q", name="delattr(slots)"),
    _C(object.__delattr__, _body(), "items", name="object.__delattr__(object)"),
]
