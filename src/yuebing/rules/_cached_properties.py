"""``functools.cached_property`` read inside differentiated code, in every mode.

Its value, once computed, is an ordinary field of the instance's ``__dict__`` (the descriptor
has no ``__set__``, so Python finds the field first): the getattr rule reads it as the field it
is (``rules/objects._check_user_read``). Read before that, Python calls the descriptor, which
calls the getter and stores what it returns in the instance ``__dict__``; here that first read
runs ``computing(prop)`` instead (``transform/protocols.property_function``): the getter,
differentiated from its source as any Python function, then the store, by
``object.__setattr__`` (which, as the descriptor's own store, passes by a ``__setattr__`` of
the class and writes the instance ``__dict__``), whose rule keeps the value's derivative in the
field's tangent where later reads find it. This module is ordinary code to the transforms (it is
not in ``transform/protocols._MACHINERY``).
"""
from __future__ import annotations

import functools
import types
import weakref
from typing import Any, Callable

_COMPUTING: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


def first_read(obj: Any, name: Any) -> Callable | None:
    """The function computing and caching ``obj.name`` when ``name`` is a ``cached_property`` of
    ``obj``'s class not yet computed for ``obj``; None otherwise (not one; already cached: a
    field; a getter in C; an instance without a ``__dict__``, which Python refuses itself)."""
    namespace = getattr(obj, "__dict__", None)  # (first: an instance field, the common read, is no first read)
    if type(namespace) is not dict or not isinstance(name, str) or name in namespace:
        return None
    prop = _class_attribute(type(obj), name)
    if not isinstance(prop, functools.cached_property) or hasattr(type(prop), "__set__") \
            or type(prop).__get__ is not functools.cached_property.__get__ \
            or not isinstance(prop.func, types.FunctionType) or prop.attrname != name:
        return None
    found = _COMPUTING.get(prop)
    if found is None:
        found = _COMPUTING[prop] = _computing(prop.func, name)
    return found


def _class_attribute(tp: type, name: str) -> Any:
    for klass in tp.__mro__:
        if name in klass.__dict__:
            return klass.__dict__[name]
    return None


def _computing(getter: types.FunctionType, name: str) -> Callable:
    def compute_cached_property(obj: Any) -> Any:
        value = getter(obj)
        object.__setattr__(obj, name, value)  # the instance __dict__, as the descriptor stores it
        return value

    return compute_cached_property
