"""Objects of user classes in plain forward programs (third derivatives through ``yb.grad``).

In the plain forward program of a function under ``yb.grad`` (``plain_forward.py``) an object's
tangent is forward mode's: a ``MutableTangent`` (or a frozen object's ``Tangent``) whose
``fields`` dict maps each attribute to its tangent. Second order differentiates that program, so
the tangent is itself a value there: an object with a ``fields`` dict, which second order's own
rules for attributes and dicts follow. This module gives the object calls of a plain program,
``_jvp(getattr, _, obj, obj_t, "w", _)`` and the like, their second-order meaning by composing
those rules (``third_order._Composition``):

* an attribute read is ``getattr(obj, name)`` with tangent ``obj_t.fields[name]``; a write sets
  both; a property or ``__getattr__``/``__setattr__`` runs as the Python function it is;
* a method read off an object is the bound method, with the *object's* tangent as its tangent:
  the call of a bound method is its function's plain program with ``(obj, obj_t)`` first;
* ``cls(...)`` makes the object and an empty tangent and runs ``__init__``'s plain program on
  them (a dataclass's generated ``__init__``: its field writes, then ``__post_init__``);
* operators reaching a user class's dunders, calls of callable objects, a loop over an object
  (its ``__iter__``/``__next__``) and ``sum`` of objects run those methods;
* ``vars(obj)`` and ``obj.__dict__`` are the object's dict, whose tangent is the fields.

Each Python function runs through ``third_order._python_function`` (the second order of its own
plain program), so methods follow loops, branches and further objects like any user code.
"""
from __future__ import annotations

import builtins
import dataclasses
import operator
import types
from typing import Any

from ..ir.primitives import as_sequence, python_iterable, super_getattr
from ..rules.comparing_calls import comparing_call, may_compare
from ..rules.iteration import iterate_to_list
from ..rules.core import describe_callable
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from ..tangents import kinds as K
from . import plain_closures, protocols
from .class_calls import is_generated_init, is_namedtuple, namedtuple_fields, without_init
from .new_construction import builder, through_type_call, type_call_of
from .lifting import _zero_tangent_of, lookup_second_order
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function, _python_function
from .third_order_frozen import freeze
from .plain_forward import _refusal as restructure

_GETATTR = _function(getattr)
_GETITEM = _function(operator.getitem)
_SETITEM = _function(operator.setitem)
_DELITEM = _function(operator.delitem)
_READERS = (getattr, object.__getattribute__)
_WRITERS = (setattr, object.__setattr__)
_DELETERS = (delattr, object.__delattr__)

#: ``sum`` of objects whose ``__add__``/``__radd__`` add them: Python's own loop, followed as user
#: code (each ``+`` a dunder's plain program)
SUM = plain_closures.compiled_definitions('''\
def sum(items, start=0):
    total = start
    for item in items:
        total = total + item
    return total
''', "<third order sum of objects>", {"__name__": __name__})["sum"]

#: a class made by a class statement is a heap type, and not immutable (C types made from a spec,
#: ``functools.partial``, are heap types too, but immutable)
_HEAP_TYPE, _IMMUTABLE_TYPE = 1 << 9, 1 << 8


def _python_class(tp: type) -> bool:
    """A class written in Python, not NumPy's or SciPy's (``np.vectorize``: their rules decide),
    except SciPy's sparse matrices, which the other orders too follow from SciPy's source."""
    return tp.__flags__ & (_HEAP_TYPE | _IMMUTABLE_TYPE) == _HEAP_TYPE and tp.__module__ != "numpy" \
        and (not tp.__module__.startswith(("numpy.", "scipy.")) or tp.__module__.startswith("scipy.sparse."))


def is_user_object(value: Any) -> bool:
    """An instance of a Python class (not a class, module, function, array or builtin value)."""
    return _python_class(type(value)) and not isinstance(value, (type, types.ModuleType)) \
        and K.primal_kind(value) in (K.OBJECT, K.FROZEN)


def user_class(f: Any) -> bool:
    """A class written in Python whose construction third order follows (not an exception)."""
    return isinstance(f, type) and _python_class(f) and not issubclass(f, BaseException) \
        and lookup_second_order(f) is None


def object_call(call: _Call) -> Any:
    """The result of an object call of the plain program: the slot of its ``(value, tangent)``
    pair, or the two slots of the value and the tangent; None when ``call`` is not one (a
    primitive, a plain function: ``jvp_rule`` goes on)."""
    f = call.f
    if _bound_slot(f) is not None:
        return _call_bound_slot(call)
    values = [call.value(a) for a, _ in call.arg_slots]
    if f in _READERS and len(values) in (2, 3) and is_user_object(values[0]) and isinstance(values[1], str):
        return _read(call, f)
    if f is vars and len(values) == 1 and not call.keyword_slots and is_user_object(values[0]):
        # ``obj.__dict__``, read here: through vars' definition the dict came back with a tangent
        # of its own, not the object's fields (writes through it were lost: a KeyError later)
        call.arg_slots.append(_constant_pair(call, "__dict__"))
        return _read(call, getattr)
    if f is builtins.sum and values and _holds_user_objects(values[0]):
        return _run(call, SUM, list(call.arg_slots), dict(call.keyword_slots))
    if f in _WRITERS and len(values) == 3 and is_user_object(values[0]) and isinstance(values[1], str):
        return _write(call, f)
    if f in _DELETERS and len(values) == 2 and is_user_object(values[0]) and isinstance(values[1], str):
        return _delete(call, f)
    if f is as_sequence and len(values) == 1 and is_user_object(values[0]) and python_iterable(values[0]):
        # what a loop walks: the list the class's own __iter__/__next__ give, followed as user code
        return _run(call, iterate_to_list, list(call.arg_slots))
    if f is super_getattr and len(values) == 3 and is_user_object(values[1]):
        return _read_super(call)
    if isinstance(f, types.MethodType) and type(f.__func__) is types.FunctionType \
            and lookup_second_order(f) is None and lookup_second_order(f.__func__) is None:
        return _call_method(call)
    if user_class(f):
        return _construct(call)
    built = type_call_of(f)
    if built is not None and user_class(built):  # super().__call__(...) in a metaclass's own __call__
        call.f = through_type_call(built)
        return _construct(call)
    if values and not call.keyword_slots and may_compare(f):
        definition = comparing_call(f, values)
        if definition is not None:  # a truth test or comparison whose dunders may change data: as user code
            return _run(call, definition, list(call.arg_slots))
    if protocols.may_be_operator(f) and values and any(is_user_object(v) for v in values):
        return _operator(call, values)
    if _callable_object(f):
        return _call_object(call)
    return None


def _callable_object(f: Any) -> bool:
    return is_user_object(f) and isinstance(getattr(type(f), "__call__", None), types.FunctionType)


# --------------------------------------------------------------------------------------------
# Calling Python functions on slot pairs
# --------------------------------------------------------------------------------------------


def _run(call: _Call, fn: types.FunctionType, pairs: list, keywords: dict | None = None) -> int:
    """``fn(*pairs, **keywords)`` (each a ``(value slot, tangent slot)``) by the second order of
    its plain program: the slot of its ``(value, tangent)`` pair."""
    call.function_slot = call.composition.add(_function(fn))
    call.arg_slots = list(pairs)
    call.keyword_slots = dict(keywords or {})
    return _python_function(call, fn)


def _constant_pair(call: _Call, value: Any) -> tuple[int, int]:
    c = call.composition
    return c.add(_constant(value)), c.add(_constant(_zero_tangent_of(value)))


# --------------------------------------------------------------------------------------------
# The tangent's fields
# --------------------------------------------------------------------------------------------


def _fields(call: _Call, tangent: int) -> int | None:
    """The slot of ``tangent.fields`` (the dict of the attributes' tangents), None when the
    tangent has no fields (an object holding no floats: ``NoTangent``)."""
    if not isinstance(call.value(tangent), (MutableTangent, Tangent)):
        return None
    c = call.composition
    return c.call(_GETATTR, [tangent, c.add(_constant("fields"))])


def _field_tangent(call: _Call, tangent: int, name: str, value: int) -> int:
    """The slot of the tangent of attribute ``name`` (a zero like ``value``'s if none is kept)."""
    fields = _fields(call, tangent)
    if fields is None or name not in call.value(fields):
        return call.composition.add(_constant(_zero_tangent_of(call.value(value))))
    c = call.composition
    return c.call(_GETITEM, [fields, c.add(_constant(name))])


# --------------------------------------------------------------------------------------------
# Attributes
# --------------------------------------------------------------------------------------------


def _read(call: _Call, reader: Any) -> Any:
    """``obj.name``: a field (its tangent the tangent's field), a method bound to ``obj`` (the
    object's tangent as its tangent), a property or ``__getattr__`` (the Python function), or a
    class attribute (a constant)."""
    from ..rules.local_classes import class_level_tangent
    from ..rules.objects import _instance_value

    (obj, obj_t), (name, _) = call.arg_slots[:2]
    o, n = call.value(obj), call.value(name)
    given = [call.value(a) for a, _ in call.arg_slots]
    method = protocols.attribute_method(getattr, tuple(given)) if reader is getattr else None
    if method is not None:  # __getattr__ / __getattribute__ of the class: user code
        return _run(call, method, list(call.arg_slots))
    getter = protocols.property_function(getattr, given)
    if getter is not None:
        return _run(call, getter, [(obj, obj_t)])
    if len(given) == 3 and not hasattr(o, n):  # getattr(obj, name, default): the default
        return call.arg_slots[2]
    c = call.composition
    value = c.call(_function(reader), [obj, name])
    present, _ = _instance_value(o, n)
    if present:
        return value, _field_tangent(call, obj_t, n, value)
    fields = _fields(call, obj_t) if n == "__dict__" else None
    if fields is not None:  # vars(obj), obj.__dict__: the tangent's fields are its tangent
        return value, fields
    read = call.value(value)
    if isinstance(read, (types.MethodType, types.MethodWrapperType)) and read.__self__ is o:
        return value, obj_t  # (o.__getattribute__ too: _call_bound_slot reads the object's tangent off it)
    if class_level_tangent(read) is not None:  # a value a class made in the function computed
        raise restructure(f"classes defined inside it that read its variables ({type(o).__qualname__}.{n})",
                          "define the class at module level and pass what it needs as arguments")
    return value, c.add(_constant(_zero_tangent_of(read)))


def _holds_user_objects(items: Any) -> bool:
    return isinstance(items, (list, tuple)) and any(is_user_object(item) for item in items)


def _read_super(call: _Call) -> tuple[int, int]:
    """``super().name`` in a method: the method bound to ``self``, whose tangent is ``self``'s."""
    _, (_, self_t), _ = call.arg_slots
    c = call.composition
    return c.call(_function(super_getattr), [a for a, _ in call.arg_slots]), self_t


def _write(call: _Call, writer: Any) -> Any:
    """``obj.name = v``: a property's setter or ``__setattr__`` as the Python function; else the
    value into the object and its tangent into the tangent's fields."""
    (obj, obj_t), (name, _), (v, v_t) = call.arg_slots
    o, n = call.value(obj), call.value(name)
    if writer is setattr:
        method = protocols.attribute_method(setattr, (o, n, call.value(v)))
        if method is not None:
            return _run(call, method, list(call.arg_slots))
        setter = protocols.property_function(setattr, [o, n, call.value(v)])
        if setter is not None:
            _run(call, setter, [(obj, obj_t), (v, v_t)])
            return _constant_pair(call, None)
    c = call.composition
    c.call(_function(writer), [obj, name, v])
    fields = _fields(call, obj_t)
    if fields is None:
        if _carries_floats(call.value(v)):
            raise restructure(f"an attribute holding numbers written to an object without a tangent "
                              f"({type(o).__qualname__}.{n})")
    else:
        t = call.value(v_t)
        tangent = v_t if t is not NoTangent else c.add(_constant(_zero_tangent_of(call.value(v))))
        c.call(_SETITEM, [fields, c.add(_constant(n)), tangent])
    return _constant_pair(call, None)


def _carries_floats(value: Any) -> bool:
    return _zero_tangent_of(value) is not NoTangent


def _delete(call: _Call, deleter: Any) -> Any:
    (obj, obj_t), (name, _) = call.arg_slots
    o, n = call.value(obj), call.value(name)
    if deleter is delattr and protocols.attribute_method(delattr, (o, n)) is not None:
        return _run(call, protocols.attribute_method(delattr, (o, n)), list(call.arg_slots))
    c = call.composition
    c.call(_function(deleter), [obj, name])
    fields = _fields(call, obj_t)
    if fields is not None and n in call.value(fields):
        c.call(_DELITEM, [fields, c.add(_constant(n))])
    return _constant_pair(call, None)


# --------------------------------------------------------------------------------------------
# Methods, construction, operators, callable objects
# --------------------------------------------------------------------------------------------


def _owner(call: _Call, method: int) -> int:
    """The slot of a bound method's owner, its fdata and tangents read off the method's (its
    rdata goes back to the method, as second order's own method calls route it)."""
    from .second_order import _method_rdata

    c = call.composition
    m = c.values[method]
    owner = (m[0].__self__, getattr(m[1], "__self__", NoFData), getattr(m[2], "__self__", NoTangent),
             getattr(m[3], "__self__", NoFData))

    def to_the_method(dy: Any, dy_d: Any) -> tuple:
        return (NoRData, _method_rdata(dy)), (NoRData, _method_rdata(dy_d))

    c.steps.append((to_the_method, [method], len(c.values)))
    return c.add(owner)


def _owner_tangent(call: _Call, method_t: int, owner: Any) -> int:
    """The slot of the owner's tangent: the method's tangent itself (``_read``'s convention), the
    ``__self__`` of forward mode's method tangent (a method read as a global), or a zero."""
    t = call.value(method_t)
    if isinstance(t, types.MethodType):  # a method of the owner's tangent (a namedtuple's)
        return _owner(call, method_t)
    if isinstance(t, Tangent) and t.primal_type is types.MethodType:
        return _field_tangent(call, method_t, "__self__", call.composition.add(_constant(owner)))
    if isinstance(t, (MutableTangent, Tangent)):  # the owner's own tangent
        return method_t
    return call.composition.add(_constant(_zero_tangent_of(owner)))


def _call_method(call: _Call) -> Any:
    """``obj.method(...)``: the method's function with ``(obj, obj_t)`` first."""
    f = call.f
    pairs = list(call.arg_slots)
    keywords = dict(call.keyword_slots)
    if isinstance(f.__self__, type):  # a class method: the class is a constant
        owner = _constant_pair(call, f.__self__)
    else:
        owner = (_owner(call, 0), _owner_tangent(call, 1, f.__self__))
    return _run(call, f.__func__, [owner] + pairs, keywords)


def _bound_slot(f: Any) -> Any:
    """The slot wrapper a method-wrapper bound to a user object calls (``o.__getattribute__`` is
    ``object.__getattribute__`` bound to ``o``), when it reads, writes or deletes an attribute;
    None for any other callable."""
    if not isinstance(f, types.MethodWrapperType) or not is_user_object(f.__self__):
        return None
    unbound = getattr(type(f.__self__), f.__name__, None)
    return unbound if any(unbound is slot for slot in _READERS + _WRITERS + _DELETERS) else None


def _call_bound_slot(call: _Call) -> Any:
    """``o.__getattribute__("a")``, ``o.__setattr__("a", v)``: the slot wrapper called with
    ``(o, o_t)`` first, as ``object.__getattribute__(o, "a")`` is. (Left to the builtin method's
    rule, the call unbound the method from a tangent that is the object's, not a method's, and
    the read value lost its tangent: third derivatives silently wrong.)"""
    f = call.f
    owner = (_owner(call, 0), _owner_tangent(call, 1, f.__self__))
    call.f = _bound_slot(f)
    call.function_slot = call.composition.add(_function(call.f))
    call.arg_slots = [owner] + list(call.arg_slots)
    return object_call(call)


def _construct(call: _Call) -> Any:
    """``cls(...)``: a new object and an empty tangent, then ``__init__``'s plain program on them
    (a dataclass's generated ``__init__``: its field writes and ``__post_init__``)."""
    cls = call.f
    pairs, keywords = list(call.arg_slots), dict(call.keyword_slots)
    build = builder(cls, "third-order")
    if build is not None:  # a metaclass's __call__, or type.__call__'s steps as Python (new_construction.py)
        return _run(call, build, [_constant_pair(call, cls)] + pairs, keywords)
    if is_namedtuple(cls):
        return _construct_namedtuple(call, cls, pairs, keywords)
    c = call.composition
    obj = c.add((object.__new__(cls), MutableTangent(cls, {}), MutableTangent(cls, {}), MutableTangent(cls, {})))
    obj_t = c.add(_constant(MutableTangent(cls, {})))
    if dataclasses.is_dataclass(cls) and is_generated_init(cls):
        _construct_dataclass(call, cls, obj, obj_t, pairs, keywords)
    elif without_init(cls, tuple(pairs), keywords):
        pass
    elif cls.__new__ is not object.__new__ or not isinstance(cls.__init__, types.FunctionType):
        raise restructure(f"constructing {describe_callable(cls)} (a __new__ or an __init__ without "
                          "Python source)", "build it outside and pass it in as an argument")
    else:
        _run(call, cls.__init__, [(obj, obj_t)] + pairs, keywords)
    if K.primal_kind(call.value(obj)) is K.FROZEN:  # identified by value from here on (third_order_frozen.py)
        obj = freeze(c, obj)
    return obj, obj_t


def _construct_namedtuple(call: _Call, cls: type, pairs: list, keywords: dict) -> tuple[int, int]:
    """A namedtuple of the arguments (defaults as constants), and the namedtuple of their
    tangents (forward mode's tangent of a namedtuple)."""
    given = {id(pair) for pair in pairs + list(keywords.values())}
    items = [item if id(item) in given else _constant_pair(call, item)  # (a default)
             for item in namedtuple_fields(cls, tuple(pairs), keywords)]
    c = call.composition
    return tuple(c.call(_function(cls), [item[k] for item in items]) for k in (0, 1))  # type: ignore[return-value]


def _construct_dataclass(call: _Call, cls: type, obj: int, obj_t: int, pairs: list, keywords: dict) -> None:
    """A dataclass's generated ``__init__``: each field set as it sets them (frozen ones through
    ``object.__setattr__``), then ``__post_init__`` with the ``InitVar`` values."""
    from .dataclass_construction import bind_dataclass

    fields, initvars, _ = bind_dataclass(cls, tuple(pairs), keywords, lambda v: _constant_pair(call, v))
    for name, (v, v_t) in fields.items():
        call.arg_slots = [(obj, obj_t), _constant_pair(call, name), (v, v_t)]
        _write(call, object.__setattr__)
    post_init = getattr(cls, "__post_init__", None)
    if isinstance(post_init, types.FunctionType):
        _run(call, post_init, [(obj, obj_t)] + [pair for _, pair in initvars])
    elif post_init is not None:
        raise restructure(f"__post_init__ of {cls.__qualname__} without Python source")


def _operator(call: _Call, values: list) -> Any:
    """An operator reaching a user class's dunder (``a + b``, ``-a``), tried as Python tries them
    (a reflected one when the first returns ``NotImplemented``)."""
    pairs = list(call.arg_slots)
    candidates = protocols.operator_candidates(call.f, values)
    if not candidates:
        return None
    for candidate in candidates:
        operands = pairs[::-1] if candidate.reflected else pairs
        result = _run(call, candidate.method, operands)
        if candidate.final or call.value(result)[0] is not NotImplemented:
            return result
    return result


def _call_object(call: _Call) -> Any:
    """A callable object: its class's ``__call__`` with the object (and its tangent) first."""
    method = type(call.f).__call__
    pairs, keywords = list(call.arg_slots), dict(call.keyword_slots)
    return _run(call, method, [(0, 1)] + pairs, keywords)


FOLLOWED_CALLS.append(object_call)

__all__ = ["is_user_object", "object_call", "user_class"]
