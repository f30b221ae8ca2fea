"""What the item rules (``items``) and NumPy's gathers and scatters (``gather_scatter``)
share: the slots of list and dict elements, values written into arrays and lists, the
classification of array indices, and an array write that can be undone.

Data model (DESIGN.md §3, docs/writing-rules.md):

* A list's (dict's) fdata is the list (dict) of its elements' full tangents, a *slot* per element.
  Reading a float element returns it with ``NoFData``; its cotangent goes back into the slot.
  Reading a mutable element (array, list, object) returns it with the slot's tangent object
  (aliasing: nothing to do in the pullback). A tuple element returns the fdata half of its slot
  and its rdata is added into the slot.
* A tuple is a value: the cotangent of an element goes into the tuple's rdata, at its position.
* Basic array indexing (ints, slices, ``...``, ``None``) returns a view, whose fdata is the same
  view of the input's fdata (or a NumPy scalar, whose cotangent is added at that position).
  Advanced indexing returns a copy with fresh fdata; its pullback scatters with ``np.add.at``, so
  repeated indices accumulate.
* Writes follow the mutation convention: the pullback reads the cotangent of the written region,
  sets it to zero (the overwritten values do not reach the result), restores the old values (and,
  in lists and dicts, the old tangent objects), then delivers the cotangent to the written value.
  A slot that is overwritten by a value of the same kind keeps its value part in the forward pass:
  at that moment it already holds the cotangent of the state after the call (zero in a gradient
  run; ``check_rule``'s preloaded cotangent in tests).

Convention: assigning through an *advanced* index that repeats a position (``a[[0, 0]] = v``)
raises ``RuleArgumentError``: NumPy does not specify which write wins.

This module registers no rule.
"""
from __future__ import annotations

import inspect
from collections import OrderedDict
from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent, MutableTangent, fdata, increment, join, rdata
from ...tangents import zero_rdata, zero_tangent
from .. import aliasing_views
from ..core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .. import structured_values as structured
from ..util import accumulate, fit_tangent, refuse_numbers_into_object_array, tangent, unbroadcast

# --------------------------------------------------------------------------------------------
# Slots: the full tangent of one element of a list or dict
# --------------------------------------------------------------------------------------------

_SCALARS = (float, complex, np.floating, np.complexfloating)
_IDENTITY_TYPES = (list, dict, np.ndarray, MutableTangent)
_NONDIFF_SEQUENCES = (str, bytes, bytearray, range)


def _fd(arg: Any) -> Any:
    return arg.fdata if isinstance(arg, CoDual) else NoFData


def _slot_fdata(slot: Any) -> Any:
    """The fdata half of a slot (what travels with the element when it is read)."""
    if slot is NoTangent or isinstance(slot, _SCALARS):
        return NoFData
    if isinstance(slot, _IDENTITY_TYPES):
        return slot
    return fdata(slot)


def _slot_rdata(slot: Any) -> Any:
    """The rdata half of a slot (what a written element's pullback returns)."""
    if slot is NoTangent or isinstance(slot, _IDENTITY_TYPES):
        return NoRData
    if isinstance(slot, _SCALARS):
        return slot
    return rdata(slot)


def _add_rdata(slot: Any, r: Any) -> Any:
    """``slot + r`` for rdata ``r`` (arrays and other identity parts untouched)."""
    if r is NoRData:
        return slot
    if isinstance(slot, _SCALARS):
        return slot + r
    return increment(slot, join(NoFData, r))


def _zero_scalar(x: Any) -> Any:
    return 0j if isinstance(x, (complex, np.complexfloating)) else 0.0


def _fresh_slot(x: Any, f: Any) -> Any:
    """The slot of element ``x`` with fdata ``f``: identity parts shared, value parts zero."""
    if isinstance(x, _SCALARS):
        return _zero_scalar(x)
    if f is not NoFData and isinstance(f, _IDENTITY_TYPES):
        return f
    if isinstance(x, (int, str, bool)) or x is None:
        return NoTangent
    return join(f, zero_rdata(x))


def _carried_slot(new: Any, new_f: Any, old: Any, old_slot: Any) -> Any:
    """The slot of ``new`` written over ``old``: value parts of the same kind are kept."""
    if isinstance(new, _SCALARS):
        if isinstance(old_slot, (float, complex)) and isinstance(old, _SCALARS):
            if isinstance(new, (complex, np.complexfloating)):
                return complex(old_slot)
            if not isinstance(old_slot, complex):
                return old_slot
        return _zero_scalar(new)
    if type(new) is tuple and type(old) is tuple and len(new) == len(old) and type(old_slot) is tuple:
        fs = new_f if type(new_f) is tuple else (NoFData,) * len(new)
        fields = tuple(_carried_slot(n, f, o, s) for n, f, o, s in zip(new, fs, old, old_slot))
        return NoTangent if all(s is NoTangent for s in fields) else fields
    return _fresh_slot(new, new_f)


def _cleared_slot(x: Any, slot: Any) -> Any:
    """The slot of an overwritten or deleted element: same tangent objects, zero value parts."""
    return _fresh_slot(x, _slot_fdata(slot))


def _full(arg: Any) -> Any:
    """Forward mode: the full tangent of an argument (zero when it came without one)."""
    t = tangent(arg)
    if t is NoTangent:
        x = primal(arg)
        return _zero_scalar(x) if isinstance(x, _SCALARS) else zero_tangent(x) if isinstance(x, tuple) else NoTangent
    return t


def _tuple_like(x: tuple, values: list) -> Any:
    if hasattr(type(x), "_fields"):
        return tuple.__new__(type(x), values)
    return tuple(values)


def _trimmed(rule: Callable) -> Callable:
    """``rule`` whose pullback returns rdata only for the arguments the call passed.

    Rules here are written with their full signature and return rdata for every parameter; a
    call that leaves trailing parameters at their defaults expects one rdata per argument given.
    """
    n_params = len(inspect.signature(rule).parameters)

    def trimmed(*args: Any) -> tuple[CoDual, Callable]:
        out, pullback = rule(*args)
        if len(args) == n_params:
            return out, pullback
        return out, lambda dy: pullback(dy)[:1 + len(args)]

    trimmed.__signature__ = inspect.signature(rule)  # type: ignore[attr-defined]
    trimmed.__qualname__ = rule.__qualname__
    return trimmed


def _no_pullback(n: int) -> Callable:
    result = (NoRData,) * n

    def pullback(dy: Any) -> tuple:
        return result

    return pullback


def _check_plain(x: Any, base: type, name: str) -> None:
    """Subclasses that override the item methods are not covered by these rules."""
    tp = type(x)
    if tp is not base and getattr(tp, name) is not getattr(base, name) and not _ordered_item_method(tp, name):
        raise RuleArgumentError(
            f"{tp.__qualname__}.{name} overrides {base.__qualname__}.{name}: yuebing's indexing "
            f"rule covers only {base.__qualname__}'s own; differentiate the override from source "
            "(call the method by name) or register a rule for it"
        )


def _ordered_item_method(tp: type, name: str) -> bool:
    """``OrderedDict``'s item methods are ``dict``'s plus its own order, which the rules keep by
    calling them on the primal (``x[key] = v``; ``containers.common._store``)."""
    return issubclass(tp, OrderedDict) and getattr(tp, name) is getattr(OrderedDict, name)


def _unsupported(op: str, x: Any) -> RuleArgumentError:
    return RuleArgumentError(
        f"operator.{op}: yuebing's indexing rules cover ndarray, list, tuple, dict and str, not "
        f"{type(x).__qualname__}; define __{op}__ in Python (it is then differentiated from "
        "source) or register a rule for it"
    )


# --------------------------------------------------------------------------------------------
# Sequences as written values (slice assignment, list/tuple values written into arrays)
# --------------------------------------------------------------------------------------------


def _sequence_elements(v: Any) -> tuple[list, list]:
    """Elements of an assigned iterable and their fdata (reverse mode)."""
    x, f = primal(v), _fd(v)
    n = len(x) if hasattr(x, "__len__") else None
    if type(x) is list:
        return list(x), [_slot_fdata(s) for s in f] if type(f) is list else [NoFData] * n
    if isinstance(x, tuple):
        return list(x), list(f) if isinstance(f, tuple) else [NoFData] * n
    if isinstance(x, np.ndarray) and x.ndim >= 1:
        rows = list(x)
        if x.ndim > 1 and isinstance(f, np.ndarray):
            return rows, list(f)
        return rows, [NoFData] * n
    if isinstance(x, _NONDIFF_SEQUENCES):
        return list(x), [NoFData] * n
    raise RuleArgumentError(
        f"list slice assignment: yuebing supports assigning a list, tuple, ndarray or str, not "
        f"{type(x).__qualname__}; convert it with list(...) first"
    )


def _deliver_elements(v: Any, rs: list) -> Any:
    """Hand the rdata of each element of an assigned iterable back to it; returns v's rdata."""
    x, f = primal(v), _fd(v)
    if type(x) is list and type(f) is list:
        for k, r in enumerate(rs):
            if r is not NoRData:
                f[k] = _add_rdata(f[k], r)
        return NoRData
    if isinstance(x, tuple):
        return NoRData if all(r is NoRData for r in rs) else _tuple_like(x, rs)
    if isinstance(x, np.ndarray) and x.ndim == 1 and isinstance(f, np.ndarray):
        for k, r in enumerate(rs):
            if r is not NoRData:
                f[k] += np.real(r) if f.dtype.kind == "f" else r
    return NoRData


def _sequence_tangents(v: Any) -> list:
    """Forward mode: the full tangent of each element of an assigned iterable."""
    x, t = primal(v), tangent(v)
    if isinstance(x, (list, tuple)) and isinstance(t, (list, tuple)):
        return list(t)
    if isinstance(x, (list, tuple)):
        return [_full(Dual(e, NoTangent)) for e in x]
    if isinstance(x, np.ndarray) and x.ndim >= 1:
        if not isinstance(t, np.ndarray):
            return [NoTangent] * len(x)
        return list(t) if x.ndim > 1 else [fit_tangent(tk, xk) for tk, xk in zip(t, x)]
    if isinstance(x, _NONDIFF_SEQUENCES):
        return [NoTangent] * len(x)
    raise RuleArgumentError(
        f"list slice assignment: yuebing supports assigning a list, tuple, ndarray or str, not "
        f"{type(x).__qualname__}; convert it with list(...) first"
    )


def _deliver_dense(x: Any, f: Any, g: Any) -> Any:
    """Deliver array cotangent ``g`` (shaped like ``np.shape(x)``) to value ``x``; its rdata."""
    if isinstance(x, np.ndarray):
        if isinstance(f, np.ndarray):
            f += np.real(g) if f.dtype.kind == "f" and np.iscomplexobj(g) else g
        return NoRData
    if isinstance(x, (float, np.floating)):
        return float(np.real(g))
    if isinstance(x, (complex, np.complexfloating)):
        return complex(g)
    if type(x) is list:
        if type(f) is list:
            for k, e in enumerate(x):
                r = _deliver_dense(e, _slot_fdata(f[k]), g[k])
                if r is not NoRData:
                    f[k] = _add_rdata(f[k], r)
        return NoRData
    if isinstance(x, tuple):
        fs = f if isinstance(f, tuple) else (NoFData,) * len(x)
        rs = [_deliver_dense(e, fe, g[k]) for k, (e, fe) in enumerate(zip(x, fs))]
        return NoRData if all(r is NoRData for r in rs) else _tuple_like(x, rs)
    return NoRData


def _dense_tangent(x: Any, t: Any) -> Any:
    """Forward mode: the tangent of a value written into an array, as an array (or number)."""
    if t is NoTangent:
        return 0.0
    if isinstance(x, (list, tuple)):
        return np.array([_dense_tangent(e, te) for e, te in zip(x, t)])
    return t


# --------------------------------------------------------------------------------------------
# Arrays: classifying indices
# --------------------------------------------------------------------------------------------


def _is_basic(idx: Any) -> bool:
    """Whether ``idx`` is a basic index (ints, slices, ``...``, ``None``): a view or a scalar."""
    items = idx if type(idx) is tuple else (idx,)
    for it in items:
        if it is None or it is Ellipsis or type(it) is slice:
            continue
        if isinstance(it, (int, np.integer)) and not isinstance(it, (bool, np.bool_)):
            continue
        if _field_names(it) and type(idx) is not tuple:  # a structured array's field (fields): a view
            continue
        return False
    return True


def _field_names(it: Any) -> bool:
    return isinstance(it, str) or type(it) is list and bool(it) and all(isinstance(name, str) for name in it)


def _may_repeat(idx: Any) -> bool:
    """Whether an advanced index can select one position twice (it holds an integer array)."""
    items = idx if type(idx) is tuple else (idx,)
    for it in items:
        if isinstance(it, (list, tuple)) or isinstance(it, np.ndarray) and it.dtype.kind in "iu" and it.size > 1:
            return True
    return False


def _flat_positions(shape: tuple, idx: Any) -> np.ndarray:
    """The flat position in an array of ``shape`` of each element that ``idx`` selects."""
    n = len(shape)
    coords = []
    for d, size in enumerate(shape):
        axis = np.arange(size).reshape((1,) * d + (size,) + (1,) * (n - d - 1))
        coords.append(np.broadcast_to(axis, shape)[idx])
    return np.ravel_multi_index(coords, shape) if coords else np.zeros(1, dtype=np.intp)


def _check_no_repeats(name: str, shape: tuple, idx: Any) -> None:
    if _is_basic(idx) or not _may_repeat(idx) or not shape:
        return
    flat = np.ravel(_flat_positions(shape, idx))
    if np.unique(flat).size != flat.size:
        raise RuleArgumentError(
            f"{name}: yuebing does not differentiate assignment through an index that repeats a "
            "position (NumPy does not specify which write wins); remove the duplicates (np.unique) "
            "or accumulate with np.add.at"
        )


def _scatter_add(f: np.ndarray, idx: Any, g: Any) -> None:
    """``f[idx] += g`` where repeated positions accumulate."""
    if np.size(g) == 0:
        return
    if structured.carries(f):  # field by field (structured_values.py)
        for f_field, g_field in structured.field_pairs(f, g):
            _scatter_add(f_field, idx, g_field)
        return
    if f.dtype.kind == "f" and np.iscomplexobj(g):
        g = np.real(g)
    if _may_repeat(idx):
        np.add.at(f, idx, g)
    else:
        f[idx] += g


def _fit_to(g: Any, shape: tuple) -> Any:
    """Undo the broadcast of a written value of ``shape`` to cotangent ``g``'s shape."""
    g = np.asarray(g)
    if g.ndim < len(shape):  # NumPy drops leading length-1 axes of the value when assigning
        g = g.reshape((1,) * (len(shape) - g.ndim) + g.shape)
    return unbroadcast(g, shape)


# --------------------------------------------------------------------------------------------
# Writing into an array, undoably (ndarray.__setitem__, np.put_along_axis)
# --------------------------------------------------------------------------------------------


def _array_write(name: str, a: CoDual, idx: Any, v: Any) -> Callable[[], Any]:
    """``a[idx] = v`` with its undo; returns ``undo() -> rdata of v``."""
    x, f = a.primal, _fd(a)
    _check_no_repeats(name, x.shape, idx)
    refuse_numbers_into_object_array(name, x, v)
    if structured.carries(x):  # (the tangent call of second order: NoTangent for a label)
        v = _with_value(v, structured.without_markers(primal(v)))
    saved = x[idx]
    basic = _is_basic(idx)
    if basic and isinstance(saved, (np.ndarray, np.void)):
        saved = saved.copy()  # a view (a record too): it would change with the write
    value = primal(v)
    x[idx] = value
    aliasing_views.note_write(x)

    def undo() -> Any:
        g = None
        if isinstance(f, np.ndarray):
            g = f[idx]
            if basic and isinstance(g, (np.ndarray, np.void)):
                g = g.copy()
            f[idx] = 0  # the overwritten values do not reach the state after the call
        x[idx] = saved
        if g is None or not isinstance(v, CoDual):
            return NoRData
        if structured.carries(g) and structured.carries(value):  # records from records
            return accumulate(v, g)
        if structured.carries(g):  # records written from numbers (structured_values.py)
            g = structured.cotangent_as_value(g, value)
            if isinstance(value, (list, tuple)):
                return _deliver_dense(value, v.fdata, g)
        if isinstance(value, np.ndarray):
            return accumulate(v, _fit_to(g, value.shape))
        if isinstance(value, _SCALARS):
            return accumulate(v, g)
        if isinstance(value, (list, tuple)):
            return _deliver_dense(value, v.fdata, _fit_to(g, np.shape(value)))
        return NoRData

    return undo


def _with_value(v: Any, value: Any) -> Any:
    return v if value is primal(v) else CoDual(value, v.fdata) if isinstance(v, CoDual) else value


def _array_write_forward(a: Any, idx: Any, v: Any) -> None:
    x, t = primal(a), tangent(a)
    value = primal(v)
    refuse_numbers_into_object_array("ndarray.__setitem__", x, value)
    if structured.carries(x):
        value = structured.without_markers(value)
    x[idx] = value
    if isinstance(t, np.ndarray) and structured.carries(t[idx]):  # records written (structured_values.py)
        t[idx] = structured.region_tangent(t[idx], value, tangent(v))
    elif isinstance(t, np.ndarray):
        dv = _dense_tangent(value, tangent(v))
        if t.dtype.kind == "f" and np.iscomplexobj(dv):
            dv = np.real(dv)
        t[idx] = dv


# --------------------------------------------------------------------------------------------
# Registration
# --------------------------------------------------------------------------------------------


def _register(targets: tuple, rrule: Callable, frule: Callable) -> None:
    rrule = _trimmed(rrule)
    for target in targets:
        register_rrule(target, rrule)
        register_frule(target, frule)
