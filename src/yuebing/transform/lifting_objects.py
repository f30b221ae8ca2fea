"""Second-order rules of objects and closure cells: attribute reads and writes (``getattr``,
``setattr``), construction of user classes, ``super().name`` and ``nonlocal`` variables. They
reach into dual programs (``construct`` runs a dual rule of ``__init__``), so they are written
out here rather than declared as a class; ``transform/second_order.py`` imports this module,
which registers them.
"""
from __future__ import annotations

import collections
import enum
import types
from typing import Any, Callable

import numpy as np

from ..ir.primitives import cell_get as _cell_get_primitive, cell_set as _cell_set_primitive
from ..ir.primitives import super_getattr as _super_getattr_primitive
from ..ir.primitives import as_sequence as _as_sequence_primitive, python_iterable
from ..rules.numpy_vectorize import pyfunc_tangent
from ..rules.containers.dict_subclasses import factory_read_dual
from ..rules.function_wrappers import held_function_tangent
from ..rules._dispatch_methods import dispatch_method_owner
from ..rules.iteration import iterate_to_list
from ..rules import structured_values
from ..rules.bunch_data import carrier_kind, routed_rdata
from ..rules.bunch_records import record_extras, taken_rdata
from ..rules.exception_data import carried_tangent
from ..rules import exception_tangents
from ..rules.objects import _instance_value, _mapped_item, _raw_delattr, _raw_setattr
from ..rules.local_classes import (class_level_tangent, class_write_second, field_default, may_carry_derivatives,
                                  stored_default_second, writes_on_class)
from ..rules import outside_state
from ..rules._partial_work import reroute
from ..rules.numpy_masked import masked_method
from ..rules.core import CoDual, Dual, describe_callable, rrule
from ..rules.primitives import bound_to
from ..rules.second_order import _error, _register, declaration_of
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, SetTangent, Tangent
from . import lifting
from .frozen_objects import frozen_second, is_frozen
from .lifting import _linear, _primal_codual, _with_fdata_tangents, _zero_tangent_of
#
# The tangent of a user object is a ``MutableTangent`` (or ``Tangent`` for frozen ones) with a
# field per attribute; its fdata tangent has the structure of its fdata. The fdata tangent is
# handled by running the ordinary rule on the *primal* object with the fdata tangent in the fdata
# slot; the value tangent is read from, or written to, the tangent's fields.

_MISSING = object()


def _is_field_tangent(t: Any) -> bool:
    return isinstance(t, (MutableTangent, Tangent))


class _BoundTangent:
    """The tangent of a method bound to a user object: what dispatch reads is ``__self__``."""

    __slots__ = ("__self__",)

    def __init__(self, owner_tangent: Any) -> None:
        self.__self__ = owner_tangent


def _getattr(f: tuple, args: tuple, kwargs: dict) -> tuple:
    obj = args[0]
    carrier = carrier_kind(obj[0])  # an exception's or a tuple bunch's attribute (rules/exception_data.py)
    if carrier is not None and not kwargs and outside_state.registered("tangent", obj[0], carrier) is not None:
        return _exception_attribute(f, args, carrier)
    if isinstance(obj[0], types.ModuleType) and not kwargs and len(args) == 2:
        from .global_writes import module_getattr_dual

        written = module_getattr_dual(args)  # a global this call wrote: its derivatives
        if written is not None:
            return written
    if isinstance(obj[0], (type, types.ModuleType)) and not kwargs and len(args) == 2:
        return _class_or_module_attribute(args)
    if isinstance(obj[0], collections.defaultdict) and len(args) == 2 and args[1][0] == "default_factory":
        out, pullback = factory_read_dual(obj)  # with the tangents kept for it (rules/containers/dict_subclasses.py)
        return out, lambda dy, dy_d: tuple((*r, NoRData) for r in pullback(dy, dy_d))
    if type(obj[2]) is dict and len(args) == 2 and not kwargs and _mapped_item(obj[0], args[1][0]):
        # res.x of an OptimizeResult: the item res["x"], whose tangent is the tangent dict's item
        out1, out2, pullback = _with_fdata_tangents(CoDual(getattr, NoFData), args)
        return (out1.primal, out1.fdata, obj[2][args[1][0]], out2.fdata), pullback
    if type(obj[2]) is SetTangent and len(args) == 2 and not kwargs or _subclass_method(obj, args) \
            or len(args) == 2 and masked_method(obj[0], args[1][0]):
        # s.add: a method of a set of floats; od.move_to_end, c.most_common: of a dict subclass; m.filled of
        # a masked array, whose tangent is a plain array (rules/numpy_masked.py)
        out1, out2, pullback = _with_fdata_tangents(CoDual(f[0], NoFData), args)
        return (out1.primal, out1.fdata, _BoundTangent(obj[2]), out2.fdata), pullback
    if type(obj[0]) is np.vectorize and len(args) == 2 and not kwargs and args[1][0] == "pyfunc":
        out1, out2, pullback = _with_fdata_tangents(CoDual(f[0], NoFData), args)  # (pyfunc's: numpy_vectorize.py)
        return (out1.primal, out1.fdata, pyfunc_tangent(obj[2]), out2.fdata), pullback
    if obj[2] is NoTangent and not kwargs and len(args) == 2 and isinstance(obj[0], enum.Enum):
        # a constant member: its value is a constant too, or what a class made in the function gave
        # it (``Mode.HIGH.value`` with ``HIGH = a``: rules/local_classes.py), read in each role as a
        # class attribute is (the linear rule ran the fdata tangent's read in the fdata role)
        return _class_or_module_attribute(args)
    if not _is_field_tangent(obj[2]) or kwargs:
        if isinstance(obj[0], np.generic) and isinstance(obj[2], (float, complex)):
            # a NumPy scalar's tangent is a Python number: read the method off the tangent as a
            # scalar of the primal's type (``s.sum`` bound to ``np.float64(ds)``)
            args = ((obj[0], obj[1], type(obj[0])(obj[2]), obj[3]),) + tuple(args[1:])
        return _linear(f, args, kwargs)
    out1, out2, pullback = _with_fdata_tangents(CoDual(f[0], NoFData), args)  # getattr or object.__getattribute__
    y = out1.primal
    if isinstance(y, (types.MethodType, types.MethodWrapperType)) and y.__self__ is obj[0] \
            or dispatch_method_owner(y) is obj[0]:  # (a singledispatchmethod read from obj: bound to it)
        # (a method-wrapper: o.__getattribute__, which pykalman's get_params calls, carries o's tangent too)
        y_d: Any = _BoundTangent(obj[2])
    elif args[1][0] == "__dict__" and y is getattr(obj[0], "__dict__", None):
        y_d = obj[2].fields  # the instance dict's tangent is the fields (vars(self).update(kw))
    elif held_function_tangent(obj[0], obj[2], y) is not None:  # g.__wrapped__, held in the wrapper's closure too
        y_d = held_function_tangent(obj[0], obj[2], y)
        # (second order's cell holder, second_order.CellTangent, which imports this module: its value)
        y_d = y_d.value if type(y_d).__name__ == "CellTangent" else y_d
    elif field_default(obj[0], args[1][0]) and class_level_tangent(y) is not None:  # (rules/local_classes.py)
        y_d = class_level_tangent(y)
    else:
        y_d = obj[2].fields.get(args[1][0], _MISSING)
        if y_d is _MISSING and len(args) == 3 and y is args[2][0]:  # the default
            y_d = args[2][2]
        elif y_d is _MISSING:  # a class attribute: a constant (one tangent a call, if mutable)
            y_d = _class_attribute_tangent(y)
    return (y, out1.fdata, y_d, out2.fdata), pullback


def _exception_attribute(f: tuple, args: tuple, carrier: str) -> tuple:
    """An attribute of an exception (or a tuple bunch) made from float data in this pass
    (``rules/exception_data.py``): its fdata and fdata tangent from the reverse rule run in both
    roles, its tangent from the record."""
    out1, out2, pullback = _with_fdata_tangents(CoDual(f[0], NoFData), args)
    y = out1.primal
    y_d = carried_tangent(args[0][0], y, carrier, args[1][0] if len(args) > 1 else "")
    if y_d is None or y_d is NoTangent:
        y_d = 0.0 if type(y) is float else _zero_tangent_of(y)
    return (y, out1.fdata, y_d, out2.fdata), pullback


def _subclass_method(obj: tuple, args: tuple) -> bool:
    """Whether ``getattr(obj, name)`` reads a method of a dict subclass (``Counter.most_common``), or
    of a deque subclass adding only methods, that its tangent, a plain dict or deque, lacks: the
    method's own rule or source takes the tangent from the owner's."""
    plain = type(obj[2])
    return plain in (dict, collections.deque) and type(obj[0]) is not plain and len(args) == 2 \
        and isinstance(args[1][0], str) and not hasattr(plain, args[1][0]) \
        and callable(getattr(type(obj[0]), args[1][0], None))


def _class_or_module_attribute(args: tuple) -> tuple:
    """``Cls.attr`` or ``mod.attr``: a constant, whose fdata, tangent and fdata tangent are each one
    object for the whole call when it can be changed in place (``rules/outside_state.py``)."""
    out1, out2, pullback = _with_fdata_tangents(CoDual(getattr, NoFData), args)
    y = out1.primal
    return (y, out1.fdata, _class_attribute_tangent(y), out2.fdata), pullback


def _class_attribute_tangent(y: Any) -> Any:
    """The tangent of a value read from a class or module: a constant's (one for the whole call if
    mutable), or what a class made in the function gave it (``rules/local_classes.py``)."""
    t = class_level_tangent(y)
    if t is not None:
        return t
    return outside_state.shared("tangent", y, _zero_tangent_of) if outside_state.is_mutable(y) else _zero_tangent_of(y)


def _setattr(f: tuple, args: tuple, kwargs: dict) -> tuple:
    obj, name, value = args
    if isinstance(obj[0], types.ModuleType) and f[0] is setattr and not kwargs:  # (global_writes.py)
        from .global_writes import module_setattr_dual

        return module_setattr_dual(args)
    if writes_on_class(obj[0], f[0] is not setattr) and may_carry_derivatives(value[0]) and not kwargs:
        return class_write_second(obj[0], name[0], value)
    if not _is_field_tangent(obj[2]) or kwargs:
        if isinstance(obj[0], np.generic) and isinstance(obj[2], (float, complex)):
            # a NumPy scalar's tangent is a Python number: read the method off the tangent as a
            # scalar of the primal's type (``s.sum`` bound to ``np.float64(ds)``)
            args = ((obj[0], obj[1], type(obj[0])(obj[2]), obj[3]),) + tuple(args[1:])
        return _linear(f, args, kwargs)
    setter = f[0]  # setattr or object.__setattr__
    existed, old_value = _instance_value(obj[0], name[0])
    out1, pullback1 = rrule(setter, _primal_codual(obj), _primal_codual(name), _primal_codual(value))
    # the second run must see the attribute as the first did: its pullback restores the fdata
    # tangent's slot from the old value (a tuple's slot is dropped if it sees the None just written)
    if existed:
        _raw_setattr(obj[0], name[0], old_value)
    elif _instance_value(obj[0], name[0])[0]:
        _raw_delattr(obj[0], name[0])
    out2, pullback2 = rrule(setter, CoDual(obj[0], obj[3]), _primal_codual(name), CoDual(value[0], value[3]))
    fields = obj[2].fields
    old = fields.get(name[0], _MISSING)
    fields[name[0]] = value[2] if value[2] is not NoTangent else _zero_tangent_of(value[0])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = pullback2(NoRData)
        if old is _MISSING:
            fields.pop(name[0], None)
        else:
            fields[name[0]] = old
        return pullback1(NoRData), tangent_rdata

    return (None, NoFData, NoTangent, NoFData), pullback


def _delattr(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``del obj.name`` (contextlib's ``__enter__`` does it): the reverse rule deletes it from the
    object and its fdata; the tangent's and the fdata tangent's fields drop it too, and the
    pullback puts them back."""
    obj, name = args
    if not _is_field_tangent(obj[2]) or kwargs:
        return _linear(f, args, kwargs)
    out1, pullback1 = rrule(f[0], _primal_codual(obj), _primal_codual(name))
    dropped = [(t.fields, t.fields.pop(name[0], _MISSING)) for t in (obj[2], obj[3]) if _is_field_tangent(t)]

    def pullback(dy: Any, dy_d: Any) -> tuple:
        for fields, old in dropped:
            if old is not _MISSING:
                fields[name[0]] = old
        return pullback1(NoRData), (NoRData, NoRData, NoRData)

    return (None, NoFData, NoTangent, NoFData), pullback


def construct(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``cls(*args)`` for a user class: its ``__init__`` through a dual rule, on an object whose
    fdata, tangent and fdata tangent start empty (``__init__``'s attribute writes fill them)."""
    import dataclasses

    from ..tangents import MutableTangent
    from .class_calls import is_generated_init, is_namedtuple, without_init
    from .new_construction import builder, by_new_second

    cls = f[0]
    build = builder(cls, "second-order")
    if build is not None:  # a metaclass's __call__ or a __new__ in Python (new_construction.py)
        return by_new_second(cls, args, kwargs, lifting.DUAL_RULE, build)
    if dataclasses.is_dataclass(cls) and is_generated_init(cls):
        return _construct_dataclass(f, args, kwargs)
    if is_namedtuple(cls):
        return _construct_namedtuple(cls, args, kwargs)
    init = cls.__init__
    if without_init(cls, args, kwargs):
        empty = (object.__new__(cls), MutableTangent(cls, {}), MutableTangent(cls, {}), MutableTangent(cls, {}))
        nothing = (NoRData,) * (1 + len(args) + len(kwargs))
        return empty, lambda dy, dy_d: (nothing, nothing)
    if cls.__new__ is not object.__new__ or not isinstance(init, types.FunctionType):
        raise _error(f"yb.hvp/yb.hessian: cannot construct {describe_callable(cls)} in second order (a "
                     "__new__ or an __init__ without Python source)")
    obj = object.__new__(cls)
    self4 = (obj, MutableTangent(cls, {}), MutableTangent(cls, {}), MutableTangent(cls, {}))
    declared = declaration_of(init)  # an __init__ declared defined_by a definition (numpy.polynomial's)
    if declared is not None and declared[0].kind == "python":
        init = declared[0].definition
    try:
        _, pullback = lifting.DUAL_RULE(init)((init, NoFData, NoTangent, NoFData), self4, *args, **kwargs)
    except Exception as error:  # an __init__ that raised after partial work: routed alike (issue 13)
        reroute(error, _constructed)
        raise
    if is_frozen(obj):  # identified by value from here on (frozen_objects.py)
        return frozen_second(self4, _constructed(pullback))
    return self4, _constructed(pullback)


def _constructed(pullback: Callable) -> Callable:
    """A class's pullback from its ``__init__``'s: the new object's rdata is dropped."""
    def construct_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(NoRData, NoRData)
        return (NoRData, *rs[2:]), (NoRData, *rsd[2:])

    return construct_pullback


def _construct_namedtuple(cls: type, args: tuple, kwargs: dict) -> tuple:
    """``P(a, b)`` for a namedtuple class: the 4-tuple of the fields' 4-tuples."""
    from .class_calls import call_positions, extra_arguments, make_namedtuple, namedtuple_fields, with_aliases

    positions = call_positions(cls, len(args), kwargs)
    given = set(positions)  # the other fields take their defaults (constants, or a class body's values)
    items = namedtuple_fields(cls, args, kwargs)
    stored = {i: stored_default_second(a) for i, a in enumerate(items) if i not in given}
    stored = {i: found for i, found in stored.items() if found is not None}
    items = [a if i in given else stored[i][0] if i in stored else (a, NoFData, NoTangent, NoFData)
             for i, a in enumerate(items)]

    given_extras = extra_arguments(cls, kwargs)  # a tuple bunch's attributes: data beside it (rules/bunch_data.py)
    extras = {k: v[0] for k, v in given_extras.items()}
    y = make_namedtuple(cls, [a[0] for a in items], extras)
    carried, carried_d = [record_extras(role, y, list(extras.values()), [v[k] for v in given_extras.values()])
                          for role, k in (("fdata", 1), ("fdata_tangent", 3), ("tangent", 2))][:2]
    keys = [None] * len(args) + list(kwargs)

    def part(k: int, empty: Any) -> Any:
        values = [a[k] for a in items]
        return empty if all(v is empty for v in values) else with_aliases(y, tuple.__new__(cls, values))

    out = (y, part(1, NoFData), part(2, NoTangent), part(3, NoFData))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs = (list(dy) if isinstance(dy, tuple) else [NoRData] * len(items)) + [NoRData]  # (an attribute's)
        rsd = (list(dy_d) if isinstance(dy_d, tuple) else [NoRData] * len(items)) + [NoRData]
        for i, (_, gather, gather_d) in stored.items():
            gather(rs[i])
            gather_d(rsd[i])
        return (NoRData, *routed_rdata(rs, positions, keys, taken_rdata(carried, list(given_extras)))), \
            (NoRData, *routed_rdata(rsd, positions, keys, taken_rdata(carried_d, list(given_extras))))

    return out, pullback


def _construct_dataclass(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """A dataclass's generated ``__init__`` is linear: construct once for the primal and fdata,
    once with the fdata tangents (its fdata is the fdata tangent), and take the value tangent
    from forward mode."""
    from .forward_runtime import call_frule

    from .dataclass_construction import construct_second_order, has_post_init, reads_written_globals

    cls = f[0]
    if has_post_init(cls) or reads_written_globals(cls):  # not linear: __post_init__, a factory run as dual calls
        return construct_second_order(cls, args, kwargs, lifting.DUAL_RULE, _zero_tangent_of)
    out1, out2, pullback = _with_fdata_tangents(CoDual(cls, NoFData), args, kwargs)
    tangent = call_frule(Dual(cls, NoTangent), *(Dual(a[0], a[2]) for a in args),
                         **{k: Dual(v[0], v[2]) for k, v in kwargs.items()}).tangent
    return (out1.primal, out1.fdata, tangent, out2.fdata), pullback


def super_getattr(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """``super().name`` in a method: a method bound to ``self`` (whose tangent it carries)."""
    cell, obj, name = args
    out1, out2, pullback = _with_fdata_tangents(_primal_codual(f), args)
    y = out1.primal
    if not bound_to(y, obj[0]) and isinstance(obj[0], type):  # super().__new__ in a __new__: a base's function
        return (y, out1.fdata, _zero_tangent_of(y), out2.fdata), pullback
    if not bound_to(y, obj[0]):
        raise _error(f"yb.hvp/yb.hessian: super().{name[0]} is not a method; second order reads only "
                     "methods through super()")
    return (y, out1.fdata, _BoundTangent(obj[2]), out2.fdata), pullback


def cell_get(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Reading a captured variable: the fdata and fdata tangent come from the closure's boxes, the
    tangent from the closure's tangent (``NoTangent`` for values captured from outside: constants)."""
    (cell,) = args
    out1, out2, pullback = _with_fdata_tangents(_primal_codual(f), args)
    y = out1.primal
    y_d = getattr(cell[2], "value", NoTangent)
    if y_d is NoTangent:
        y_d = _zero_tangent_of(y)
    return (y, out1.fdata, y_d, out2.fdata), pullback


def cell_set(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Writing a ``nonlocal`` variable: the cell's boxes take the value's fdata and fdata tangent,
    its tangent holder the value's tangent; the pullback restores all three."""
    cell, value = args
    out1, pullback1 = rrule(_primal_codual(f), CoDual(cell[0], cell[1]), _primal_codual(value))
    out2, pullback2 = rrule(_primal_codual(f), CoDual(cell[0], cell[3]), CoDual(value[0], value[3]))
    holder = cell[2]
    old = getattr(holder, "value", NoTangent)
    if hasattr(holder, "value"):
        holder.value = value[2] if value[2] is not NoTangent else _zero_tangent_of(value[0])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        tangent_rdata = pullback2(NoRData)
        if hasattr(holder, "value"):
            holder.value = old
        return pullback1(NoRData), tangent_rdata

    return (None, NoFData, NoTangent, NoFData), pullback


def as_sequence(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """What a loop walks: a sequence is its own (linear); an instance of a user class with
    ``__iter__`` is the list its iterator protocol yields, differentiated as user code."""
    if python_iterable(args[0][0]):
        walk = (iterate_to_list, NoFData, NoTangent, NoFData)
        return lifting.DUAL_RULE(iterate_to_list)(walk, *args)
    if structured_values.carries(args[0][0]):  # a record unpacked: its fields read
        walk = (structured_values.record_fields, NoFData, NoTangent, NoFData)
        return lifting.DUAL_RULE(structured_values.record_fields)(walk, *args)
    return _linear(f, args, kwargs)


as_sequence.second_order_kind = "linear"  # type: ignore[attr-defined] - on sequences (third order, docs)
as_sequence.data = as_sequence.stored = ()  # type: ignore[attr-defined]


# --------------------------------------------------------------------------------------------
# Declarations
# --------------------------------------------------------------------------------------------

_register((getattr, object.__getattribute__), _getattr)
_register((setattr, object.__setattr__), _setattr)
_register((delattr, object.__delattr__), _delattr)
_register((_cell_get_primitive,), cell_get)
_register((_super_getattr_primitive,), super_getattr)
_register((_cell_set_primitive,), cell_set)
_register((_as_sequence_primitive,), as_sequence)

from . import global_writes as _global_writes  # noqa: E402,F401 - registers the rules of the global primitives


def _exception_init(init: Any, self4: tuple, *args: tuple, **kwargs: tuple) -> tuple:
    """An exception's Python ``__init__`` by its dual rule, on its tangents (rules/exception_tangents.py)."""
    return lifting.DUAL_RULE(init)((init, NoFData, NoTangent, NoFData), self4, *args, **kwargs)


exception_tangents.DUAL_INIT = _exception_init
