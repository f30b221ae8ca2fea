"""Calls on object-dtype arrays holding float data, as Python definitions over the primitives of
``object_arrays.py``, differentiated like user code in every mode.

``object_array_call(fn, args, kwargs)`` (asked by ``transform/protocols.dispatch`` for any call
given such an array) answers with the definition that runs instead, or None when the call sees the
array as it is (``len``, ``isinstance``, comparisons, ``a.shape``, Python code), or refuses by name
a NumPy function it does not cover (its C code would read the elements without their tangents).

What NumPy does to an object array, the definitions do to its elements: indexing gives an element
(``object_item``), a view (basic indices: ``object_view``) or a new array of the selected elements
(advanced ones); a write stores elements, broadcast as NumPy broadcasts them; arithmetic and
``np.add``... call each pair of elements' operator (``a * 2.0`` is ``[v * 2.0 for v in a]``, an
array element times a float is that array times it); ``sum``/``prod``/``mean`` add (multiply) the
elements in order; ``tolist`` nests them; builtins that read an iterable (``list``, ``sum``,
``zip``, ``sorted``...) read ``[a[0], a[1], ...]``.
"""
from __future__ import annotations

import functools
import itertools
import math
import operator
import types
from typing import Any, Callable

import numpy as np

from ..tangents.object_arrays import is_object_array
from .core import RuleArgumentError, describe_callable
from .declare import ZERO_DERIVATIVE, nondifferentiable
from .object_arrays import object_empty, object_item, object_items, object_store, object_view
from .util import holds_float_data

# ------------------------------------------------------------------------------------------------
# Positions: which elements an index or a broadcast takes (no derivative)
# ------------------------------------------------------------------------------------------------

_BASIC = (int, np.integer, slice, type(None), type(Ellipsis))


def index_form(a: np.ndarray, index: Any) -> str:
    """``"item"`` (one element), ``"view"`` (a basic index) or ``"copy"`` (an advanced one)."""
    items = index if type(index) is tuple else (index,)
    if all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items) and len(items) == a.ndim:
        return "item"
    if all(isinstance(i, _BASIC) and not isinstance(i, bool) for i in items):
        return "view"
    return "copy"


def taken(a: np.ndarray, index: Any) -> tuple:
    """``(shape, positions)``: the C-order positions in ``a`` of ``a[index]``'s elements."""
    chosen = np.arange(a.size).reshape(a.shape)[index]
    return np.shape(chosen), [int(p) for p in np.ravel(chosen)]


def spread(shape: tuple, target: tuple) -> list:
    """The positions, in an array of ``shape``, of each element of its broadcast to ``target``."""
    return [int(p) for p in np.ravel(np.broadcast_to(np.arange(math.prod(shape)).reshape(shape), target))]


def broadcast_shape(*values: Any) -> tuple:
    return np.broadcast_shapes(*(np.shape(v) for v in values))


def reduced(shape: tuple, axis: Any) -> tuple:
    """``(out_shape, groups)`` of a reduction over ``axis`` (None: all): the C-order positions
    each output element gathers, in the order NumPy reduces them."""
    positions = np.arange(math.prod(shape)).reshape(shape)
    axes = tuple(range(len(shape))) if axis is None else tuple(np.atleast_1d(axis))
    axes = tuple(int(x) % len(shape) for x in axes)
    kept = [d for d in range(len(shape)) if d not in axes]
    moved = np.transpose(positions, kept + list(axes)).reshape([shape[d] for d in kept] + [-1])
    return tuple(shape[d] for d in kept), [[int(p) for p in row] for row in moved.reshape(-1, moved.shape[-1])]


def nested_shape(data: Any) -> tuple:
    """The shape ``np.array(data, dtype=object)`` has."""
    return np.array(data, dtype=object).shape


def element_paths(shape: tuple) -> list:
    return list(np.ndindex(shape))


def check_keywords(name: str, kwargs: dict, allowed: tuple = ()) -> None:
    extra = set(kwargs) - set(allowed)
    if extra:
        raise RuleArgumentError(f"{name} of an object-dtype array: yuebing does not differentiate the "
                                f"keywords {sorted(extra)} here; call it without them")


nondifferentiable(index_form, taken, spread, broadcast_shape, reduced, nested_shape, element_paths,
                  check_keywords, is_object_array)

# ------------------------------------------------------------------------------------------------
# Making object arrays
# ------------------------------------------------------------------------------------------------


def filled(shape, items):
    """A new object array of ``shape`` holding ``items`` in C order (0-d: the element itself
    when ``scalar``)."""
    out = object_empty(shape)
    object_store(out, items)
    return out


def from_nested(data):
    """``np.array(data, dtype=object)``: the elements NumPy finds at depth ``ndim`` of ``data``."""
    if is_object_array(data):
        return filled(data.shape, object_items(data))
    shape = nested_shape(data)
    items = []
    for path in element_paths(shape):
        v = data
        for i in path:
            v = v[i]
        items.append(v)
    return filled(shape, items)


def operand_items(v, shape):
    """The elements of operand ``v`` broadcast to ``shape``, in C order."""
    if is_object_array(v):
        items = object_items(v)
        return [items[p] for p in spread(v.shape, shape)]
    if isinstance(v, np.ndarray):
        items = list(v.reshape(-1))
        return [items[p] for p in spread(v.shape, shape)]
    if isinstance(v, (list, tuple)):
        return operand_items(from_nested(v), shape)
    return [v] * math.prod(shape)


# ------------------------------------------------------------------------------------------------
# Indexing
# ------------------------------------------------------------------------------------------------


def getitem(a, index):
    form = index_form(a, index)
    if form == "item":
        return object_item(a, index)
    if form == "view":
        return object_view(a, operator.getitem, (index,))
    shape, positions = taken(a, index)
    items = object_items(a)
    return filled(shape, [items[p] for p in positions])


def setitem(a, index, value):
    shape, positions = taken(a, index)
    items = object_items(a)
    if index_form(a, index) == "item":
        items[positions[0]] = value  # one element: the value itself, whatever it is
    else:
        for p, v in zip(positions, operand_items(value, shape)):
            items[p] = v
    object_store(a, items)


# ------------------------------------------------------------------------------------------------
# Arithmetic: each element's operator
# ------------------------------------------------------------------------------------------------


def _result(shape, items):
    return items[0] if shape == () else filled(shape, items)


def elementwise(op, a, b):
    shape = broadcast_shape(a, b)
    return _result(shape, [op(u, v) for u, v in zip(operand_items(a, shape), operand_items(b, shape))])


def unary(op, a):
    return _result(a.shape, [op(v) for v in object_items(a)])


def in_place(op, a, b):
    """``a += b`` of an object array: ``a``'s elements replaced by ``op(element, b's)``."""
    shape = a.shape
    object_store(a, [op(u, v) for u, v in zip(object_items(a), operand_items(b, shape))])
    return a


_BINARY = {operator.add: operator.add, operator.sub: operator.sub, operator.mul: operator.mul,
           operator.truediv: operator.truediv, operator.pow: operator.pow,
           np.add: operator.add, np.subtract: operator.sub, np.multiply: operator.mul,
           np.divide: operator.truediv, np.power: operator.pow}
_UNARY = {operator.neg: operator.neg, operator.pos: operator.pos, np.negative: operator.neg,
          np.positive: operator.pos, abs: abs, np.absolute: abs}
_OUT_TAKERS = frozenset(op for op in {**_BINARY, **_UNARY} if isinstance(op, np.ufunc))
_IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
             operator.itruediv: operator.truediv, operator.ipow: operator.pow}

# ------------------------------------------------------------------------------------------------
# Reductions, conversions, copies
# ------------------------------------------------------------------------------------------------


def _fold(op, values, empty):
    if not values:
        return empty
    total = values[0]
    for v in values[1:]:
        total = op(total, v)
    return total


def _reduce(op, empty, a, axis=None):
    shape, groups = reduced(a.shape, axis)
    items = object_items(a)
    return _result(shape, [_fold(op, [items[p] for p in group], empty) for group in groups])


def total(a, axis=None):
    return _reduce(operator.add, 0, a, axis)


def product(a, axis=None):
    return _reduce(operator.mul, 1, a, axis)


def mean(a, axis=None):
    count = a.size if axis is None else math.prod(a.shape[d] for d in np.atleast_1d(axis))
    return total(a, axis) / count


def to_list(a):
    items = object_items(a)
    for n in reversed(a.shape[1:]):
        items = [items[k:k + n] for k in range(0, len(items), n)]
    return items[0] if a.shape == () else items


def copied(a):
    return filled(a.shape, object_items(a))


def as_floats(a, dtype=float):
    """``a.astype(float)``, ``np.asarray(a, dtype=float)``: a float array of the elements."""
    return np.array(object_items(a), dtype=dtype).reshape(a.shape)


def rows(a):
    """``[a[0], a[1], ...]``: what iterating ``a`` yields (elements, or views of rows)."""
    return [getitem(a, i) for i in range(len(a))]


def restructure_plan(how: Callable, a: np.ndarray, extra: tuple) -> Any:
    """None when ``how(a, *extra)`` is a view of ``a``, else ``(shape, positions)`` of the new
    array's elements in ``a``."""
    if np.shares_memory(how(a, *extra), a):
        return None
    positions = how(np.arange(a.size).reshape(a.shape), *extra)
    return positions.shape, [int(p) for p in positions.flat]


nondifferentiable(restructure_plan)


def restructured(how, a, *extra):
    """``how(a, *extra)`` (a reshape, a transpose, a ravel): a view of ``a`` when NumPy makes one,
    else a new array of the elements it takes."""
    plan = restructure_plan(how, a, extra)
    if plan is None:
        return object_view(a, how, extra)
    shape, positions = plan
    items = object_items(a)
    return filled(shape, [items[p] for p in positions])


def reshaped(a, *shape, order="C"):
    check_keywords("reshape", {} if order == "C" else {"order": order})
    return restructured(np.reshape, a, shape[0] if len(shape) == 1 else shape)


def transposed(a, *axes):
    return restructured(np.transpose, a, *((axes[0] if len(axes) == 1 else axes,) if axes else ()))


def transpose_attribute(a, name):
    """``a.T``."""
    return transposed(a)


def raveled(a):
    return restructured(np.ravel, a)


def flattened(a):
    return filled((a.size,), object_items(a))


def converted(a, dtype=None, **kwargs):
    """``a.astype(dtype)``: a copy of the elements (object), or a float array of them."""
    check_keywords("astype", kwargs, ("copy",))
    if is_object_dtype(dtype):
        return copied(a)
    return as_floats(a, dtype)


def is_object_dtype(dtype: Any) -> bool:
    """Whether ``dtype`` names the object dtype (a DType class, ``numpy.dtypes.Float64DType``, names
    its instances' dtype, though ``np.dtype`` of it is object)."""
    if isinstance(dtype, type) and issubclass(dtype, np.dtype):
        return dtype is type(np.dtype(object))
    return dtype is not None and np.dtype(dtype).kind == "O"


nondifferentiable(is_object_dtype)


def new_array(data, dtype=None, **kwargs):
    """``np.array(data, dtype=...)`` given an object array or ``dtype=object``."""
    check_keywords("np.array", kwargs, ("copy",))
    if dtype is None and is_object_array(data) or is_object_dtype(dtype):
        return from_nested(data)
    return as_floats(data, dtype)


def as_array(data, dtype=None, **kwargs):
    """``np.asarray(data, dtype=...)``: an object array itself, else as ``np.array``."""
    if is_object_array(data) and (dtype is None or is_object_dtype(dtype)) and not kwargs:
        return data
    return new_array(data, dtype, **kwargs)


def made_like(value):
    def make(shape, dtype=None, **kwargs):
        check_keywords("an object array's creation", kwargs, ("order",))
        return filled(shape_of(shape), [value] * math.prod(shape_of(shape)))
    return make


def shape_of(shape: Any) -> tuple:
    return tuple(np.atleast_1d(shape).tolist()) if np.ndim(shape) else (int(shape),)


nondifferentiable(shape_of)


def full(shape, fill_value, dtype=None, **kwargs):
    check_keywords("np.full", kwargs, ("order",))
    return filled(shape_of(shape), [fill_value] * math.prod(shape_of(shape)))


_empty, _zeros, _ones = made_like(None), made_like(0), made_like(1)

# ------------------------------------------------------------------------------------------------
# Which definition a call runs
# ------------------------------------------------------------------------------------------------

_FUNCTIONS: dict = {
    operator.getitem: getitem, operator.setitem: setitem, np.sum: total, np.prod: product, np.mean: mean,
    np.copy: copied, np.reshape: reshaped, np.transpose: transposed, np.ravel: raveled, np.array: new_array,
    np.asarray: as_array, np.asanyarray: as_array,
}
_METHODS: dict = {
    "sum": total, "prod": product, "mean": mean, "tolist": to_list, "copy": copied, "reshape": reshaped,
    "transpose": transposed, "ravel": raveled, "flatten": flattened, "astype": converted,
    "__getitem__": getitem, "__setitem__": setitem,
}
_MAKERS = {np.empty: (_empty, 1), np.zeros: (_zeros, 1), np.ones: (_ones, 1), np.full: (full, 2),
           np.array: (new_array, 1), np.asarray: (as_array, 1)}


def check_out(out: Any) -> None:
    if not is_object_array(out):
        raise RuleArgumentError("out= of a ufunc on an object-dtype array: yuebing differentiates an object "
                                "array out= only; assign the result instead (y[...] = a * b)")


nondifferentiable(check_out)


def written_out(out, result):
    """``out=``: the result's elements stored into object array ``out``, which is returned."""
    check_out(out)
    setitem(out, Ellipsis, result)
    return out


def _binary_definition(element_op: Callable) -> Callable:
    def binary(a, b, out=None):
        result = elementwise(element_op, a, b)
        return result if out is None else written_out(out, result)
    return binary


def _unary_definition(element_op: Callable) -> Callable:
    def one(a, out=None):
        result = unary(element_op, a)
        return result if out is None else written_out(out, result)
    return one


def _in_place_definition(element_op: Callable) -> Callable:
    def updated(a, b):
        return in_place(element_op, a, b)
    return updated


def method_definition(name: str) -> Callable:
    return _METHODS[name]


nondifferentiable(method_definition)


def bound_method(a, name):
    """``a.sum`` (``a.tolist``...): the method's definition with ``a`` bound, its derivatives with it."""
    return functools.partial(method_definition(name), a)


for _op, _element_op in _BINARY.items():
    _FUNCTIONS[_op] = _binary_definition(_element_op)
for _op, _element_op in _UNARY.items():
    _FUNCTIONS[_op] = _unary_definition(_element_op)
for _op, _element_op in _IN_PLACE.items():
    _FUNCTIONS[_op] = _in_place_definition(_element_op)

#: builtins that read the elements of an iterable: given ``[a[0], a[1], ...]`` instead
_READERS = frozenset({list, tuple, sum, iter, sorted, enumerate, zip, min, max, any, all, reversed, map, filter,
                      math.fsum, math.prod, itertools.chain, itertools.product})
#: calls that see the array as it is: no derivatives, or Python's own protocols
_AS_IT_IS = frozenset({getattr, hasattr, isinstance, type, id, len, repr, str, bool, print, hash, operator.is_,
                       operator.is_not, operator.truth, operator.not_, np.shape, np.ndim, np.size,
                       object_items, object_store, object_item, object_view, object_empty})
_ON_ROWS: dict = {}


def _reading_rows(fn: Callable, positions: tuple) -> Callable:
    key = (fn, positions)
    if key not in _ON_ROWS:
        def on_rows(*args, **kwargs):
            args = list(args)
            for i in positions:
                args[i] = rows(args[i])
            return fn(*args, **kwargs)
        _ON_ROWS[key] = on_rows
    return _ON_ROWS[key]


def _dtype_argument(fn: Any, args: list, kwargs: dict) -> Any:
    position = _MAKERS[fn][1]
    return kwargs.get("dtype", args[position] if len(args) > position else None)


def is_maker(fn: Any) -> bool:
    """Whether ``fn`` makes an array whose dtype may be object (``np.empty``, ``np.array``...)."""
    try:
        return fn in _MAKERS
    except TypeError:  # unhashable callables
        return False


def creating_call(fn: Any, args: list, kwargs: dict) -> Callable | None:
    """The definition of ``np.empty(n, dtype=object)``, ``np.array(data, dtype=object)``...: an
    object array made in the function, with a tangent (floats may be written into it later)."""
    if not is_maker(fn):
        return None
    dtype = _dtype_argument(fn, args, kwargs)
    return _MAKERS[fn][0] if isinstance(dtype, (type, str, np.dtype)) and is_object_dtype(dtype) else None


def objects_of_method(x, dtype, *args, **kwargs):
    """``x.astype(object)`` of a float array ``x``: an object array of its elements."""
    return from_nested(x)


def converting_method(fn: Any, args: list, kwargs: dict) -> Callable | None:
    """``objects_of_method`` for ``x.astype(object)`` of a float array ``x``, else None."""
    if getattr(fn, "__name__", None) != "astype" or type(fn) is not types.BuiltinMethodType:
        return None
    owner = fn.__self__
    dtype = kwargs.get("dtype", args[0] if args else None)
    if type(owner) is np.ndarray and owner.dtype.kind in "fc" and isinstance(dtype, (type, str, np.dtype)) \
            and is_object_dtype(dtype):
        return objects_of_method
    return None


def carries_object_array(value: Any, carried: Any) -> bool:
    """Whether ``value`` is an object array whose derivatives are followed: it holds float data,
    or its mode value ``carried`` (fdata, tangent) is an object array (one made in the function)."""
    return is_object_array(value) and (is_object_array(carried) or holds_float_data(value))


def object_array_call(fn: Any, args: list, positions: tuple, method_self: bool, keyword: bool = False) -> Callable | None:
    """The definition that runs for a call of ``fn`` on ``args`` (primals) where the arguments at
    ``positions`` (or, with ``method_self``, the method's ``__self__``) are object arrays followed
    by ``carries_object_array`` (a method reached by ``getattr(a, name)`` is bound to its
    definition there; ``keyword``: one is a keyword argument, ``out=``). None: the call sees the
    arrays as they are. Refuses what it does not cover."""
    if method_self:
        name = getattr(fn, "__name__", "")
        if name in ("__len__", "__repr__", "__str__") or (type(fn.__self__), name) in ZERO_DERIVATIVE:
            return None
        raise _refusal(f"numpy.ndarray.{name}")
    try:
        if keyword and fn not in _OUT_TAKERS:
            raise _refusal(describe_callable(fn))
        if fn is getattr and len(args) == 2 and args[1] == "T" and positions == (0,):
            return transpose_attribute
        if fn is getattr and len(args) == 2 and args[1] in _METHODS and positions == (0,):
            return bound_method
        if fn in _AS_IT_IS or fn in ZERO_DERIVATIVE:
            return None
        if fn in _FUNCTIONS:
            return _FUNCTIONS[fn]
        if fn in _READERS:
            return _reading_rows(fn, positions)
    except TypeError:  # unhashable callables
        return None
    if isinstance(fn, (types.FunctionType, types.MethodType, type)):
        return None  # Python code (and classes): differentiated as it is, reading the array through these
    raise _refusal(describe_callable(fn))


def _refusal(name: str) -> RuleArgumentError:
    return RuleArgumentError(
        f"{name}: yuebing does not differentiate this call on an object-dtype array holding float data "
        "(it covers indexing, writes, arithmetic, sum/prod/mean, reshape/transpose/ravel, copy, tolist, "
        "astype and iteration); convert first: a.astype(float) for an array of numbers, or a.tolist()")
