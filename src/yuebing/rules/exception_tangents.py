"""The tangent of an exception whose class has an ``__init__`` written in Python (issue 13).

Mooncake's rule, one tangent type per primal type: an exception made in differentiated code from
float data has the tangent of an object (``MutableTangent``), with a field per instance attribute
and one for ``args``. Its class's ``__init__`` is then differentiated as a user class's is: what
it computes from its arguments (``self.amount = 2.0 * amount``), what it writes into them
(``xs[0] = 3.0 * xs[0]``) and what it hands to ``super().__init__`` keep their derivatives.

An exception keeps no derivative data itself (``tangents/kinds.py``: its kind carries none, and a
``raise``/``except`` hands the object on as plain Python does), so the tangent lives beside it,
per differentiation pass and role (``"fdata"``, ``"tangent"``, second order's ``"fdata_tangent"``),
in ``outside_state`` under the kind ``"exception"``, where ``exception_data.py`` keeps the
arguments of an exception made without Python (``raise ValueError(x * 2.0)``). The attribute
rules (``objects.py``, ``transform/lifting_objects.py``) read the fields from there in every
frame; a write is followed where the exception arrives with its tangent (its ``__init__``'s
``self``), and refused by name elsewhere as before.

The exception is made by ``cls.__new__`` (``BaseException.__new__`` stores the positional
arguments in ``args``; a Python ``__new__`` runs through the mode's rules too, its
``super().__new__`` reaching the rules of ``BaseException.__new__`` at the end of this file, which
register the tangent), then ``__init__`` runs through the mode's rules: reverse
(``core.rrule``), forward (``core.frule``), second order (``DUAL_INIT``, set by
``transform/lifting_objects.py``: rules never import ``transform/``). A C ``__init__`` reached by
``super().__init__(...)`` or ``Exception.__init__(self, ...)`` has the rules at the end of this file.
"""
from __future__ import annotations

import builtins
import types
from typing import Any, Callable

from .. import tangents as T
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent
from . import outside_state
from ._float_reach import holds_floats
from .containers.common import _element_fdata, _slot
from .core import CoDual, Dual, RuleArgumentError, frule, register_frule, register_rrule, rrule
from .declare import nondifferentiable_methods
from .second_order import _register
from .util import sum_rdata

KIND = "exception"
_MISSING = object()

#: second order's dual rule of a Python function, ``DUAL_INIT(init, self4, *args4, **kwargs4)``
#: -> ``(out4, pullback)``: set by ``transform/lifting_objects.py``
DUAL_INIT: Callable | None = None


def differentiates_init(cls: type, values: list) -> bool:
    """Whether ``cls(*values)`` is made with a tangent: its ``__init__`` or its ``__new__`` is
    Python, and the arguments hold float data (without any, nothing they compute has a derivative)."""
    return (isinstance(getattr(cls, "__init__", None), types.FunctionType) or _python_new(cls)) \
        and holds_floats(values)


def _python_new(cls: type) -> bool:
    """Whether ``cls`` has a ``__new__`` written in Python (then differentiated, its
    ``super().__new__`` reaching ``BaseException.__new__``'s rules at the end of this file)."""
    return isinstance(getattr(cls, "__new__", None), types.FunctionType)


def _new(cls: type, args: list, kwargs: dict) -> BaseException:
    return cls.__new__(cls, *args, **kwargs)


def fields_of(role: str, e: Any) -> dict | None:
    """The fields of exception ``e``'s tangent in ``role`` for the open pass, or None."""
    found = outside_state.registered(role, e, KIND)
    return found.fields if isinstance(found, MutableTangent) else None


def recorded(e: Any) -> bool:
    """Whether ``e`` is an exception with a tangent, or a record of its arguments' (``exception_data.py``),
    in the open forward pass: its attributes' tangents are read from there."""
    return isinstance(e, BaseException) and outside_state.registered("tangent", e, KIND) is not None


def _own_fields(carrier: Any, role: str, e: Any) -> dict | None:
    """The fields ``e`` arrived with (its ``__init__``'s ``self``), else the registered ones."""
    return carrier.fields if isinstance(carrier, MutableTangent) else fields_of(role, e)


def _args_fdata(given: list) -> Any:
    parts = tuple(c.fdata if isinstance(c, CoDual) else NoFData for c in given)
    return parts if any(p is not NoFData for p in parts) else NoFData


def _args_slot(e: BaseException, parts: Any) -> Any:
    """The slot of ``e.args`` when its items have fdata ``parts`` (a tuple, or NoFData)."""
    if isinstance(parts, tuple) and len(parts) != len(e.args):
        parts = NoFData  # (a C __init__ that does not keep its arguments as they are)
    return _slot(e.args, parts)


def _args_tangent(e: BaseException, parts: tuple) -> Any:
    if len(parts) != len(e.args) or all(p is NoTangent for p in parts):
        return T.zero_tangent(e.args)
    return tuple(T.zero_tangent(v) if p is NoTangent else p for v, p in zip(e.args, parts))


def _items(r: Any, n: int) -> list:
    """Per argument, the rdata a slot of ``args`` gathered (``T.rdata`` of it)."""
    return list(r)[:n] + [NoRData] * (n - len(r)) if isinstance(r, tuple) else [NoRData] * n


def _sum_into(rs: list, extra: list) -> list:
    return [sum_rdata(a, b) for a, b in zip(rs, extra)] + rs[len(extra):]


# --------------------------------------------------------------------------------------------
# Construction, every mode: the arguments of made_exception(cls, *args, **kwargs)
# --------------------------------------------------------------------------------------------


def _as_codual(c: Any) -> CoDual:
    return c if isinstance(c, CoDual) else CoDual(c, NoFData)


def _made_tangent(role: str, e: Any, cls: type) -> MutableTangent:
    """The tangent in ``role`` that ``BaseException.__new__``'s rule registered for ``e``, the
    exception ``cls.__new__`` (Python) returned."""
    found = outside_state.registered(role, e, KIND)
    if not isinstance(found, MutableTangent):
        raise RuleArgumentError(
            f"{cls.__qualname__}: yuebing cannot differentiate an exception class whose __new__ returns an object "
            "it did not make with super().__new__(cls, ...) in this call. What to do: make the exception in "
            "__new__ with super().__new__(cls, ...), or do the work before raising")
    return found


def _construct_reverse_by_new(cls: type, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """``construct_reverse`` of a class with a Python ``__new__``: both methods differentiated, as
    ``type.__call__`` runs them (``__init__`` only on an instance of ``cls``)."""
    made, new_pullback = rrule(cls.__new__, CoDual(cls, NoFData), *args, **kwargs)
    e = made.primal
    init_pullback = rrule(cls.__init__, CoDual(e, _made_tangent("fdata", e, cls)), *args, **kwargs)[1] \
        if isinstance(e, cls) else None

    def pullback(dy: Any) -> tuple:
        rs = list(_kept(e, lambda: init_pullback(NoRData)))[2:] if init_pullback is not None else []
        return (NoRData, NoRData, *_sum_into(list(_kept(e, lambda: new_pullback(NoRData)))[2:], rs))

    return CoDual(e, NoFData), pullback


def construct_reverse(cls: type, args: tuple, kwargs: dict) -> tuple[CoDual, Callable]:
    """``cls(*args, **kwargs)`` in reverse mode; the pullback's rdata is ``made_exception``'s
    (its own, the class's, the arguments', the keywords')."""
    args, kwargs = tuple(map(_as_codual, args)), {k: _as_codual(v) for k, v in kwargs.items()}
    if _python_new(cls):
        return _construct_reverse_by_new(cls, args, kwargs)
    e = _new(cls, [c.primal for c in args], {k: c.primal for k, c in kwargs.items()})
    fd = MutableTangent(cls, {"args": _args_slot(e, _args_fdata(list(args)))})
    outside_state.register("fdata", e, fd, KIND)
    _, init_pullback = rrule(cls.__init__, CoDual(e, fd), *args, **kwargs)

    def pullback(dy: Any) -> tuple:
        rs = list(_kept(e, lambda: init_pullback(NoRData)))[2:]  # (the function's and self's dropped)
        stored = _items(T.rdata(fd.fields.get("args", NoFData)), len(args))  # what __new__ stored
        return (NoRData, NoRData, *_sum_into(rs, stored))

    return CoDual(e, NoFData), pullback


def construct_forward(cls: type, args: tuple, kwargs: dict) -> Dual:
    """``cls(*args, **kwargs)`` in forward mode: the tangent registered, ``__init__`` run on it."""
    args = tuple(a if isinstance(a, Dual) else Dual(a, T.zero_tangent(a)) for a in args)
    kwargs = {k: v if isinstance(v, Dual) else Dual(v, T.zero_tangent(v)) for k, v in kwargs.items()}
    if _python_new(cls):  # (both methods differentiated, as in reverse mode)
        e = frule(cls.__new__, Dual(cls, NoTangent), *args, **kwargs).primal
        if isinstance(e, cls):
            frule(cls.__init__, Dual(e, _made_tangent("tangent", e, cls)), *args, **kwargs)
        return Dual(e, NoTangent)
    e = _new(cls, [a.primal for a in args], {k: a.primal for k, a in kwargs.items()})
    t = MutableTangent(cls, {"args": _args_tangent(e, tuple(a.tangent for a in args))})
    outside_state.register("tangent", e, t, KIND)
    frule(cls.__init__, Dual(e, t), *args, **kwargs)
    return Dual(e, NoTangent)


def construct_second(cls: type, args: tuple, kwargs: dict) -> tuple:
    """``cls(*args, **kwargs)`` in second order (4-tuples): three tangents registered, one per
    role, and ``__init__`` run by its dual rule; the dual pullback's rdata as ``made_exception``'s."""
    if _python_new(cls):
        return _construct_second_by_new(cls, args, kwargs)
    e = _new(cls, [a[0] for a in args], {k: a[0] for k, a in kwargs.items()})
    fd = MutableTangent(cls, {"args": _args_slot(e, _args_fdata([CoDual(a[0], a[1]) for a in args]))})
    fdt = MutableTangent(cls, {"args": _args_slot(e, _args_fdata([CoDual(a[0], a[3]) for a in args]))})
    t = MutableTangent(cls, {"args": _args_tangent(e, tuple(a[2] for a in args))})
    for role, made in (("fdata", fd), ("fdata_tangent", fdt), ("tangent", t)):
        outside_state.register(role, e, made, KIND)
    _, init_pullback = DUAL_INIT(cls.__init__, (e, fd, t, fdt), *args, **kwargs)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = _kept(e, lambda: init_pullback(NoRData, NoRData))
        out = []
        for r, made in ((rs, fd), (rsd, fdt)):
            stored = _items(T.rdata(made.fields.get("args", NoFData)), len(args))
            out.append((NoRData, NoRData, *_sum_into(list(r)[2:], stored)))
        return tuple(out)

    return (e, NoFData, NoTangent, NoFData), pullback


def _construct_second_by_new(cls: type, args: tuple, kwargs: dict) -> tuple:
    """``construct_second`` of a class with a Python ``__new__``, both methods by their dual rules."""
    made, new_pullback = DUAL_INIT(cls.__new__, (cls, NoFData, NoTangent, NoFData), *args, **kwargs)
    e = made[0]
    init_pullback = None
    if isinstance(e, cls):
        made4 = (e, *(_made_tangent(role, e, cls) for role in ("fdata", "tangent", "fdata_tangent")))
        init = cls.__init__
        init_pullback = DUAL_INIT(init, made4, *args, **kwargs)[1] if isinstance(init, types.FunctionType) \
            else _init_dual((init, NoFData, NoTangent, NoFData), (made4, *args), kwargs)[1]  # a C one

    def pullback(dy: Any, dy_d: Any) -> tuple:
        ris = _kept(e, lambda: init_pullback(NoRData, NoRData)) if init_pullback is not None else ((), ())
        rns = _kept(e, lambda: new_pullback(NoRData, NoRData))
        return tuple((NoRData, NoRData, *_sum_into(list(rn)[2:], list(ri)[2:])) for rn, ri in zip(rns, ris))

    return (e, NoFData, NoTangent, NoFData), pullback


def _kept(e: BaseException, undo: Callable[[], Any]) -> Any:
    """Run ``undo``, the pullback of ``e``'s ``__init__``, keeping ``e`` as it is: what it undoes
    in ``e`` (its attributes, ``args``) only mattered to that ``__init__``'s own pullbacks, and an
    exception leaving the differentiated function (the pass unwound) must reach the caller as it
    was raised. (Its writes into the arguments are undone: those are the caller's data.)"""
    state, args = dict(e.__dict__), e.args  # (every exception instance has a __dict__)
    result = undo()
    e.__dict__.clear()
    e.__dict__.update(state)
    e.args = args
    return result


# --------------------------------------------------------------------------------------------
# Reading a field (getattr, object.__getattribute__)
# --------------------------------------------------------------------------------------------


def read_field(o: BaseException, name: str, v: Any) -> tuple[CoDual, Callable] | None:
    """Reverse mode: ``(codual, owner rdata)`` of attribute ``name`` (value ``v``) of an
    exception with a tangent in this pass, or None (no tangent, or a name it has no field for)."""
    tangent = outside_state.registered("fdata", o, KIND)
    if not isinstance(tangent, MutableTangent):
        return None
    if name not in tangent.fields:
        return _read_stored_argument(o, tangent.fields, v)
    return _OBJECT_FIELD_READER[0](CoDual(o, tangent), name, v)  # as a user object's field


#: ``objects._read_object_field``, which objects.py hands over when it is imported (it imports
#: this module through exception_data.py, so importing it here would close a cycle)
_OBJECT_FIELD_READER: list = [None]


def use_object_field_reader(read: Callable) -> None:
    """Called by ``objects.py``: how a user object's field is read (reverse mode)."""
    _OBJECT_FIELD_READER[0] = read


def _read_stored_argument(o: BaseException, fields: dict, v: Any) -> tuple[CoDual, Callable] | None:
    """An attribute a C ``__init__`` set to one of the arguments it keeps in ``args``
    (``StopIteration.value``): that item of the ``args`` field."""
    j = _position(o, v)
    slot = fields.get("args", _MISSING)
    if j < 0 or not isinstance(slot, tuple):
        return None
    n = len(slot)

    def owner_rdata(dy: Any) -> Any:
        if dy is not NoRData:
            fields["args"] = T.increment(fields["args"], T.join(NoFData, tuple(dy if i == j else NoRData
                                                                                for i in range(n))))
        return NoRData

    return CoDual(v, _element_fdata(slot[j])), owner_rdata


def _position(o: BaseException, v: Any) -> int:
    if not holds_floats([v]):
        return -1
    return next((j for j, item in enumerate(o.args) if item is v), -1)


def field_tangent(o: BaseException, name: str, v: Any) -> Any:
    """Forward mode and second order: the tangent of attribute ``name`` (value ``v``) of an
    exception with a tangent in this pass, or None."""
    fields = fields_of("tangent", o)
    if fields is None:
        return None
    found = fields.get(name, _MISSING)
    if found is not _MISSING:
        return found
    j = _position(o, v)
    stored = fields.get("args")
    return stored[j] if j >= 0 and isinstance(stored, tuple) else None


# --------------------------------------------------------------------------------------------
# A C __init__ on an exception with a tangent: ``super().__init__(label)``, ``Exception.__init__``
# --------------------------------------------------------------------------------------------


def _c_init(e: BaseException) -> Callable:
    """The C ``__init__`` a ``super().__init__`` reaches from a Python one: the first class in
    the MRO that is not written in Python (``Exception``'s, ``OSError``'s, ``KeyError``'s)."""
    for tp in type(e).__mro__:
        if not tp.__flags__ & _HEAP_TYPE and "__init__" in tp.__dict__:
            return tp.__dict__["__init__"]
    return BaseException.__init__


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement


def _init_rrule(self: CoDual, *args: CoDual) -> tuple[CoDual, Callable]:
    e = self.primal
    old = e.args
    _c_init(e)(e, *(a.primal if isinstance(a, CoDual) else a for a in args))
    fields = _own_fields(self.fdata, "fdata", e)
    nothing = (NoRData,) * (2 + len(args))
    if fields is None:
        return CoDual(None, NoFData), lambda dy: nothing
    old_slot = fields.get("args", _MISSING)
    fields["args"] = _args_slot(e, _args_fdata(list(args)))

    def pullback(dy: Any) -> tuple:
        slot = fields["args"]
        e.args = old
        _put_back(fields, old_slot)
        return (NoRData, NoRData, *_items(T.rdata(slot), len(args)))

    return CoDual(None, NoFData), pullback


def _put_back(fields: dict, old_slot: Any) -> None:
    if old_slot is _MISSING:
        fields.pop("args", None)
    else:
        fields["args"] = old_slot


def _init_frule(self: Dual, *args: Dual) -> Dual:
    e = self.primal
    _c_init(e)(e, *(a.primal if isinstance(a, Dual) else a for a in args))
    fields = _own_fields(self.tangent if isinstance(self, Dual) else NoTangent, "tangent", e)
    if fields is not None:
        fields["args"] = _args_tangent(e, tuple(a.tangent if isinstance(a, Dual) else NoTangent for a in args))
    return Dual(None, NoTangent)


def _init_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    self4, given = args[0], args[1:]
    e = self4[0]
    old = e.args
    _c_init(e)(e, *(a[0] for a in given))
    fd, t, fdt = (_own_fields(self4[i], role, e) for i, role in ((1, "fdata"), (2, "tangent"), (3, "fdata_tangent")))
    nothing = (NoRData,) * (2 + len(given))
    if fd is None or t is None or fdt is None:
        return (None, NoFData, NoTangent, NoFData), lambda dy, dy_d: (nothing, nothing)
    old_slots = [fields.get("args", _MISSING) for fields in (fd, t, fdt)]
    fd["args"] = _args_slot(e, _args_fdata([CoDual(a[0], a[1]) for a in given]))
    fdt["args"] = _args_slot(e, _args_fdata([CoDual(a[0], a[3]) for a in given]))
    t["args"] = _args_tangent(e, tuple(a[2] for a in given))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        slots = fd["args"], fdt["args"]
        e.args = old
        for fields, old_slot in zip((fd, t, fdt), old_slots):
            _put_back(fields, old_slot)
        return tuple((NoRData, NoRData, *_items(T.rdata(slot), len(given))) for slot in slots)

    return (None, NoFData, NoTangent, NoFData), pullback


nondifferentiable_methods(BaseException, "add_note", "with_traceback")  # (in an __init__ too: no derivative)
register_rrule((BaseException, "__init__"), _init_rrule)
register_frule((BaseException, "__init__"), _init_frule)
_init_dual.second_order_kind = "special"  # type: ignore[attr-defined]
_register(((BaseException, "__init__"),), _init_dual)


# --------------------------------------------------------------------------------------------
# BaseException.__new__, reached by super().__new__(cls, ...) from a Python __new__: the exception
# made with its tangent registered, its args slot holding what the call hands it
# --------------------------------------------------------------------------------------------


def _new_rrule(owner: CoDual, cls: CoDual, *args: CoDual) -> tuple[CoDual, Callable]:
    e = owner.primal.__new__(cls.primal, *(a.primal if isinstance(a, CoDual) else a for a in args))
    nothing = (NoRData,) * (3 + len(args))
    if not outside_state.active():
        return CoDual(e, NoFData), lambda dy: nothing
    fd = MutableTangent(type(e), {"args": _args_slot(e, _args_fdata(list(args)))})
    outside_state.register("fdata", e, fd, KIND)

    def pullback(dy: Any) -> tuple:
        return (NoRData, NoRData, NoRData, *_items(T.rdata(fd.fields.get("args", NoFData)), len(args)))

    return CoDual(e, fd), pullback  # (with its tangent: the __new__'s writes into it are followed)


def _new_frule(owner: Dual, cls: Dual, *args: Dual) -> Dual:
    e = owner.primal.__new__(cls.primal, *(a.primal if isinstance(a, Dual) else a for a in args))
    if outside_state.active():
        tangents = tuple(a.tangent if isinstance(a, Dual) else NoTangent for a in args)
        t = MutableTangent(type(e), {"args": _args_tangent(e, tangents)})
        outside_state.register("tangent", e, t, KIND)
        return Dual(e, t)
    return Dual(e, NoTangent)


register_rrule((BaseException, "__new__"), _new_rrule)
register_frule((BaseException, "__new__"), _new_frule)


def _new_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: ``f`` is a builtin exception class's own ``__new__`` (looked up as a function),
    ``args`` the class's and the arguments' 4-tuples; the three tangents registered."""
    given = args[1:]
    e = f[0](args[0][0], *(a[0] for a in given))
    nothing = (NoRData,) * (2 + len(given))
    if not outside_state.active():
        return (e, NoFData, NoTangent, NoFData), lambda dy, dy_d: (nothing, nothing)
    fd = MutableTangent(type(e), {"args": _args_slot(e, _args_fdata([CoDual(a[0], a[1]) for a in given]))})
    fdt = MutableTangent(type(e), {"args": _args_slot(e, _args_fdata([CoDual(a[0], a[3]) for a in given]))})
    t = MutableTangent(type(e), {"args": _args_tangent(e, tuple(a[2] for a in given))})
    for role, made in (("fdata", fd), ("fdata_tangent", fdt), ("tangent", t)):
        outside_state.register(role, e, made, KIND)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return tuple((NoRData, NoRData, *_items(T.rdata(made.fields.get("args", NoFData)), len(given)))
                     for made in (fd, fdt))

    return (e, fd, t, fdt), pullback


#: every builtin exception class's own ``__new__`` (what ``super().__new__`` finds first in the MRO)
_BUILTIN_NEWS = tuple({id(c.__dict__["__new__"]): c.__dict__["__new__"] for c in vars(builtins).values()
                       if isinstance(c, type) and issubclass(c, BaseException) and "__new__" in c.__dict__}.values())
_new_dual.second_order_kind = "special"  # type: ignore[attr-defined]
_register(_BUILTIN_NEWS, _new_dual)
