"""The ``__new__`` of builtin types, which a subclass's own ``__new__`` reaches through
``super().__new__(cls, ...)`` (``ir/class_construction.py`` runs that ``__new__`` from source).

``float.__new__(cls, x)`` is ``float(x)`` as an instance of ``cls``: its tangent is a float, as
any float's is (DESIGN.md §3). ``int``, ``str`` and ``bytes`` subclasses carry no derivative.
(``tuple.__new__`` is in ``ordering.py``, beside ``tuple``; ``object.__new__`` is declared in
``zero_derivative.py``.)
"""
from __future__ import annotations

import builtins
from typing import Any

from ..tangents import NoRData
from .cases import Case, randn
from .core import RRULES, FRULES, Dual, primal, register_frule, register_rrule
from .declare import nondifferentiable
from .second_order import linear
from .util import output



def _float_class(cls: Any) -> type:
    kind = primal(cls)
    if not (isinstance(kind, type) and issubclass(kind, float)):
        raise TypeError(f"float.__new__({getattr(kind, '__qualname__', kind)}): it is not a subtype of float")
    return kind


def _float_new_rrule(cls: Any, *x: Any) -> tuple:
    kind = _float_class(cls)
    out, pullback = RRULES.by_function[builtins.float][0](*x)  # (builtins.py registers it)
    return output(float.__new__(kind, out.primal)), lambda dy: (NoRData, *pullback(dy))


def _float_new_frule(cls: Any, *x: Any) -> Dual:
    kind = _float_class(cls)
    out = FRULES.by_function[builtins.float][0](*x)
    return Dual(float.__new__(kind, out.primal), out.tangent)


register_rrule(float.__new__, _float_new_rrule)
register_frule(float.__new__, _float_new_frule)
linear(float.__new__, data=(1,))  # like float(x): the class is no value
nondifferentiable(int.__new__, str.__new__, bytes.__new__)


class _Positive(float):
    """A float subclass, as a ``__new__`` of its own makes it."""


CASES = [
    Case(float.__new__, _Positive, randn(), name="float.__new__(subclass, float)"),
    Case(float.__new__, float, randn(), name="float.__new__(float, float)"),
]
