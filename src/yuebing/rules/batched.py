"""Batched forward mode (Mooncake's chunked forward mode, NDual-style): the batch state and the
forward rules that take tangents with a leading batch axis.

In a batched pass (``BATCH.size`` is k >= 2) every tangent carries k directions at once: a float's
tangent is a 1-D array of length k, an array's has shape ``(k,) + x.shape``; containers hold
batched leaves. A tangent without that leading axis (a float, an array shaped like its primal: the
tangent of a constant or a global) is **zero** in every direction: the pass seeds batched tangents
for every argument, and every rule below (and the looped fallback of
``transform/batched_forward.py``) makes a batched output from any batched input.

Which rules run batched is data here, keyed by the function (or ``(type, method name)``), never
by the registered rule object, which several functions may share:

* ``batched_rule(fn)``: rules rewritten for the batch axis: elementwise functions and operators
  (each tangent reshaped so that it broadcasts from the right against the partials), ``matmul``/
  ``dot`` of 1-D and 2-D arrays, ``sum``/``mean`` with ``axis=``/``keepdims=``, basic and
  single-array indexing of arrays and writes through it, ``reshape``, ``.T``, ``np.array`` of
  numbers, ``concatenate``/``stack``, ``list.extend(array)``. A batched rule returns ``None``
  when it does not handle the arguments it got (the looped fallback then does);
* ``structural_rule(fn, args)``: rules that only move tangent objects (list, dict, attribute and
  closure operations on containers), which work on batched leaves unchanged;
* ``zero_rule(fn)``: rules with a zero derivative.

Every other rule runs once per direction (``transform/batched_forward.py``): never wrong, only
slower.
"""
from __future__ import annotations

import collections
import contextlib
import operator
import threading
import types
from typing import Any, Callable, Iterator

import numpy as np

from ..ir import local_classes, primitives as P
from ..ir.lazy_iterators import listed_reversed
from ..tangents import NoTangent
from .bunch_data import reads_attribute
from .core import Dual
from .declare import ELEMENTWISE_PARTIALS, ZERO_DERIVATIVE, forward_product
from . import structured_values
from .util import is_differentiable, refuse_numbers_into_object_array


class _Batch(threading.local):
    size = 0  # 0: one direction per pass; k >= 2: every tangent has a leading axis of k directions


BATCH = _Batch()


@contextlib.contextmanager
def batched(size: int) -> Iterator[None]:
    """Run forward passes with ``size`` directions per tangent inside the block."""
    previous, BATCH.size = BATCH.size, size
    try:
        yield
    finally:
        BATCH.size = previous


def is_batched(t: Any, x: Any) -> bool:
    """Whether ``t``, the tangent of float or array ``x``, has the batch axis."""
    return type(t) is np.ndarray and t.ndim == np.ndim(x) + 1


def aligned(t: Any, x: Any, ndim: int) -> Any:
    """Batched tangent ``t`` of ``x`` reshaped to broadcast against an ``ndim``-dimensional result
    (the batch axis first, then ones, then ``x``'s shape); an unbatched one as it is."""
    if not is_batched(t, x):
        return t
    return t.reshape((t.shape[0],) + (1,) * (ndim - np.ndim(x)) + np.shape(x))


def batched_zeros(x: Any, k: int, dtype: Any = None) -> np.ndarray:
    """Zeros of shape ``(k,) + x.shape`` whose slices are laid out in memory as ``x`` is (so a
    reshape that is a view of ``x`` is a view of each slice: a write through it reaches both)."""
    dtype = dtype if dtype is not None else x.dtype if isinstance(x, np.ndarray) else np.float64
    if isinstance(x, np.ndarray) and x.ndim > 1 and x.flags.f_contiguous and not x.flags.c_contiguous:
        return np.moveaxis(np.zeros(x.shape + (k,), dtype=dtype, order="F"), -1, 0)
    return np.zeros((k,) + np.shape(x), dtype=dtype)


def _numeric(x: Any) -> bool:
    if isinstance(x, np.ndarray):
        return x.dtype.kind in "biufc"
    return isinstance(x, (int, float, complex, np.number, np.bool_))


def _output_tangent(dy: Any, y: Any) -> Any:
    """A batched tangent for result ``y`` from ``dy`` (a sum of aligned terms, or None): a fresh
    array of shape ``(k,) + y.shape`` in ``y``'s float dtype, NoTangent for a non-float ``y``."""
    if not is_differentiable(y):
        return NoTangent
    dtype = y.dtype if isinstance(y, (np.ndarray, np.generic)) else np.result_type(y)
    out = batched_zeros(y, BATCH.size, dtype)
    if dy is not None:
        out[...] = np.real(dy) if dtype.kind == "f" and np.iscomplexobj(dy) else dy
    return out


# --------------------------------------------------------------------------------------------
# Elementwise functions and operators
# --------------------------------------------------------------------------------------------

_IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
             operator.itruediv: operator.truediv, operator.ifloordiv: operator.floordiv,
             operator.imod: operator.mod, operator.ipow: operator.pow}


def _elementwise_tangent(partials: tuple, xs: list, ts: list, y: Any) -> Any:
    """The sum of ``partial_i(*xs, y) * t_i``, each tangent aligned to broadcast against ``y``."""
    ndim = max(np.ndim(x) for x in xs)
    dy = None
    for x, t, partial in zip(xs, ts, partials):
        if partial is None or not is_batched(t, x) or not is_differentiable(x):
            continue  # (an unbatched tangent is zero in every direction: a literal's 0.0 times np.power's
            # NaN exponent partial at a negative base made the plain pass NaN, fuzz seed 93597)
        term = forward_product(aligned(t, x, ndim), partial(*xs, y))
        dy = term if dy is None else dy + term
    return dy


def _elementwise_rule(f: Any, partials: tuple) -> Callable:
    out_of_place = _IN_PLACE.get(f)

    def rule(args: tuple, kwargs: dict) -> Dual | None:
        if kwargs or len(args) != len(partials):
            return None  # out=, where=, dtype=: the looped fallback
        xs = [a.primal for a in args]
        if not all(_numeric(x) for x in xs):
            return None
        ts = [a.tangent for a in args]
        if out_of_place is not None and isinstance(xs[0], np.ndarray):
            return _in_place(out_of_place, partials, args[0], xs, ts)
        y = f(*xs)  # under the caller's error state, as in the plain call (ir/float_errors.py)
        if out_of_place is None and isinstance(y, np.ndarray) and any(y is x for x in xs):
            return None  # a function that hands back its argument: the fallback keeps the identity
        return Dual(y, _output_tangent(_elementwise_tangent(partials, xs, ts, y), y))

    return rule


def _in_place(op: Callable, partials: tuple, target: Dual, xs: list, ts: list) -> Dual | None:
    """``a op= b`` on an array: the value and its batched tangent written into ``a`` and ``a``'s tangent."""
    a, ta = xs[0], ts[0]
    refuse_numbers_into_object_array(op.__name__, a, xs[1])  # (a structured array's field: arr["w"] += x)
    if a.dtype.kind not in "fc" or not is_batched(ta, a):
        return None
    y = op(*xs)
    if y.shape != a.shape or not np.can_cast(y.dtype, a.dtype, "same_kind"):
        return None  # NumPy's own error, from the fallback
    dy = _elementwise_tangent(partials, xs, ts, y)
    a[...] = y
    ta[...] = _output_tangent(dy, a)
    return Dual(a, ta)


# --------------------------------------------------------------------------------------------
# Products, reductions, indexing
# --------------------------------------------------------------------------------------------


def _product_rule(f: Any) -> Callable:
    """``a @ b`` (and ``np.dot``) of 1-D and 2-D float arrays: ``ta @ b + a @ tb`` with the batch
    axis kept first (a 1-D right operand's batched tangent is a stack of columns)."""

    def rule(args: tuple, kwargs: dict) -> Dual | None:
        if kwargs or len(args) != 2:
            return None
        (a, b), (ta, tb) = (args[0].primal, args[1].primal), (args[0].tangent, args[1].tangent)
        if not all(type(x) is np.ndarray and x.ndim in (1, 2) and x.dtype.kind in "fc" for x in (a, b)):
            return None
        y = f(a, b)
        dy = None
        if is_batched(ta, a):  # an unbatched tangent is zero: no term
            dy = np.matmul(ta, b)
        if is_batched(tb, b):
            term = np.matmul(a, tb[..., None])[..., 0] if b.ndim == 1 else np.matmul(a, tb)
            dy = term if dy is None else dy + term
        return Dual(y, _output_tangent(dy, y))

    return rule


def _reduction_rule(reduce: Callable) -> Callable:
    """``np.sum``/``np.mean`` (function or method) with ``axis`` and ``keepdims``: the same
    reduction of the tangent over the same axes shifted past the batch axis."""

    def rule(args: tuple, kwargs: dict) -> Dual | None:
        if len(args) not in (1, 2) or set(kwargs) - {"axis", "keepdims"}:
            return None
        x = args[0].primal
        if not isinstance(x, np.ndarray) or x.dtype.kind not in "fc" or not is_batched(args[0].tangent, x):
            return None
        axis = args[1].primal if len(args) == 2 else kwargs["axis"].primal if "axis" in kwargs else None
        keepdims = kwargs["keepdims"].primal if "keepdims" in kwargs else False
        if not (axis is None or isinstance(axis, (int, np.integer)) or isinstance(axis, tuple)) \
                or not isinstance(keepdims, (bool, np.bool_)):
            return None
        y = reduce(x, axis=axis, keepdims=keepdims)
        axes = tuple(range(1, x.ndim + 1)) if axis is None else tuple(
            a + 1 if a >= 0 else a for a in (axis if isinstance(axis, tuple) else (axis,)))
        return Dual(y, reduce(args[0].tangent, axis=axes, keepdims=keepdims))

    return rule


def _basic(index: Any) -> bool:
    """An index NumPy applies as a view: ints, slices, None and Ellipsis (or a tuple of them)."""
    parts = index if type(index) is tuple else (index,)
    return all(p is None or p is Ellipsis or type(p) in (int, slice) or isinstance(p, np.integer) for p in parts)


def _batch_index(index: Any) -> tuple | None:
    """The tangent's index for primal index ``index`` (a leading full slice), or None for an index
    whose result axes would move with a leading axis (several arrays, arrays mixed with slices)."""
    if _basic(index):
        return (slice(None),) + (index if type(index) is tuple else (index,))
    if isinstance(index, np.ndarray) and index.dtype.kind in "biu":
        return (slice(None), index)
    return None


def _getitem(args: tuple, kwargs: dict) -> Dual | None:
    if kwargs or len(args) != 2:
        return None
    x, t = args[0].primal, args[0].tangent
    if structured_values.batched_field(x, t, args[1].primal):  # arr["a"]: the same field of each direction
        return Dual(x[args[1].primal], t[args[1].primal])
    if type(x) is not np.ndarray or x.dtype.kind not in "fc" or not is_batched(t, x):
        return None
    where = _batch_index(args[1].primal)
    if where is None:
        return None
    y = x[args[1].primal]
    ty = t[where]
    if not isinstance(y, np.ndarray):  # a number's tangent must not see later writes to the array's
        ty = ty.copy()
    return Dual(y, ty)


def _setitem(args: tuple, kwargs: dict) -> Dual | None:
    if kwargs or len(args) != 3:
        return None
    x, t, index = args[0].primal, args[0].tangent, args[1].primal
    v, tv = args[2].primal, args[2].tangent
    refuse_numbers_into_object_array("ndarray.__setitem__", x, v)
    if structured_values.batched_field(x, t, index) and _numeric(v):  # arr["a"] = v, in each direction
        target_ndim = np.ndim(x[index])
        x[index] = v
        t[index] = 0 if tv is NoTangent else aligned(tv, v, target_ndim)
        return Dual(None, NoTangent)
    if type(x) is not np.ndarray or x.dtype.kind not in "fc" or not _numeric(v):
        return None
    where = _batch_index(index)
    if where is None:
        return None
    if not is_batched(t, x):
        raise TypeError(
            "batched forward mode: writing into an array whose tangent has no batch axis (a constant or a "
            "global array); pass chunk_size=1 to yb.jacobian/yb.hessian to compute one direction per pass")
    target_ndim = np.ndim(x[index])  # the written region's (a view, or a small copy for an array index)
    if np.ndim(v) > target_ndim:  # a value with leading ones (NumPy drops them): without them
        extra = np.ndim(v) - target_ndim
        if any(d != 1 for d in np.shape(v)[:extra]):
            return None  # NumPy's own error, from the fallback
        v = np.reshape(v, np.shape(v)[extra:])
        tv = tv if not is_batched(tv, args[2].primal) else tv.reshape((tv.shape[0],) + np.shape(v))
    x[index] = v
    # written through the index itself: an array index's region is a copy, not a view
    t[where] = 0 if tv is NoTangent else aligned(tv, v, target_ndim)
    return Dual(None, NoTangent)


def _extend(args: tuple, kwargs: dict) -> Dual | None:
    """``xs.extend(array)``: the array's rows appended, each row's tangent the batched tangent's
    column behind the batch axis (a view for rows that are arrays, a copy for numbers)."""
    if kwargs or len(args) != 2 or type(args[0].tangent) is not list:
        return None
    xs, x, t = args[0].primal, args[1].primal, args[1].tangent
    if type(x) is not np.ndarray or x.ndim == 0 or x.dtype.kind not in "fc" or not is_batched(t, x):
        return None
    rows = list(x)
    xs.extend(rows)
    args[0].tangent.extend(t[:, i] if x.ndim > 1 else t[:, i].copy() for i in range(len(rows)))
    return Dual(None, NoTangent)


def _same_memory_kept(y: Any, x: np.ndarray, ty: np.ndarray, t: np.ndarray) -> bool:
    """A view's tangent must be a view of the tangent, a copy's a copy (writes through either
    must reach both, or neither)."""
    return np.may_share_memory(y, x) == np.may_share_memory(ty, t)


def _reshaped(x: Any, t: Any, shape: Any) -> Dual | None:
    """``x.reshape(shape)`` with the tangent reshaped behind its batch axis."""
    if type(x) is not np.ndarray or not is_batched(t, x):
        return None
    y = x.reshape(shape)
    ty = t.reshape((t.shape[0],) + y.shape)
    if not np.may_share_memory(y, x) and np.may_share_memory(ty, t):
        ty = ty.copy()  # the primal was copied: so is its tangent
    return Dual(y, ty) if _same_memory_kept(y, x, ty, t) else None


def _reshape_function(args: tuple, kwargs: dict) -> Dual | None:
    """``np.reshape(x, shape)``."""
    if kwargs or len(args) != 2:
        return None
    return _reshaped(args[0].primal, args[0].tangent, args[1].primal)


def _reshape_method(args: tuple, kwargs: dict) -> Dual | None:
    """``x.reshape(shape)`` or ``x.reshape(d0, d1, ...)``."""
    if kwargs or len(args) < 2 or not all(isinstance(a.primal, (int, np.integer, tuple)) for a in args[1:]):
        return None
    shape = args[1].primal if len(args) == 2 else tuple(a.primal for a in args[1:])
    return _reshaped(args[0].primal, args[0].tangent, shape)


def _transpose(args: tuple, kwargs: dict) -> Dual | None:
    """``x.T`` and ``x.transpose()`` / ``np.transpose(x)`` without axes: every axis but the batch one reversed."""
    if kwargs or len(args) != 1 and not (len(args) == 2 and isinstance(args[1].primal, str) and args[1].primal == "T"):
        return None
    x, t = args[0].primal, args[0].tangent
    if type(x) is not np.ndarray or not is_batched(t, x):
        return None
    return Dual(x.T, np.transpose(t, (0,) + tuple(range(t.ndim - 1, 0, -1))))


def _attribute(args: tuple, kwargs: dict) -> Dual | None:
    """``x.T`` (``_transpose``), and ``x.flat`` of an array with no C-order view (numpy_iterators.py)."""
    if len(args) == 2 and not kwargs and isinstance(args[1].primal, str) and args[1].primal == "flat":
        from .numpy_iterators import flat_batched

        return flat_batched(args[0])
    return _transpose(args, kwargs)


def _stacked_tangent(x: Any, t: Any, k: int) -> np.ndarray | None:
    """The batched tangent of ``np.array(x)`` for a number, an array or a (nested) list or tuple
    of them, shaped ``(k,) + np.shape(x)``; None for anything else."""
    if isinstance(x, (list, tuple)):
        if not isinstance(t, (list, tuple)) or len(t) != len(x) or not x:
            return None
        parts = [_stacked_tangent(xi, ti, k) for xi, ti in zip(x, t)]
        if any(p is None for p in parts) or len({p.shape for p in parts}) != 1:
            return None
        return np.stack(parts, axis=1)
    if not (_numeric(x) and np.ndim(x) >= 0):
        return None
    shape = (k,) + np.shape(x)
    if t is NoTangent:
        return np.zeros(shape)
    return np.broadcast_to(t, shape) if not is_batched(t, x) else t


def _array(args: tuple, kwargs: dict) -> Dual | None:
    """``np.array(items)`` / ``np.asarray(items)`` of numbers and arrays: their tangents stacked behind
    the batch axis (a new array: an array argument goes to the fallback, which keeps its identity)."""
    if kwargs or len(args) != 1 or not isinstance(args[0].primal, (list, tuple)):
        return None
    x = args[0].primal
    y = np.array(x)
    if y.dtype.kind not in "fc":
        return None
    ty = _stacked_tangent(x, args[0].tangent, BATCH.size)
    return None if ty is None or ty.shape[1:] != y.shape else Dual(y, np.array(ty, dtype=y.dtype))


def _joined(join: Callable) -> Callable:
    """``np.concatenate(arrays, axis)`` / ``np.stack(arrays, axis)`` of float arrays: the tangents
    joined along the same axis counted past the batch axis."""

    def rule(args: tuple, kwargs: dict) -> Dual | None:
        if set(kwargs) - {"axis"} or len(args) not in (1, 2) or not isinstance(args[0].primal, (list, tuple)):
            return None
        xs, ts = args[0].primal, args[0].tangent
        axis = args[1].primal if len(args) == 2 else kwargs["axis"].primal if kwargs else 0
        if type(axis) is not int or not isinstance(ts, (list, tuple)) or not all(
                type(x) is np.ndarray and x.dtype.kind in "fc" for x in xs):
            return None
        y = join(xs, axis=axis)
        k = BATCH.size
        parts = [np.zeros((k,) + x.shape) if t is NoTangent else np.broadcast_to(t, (k,) + x.shape)
                 for x, t in zip(xs, ts)]
        return Dual(y, np.asarray(join(parts, axis=axis + 1 if axis >= 0 else axis), dtype=y.dtype))

    return rule


# --------------------------------------------------------------------------------------------
# Rules that only move tangent objects
# --------------------------------------------------------------------------------------------

_ALWAYS = {P.mklist, P.mktuple, P.mkdict, P.cell_get, P.cell_set, P.check_unpack, P.min_len, P.dict_keys,
           P.global_get, P.global_set, P.global_del, P.super_getattr, local_classes.class_cells,
           local_classes.class_level}
_CONTAINER_FIRST = {operator.getitem, operator.setitem, operator.delitem, operator.iadd, operator.add,
                    operator.iconcat, operator.concat}
_OBJECT_FIRST = {getattr, setattr, delattr, object.__setattr__, object.__delattr__}
#: containers whose items those operators reach by dict's or list's own C code (collections' dict
#: subclasses too: d[k] += v on a defaultdict)
#: the builtin containers whose methods move tangents (a deque's tangent is a deque)
_MOVING_OWNERS = (list, dict, collections.deque)
_ITEM_CONTAINERS = (list, tuple, dict, collections.defaultdict, collections.OrderedDict, collections.Counter)
_NO_ARRAYS = {P.as_sequence, list, tuple, listed_reversed, enumerate, zip, dict}
#: ``|``, ``&``, ``-``, ``^`` and their in-place forms: on two sets, the set rules move element tangents
_SET_OPERATORS = {operator.or_, operator.and_, operator.sub, operator.xor, operator.ior, operator.iand, operator.isub,
                  operator.ixor}


def _is_array_like(x: Any) -> bool:
    return isinstance(x, (np.ndarray, np.generic, float, complex, int))


def structural_rule(fn: Any, args: tuple) -> bool:
    """Whether ``fn``'s forward rule, called on ``args``, only moves tangents (so batched leaves
    pass through it unchanged): list and dict methods, container items, attributes of objects."""
    try:
        return _moves_tangents(fn, [a.primal for a in args])
    except TypeError:  # an unhashable callable
        return False


def _moves_tangents(fn: Any, primals: list) -> bool:
    if fn in _ALWAYS:
        return True
    owner = getattr(fn, "__self__", getattr(fn, "__objclass__", None))
    if isinstance(owner, _MOVING_OWNERS) or any(owner is c for c in _MOVING_OWNERS):  # list.append, d.get, ...
        return fn.__name__ != "extend" or not any(isinstance(p, np.ndarray) for p in primals)
    if isinstance(owner, (set, frozenset)) or owner is set or owner is frozenset \
            or fn is set or fn is frozenset or fn is P.mkset:  # s.add(v), {a, b}: tangents moved (by element:
        # run once per direction, a copy's objects would key each direction's tangent apart)
        return not any(isinstance(p, np.ndarray) for p in primals)  # set(array) takes the array's elements
    if fn in _SET_OPERATORS:
        return len(primals) == 2 and all(isinstance(p, (set, frozenset)) for p in primals)
    if fn in _CONTAINER_FIRST:  # items of a list, tuple or dict (an array's rows are not its items)
        if not primals or type(primals[0]) not in _ITEM_CONTAINERS:
            return False
        if fn in (operator.getitem, operator.delitem):
            return True
        if fn is operator.setitem:  # xs[:2] = array unpacks the array's rows
            return len(primals) == 3 and not (isinstance(primals[1], slice) and isinstance(primals[2], np.ndarray))
        return not any(isinstance(p, np.ndarray) for p in primals[1:])
    if fn is getattr and len(primals) == 2 and isinstance(primals[0], (np.ndarray, list, dict, tuple)):
        # (a tuple bunch's attribute: the recorded tangent, batched as it was given, rules/bunch_data.py)
        return _array_method_or_metadata(primals[0], primals[1]) or reads_attribute(primals[0], primals[1])
    if isinstance(fn, types.MethodWrapperType) and fn.__name__ in ("__setattr__", "__delattr__") \
            and getattr(type(fn.__self__), fn.__name__) in _OBJECT_FIRST:  # o.__setattr__("a", v): as setattr
        return _moves_tangents(getattr(type(fn.__self__), fn.__name__), [fn.__self__, *primals])
    if getattr(fn, "__name__", None) == "__init__" and primals and isinstance(primals[0], BaseException) \
            and isinstance(fn, (types.MethodWrapperType, types.WrapperDescriptorType)):
        return True  # an exception's C __init__: its arguments' tangents into its own (rules/exception_tangents.py)
    if fn in _OBJECT_FIRST:
        return bool(primals) and not _is_array_like(primals[0]) and not isinstance(primals[0], (list, tuple, dict))
    if fn in _NO_ARRAYS:
        return not any(isinstance(p, np.ndarray) for p in primals)
    return False


def _array_method_or_metadata(x: np.ndarray, name: Any) -> bool:
    """``x.sum``, ``xs.append`` (a method bound to ``x``: its tangent holds ``x``'s) or ``x.shape``
    (no tangent)."""
    value = getattr(x, name, None) if isinstance(name, str) else None
    if getattr(value, "__self__", None) is x:
        return True
    return isinstance(value, (int, tuple, str, np.dtype, type(None)))  # x.flat, x.real, x.flags: not here


def zero_rule(fn: Any) -> bool:
    """Whether ``fn`` is declared to have a zero derivative (its output tangent carries nothing)."""
    try:
        return fn in ZERO_DERIVATIVE
    except TypeError:
        return False


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------

_TABLE: dict[Any, Callable] = {}  # function object or (type, method name) -> batched rule
_REGISTERED: dict[Any, Callable] = {}  # batched rules other rule files declare (``register``)


def register(target: Any, rule: Callable) -> None:
    """Declare ``rule(args, kwargs) -> Dual | None`` the batched rule of ``target`` (``None``:
    it declines, and the looped fallback runs)."""
    _REGISTERED[target] = rule
    if _TABLE:
        _TABLE[target] = rule


def _build_table() -> None:
    for f, partials in list(ELEMENTWISE_PARTIALS.items()):
        _TABLE.setdefault(f, _elementwise_rule(f, partials))
    for target, implementation in ((operator.matmul, np.matmul), (np.matmul, np.matmul), (np.dot, np.dot),
                                   ((np.ndarray, "dot"), np.dot)):
        _TABLE[target] = _product_rule(implementation)
    for target, implementation in ((np.sum, np.sum), ((np.ndarray, "sum"), np.sum), (np.mean, np.mean),
                                   ((np.ndarray, "mean"), np.mean)):
        _TABLE[target] = _reduction_rule(implementation)
    _TABLE.update({np.array: _array, np.asarray: _array, np.concatenate: _joined(np.concatenate),
                   np.stack: _joined(np.stack), np.reshape: _reshape_function, (np.ndarray, "reshape"): _reshape_method,
                   np.transpose: _transpose, (np.ndarray, "transpose"): _transpose, getattr: _attribute,
                   operator.getitem: _getitem, (np.ndarray, "__getitem__"): _getitem,
                   operator.setitem: _setitem, (np.ndarray, "__setitem__"): _setitem, (list, "extend"): _extend})
    _TABLE.update(_REGISTERED)


def batched_rule(fn: Any) -> Callable | None:
    """The batch-aware forward rule of callable ``fn`` (a function, a bound method of an array, an
    unbound method), or None. Keyed by the function itself, never by its registered rule object,
    which several functions may share."""
    if not _TABLE:
        _build_table()
    owner = getattr(fn, "__self__", None)
    if type(owner) in (np.ndarray, list):
        return _TABLE.get((type(owner), fn.__name__))
    objclass = getattr(fn, "__objclass__", None)
    if objclass in (np.ndarray, list):
        return _TABLE.get((objclass, fn.__name__))
    try:
        return _TABLE.get(fn)
    except TypeError:  # an unhashable callable
        return None


__all__ = ["BATCH", "aligned", "batched", "batched_rule", "batched_zeros", "is_batched", "register", "structural_rule",
           "zero_rule"]
