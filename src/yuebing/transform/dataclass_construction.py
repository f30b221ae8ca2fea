"""Constructing a dataclass through its generated ``__init__`` in every mode: the fields are set
as the generated code sets them (call arguments, defaults, ``default_factory``, ``init=False``
fields), then ``__post_init__`` runs as a derived method call with the ``InitVar`` values, its
pullback chained before the construction's.

A ``default_factory`` reading a global the call wrote a value carrying derivatives (``global G;
G = 2 * x``, then ``H()`` with ``field(default_factory=lambda: [G])``) is called as a derived
function in the mode (``factory`` of ``bind_dataclass``: its value carries the global's derivative,
its pullback gathers the field's rdata); any other factory runs as plain Python, its value a
constant. In second order such a class is built as one with a ``__post_init__`` is
(``construct_second_order``: the factory's dual rule, not the construction's linearity).

A frozen dataclass is built with a mutable tangent while ``__post_init__`` runs (it may write
fields with ``object.__setattr__``, which the attribute rules allow on an object under
construction); the result then gets the frozen tangent of the fields it ended with, and the
pullback adds the result's rdata back into the mutable slots before running ``__post_init__``'s.
"""
from __future__ import annotations

import dataclasses
import inspect
import types
from typing import Any, Callable

from ..frontend.source import names_used
from ..rules import outside_state
from ..rules.local_classes import class_level_read, class_level_tangent, may_carry_derivatives
from ..rules.core import CoDual, Dual
from ..rules.util import add_rdata_to, slot_rdata, slot_tangent
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent, fdata, zero_tangent


def _zero_tangent(value: Any) -> Any:
    try:
        return zero_tangent(value)
    except TypeError:
        return NoTangent


def bind_dataclass(cls: type, args: tuple, kwargs: dict, constant: Callable,
                   factory: Callable | None = None) -> tuple[dict, list, list]:
    """Each field's value (a call argument, or ``constant(default)``) in field order, the
    ``InitVar`` values as ``(name, value)`` in order, and the ``__init__`` parameter names (to
    route each call argument's rdata). ``factory(default_factory)``: the mode's value of a factory
    reading a global the call wrote with derivatives (None: refused, naming both). Python's
    TypeError for a call the class does not accept."""
    signature = inspect.signature(cls)
    try:
        given = signature.bind(*args, **kwargs).arguments
    except TypeError as error:
        raise TypeError(f"{cls.__qualname__}(): {error}") from None
    fields: dict = {}
    initvars: list = []
    for field in cls.__dataclass_fields__.values():
        kind = field._field_type  # type: ignore[attr-defined]
        if kind is dataclasses._FIELD_CLASSVAR:  # type: ignore[attr-defined]
            continue
        if field.init and field.name in given:
            value = given[field.name]
        elif field.default is not dataclasses.MISSING:
            value = constant(field.default)
        elif field.default_factory is not dataclasses.MISSING:
            written = written_global_read(field.default_factory)
            if written is not None and factory is None:
                raise _factory_refused(cls, field, written)
            value = constant(field.default_factory()) if written is None else factory(field.default_factory)
        else:
            continue  # init=False without a default: left unset, as the generated __init__ does
        if kind is dataclasses._FIELD_INITVAR:  # type: ignore[attr-defined]
            initvars.append((field.name, value))
        else:
            fields[field.name] = value
    return fields, initvars, list(signature.parameters)


def written_global_read(factory: Any) -> str | None:
    """A global that ``factory`` (a Python function) may read and this call wrote a value carrying
    derivatives (``global G; G = 2 * x``), or None: the dataclass would call it as plain Python,
    giving the field that value without its derivative."""
    if not isinstance(factory, types.FunctionType):
        return None
    namespace = factory.__globals__
    for name in names_used(factory.__code__):  # (the names it may read as globals)
        for role in ("fdata", "tangent"):
            slot = outside_state.global_slot(role, namespace, name)
            if slot is not None and may_carry_derivatives(namespace.get(name)):
                return name
    return None


def reads_written_globals(cls: type) -> bool:
    """Whether a ``default_factory`` of dataclass ``cls`` reads a global this call wrote with derivatives."""
    return any(written_global_read(f.default_factory) is not None for f in cls.__dataclass_fields__.values())


def _factory_refused(cls: type, field: dataclasses.Field, name: str) -> TypeError:
    return TypeError(
        f"yuebing cannot differentiate the default_factory of {cls.__qualname__}.{field.name}: it reads "
        f"the global {name!r}, which this call wrote a value carrying derivatives, and the dataclass "
        f"calls it as plain Python here. What to do: give the field its value "
        f"when the instance is made ({cls.__qualname__}({field.name}=...))")


def _new(cls: type, fields: dict) -> Any:
    obj = object.__new__(cls)
    for name, value in fields.items():
        object.__setattr__(obj, name, value.primal)
    return obj


def _frozen_fdata(cls: type, slots: MutableTangent) -> Any:
    parts = {name: fdata(t) if not isinstance(t, float) else NoFData for name, t in slots.fields.items()}
    return NoFData if all(p is NoFData for p in parts.values()) else Tangent(cls, parts)


def _route(names: list, n_args: int, kwargs: dict, rdata: dict) -> tuple:
    return (NoRData, *(rdata.get(names[i], NoRData) for i in range(n_args)), *(rdata.get(k, NoRData) for k in kwargs))


def construct_reverse(cls: type, args: tuple, kwargs: dict, call: Callable | None, keep_mutable: bool = False,
                      factory: Callable | None = None):
    """``cls(*args, **kwargs)`` on coduals; ``call(f, args)`` runs ``__post_init__`` in reverse
    mode (None: skip it), and a factory reading a global the call wrote. ``keep_mutable``: the
    result keeps its mutable tangent (second order runs ``__post_init__`` itself); its pullback then
    takes the InitVars' rdata as ``initvar_rdata``. ``factory(make)``: ``(codual, gather)`` of such
    a factory instead (second order's)."""
    stored: dict = {}  # defaults a class body inside the function stored, factories called: their pullbacks

    def default(v: Any) -> CoDual:
        found = class_level_read(v)
        if found is None:
            return CoDual(v, fdata(zero_tangent(v)))
        stored[id(found[0])] = found[1]
        return found[0]
    def from_factory(make: Any) -> CoDual:
        out, gather = factory(make) if factory is not None else _reverse_factory(call, make)
        stored[id(out)] = gather
        return out
    fields, initvars, names = bind_dataclass(cls, args, kwargs, default,
                                             from_factory if factory is not None or call is not None else None)
    gathers = {name: stored[id(c)] for name, c in [*fields.items(), *initvars] if id(c) in stored}
    obj = _new(cls, fields)
    frozen = cls.__dataclass_params__.frozen
    post_init = getattr(cls, "__post_init__", None) if call is not None else None
    mutable = not frozen or post_init is not None or keep_mutable
    slots = MutableTangent(cls, {name: slot_tangent(c) for name, c in fields.items()}) if mutable else None
    post_pullback = None
    if post_init is not None:
        _, post_pullback = call(CoDual(post_init, NoFData), (CoDual(obj, slots), *(c for _, c in initvars)))
    if not mutable:
        parts = {name: c.fdata for name, c in fields.items()}
        out_f = NoFData if all(p is NoFData for p in parts.values()) else Tangent(cls, parts)
    else:
        out_f = _frozen_fdata(cls, slots) if frozen and not keep_mutable else slots

    def pullback(dy: Any, initvar_rdata: dict | None = None) -> tuple:
        if slots is None:
            field_r = dict(dy.fields) if isinstance(dy, Tangent) else {}
            for name, gather in gathers.items():
                gather(field_r.get(name, NoRData))
            return _route(names, len(args), kwargs, field_r)
        if out_f is not slots and isinstance(dy, Tangent):  # a frozen result: its rdata back into the slots
            for name, r in dy.fields.items():
                if name in slots.fields:
                    slots.fields[name] = add_rdata_to(slots.fields[name], r)
        rdata = dict(initvar_rdata or {})
        if post_pullback is not None:
            rdata.update(zip((name for name, _ in initvars), post_pullback(NoRData)[2:]))
        rdata.update({name: slot_rdata(slots.fields[name], fields[name].primal) for name in fields if name not in rdata})
        for name, gather in gathers.items():
            gather(rdata.get(name, NoRData))
        return _route(names, len(args), kwargs, rdata)

    return CoDual(obj, out_f), pullback


def construct_forward(cls: type, args: tuple, kwargs: dict, call: Callable | None, keep_mutable: bool = False,
                      factory: Callable | None = None) -> Dual:
    """``cls(*args, **kwargs)`` on duals; ``call(f, args)`` runs ``__post_init__`` in forward mode,
    and a factory reading a global the call wrote (``factory(make)``: its dual instead)."""
    def default(v: Any) -> Dual:  # (a default a class body inside the function stored has its tangent)
        t = class_level_tangent(v)
        return Dual(v, _zero_tangent(v) if t is None else t)

    def from_factory(make: Any) -> Dual:
        return factory(make) if factory is not None else call(Dual(make, NoTangent), ())
    fields, initvars, _ = bind_dataclass(cls, args, kwargs, default,
                                         from_factory if factory is not None or call is not None else None)
    fields = {k: v if isinstance(v, Dual) else Dual(v, _zero_tangent(v)) for k, v in fields.items()}
    obj = _new(cls, fields)
    frozen = cls.__dataclass_params__.frozen
    tangent = MutableTangent(cls, {name: d.tangent for name, d in fields.items()})
    post_init = getattr(cls, "__post_init__", None) if call is not None else None
    if post_init is not None:
        call(Dual(post_init, NoTangent), (Dual(obj, tangent), *(d for _, d in initvars)))
    if frozen and not keep_mutable:
        parts = dict(tangent.fields)
        return Dual(obj, NoTangent if all(p is NoTangent for p in parts.values()) else Tangent(cls, parts))
    return Dual(obj, tangent)


def _reverse_factory(call: Callable, make: Any) -> tuple[CoDual, Callable]:
    """A factory called as a derived function in reverse mode, and what gives its value's rdata back."""
    out, pullback = call(CoDual(make, NoFData), ())
    return out, lambda r: pullback(r)


class _DualFactories:
    """Second order's factories reading a global the call wrote: each called once by its dual rule,
    its 4-tuple handed to the three constructions (``part``: 1 fdata, 2 tangent, 3 fdata tangent),
    the rdata of both reverse ones gathered for its dual pullback."""

    def __init__(self, dual_rule: Callable) -> None:
        self.dual_rule = dual_rule
        self.made: dict = {}  # id(factory) -> [4-tuple, pullback, rdata, rdata of the fdata tangents]

    def _call(self, make: Any) -> list:
        if id(make) not in self.made:
            out, pullback = self.dual_rule(make)((make, NoFData, NoTangent, NoFData))
            self.made[id(make)] = [out, pullback, NoRData, NoRData]
        return self.made[id(make)]

    def reverse(self, part: int) -> Callable:
        def factory(make: Any) -> tuple[CoDual, Callable]:
            entry = self._call(make)
            return CoDual(entry[0][0], entry[0][part]), lambda r: entry.__setitem__(2 if part == 1 else 3, r)
        return factory

    def forward(self, make: Any) -> Dual:
        out = self._call(make)[0]
        return Dual(out[0], out[2])

    def pull(self) -> None:
        for _, pullback, r, r_d in self.made.values():
            pullback(r, r_d)


def construct_second_order(cls: type, args: tuple, kwargs: dict, dual_rule: Callable, value_tangent: Callable) -> tuple:
    """``dual_rule(fn)`` is ``lifting.DUAL_RULE``, ``value_tangent`` a value's zero tangent.
    ``cls(*args)`` with a ``__post_init__``, or a factory reading a global the call wrote, on
    4-tuples: the generated construction (linear) for the primal and fdata, the fdata tangents and
    the tangent, each factory's dual rule giving its field, then ``__post_init__``'s dual rule on
    the object with all three, chained."""
    post_init = getattr(cls, "__post_init__", None)
    factories = _DualFactories(dual_rule)
    out1, pullback1 = construct_reverse(cls, tuple(CoDual(a[0], a[1]) for a in args),
                                        {k: CoDual(v[0], v[1]) for k, v in kwargs.items()}, None, keep_mutable=True,
                                        factory=factories.reverse(1))
    with outside_state.fdata_tangent_pass():
        out2, pullback2 = construct_reverse(cls, tuple(CoDual(a[0], a[3]) for a in args),
                                            {k: CoDual(v[0], v[3]) for k, v in kwargs.items()}, None,
                                            keep_mutable=True, factory=factories.reverse(3))
    tangent = construct_forward(cls, tuple(Dual(a[0], a[2]) for a in args), {k: Dual(v[0], v[2]) for k, v in kwargs.items()},
                                None, keep_mutable=True, factory=factories.forward).tangent
    obj = out1.primal
    _, initvars, _ = bind_dataclass(cls, args, kwargs, lambda v: (v, fdata(zero_tangent(v)), value_tangent(v),
                                                                  fdata(zero_tangent(v))),
                                  lambda make: factories._call(make)[0])
    self4 = (obj, out1.fdata, tangent, out2.fdata)
    post_pullback = None
    if post_init is not None:
        _, post_pullback = dual_rule(post_init)((post_init, NoFData, NoTangent, NoFData), self4,
                                                *(v for _, v in initvars))
    frozen = cls.__dataclass_params__.frozen
    if frozen:
        parts = dict(tangent.fields)
        out = (obj, _frozen_fdata(cls, out1.fdata), NoTangent if all(p is NoTangent for p in parts.values())
               else Tangent(cls, parts), _frozen_fdata(cls, out2.fdata))
    else:
        out = self4
    names = [name for name, _ in initvars]

    def pullback(dy: Any, dy_d: Any) -> tuple:
        if frozen:
            for slots, r in ((out1.fdata, dy), (out2.fdata, dy_d)):
                for name, value in (r.fields.items() if isinstance(r, Tangent) else ()):
                    if name in slots.fields:
                        slots.fields[name] = add_rdata_to(slots.fields[name], value)
        rs, rsd = post_pullback(NoRData, NoRData) if post_pullback is not None else ((), ())
        tangent_rdata = pullback2(NoRData, dict(zip(names, rsd[2:])))
        result = pullback1(NoRData, dict(zip(names, rs[2:]))), tangent_rdata
        factories.pull()  # (after the constructions' pullbacks gathered the fields' rdata)
        return result

    return out, pullback


def has_post_init(cls: type) -> bool:
    return isinstance(getattr(cls, "__post_init__", None), types.FunctionType)
