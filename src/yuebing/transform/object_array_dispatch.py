"""Where ``protocols.dispatch`` hands a call on an object-dtype array to its definition.

A call given an object array whose derivatives are followed (it holds float data, or was made in
the function and so has a tangent), as an argument or as a bound method's ``__self__``, or a call
making one (``np.empty(n, dtype=object)``, ``np.array(data, dtype=object)``), runs the Python
definition ``rules/object_array_calls.py`` gives, in the mode's values. The test is cheap for
every other call: a type check per argument.
"""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..rules.core import CoDual, Dual
from ..rules.object_array_calls import (carries_object_array, converting_method, creating_call, is_maker,
                                        object_array_call)
from ..tangents.types import NoFData, NoTangent, Tangent


def _primal(value: Any) -> Any:
    return value[0] if type(value) is tuple else value.primal if isinstance(value, (CoDual, Dual)) else value


def _carried(value: Any) -> Any:
    """The fdata (reverse), tangent (forward) or fdata (second order) of a mode's value."""
    if type(value) is tuple:
        return value[1]
    if isinstance(value, CoDual):
        return value.fdata
    return value.tangent if isinstance(value, Dual) else None


def _is_object(value: Any) -> bool:
    return type(value) is np.ndarray and value.dtype.kind == "O"


def _followed(value: Any) -> bool:
    """Whether a mode's value is an object array whose derivatives are followed."""
    primal = _primal(value)
    return _is_object(primal) and carries_object_array(primal, _carried(value))


def _field(t: Any, empty: Any) -> Any:
    return t.fields.get("__self__", empty) if isinstance(t, Tangent) else empty


def _owner_value(f: Any, owner: Any) -> Any:
    """The mode's value of a bound method's ``__self__``, from the method's (its tangent holds the
    owner's under ``__self__``)."""
    if type(f) is tuple:  # (second order: the method's tangent is the method bound to the owner's tangent)
        tangent = f[2].__self__ if type(f[2]) is types.BuiltinMethodType else _field(f[2], NoTangent)
        return (owner, _field(f[1], NoFData), tangent, _field(f[3], NoFData))
    if isinstance(f, CoDual):
        return CoDual(owner, _field(f.fdata, NoFData))
    return Dual(owner, _field(f.tangent, NoTangent))


def _method_self(f: Any, fn: Any) -> bool:
    """Whether ``fn`` is a method bound to a followed object array (``a.sum``)."""
    if type(fn) is not types.BuiltinMethodType or not _is_object(fn.__self__):
        return False
    carried = _carried(f)
    owner = carried.fields.get("__self__") if isinstance(carried, Tangent) else None
    return carries_object_array(fn.__self__, owner)


def _primals(args: tuple, kwargs: dict) -> tuple[list, dict]:
    return [_primal(a) for a in args], {k: _primal(v) for k, v in kwargs.items()}


def _reaches_object_array(args: tuple, kwargs: dict) -> bool:
    """Whether an argument is an object array (a cheap test: every call asks)."""
    for a in (*args, *kwargs.values()) if kwargs else args:
        p = a[0] if type(a) is tuple else a.primal if type(a) is Dual or type(a) is CoDual else a
        if type(p) is np.ndarray and p.dtype.kind == "O":
            return True
    return False


def object_array_form(mode: Any, f: Any, fn: Any, args: tuple, kwargs: dict, dispatch: Callable) -> Any:
    """The call run by its object-array definition, or None when it is not one."""
    owner = fn.__self__ if type(fn) is types.BuiltinMethodType else None  # (np.array's is its module)
    if type(owner) is np.ndarray:
        if owner.dtype.kind == "O" and _method_self(f, fn):
            found = object_array_call(fn, [], (), method_self=True)
            return None if found is None else dispatch(mode, mode.constant(found), found, args, kwargs)
        if fn.__name__ == "astype":
            converting = converting_method(fn, *_primals(args, kwargs))
            if converting is not None:  # x.astype(object) of a float array: x, with its derivatives, and the arguments
                owner_value = _owner_value(f, owner)
                return dispatch(mode, mode.constant(converting), converting, (owner_value, *args), kwargs)
    elif args and is_maker(fn):
        made = creating_call(fn, *_primals(args, kwargs))
        if made is not None:
            return dispatch(mode, mode.constant(made), made, args, kwargs)
    if not args or not _reaches_object_array(args, kwargs):
        return None
    positions = tuple(i for i, a in enumerate(args) if _followed(a))
    keyword = any(_followed(v) for v in kwargs.values())
    if not positions and not keyword:
        return None
    found = object_array_call(fn, [_primal(a) for a in args], positions, False, keyword)
    return None if found is None else dispatch(mode, mode.constant(found), found, args, kwargs)
