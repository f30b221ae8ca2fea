"""Float data carried by exceptions: ``raise ValueError(x * 2.0)`` read back as ``e.args[0]``, a
user exception's ``e.value`` set from an argument, ``StopIteration.value`` of a generator.

An exception has no tangent of its own (``tangents/kinds.py``: its kind carries none), so what
it is made from keeps its derivative data beside it, per differentiation pass and role, as the
outside state keeps a global's (``outside_state.register``, kind ``"exception"``): the rule of
``made_exception`` (every construction of an exception class in differentiated code,
``transform/protocols.dispatch``; the normaliser lowers ``raise E(args)`` to such a call)
records each argument with its fdata (reverse), its tangent (forward), or both and the fdata
tangent (second order). An attribute read of the exception (``rules/objects.py``,
``transform/lifting_objects.py``) whose value *is* one of those arguments (by identity: the
very float, array or list passed), or a tuple of them (``e.args``), hands out that argument's
data; a float's cotangent gathers in the record and the constructor's pullback returns it to
the argument. Any other float data read out of an exception (one made by plain code, or a value
an ``__init__`` computed from its arguments) is refused by name (``objects._refuse_carried_floats``),
at any depth: a user object holding floats in ``e.args`` was read as a constant, its derivative
lost (``_float_reach.holds_floats``). One made by a rule's C code (``KeyError(box)`` of ``d[box]``,
``AttributeError.obj``) is recorded with the data of the object the rule was handed
(``carry_handed``).
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..ir.primitives import made_exception
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent
from . import exception_tangents, outside_state
from ._float_reach import BUDGET, LABEL_TYPES, _held, holds_floats
from .batched import _ALWAYS
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .second_order import _register
from .util import sum_rdata

_KIND = "exception"
_ROLE_TANGENT = "tangent"


class Carried:
    """The arguments an exception was made from (``values``) and their derivative data in one
    role (``data``: fdata, tangents or fdata tangents); ``rdata``: the cotangents the reads of
    them gathered (reverse roles)."""

    __slots__ = ("values", "data", "rdata")

    def __init__(self, values: list, data: list) -> None:
        self.values, self.data = values, data
        self.rdata: list = [NoRData] * len(values)

    def position(self, v: Any) -> int:
        """The argument ``v`` is (by identity), or -1."""
        for j, value in enumerate(self.values):
            if value is v:
                return j
        return -1

    def positions(self, v: Any) -> list | None:
        """Per item of what was read, the argument it is (-1: none, then it holds no float data),
        or None when ``v`` cannot be followed (float data from elsewhere)."""
        j = self.position(v)
        if j >= 0:
            return [j]
        if type(v) is not tuple:
            return None
        found = [self.position(item) for item in v]
        if any(j < 0 and holds_floats([item]) for j, item in zip(found, v)):
            return None
        return found

    def take(self) -> list:
        """The gathered cotangents, handed once (the pullback runs once)."""
        r, self.rdata = self.rdata, [NoRData] * len(self.values)
        return r


def _carries(values: list) -> bool:
    return holds_floats(values)


def _record(role: str, e: BaseException, values: list, data: list) -> Carried | None:
    return record_carried(role, e, values, data, _KIND)


def record_carried(role: str, owner: Any, values: list, data: list, kind: str) -> Carried | None:
    """Record what ``owner`` was made from with its data in ``role`` for the open pass, under
    ``kind`` (also a tuple bunch's extra fields: ``bunch_data.py``); None outside a pass."""
    if not outside_state.active():  # outside a pass: nothing is followed (a read is refused)
        return None
    carried = Carried(values, data)
    outside_state.register(role, owner, carried, kind)
    return carried


# --------------------------------------------------------------------------------------------
# Construction: made_exception(cls, *args, **kwargs). A pullback's rdata: the function's own,
# the class's, the arguments', then the keywords' in call order (rules/core.py)
# --------------------------------------------------------------------------------------------


def _made(cls: Any, args: list, kwargs: dict) -> BaseException:
    """``made_exception(cls, *args, **kwargs)``, refusing a class whose Python ``__init__`` or
    ``__new__`` (run without derivatives) wrote into an argument holding float data: its
    derivative would keep the value from before the write."""
    values = [*args, *kwargs.values()]
    if not (_python_construction(cls) and holds_floats(values)):
        return made_exception(cls, *args, **kwargs)
    before = _snapshot(values)
    e = made_exception(cls, *args, **kwargs)
    if not _same(before, _snapshot(values)):
        raise RuleArgumentError(
            f"{cls.__qualname__}: yuebing cannot differentiate an exception whose __init__ (or __new__) writes into "
            "an argument holding float data: it runs without derivatives, so the value written would keep the "
            f"derivative of the one before. What to do: make the change before raising (xs[0] = 3.0 * xs[0]; "
            f"raise {cls.__qualname__}(xs)), and let __init__ keep what it is given")
    return e


def _python_construction(cls: Any) -> bool:
    return any(isinstance(getattr(cls, name, None), types.FunctionType) for name in ("__init__", "__new__")) \
        or isinstance(cls.__dict__.get("__new__") if isinstance(cls, type) else None, staticmethod)


def _snapshot(values: list) -> list:
    """The float data ``values`` reach and the shapes of what holds it (lengths, types), in one
    order: two snapshots differ when a write changed any of it."""
    out: list = []
    pending, seen = list(reversed(values)), set()
    while pending and len(out) < BUDGET:
        value = pending.pop()
        if isinstance(value, (float, complex, np.inexact)) or type(value) in LABEL_TYPES \
                or isinstance(value, (type, np.integer, np.bool_)):
            out.append(value)
        elif id(value) in seen:
            out.append(("seen", id(value)))
        elif isinstance(value, np.ndarray):
            seen.add(id(value))
            out.append(value.copy())
        else:
            seen.add(id(value))
            held = _held(value)
            out.append((type(value), len(held)))
            pending.extend(reversed(held))
    return out


def _same(before: list, after: list) -> bool:
    if len(before) != len(after):
        return False
    for a, b in zip(before, after):
        if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
            if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape
                    and np.array_equal(a, b, equal_nan=a.dtype.kind in "fc")):
                return False
        elif not (a is b or a == b or a != a and b != b):  # (NaN equals NaN here)
            return False
    return True


def _with_tangent(cls: Any, given: list) -> bool:
    """Whether the exception is made with a tangent of its own, its ``__init__`` differentiated
    (``exception_tangents.py``), rather than run plainly beside the arguments' record."""
    return outside_state.active() and exception_tangents.differentiates_init(cls, given)


def _made_rrule(*args: Any, **kwargs: Any) -> tuple[CoDual, Any]:
    given = list(args[1:]) + list(kwargs.values())
    if _with_tangent(primal(args[0]), [primal(a) for a in given]):
        return exception_tangents.construct_reverse(primal(args[0]), args[1:], kwargs)
    e = _made(primal(args[0]), [primal(a) for a in args[1:]], {k: primal(v) for k, v in kwargs.items()})
    values = [primal(a) for a in given]
    carried = _record("fdata", e, values, [_fdata(a) for a in given]) if _carries(values) else None
    nothing = (NoRData,) * (2 + len(given))

    def pullback(dy: Any) -> tuple:
        return nothing if carried is None else (NoRData, NoRData, *carried.take())

    if carried is None:
        pullback.changes_nothing = True  # type: ignore[attr-defined]  # (transform/exceptions.py)
    return CoDual(e, NoFData), pullback


def _made_frule(*args: Any, **kwargs: Any) -> Dual:
    given = list(args[1:]) + list(kwargs.values())
    if _with_tangent(primal(args[0]), [primal(a) for a in given]):
        return exception_tangents.construct_forward(primal(args[0]), args[1:], kwargs)
    e = _made(primal(args[0]), [primal(a) for a in args[1:]], {k: primal(v) for k, v in kwargs.items()})
    values = [primal(a) for a in given]
    if _carries(values):
        _record(_ROLE_TANGENT, e, values, [a.tangent if isinstance(a, Dual) else NoTangent for a in given])
    return Dual(e, NoTangent)


def _made_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: one exception, recorded with the fdata, the fdata tangents and the tangents
    of its arguments; the dual pullback hands back what the reads gathered in both reverse roles."""
    if _with_tangent(args[0][0], [a[0] for a in (*args[1:], *kwargs.values())]):
        return exception_tangents.construct_second(args[0][0], args[1:], kwargs)
    e = _made(args[0][0], [a[0] for a in args[1:]], {k: v[0] for k, v in kwargs.items()})
    given = list(args[1:]) + list(kwargs.values())
    values = [a[0] for a in given]
    nothing = (NoRData,) * (2 + len(given))
    if not _carries(values) or not outside_state.active():
        return (e, NoFData, NoTangent, NoFData), lambda dy, dy_d: (nothing, nothing)
    fdata = _record("fdata", e, values, [a[1] for a in given])
    fdata_tangent = _record("fdata_tangent", e, values, [a[3] for a in given])
    _record(_ROLE_TANGENT, e, values, [a[2] for a in given])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return (NoRData, NoRData, *fdata.take()), (NoRData, NoRData, *fdata_tangent.take())

    return (e, NoFData, NoTangent, NoFData), pullback


def _fdata(a: Any) -> Any:
    return a.fdata if isinstance(a, CoDual) else NoFData


# --------------------------------------------------------------------------------------------
# An exception a rule's C code made from what it was handed: KeyError(box) of d[box], the obj of
# an AttributeError
# --------------------------------------------------------------------------------------------


#: what an exception carries that is no user object (messages, numbers, keys of labels)
_NOT_HANDED_OBJECTS = frozenset({str, int, float, complex, bool, tuple, bytes, type(None)})


def carry_handed(error: BaseException, args: tuple) -> None:
    """``error`` leaves a rule called with ``args`` (a mode's values: coduals, duals or second
    order's 4-tuples; ``transform/protocols.dispatch``). When it holds, in ``args`` or an
    AttributeError's ``obj``, a user object the rule was handed, that object is recorded with
    its derivative data, as ``made_exception`` records its arguments: a handler reading
    ``e.args[0].value`` then has it. Only objects whose data is a ``MutableTangent``, where their
    fields' cotangents gather (a number's would need the rule's pullback, which never runs: its
    read stays refused by name). Not in a pass nested in another (third order: ``yb.hvp`` of a
    function calling ``yb.grad``), whose record would not carry the outer pass's derivative: the
    read is refused there as before."""
    held = [*error.args, getattr(error, "obj", None)] if isinstance(error, AttributeError) else error.args
    if not any(type(v) not in _NOT_HANDED_OBJECTS for v in held) or not outside_state.active() \
            or outside_state.nested() or type(error).__module__.startswith("yuebing.") \
            or outside_state.registered(_ROLE_TANGENT, error, _KIND) is not None \
            or outside_state.registered("fdata", error, _KIND) is not None:
        return  # (StopIteration() of every loop's end: the first test)
    values, roles = [], {}
    for value in held:
        data = _handed_data(value, args)
        if data is not None and not any(value is v for v in values):
            values.append(value)
            for role, d in data.items():
                roles.setdefault(role, []).append(d)
    for role, data in roles.items():
        _record(role, error, values, data)


def _handed_data(value: Any, args: tuple) -> dict | None:
    """Per role, the derivative data of the user object ``value`` when it is one of ``args``."""
    if type(value) in _NOT_HANDED_OBJECTS:
        return None
    for a in args:
        if isinstance(a, CoDual) and a.primal is value:
            return {"fdata": a.fdata} if isinstance(a.fdata, MutableTangent) else None
        if isinstance(a, Dual) and a.primal is value:
            return {_ROLE_TANGENT: a.tangent} if isinstance(a.tangent, MutableTangent) else None
        if type(a) is tuple and len(a) == 4 and a[0] is value:
            return {"fdata": a[1], _ROLE_TANGENT: a[2], "fdata_tangent": a[3]} \
                if all(isinstance(d, MutableTangent) for d in (a[1], a[3])) else None
    return None


# --------------------------------------------------------------------------------------------
# Reading
# --------------------------------------------------------------------------------------------


def carried_read(o: Any, v: Any, kind: str = _KIND, name: str = "") -> tuple[CoDual, Any] | None:
    """Reverse mode: ``(codual, owner rdata)`` of ``v``, attribute ``name`` of exception ``o``:
    its tangent's field (``exception_tangents.py``), or, when ``v`` is (or is a tuple of) what
    ``o`` (or a record of another ``kind``) was made from in this pass, that; else None."""
    if kind == _KIND and name:
        field = exception_tangents.read_field(o, name, v)
        if field is not None:
            return field
    if not holds_floats([v]):
        return None  # (nothing to follow: read as before)
    carried = outside_state.registered("fdata", o, kind)
    found = carried.positions(v) if isinstance(carried, Carried) else None  # (not an exception's tangent)
    if found is None:
        return None
    if type(v) is not tuple or carried.position(v) >= 0:
        j = found[0]

        def one(dy: Any) -> Any:
            carried.rdata[j] = sum_rdata(carried.rdata[j], dy)
            return NoRData

        return CoDual(v, carried.data[j]), one
    parts = [carried.data[j] if j >= 0 else NoFData for j in found]

    def items(dy: Any) -> Any:
        if dy is not NoRData:
            for j, r in zip(found, dy):
                if j >= 0:
                    carried.rdata[j] = sum_rdata(carried.rdata[j], r)
        return NoRData

    return CoDual(v, tuple(parts) if any(p is not NoFData for p in parts) else NoFData), items


def carried_tangent(o: Any, v: Any, kind: str = _KIND, name: str = "") -> Any:
    """Forward mode and second order: the tangent of ``v``, attribute ``name`` of exception ``o``
    (as ``carried_read``), or None when it was not made from it in this pass."""
    if kind == _KIND and name:
        field = exception_tangents.field_tangent(o, name, v)
        if field is not None:
            return field
    if not holds_floats([v]):
        return None
    carried = outside_state.registered(_ROLE_TANGENT, o, kind)
    found = carried.positions(v) if isinstance(carried, Carried) else None
    if found is None:
        return None
    if type(v) is not tuple or carried.position(v) >= 0:
        return carried.data[found[0]]
    parts = [carried.data[j] if j >= 0 else NoTangent for j in found]
    return tuple(parts) if any(p is not NoTangent for p in parts) else NoTangent


register_rrule(made_exception, _made_rrule)
register_frule(made_exception, _made_frule)
_made_dual.second_order_kind = "special"  # type: ignore[attr-defined]  # a batched Hessian pass is dropped (Unbatched)
_register((made_exception,), _made_dual)
_ALWAYS.add(made_exception)  # batched passes: it only moves tangents (into the record)

CASES: list = []  # (its output is an exception: tests/test_exception_data.py reads it back in every mode)


def as_class_call(result: Any) -> Any:
    """``made_exception``'s result in any mode, for the call of the exception class itself that
    dispatch sends to it (``ValueError(v)``, ``transform/protocols.py``): the call site reads its
    rdata as the class's, then its arguments' (one fewer than ``made_exception``'s own)."""
    if type(result) is not tuple or len(result) != 2 or not callable(result[1]):
        return result  # forward mode: a Dual
    out, pullback = result
    if isinstance(out, CoDual):
        def class_pullback(dy: Any) -> tuple:
            return pullback(dy)[1:]

        if getattr(pullback, "changes_nothing", False):
            class_pullback.changes_nothing = True  # type: ignore[attr-defined]
        return out, class_pullback

    def class_dual_pullback(dy: Any, dy_d: Any) -> tuple:  # second order: 4-tuples
        rdata, rdata_tangents = pullback(dy, dy_d)
        return rdata[1:], rdata_tangents[1:]

    if getattr(pullback, "changes_nothing", False):
        class_dual_pullback.changes_nothing = True  # type: ignore[attr-defined]
    return out, class_dual_pullback
