"""Where ``protocols.dispatch`` stops a call on a structured array whose rules would drop its
derivatives.

A structured array with float fields has a structured tangent of its dtype
(``tangents/structured.py``), and the rules written with it in mind (field and record reads and
writes, ``np.array``/``np.copy``, reshapes and views, joins, iteration) follow it. Most NumPy
rules were written for float arrays: given a structured array they would raise an unclear NumPy
error or, worse, find no float dtype and hand back no derivative. So a call given a structured
array whose derivatives are followed (it has a tangent in the mode's values), or a call making
one from float data, runs only if it is one of those; any other is refused by name, with what to
write instead. A constant table (no tangent: read from a module, say) is not stopped. The test is
cheap for every other call: a type check per argument.
"""
from __future__ import annotations

import operator
import types
from typing import Any, Callable

import numpy as np

from ..rules.batched import BATCH
from ..rules.core import CoDual, Dual, RuleArgumentError
from ..ir.lazy_iterators import whole_map
from ..rules.structured_values import batched_field, listed_items, record_fields, records_as_lists, walked_listing
from ..rules.util import holds_float_data
from ..tangents import structured
from ..tangents.types import NoFData, NoTangent, Tangent

#: functions whose rules follow a structured array's tangent (tests/test_structured_arrays.py)
_FUNCTIONS = frozenset(map(id, (
    operator.getitem, operator.setitem, len, iter, next, getattr, isinstance, type, id, repr, str, print,
    zip, enumerate, reversed,
    operator.eq, operator.ne, operator.is_, operator.is_not, operator.contains,
    np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.copy,
    np.zeros, np.empty, np.ones, np.zeros_like, np.empty_like, np.ones_like, np.shape, np.ndim, np.size,
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.squeeze, np.expand_dims, np.atleast_1d, np.atleast_2d,
    np.atleast_3d, np.flip, np.concatenate, np.stack, np.hstack, np.vstack, np.resize, np.argsort,
)))
#: methods of a structured array (or record) whose rules follow its tangent
_METHODS = frozenset({"reshape", "ravel", "transpose", "swapaxes", "squeeze", "__getitem__", "__setitem__",
                      "__len__", "__iter__", "argsort"})
#: methods that run as the function beside them (``arr.copy()`` as ``np.copy(arr)``)
_AS_FUNCTIONS: dict[str, Callable] = {"copy": np.copy, "tolist": records_as_lists}
#: ``list(x)``/``tuple(x)`` of a record or structured array (and so ``f(*record)``, which lists it):
#: its items read by position, each with its derivative
_AS_ITEMS: dict[type, Callable] = {list: listed_items, tuple: record_fields}
#: calls whose rules walk the items of an array (splitting its tangent into numbers): a structured
#: array's records are listed first (``whole_map``: a lazy map's rest)
_WALKS = (zip, enumerate, reversed, map, filter, whole_map)

_DERIVED = (types.FunctionType, types.MethodType, type)
_CONTAINERS = (list, dict, set, tuple)
_OPERATIONS = {id(operator.getitem): "indexing (arr[...])", id(operator.setitem): "item assignment (arr[...] = v)",
               id(getattr): "attribute read"}
#: calls whose results carry no derivative (a batched forward pass runs them as they are)
_NO_DERIVATIVE = frozenset(map(id, (len, isinstance, type, id, repr, str, print, np.shape, np.ndim, np.size,
                                    operator.is_, operator.is_not, operator.eq, operator.ne, operator.contains)))
#: attributes a batched forward pass reads from a structured array as they are
_PLAIN_ATTRIBUTES = frozenset({"dtype", "shape", "ndim", "size", "itemsize", "nbytes"})
_FIELD_ACCESS = (operator.getitem, operator.setitem)
_BOUND = (types.BuiltinMethodType, types.MethodWrapperType)
_DESCRIPTORS = (types.MethodDescriptorType, types.WrapperDescriptorType, types.ClassMethodDescriptorType)

_ADVICE = ("read its float fields as arrays of their own (arr['a'], a view whose derivatives are followed) and "
           "work on those, or keep each field in a float array (a dict of arrays: {'a': np.zeros(n), ...})")


def _primal(value: Any) -> Any:
    return value[0] if type(value) is tuple else value.primal if isinstance(value, (CoDual, Dual)) else value


def _carried(value: Any) -> Any:
    """The fdata (reverse, second order) or tangent (forward) of a mode's value."""
    if type(value) is tuple:
        return value[1] if value[1] is not NoFData else value[2]
    if isinstance(value, CoDual):
        return value.fdata
    return value.tangent if isinstance(value, Dual) else None


def _is_structured(p: Any) -> bool:
    return (type(p) is np.ndarray or type(p) is np.void) and p.dtype.kind == "V"


def _followed(value: Any) -> bool:
    """Whether a mode's value is a structured array (or record) with a tangent."""
    p = _primal(value)
    return _is_structured(p) and structured.carries_derivative(p) and structured.is_structured(_carried(value))


def _iterable_followed(value: Any) -> bool:
    """Whether a mode's value is a record or a structured array of at least one axis, with a
    tangent (a 0-d array is not iterable: ``list`` gives NumPy's error)."""
    return _followed(value) and (type(_primal(value)) is np.void or _primal(value).ndim > 0)


def _owner_followed(f: Any) -> bool:
    """Whether a bound method's ``__self__`` has a tangent (the method's carries it as ``__self__``)."""
    carried = f[2] if type(f) is tuple else _carried(f)
    if type(carried) is types.BuiltinMethodType:  # (second order: the method bound to the owner's tangent)
        return structured.is_structured(carried.__self__)
    owner = carried.fields.get("__self__") if isinstance(carried, Tangent) else None
    return structured.is_structured(owner)


def _owner_value(f: Any, owner: Any) -> Any:
    """The mode's value of a bound method's ``__self__``, from the method's."""
    def field(t: Any, empty: Any) -> Any:
        return t.fields.get("__self__", empty) if isinstance(t, Tangent) else empty

    if type(f) is tuple:
        tangent = f[2].__self__ if type(f[2]) is types.BuiltinMethodType else field(f[2], NoTangent)
        return (owner, field(f[1], NoFData), tangent, field(f[3], NoFData))
    if isinstance(f, CoDual):
        return CoDual(owner, field(f.fdata, NoFData))
    return Dual(owner, field(f.tangent, NoTangent))


def _describe(fn: Any) -> str:
    owner = getattr(fn, "__self__", None)
    if id(fn) in _OPERATIONS:
        return _OPERATIONS[id(fn)]
    if _is_structured(owner):
        return f"{type(owner).__name__}.{fn.__name__}"
    module = getattr(fn, "__module__", None) or ""
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    return f"{module.split('.')[0]}.{name}" if module.startswith("numpy") else name


def _refusal(fn: Any) -> RuleArgumentError:
    return RuleArgumentError(
        f"{_describe(fn)}: yuebing does not differentiate this call on a structured array (its rule would drop "
        f"the derivatives of the float fields); {_ADVICE}")


def _makes_structured_from_floats(args: tuple, kwargs: dict) -> bool:
    """Whether a call is given a structured dtype with float fields and float data beside it
    (``np.full(n, x, dtype=[...])``): it would make a structured array of derivatives."""
    values = [_primal(a) for a in args] + [_primal(v) for v in kwargs.values()]
    dtypes = [v for v in values if _structured_dtype(v)]
    return bool(dtypes) and any(holds_float_data(v) for v in values if not _structured_dtype(v))


def _structured_dtype(v: Any) -> bool:
    if isinstance(v, np.dtype):
        return v.fields is not None and structured.has_float_fields(v)
    if type(v) is list and v and all(type(item) is tuple and item and type(item[0]) is str for item in v):
        try:
            return structured.has_float_fields(np.dtype(v))
        except TypeError:
            return False
    return False


def _batched(value: Any) -> bool:
    """Whether a value's tangent carries the batch axis of a batched forward pass somewhere (a
    list or tuple of numbers, a structured array, a record)."""
    p, t = _primal(value), _carried(value)
    stack = [(p, t)]
    while stack:
        p, t = stack.pop()
        if type(t) is np.ndarray and (t.ndim == np.ndim(p) + 1 or isinstance(p, np.void)):
            return True
        if type(p) in (list, tuple) and type(t) in (list, tuple) and len(p) == len(t):
            stack.extend(zip(p, t))
    return False


def _refuse_batched(fn: Any, owner: Any, f: Any, args: tuple, kwargs: dict) -> None:
    """A batched forward pass (``yb.jacobian(mode="fwd")``) does not follow structured arrays: a
    record's tangent would be a slice of the batched tangent, which the record rules do not read."""
    if fn in _FIELD_ACCESS and len(args) >= 2 and batched_field(_primal(args[0]), _carried(args[0]), _primal(args[1])):
        return  # arr["a"] (= v): the field of every direction (rules/batched.py)
    if _moves_values(fn, owner, args) or id(fn) in _NO_DERIVATIVE \
            or fn is getattr and len(args) >= 2 and _primal(args[1]) in _PLAIN_ATTRIBUTES:
        return  # a container keeps the array with its batched tangent; len(arr), arr.shape
    values = [*args, *kwargs.values()] + ([_owner_value(f, owner)] if _is_structured(owner) else [])
    structured_in = any(_is_structured(_primal(v)) for v in values) or _makes_structured_from_floats(args, kwargs)
    if structured_in and any(_batched(v) for v in values):
        raise RuleArgumentError(
            f"{_describe(fn)}: yuebing's batched forward mode (yb.jacobian(..., mode='fwd')) does not "
            "differentiate structured arrays; pass chunk_size=1 (one direction per pass) or use mode='rev'")


def _moves_values(fn: Any, owner: Any, args: tuple) -> bool:
    """Whether a call only moves values with their tangents: yuebing's own primitives (``mklist``,
    ``as_sequence``), a list's, dict's or tuple's methods and items (``d["t"] = arr``)."""
    if type(fn) is types.FunctionType and (getattr(fn, "__module__", None) or "").startswith("yuebing."):
        return True
    if type(owner) in _CONTAINERS or getattr(fn, "__objclass__", None) in _CONTAINERS:
        return True
    return fn in _FIELD_ACCESS and bool(args) and type(_primal(args[0])) in _CONTAINERS


def _derived_or_own(mode: Any, fn: Any) -> bool:
    """Whether Python function ``fn`` is differentiated from its source (no rule), or is one of
    yuebing's own primitives (``mklist``, ``as_sequence``: they move values with their tangents)."""
    return (getattr(fn, "__module__", None) or "").startswith("yuebing.") or mode.lookup(fn) is None


def _unbound_method(mode: Any, fn: Any, args: tuple, kwargs: dict, dispatch: Callable) -> Any:
    """``np.ndarray.copy(arr)``: as the bound method ``arr.copy()``."""
    name = fn.__name__
    if name in _METHODS:
        return None
    if name in _AS_FUNCTIONS and len(args) == 1 and not kwargs:
        function = _AS_FUNCTIONS[name]
        return dispatch(mode, mode.constant(function), function, args, {})
    if _followed(args[0]):
        raise _refusal(fn)
    return None


def structured_array_form(mode: Any, f: Any, fn: Any, args: tuple, kwargs: dict, dispatch: Callable) -> Any:
    """The call run as the function standing for it (``arr.copy()``), None to let it go on, or a
    refusal raised when its rule would drop a structured array's derivatives."""
    kind = type(fn)
    if kind is np.ufunc and not BATCH.size:
        return None  # (NumPy has no loop of a ufunc for structured dtypes: its own error)
    owner = fn.__self__ if kind in _BOUND else None
    owner = None if type(owner) is types.ModuleType else owner  # (len, operator.getitem: functions)
    objclass = fn.__objclass__ if kind in _DESCRIPTORS else None
    if BATCH.size and (args or kwargs or _is_structured(owner)):
        _refuse_batched(fn, owner, f, args, kwargs)
    if (fn is list or fn is tuple) and len(args) == 1 and not kwargs and _iterable_followed(args[0]):
        function = _AS_ITEMS[fn]
        return dispatch(mode, mode.constant(function), function, args, {})
    if any(fn is walk for walk in _WALKS):
        return _walked_listed(mode, fn, args, kwargs, dispatch)
    if fn is setattr and len(args) == 3 and not _is_structured(_primal(args[0])):
        return None  # (an object's attribute keeps the array with its tangent, as any value: self.table = arr)
    if owner is not None or objclass is not None:
        return _method_form(mode, f, fn, owner, objclass, args, kwargs, dispatch)
    if id(fn) in _FUNCTIONS or not args and not kwargs or kind in _DERIVED and _derived_or_own(mode, fn):
        return None  # (a Python function without a rule is differentiated from its source: its calls are checked)
    _refuse_arguments(fn, args, kwargs)
    return None


def _walked_listed(mode: Any, fn: Any, args: tuple, kwargs: dict, dispatch: Callable) -> Any:
    """A walk (``_WALKS``) given a structured array with a tangent: run on its records listed
    (the walks' rules split an array's tangent into numbers); None when none is given."""
    listed = tuple(k for k, a in enumerate(args) if _iterable_followed(a))
    if not listed:
        return None
    walk = mode.constant(walked_listing)
    return dispatch(mode, walk, walked_listing, (mode.constant(fn), mode.constant(listed), *args), kwargs)


def _method_form(mode: Any, f: Any, fn: Any, owner: Any, objclass: Any, args: tuple, kwargs: dict,
                 dispatch: Callable) -> Any:
    """``structured_array_form`` of a bound method (``arr.copy()``) or a method descriptor
    (``np.ndarray.copy(arr)``, ``list.append(xs, row)``)."""
    if type(owner) in _CONTAINERS or objclass in _CONTAINERS or _is_structured(owner) and fn.__name__ in _METHODS:
        return None  # (a list's append keeps a record with its tangent, as any element)
    if _is_structured(owner) and structured.carries_derivative(owner):
        name = fn.__name__
        if name in _AS_FUNCTIONS and not args and not kwargs:
            function = _AS_FUNCTIONS[name]
            return dispatch(mode, mode.constant(function), function, (_owner_value(f, owner),), {})
        if _owner_followed(f):
            raise _refusal(fn)
    if objclass is np.ndarray and args and _is_structured(_primal(args[0])):
        return _unbound_method(mode, fn, args, kwargs, dispatch)  # np.ndarray.copy(arr)
    _refuse_arguments(fn, args, kwargs)
    return None


def _refuse_arguments(fn: Any, args: tuple, kwargs: dict) -> None:
    """Refuse ``fn`` given a structured array with a tangent, or a structured dtype and float data."""
    maker = False  # (a cheap test: every call asks)
    for a in (*args, *kwargs.values()) if kwargs else args:
        p = a[0] if type(a) is tuple else a.primal if type(a) is CoDual or type(a) is Dual else a
        kind = type(p)
        if (kind is np.ndarray or kind is np.void) and p.dtype.kind == "V" and _followed(a):
            raise _refusal(fn)
        maker = maker or kind is np.dtype or kind is list and bool(p) and type(p[0]) is tuple
    if maker and _makes_structured_from_floats(args, kwargs):
        raise _refusal(fn)
