"""Indexing: reading, writing and deleting items of arrays and containers.

Covered: ``operator.getitem``/``setitem``/``delitem`` and the methods ``__getitem__``,
``__setitem__``, ``__delitem__`` of ``np.ndarray``, ``list``, ``tuple``, ``dict`` (and ``str``,
``bytes``, ``range``: non-differentiable), each rule dispatching on the container's type;
``np.take``, ``np.put``, ``np.take_along_axis``, ``np.put_along_axis``, ``ufunc.at`` (for
``np.add.at`` and ``np.subtract.at``), ``np.compress``, ``np.extract``, ``np.choose``,
``np.select``.

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

Conventions: assigning through an *advanced* index that repeats a position (``a[[0, 0]] = v``,
``np.put`` with repeated indices) raises ``RuleArgumentError``: NumPy does not specify which
write wins. ``np.choose``/``np.select`` send the cotangent to the choice each element came from.
"""
from __future__ import annotations

import inspect
import operator
from collections import defaultdict, namedtuple
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent, MutableTangent, fdata, increment, join, rdata
from ..tangents import zero_rdata, zero_tangent
from .cases import Case, randc, randn
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .second_order import linear
from .util import accumulate, fit_tangent, out_cotangent, output, tangent, unbroadcast

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
    if tp is not base and getattr(tp, name) is not getattr(base, name):
        raise RuleArgumentError(
            f"{tp.__qualname__}.{name} overrides {base.__qualname__}.{name}: yuebing's indexing "
            f"rule covers only {base.__qualname__}'s own; differentiate the override from source "
            "(call the method by name) or register a rule for it"
        )


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
        return False
    return True


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
# getitem
# --------------------------------------------------------------------------------------------


def _array_getitem(a: CoDual, idx: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, np.ndarray, "__getitem__")
    y = x[idx]
    has_f = isinstance(f, np.ndarray)
    if _is_basic(idx):
        if isinstance(y, np.ndarray):  # a view: the same view of the fdata, nothing to pull back
            return CoDual(y, f[idx] if has_f else NoFData), _no_pullback(3)
        out = CoDual(y, NoFData)

        def scalar_pullback(dy: Any) -> tuple:
            if has_f and dy is not NoRData:
                f[idx] += np.real(dy) if f.dtype.kind == "f" else dy
            return NoRData, NoRData, NoRData

        return out, scalar_pullback
    out = output(y)

    def pullback(dy: Any) -> tuple:
        if has_f:
            _scatter_add(f, idx, out_cotangent(out, dy))
        return NoRData, NoRData, NoRData

    return out, pullback


def _list_getitem(a: CoDual, idx: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, list, "__getitem__")
    y = x[idx]
    if type(f) is not list:
        return output(y), _no_pullback(3)
    if type(idx) is slice:
        positions = range(*idx.indices(len(x)))
        out_f = [_fresh_slot(e, _slot_fdata(f[j])) for e, j in zip(y, positions)]

        def slice_pullback(dy: Any) -> tuple:
            for k, j in enumerate(positions):
                r = _slot_rdata(out_f[k])
                if r is not NoRData:
                    f[j] = _add_rdata(f[j], r)
            return NoRData, NoRData, NoRData

        return CoDual(y, out_f), slice_pullback
    i = operator.index(idx)

    def pullback(dy: Any) -> tuple:
        if dy is not NoRData:
            f[i] = _add_rdata(f[i], dy)
        return NoRData, NoRData, NoRData

    return CoDual(y, _slot_fdata(f[i])), pullback


def _tuple_getitem(a: CoDual, idx: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, tuple, "__getitem__")
    y = x[idx]
    n = len(x)
    fs = f if isinstance(f, tuple) else None
    if type(idx) is slice:
        positions = range(*idx.indices(n))
        out_fs = [fs[j] for j in positions] if fs else []
        out_f = tuple(out_fs) if any(v is not NoFData for v in out_fs) else NoFData

        def slice_pullback(dy: Any) -> tuple:
            if dy is NoRData:
                return NoRData, NoRData, NoRData
            rs = [NoRData] * n
            for k, j in enumerate(positions):
                rs[j] = dy[k]
            return NoRData, _tuple_like(x, rs), NoRData

        return CoDual(y, out_f), slice_pullback
    i = operator.index(idx) % n if n else operator.index(idx)

    def pullback(dy: Any) -> tuple:
        if dy is NoRData:
            return NoRData, NoRData, NoRData
        rs = [NoRData] * n
        rs[i] = dy
        return NoRData, _tuple_like(x, rs), NoRData

    return CoDual(y, fs[i] if fs else NoFData), pullback


def _dict_getitem(a: CoDual, key: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, dict, "__getitem__")
    missing = type(x) is not dict and key not in x  # a defaultdict inserts its default
    y = x[key]
    if type(f) is not dict:
        return output(y), _no_pullback(3)
    if missing:
        f[key] = zero_tangent(y)

        def missing_pullback(dy: Any) -> tuple:  # the default is a constant: nothing to deliver
            del x[key]
            f.pop(key, None)
            return NoRData, NoRData, NoRData

        return CoDual(y, _slot_fdata(f[key])), missing_pullback

    def pullback(dy: Any) -> tuple:
        if dy is not NoRData:
            f[key] = _add_rdata(f.get(key, NoTangent), dy)
        return NoRData, NoRData, NoRData

    return CoDual(y, _slot_fdata(f.get(key, NoTangent))), pullback


def _getitem_rrule(a: Any, b: Any) -> tuple[CoDual, Callable]:
    x, idx = primal(a), primal(b)
    a = a if isinstance(a, CoDual) else CoDual(x)
    if isinstance(x, np.ndarray):
        return _array_getitem(a, idx)
    if isinstance(x, list):
        return _list_getitem(a, idx)
    if isinstance(x, tuple):
        return _tuple_getitem(a, idx)
    if isinstance(x, dict):
        return _dict_getitem(a, idx)
    if isinstance(x, _NONDIFF_SEQUENCES):
        return output(x[idx]), _no_pullback(3)
    raise _unsupported("getitem", x)


def _getitem_frule(a: Any, b: Any) -> Dual:
    x, idx, t = primal(a), primal(b), tangent(a)
    if isinstance(x, np.ndarray):
        _check_plain(x, np.ndarray, "__getitem__")
        y = x[idx]
        if not isinstance(t, np.ndarray):
            return Dual(y, fit_tangent(NoTangent, y))
        ty = t[idx]
        return Dual(y, ty if isinstance(y, np.ndarray) else fit_tangent(ty, y))
    if isinstance(x, dict):
        _check_plain(x, dict, "__getitem__")
        missing = type(x) is not dict and idx not in x
        y = x[idx]
        if type(t) is not dict:
            return Dual(y, _full(Dual(y, NoTangent)))
        if missing:
            t[idx] = zero_tangent(y)
        return Dual(y, t.get(idx, NoTangent))
    if isinstance(x, (list, tuple)):
        _check_plain(x, list if isinstance(x, list) else tuple, "__getitem__")
        y = x[idx]
        if not isinstance(t, (list, tuple)):
            return Dual(y, _full(Dual(y, NoTangent)))
        ty = t[idx]
        if isinstance(x, tuple) and type(idx) is slice:
            return Dual(y, NoTangent if all(v is NoTangent for v in ty) else tuple(ty))
        return Dual(y, ty)
    if isinstance(x, _NONDIFF_SEQUENCES):
        return Dual(x[idx], NoTangent)
    raise _unsupported("getitem", x)


# --------------------------------------------------------------------------------------------
# setitem
# --------------------------------------------------------------------------------------------


def _array_write(name: str, a: CoDual, idx: Any, v: Any) -> Callable[[], Any]:
    """``a[idx] = v`` with its undo; returns ``undo() -> rdata of v``."""
    x, f = a.primal, _fd(a)
    _check_no_repeats(name, x.shape, idx)
    saved = x[idx]
    basic = _is_basic(idx)
    if basic and isinstance(saved, np.ndarray):
        saved = saved.copy()  # a view: it would change with the write
    value = primal(v)
    x[idx] = value

    def undo() -> Any:
        g = None
        if isinstance(f, np.ndarray):
            g = f[idx]
            if basic and isinstance(g, np.ndarray):
                g = g.copy()
            f[idx] = 0  # the overwritten values do not reach the state after the call
        x[idx] = saved
        if g is None or not isinstance(v, CoDual):
            return NoRData
        if isinstance(value, np.ndarray):
            return accumulate(v, _fit_to(g, value.shape))
        if isinstance(value, _SCALARS):
            return accumulate(v, g)
        if isinstance(value, (list, tuple)):
            return _deliver_dense(value, v.fdata, _fit_to(g, np.shape(value)))
        return NoRData

    return undo


def _array_write_forward(a: Any, idx: Any, v: Any) -> None:
    x, t = primal(a), tangent(a)
    value = primal(v)
    x[idx] = value
    if isinstance(t, np.ndarray):
        dv = _dense_tangent(value, tangent(v))
        if t.dtype.kind == "f" and np.iscomplexobj(dv):
            dv = np.real(dv)
        t[idx] = dv


def _array_setitem(a: CoDual, idx: Any, v: Any) -> tuple[CoDual, Callable]:
    _check_plain(a.primal, np.ndarray, "__setitem__")
    undo = _array_write("ndarray.__setitem__", a, idx, v)

    def pullback(dy: Any) -> tuple:
        return NoRData, NoRData, NoRData, undo()

    return CoDual(None), pullback


def _list_setitem(a: CoDual, idx: Any, v: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, list, "__setitem__")
    if type(idx) is slice:
        return _list_setslice(a, idx, v)
    i = operator.index(idx)
    old = x[i]
    x[i] = primal(v)
    if type(f) is not list:
        def plain_pullback(dy: Any) -> tuple:
            x[i] = old
            return NoRData, NoRData, NoRData, NoRData

        return CoDual(None), plain_pullback
    old_slot = f[i]
    f[i] = _carried_slot(primal(v), _fd(v), old, old_slot)

    def pullback(dy: Any) -> tuple:
        written = f[i]
        x[i] = old
        f[i] = _cleared_slot(old, old_slot)
        return NoRData, NoRData, NoRData, _slot_rdata(written)

    return CoDual(None), pullback


def _list_setslice(a: CoDual, s: slice, v: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    elems, elem_fs = _sequence_elements(v)
    start, stop, step = s.indices(len(x))
    old, old_slots = x[s], (f[s] if type(f) is list else None)
    x[s] = elems  # raises before anything else changes if an extended slice's length differs
    if step == 1:
        region = slice(start, start + len(elems))
        old_region = slice(start, start + len(elems))  # where the old elements go back
    else:
        region = old_region = s
    if old_slots is not None:
        if len(elems) == len(old):
            f[s] = [_carried_slot(e, fe, o, os) for e, fe, o, os in zip(elems, elem_fs, old, old_slots)]
        else:
            f[s] = [_fresh_slot(e, fe) for e, fe in zip(elems, elem_fs)]

    def pullback(dy: Any) -> tuple:
        written = f[region] if old_slots is not None else None
        x[old_region] = old
        if old_slots is None:
            return NoRData, NoRData, NoRData, NoRData
        f[old_region] = [_cleared_slot(o, os) for o, os in zip(old, old_slots)]
        return NoRData, NoRData, NoRData, _deliver_elements(v, [_slot_rdata(w) for w in written])

    return CoDual(None), pullback


def _dict_setitem(a: CoDual, key: Any, v: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, dict, "__setitem__")
    existed = key in x
    old = x.get(key) if existed else None
    x[key] = primal(v)
    has_f = type(f) is dict
    if has_f:
        old_slot = f.get(key, NoTangent)
        if existed:
            f[key] = _carried_slot(primal(v), _fd(v), old, old_slot)
        else:
            f[key] = _fresh_slot(primal(v), _fd(v))

    def pullback(dy: Any) -> tuple:
        written = f.pop(key, NoTangent) if has_f else NoTangent
        if existed:
            x[key] = old
            if has_f:
                f[key] = _cleared_slot(old, old_slot)
        else:
            del x[key]
        return NoRData, NoRData, NoRData, _slot_rdata(written)

    return CoDual(None), pullback


def _setitem_rrule(a: Any, b: Any, c: Any) -> tuple[CoDual, Callable]:
    x, idx = primal(a), primal(b)
    if isinstance(x, np.ndarray):
        return _array_setitem(a, idx, c)
    if isinstance(x, list):
        return _list_setitem(a, idx, c)
    if isinstance(x, dict):
        return _dict_setitem(a, idx, c)
    if isinstance(x, (tuple, str, bytes, range)):
        operator.setitem(x, idx, primal(c))  # raises Python's own TypeError
    raise _unsupported("setitem", x)


def _setitem_frule(a: Any, b: Any, c: Any) -> Dual:
    x, idx, t = primal(a), primal(b), tangent(a)
    if isinstance(x, np.ndarray):
        _check_plain(x, np.ndarray, "__setitem__")
        _check_no_repeats("ndarray.__setitem__", x.shape, idx)
        _array_write_forward(a, idx, c)
    elif isinstance(x, list):
        _check_plain(x, list, "__setitem__")
        if type(idx) is slice:
            value = primal(c)
            elems = list(value) if not isinstance(value, (list, tuple, np.ndarray)) else value
            tangents = _sequence_tangents(c)
            x[idx] = elems
            if type(t) is list:
                t[idx] = tangents
        else:
            x[idx] = primal(c)
            if type(t) is list:
                t[idx] = _full(c)
    elif isinstance(x, dict):
        _check_plain(x, dict, "__setitem__")
        x[idx] = primal(c)
        if type(t) is dict:
            t[idx] = _full(c)
    elif isinstance(x, (tuple, str, bytes, range)):
        operator.setitem(x, idx, primal(c))  # raises Python's own TypeError
    else:
        raise _unsupported("setitem", x)
    return Dual(None, NoTangent)


# --------------------------------------------------------------------------------------------
# delitem
# --------------------------------------------------------------------------------------------


def _list_delitem(a: CoDual, idx: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, list, "__delitem__")
    n = len(x)
    if type(idx) is slice:
        positions = sorted(range(*idx.indices(n)))
    else:
        i = operator.index(idx)
        if not -n <= i < n:
            raise IndexError("list assignment index out of range")
        positions = [i % n]
    old = [x[j] for j in positions]
    old_slots = [f[j] for j in positions] if type(f) is list else None
    del x[idx]
    if old_slots is not None:
        del f[idx]

    def pullback(dy: Any) -> tuple:
        for k, j in enumerate(positions):  # increasing positions: each insert lands in place
            x.insert(j, old[k])
            if old_slots is not None:
                f.insert(j, _cleared_slot(old[k], old_slots[k]))
        return NoRData, NoRData, NoRData

    return CoDual(None), pullback


def _dict_delitem(a: CoDual, key: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, dict, "__delitem__")
    old = x[key]
    order = list(x)
    has_f = type(f) is dict
    old_slot = f.pop(key, NoTangent) if has_f else NoTangent
    del x[key]

    def pullback(dy: Any) -> tuple:
        _reinsert(x, key, old, order)
        if has_f:
            _reinsert(f, key, _cleared_slot(old, old_slot), order)
        return NoRData, NoRData, NoRData

    return CoDual(None), pullback


def _reinsert(d: dict, key: Any, value: Any, order: list) -> None:
    """Put ``key`` back into ``d`` at its old place in ``order`` (dicts are ordered)."""
    if order[-1] is key or order[-1] == key:
        d[key] = value
        return
    items = dict(d)
    d.clear()
    for k in order:
        if k is key or k == key:
            d[k] = value
        elif k in items:
            d[k] = items[k]


def _delitem_rrule(a: Any, b: Any) -> tuple[CoDual, Callable]:
    x, idx = primal(a), primal(b)
    if isinstance(x, list):
        return _list_delitem(a, idx)
    if isinstance(x, dict):
        return _dict_delitem(a, idx)
    if isinstance(x, (np.ndarray, tuple, str, bytes, range)):
        operator.delitem(x, idx)  # raises Python's or NumPy's own error
    raise _unsupported("delitem", x)


def _delitem_frule(a: Any, b: Any) -> Dual:
    x, idx, t = primal(a), primal(b), tangent(a)
    if isinstance(x, (list, dict)):
        _check_plain(x, list if isinstance(x, list) else dict, "__delitem__")
        del x[idx]
        if isinstance(t, (list, dict)):
            if isinstance(t, dict):
                t.pop(idx, None)
            else:
                del t[idx]
        return Dual(None, NoTangent)
    if isinstance(x, (np.ndarray, tuple, str, bytes, range)):
        operator.delitem(x, idx)  # raises Python's or NumPy's own error
    raise _unsupported("delitem", x)


def _register(targets: tuple, rrule: Callable, frule: Callable) -> None:
    rrule = _trimmed(rrule)
    for target in targets:
        register_rrule(target, rrule)
        register_frule(target, frule)


_register(
    (operator.getitem, (np.ndarray, "__getitem__"), (list, "__getitem__"), (tuple, "__getitem__"),
     (dict, "__getitem__"), (str, "__getitem__"), (bytes, "__getitem__"), (range, "__getitem__")),
    _getitem_rrule, _getitem_frule,
)
_register(
    (operator.setitem, (np.ndarray, "__setitem__"), (list, "__setitem__"), (dict, "__setitem__")),
    _setitem_rrule, _setitem_frule,
)
_register(
    (operator.delitem, (np.ndarray, "__delitem__"), (list, "__delitem__"), (dict, "__delitem__")),
    _delitem_rrule, _delitem_frule,
)



# --------------------------------------------------------------------------------------------
# NumPy gathers and scatters
# --------------------------------------------------------------------------------------------


def _reject_out(name: str, out: Any) -> None:
    if primal(out) is not None:
        raise RuleArgumentError(f"{name}: yuebing does not support out= here; assign the result instead (y[...] = ...)")


def _normalized(name: str, indices: Any, n: int, mode: str) -> np.ndarray:
    """Integer ``indices`` into a length-``n`` axis, as NumPy's ``mode`` resolves them."""
    idx = np.asarray(indices)
    if idx.dtype.kind not in "iu":
        raise RuleArgumentError(f"{name}: indices must be integers, got dtype {idx.dtype}")
    if mode == "wrap":
        return idx % n if n else idx
    if mode == "clip":
        return np.clip(idx, 0, n - 1)
    return np.where(idx < 0, idx + n, idx)  # mode="raise": NumPy has checked the range


def _flat_index(shape: tuple, flat: np.ndarray) -> tuple:
    """The multi-index of flat positions (a tuple of integer arrays)."""
    return np.unravel_index(flat, shape) if shape else ()


def _gather_rrule(y: Any, a: Any, index_of_x: Callable[[], Any], n_args: int,
                  unique: bool = False) -> tuple[CoDual, Callable]:
    """A gather ``y = x[index]`` computed by NumPy: fresh output; the pullback scatters the
    cotangent back (``np.add.at`` unless the positions are known to be ``unique``)."""
    f = _fd(a)
    out = output(y)

    def pullback(dy: Any) -> tuple:
        if isinstance(f, np.ndarray):
            g = out_cotangent(out, dy)
            if np.size(g):
                if f.dtype.kind == "f" and np.iscomplexobj(g):
                    g = np.real(g)
                if unique:
                    f[index_of_x()] += g
                else:
                    np.add.at(f, index_of_x(), g)
        return (NoRData,) * (n_args + 1)

    return out, pullback


def _gather_frule(y: Any, a: Any, gather: Callable[[np.ndarray], Any]) -> Dual:
    t = tangent(a)
    return Dual(y, fit_tangent(gather(t) if isinstance(t, np.ndarray) else NoTangent, y))


def _take_index(x: np.ndarray, indices: Any, axis: Any, mode: str) -> Any:
    if axis is None:
        return _flat_index(x.shape, _normalized("numpy.take", indices, x.size, mode))
    axis = operator.index(axis) % max(x.ndim, 1)
    return (slice(None),) * axis + (_normalized("numpy.take", indices, x.shape[axis], mode),)


def _take_rrule(a, indices, axis=None, out=None, mode="raise"):
    _reject_out("numpy.take", out)
    x, idx, ax, md = primal(a), primal(indices), primal(axis), primal(mode)
    y = np.take(x, idx, axis=ax, mode=md)
    return _gather_rrule(y, a, lambda: _take_index(x, idx, ax, md), 5)


def _take_frule(a, indices, axis=None, out=None, mode="raise"):
    _reject_out("numpy.take", out)
    x, idx, ax, md = primal(a), primal(indices), primal(axis), primal(mode)
    return _gather_frule(np.take(x, idx, axis=ax, mode=md), a, lambda t: np.take(t, idx, axis=ax, mode=md))


def _compress_rrule(condition, a, axis=None, out=None):
    _reject_out("numpy.compress", out)
    cond, x, ax = primal(condition), primal(a), primal(axis)
    y = np.compress(cond, x, axis=ax)
    picked = np.nonzero(np.asarray(cond))[0]
    return _gather_rrule(y, a, lambda: _take_index(x, picked, ax, "raise"), 4, unique=True)


def _compress_frule(condition, a, axis=None, out=None):
    _reject_out("numpy.compress", out)
    cond, x, ax = primal(condition), primal(a), primal(axis)
    return _gather_frule(np.compress(cond, x, axis=ax), a, lambda t: np.compress(cond, t, axis=ax))


def _extract_rrule(condition, arr):
    cond, x = primal(condition), primal(arr)
    y = np.extract(cond, x)
    return _gather_rrule(y, arr, lambda: _flat_index(x.shape, np.nonzero(np.ravel(cond))[0]), 2, unique=True)


def _extract_frule(condition, arr):
    cond, x = primal(condition), primal(arr)
    return _gather_frule(np.extract(cond, x), arr, lambda t: np.extract(cond, t))


def _along_axis_index(name: str, x: np.ndarray, indices: Any, axis: Any) -> tuple:
    """The advanced index that ``np.take_along_axis``/``np.put_along_axis`` apply to ``x``."""
    idx = np.asarray(indices)
    if axis is None:
        return _flat_index(x.shape, _normalized(name, idx, x.size, "raise"))
    axis = operator.index(axis) % x.ndim
    fancy = []
    for d, n in enumerate(x.shape):
        if d == axis:
            fancy.append(idx)
        else:
            fancy.append(np.arange(n).reshape((1,) * d + (-1,) + (1,) * (idx.ndim - d - 1)))
    return tuple(fancy)


def _take_along_axis_rrule(arr, indices, axis=-1):
    x, idx, ax = primal(arr), primal(indices), primal(axis)
    y = np.take_along_axis(x, idx, axis=ax)
    return _gather_rrule(y, arr, lambda: _along_axis_index("numpy.take_along_axis", x, idx, ax), 3)


def _take_along_axis_frule(arr, indices, axis=-1):
    x, idx, ax = primal(arr), primal(indices), primal(axis)
    return _gather_frule(np.take_along_axis(x, idx, axis=ax), arr, lambda t: np.take_along_axis(t, idx, axis=ax))


def _put_along_axis_rrule(arr, indices, values, axis):
    x = primal(arr)
    fancy = _along_axis_index("numpy.put_along_axis", x, primal(indices), primal(axis))
    undo = _array_write("numpy.put_along_axis", arr, fancy, values)

    def pullback(dy: Any) -> tuple:
        return NoRData, NoRData, NoRData, undo(), NoRData

    return CoDual(None), pullback


def _put_along_axis_frule(arr, indices, values, axis):
    fancy = _along_axis_index("numpy.put_along_axis", primal(arr), primal(indices), primal(axis))
    _check_no_repeats("numpy.put_along_axis", primal(arr).shape, fancy)
    _array_write_forward(arr, fancy, values)
    return Dual(None, NoTangent)


def _put_positions(x: np.ndarray, ind: Any, mode: str) -> np.ndarray:
    flat = np.ravel(_normalized("numpy.put", ind, x.size, mode))
    if np.unique(flat).size != flat.size:
        raise RuleArgumentError(
            "numpy.put: yuebing does not differentiate np.put with repeated indices (NumPy does not "
            "specify which write wins); remove the duplicates or accumulate with np.add.at"
        )
    return flat


def _put_rrule(a, ind, v, mode="raise"):
    x, f, md, value = primal(a), _fd(a), primal(mode), primal(v)
    if not isinstance(x, np.ndarray):
        raise RuleArgumentError("numpy.put: the target must be an ndarray")
    flat = _put_positions(x, primal(ind), md) if x.size else np.zeros(0, dtype=np.intp)
    positions = _flat_index(x.shape, flat)
    saved = x[positions]
    np.put(x, primal(ind), value, mode=md)
    n_v = np.size(value)

    def pullback(dy: Any) -> tuple:
        g = None
        if isinstance(f, np.ndarray):
            g = f[positions]
            f[positions] = 0
        x[positions] = saved
        r = NoRData
        if g is not None and isinstance(v, CoDual) and n_v:
            gv = np.zeros(n_v, dtype=g.dtype)
            np.add.at(gv, np.arange(flat.size) % n_v, g)  # np.put repeats a short v
            r = _deliver_dense(value, v.fdata, gv.reshape(np.shape(value)))
        return NoRData, NoRData, NoRData, r, NoRData

    return CoDual(None), pullback


def _put_frule(a, ind, v, mode="raise"):
    x, t, md, value = primal(a), tangent(a), primal(mode), primal(v)
    flat = _put_positions(x, primal(ind), md) if x.size else np.zeros(0, dtype=np.intp)
    np.put(x, primal(ind), value, mode=md)
    if isinstance(t, np.ndarray) and flat.size:
        dv = np.ravel(_dense_tangent(value, tangent(v)))
        dv = dv[np.arange(flat.size) % dv.size]
        t[_flat_index(x.shape, flat)] = np.real(dv) if t.dtype.kind == "f" else dv
    return Dual(None, NoTangent)


_AT_SIGNS = {np.add: 1.0, np.subtract: -1.0}


def _at_sign(ufunc: Any) -> float:
    sign = _AT_SIGNS.get(ufunc)
    if sign is None:
        raise RuleArgumentError(
            f"numpy.ufunc.at: yuebing differentiates np.add.at and np.subtract.at, not "
            f"np.{getattr(ufunc, '__name__', ufunc)}.at; write the loop in Python or register a rule"
        )
    return sign


def _ufunc_at_rrule(self, a, indices, b=None):
    u, x, f, idx = primal(self), primal(a), _fd(a), primal(indices)
    sign = _at_sign(u)
    if primal(b) is None:
        raise RuleArgumentError(f"numpy.{u.__name__}.at needs the operand b")
    saved = x[idx]  # the old values (a copy; a view for a basic index, copied below)
    if isinstance(saved, np.ndarray) and _is_basic(idx):
        saved = saved.copy()
    u.at(x, idx, primal(b))

    def pullback(dy: Any) -> tuple:
        x[idx] = saved  # repeated positions hold the same old value: restoring is exact
        r = NoRData
        if isinstance(f, np.ndarray) and isinstance(b, CoDual):
            g = f[idx] * sign  # a += b at each position: b's cotangent gathers a's (repeats too)
            value = primal(b)
            r = _deliver_dense(value, b.fdata, _fit_to(g, np.shape(value))) if not isinstance(value, np.ndarray) \
                else accumulate(b, _fit_to(g, value.shape))
        return NoRData, NoRData, NoRData, NoRData, r

    return CoDual(None), pullback


def _ufunc_at_frule(self, a, indices, b=None):
    u, x, t, idx = primal(self), primal(a), tangent(a), primal(indices)
    _at_sign(u)
    u.at(x, idx, primal(b))
    if isinstance(t, np.ndarray):
        db = _dense_tangent(primal(b), tangent(b))
        if t.dtype.kind == "f" and np.iscomplexobj(db):
            db = np.real(db)
        u.at(t, idx, db)
    return Dual(None, NoTangent)


# --------------------------------------------------------------------------------------------
# choose and select: each output element comes from one of several arrays
# --------------------------------------------------------------------------------------------


def _members(v: Any) -> tuple[list, list]:
    """Members of a list/tuple/array of choices and their fdata."""
    x, f = primal(v), _fd(v)
    if isinstance(x, np.ndarray):
        return list(x), list(f) if isinstance(f, np.ndarray) else [NoFData] * len(x)
    return _sequence_elements(v)


def _deliver_members(v: Any, grads: list) -> Any:
    """Deliver ``grads[k]`` (broadcast shape) to member ``k`` of choices ``v``; v's rdata."""
    if not isinstance(v, CoDual):
        return NoRData
    members, fs = _members(v)
    rs = [_deliver_dense(m, fm, _fit_to(g, np.shape(m))) for m, fm, g in zip(members, fs, grads)]
    if isinstance(primal(v), np.ndarray):
        return NoRData
    return _deliver_elements(v, rs)


def _member_tangents(v: Any) -> list:
    x, t = primal(v), tangent(v)
    if isinstance(x, np.ndarray):
        return list(t) if isinstance(t, np.ndarray) else [0.0] * len(x)
    return [_dense_tangent(m, tm) for m, tm in zip(x, _sequence_tangents(v))]


def _choose_rrule(a, choices, out=None, mode="raise"):
    _reject_out("numpy.choose", out)
    sel, md = primal(a), primal(mode)
    y = np.choose(sel, primal(choices), mode=md)
    n = len(primal(choices))
    result = output(y)

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(result, dy)
        which = np.broadcast_to(_normalized("numpy.choose", sel, n, md), np.shape(y))
        grads = [np.where(which == k, g, 0) for k in range(n)]
        return NoRData, NoRData, _deliver_members(choices, grads), NoRData, NoRData

    return result, pullback


def _choose_frule(a, choices, out=None, mode="raise"):
    _reject_out("numpy.choose", out)
    sel, md = primal(a), primal(mode)
    y = np.choose(sel, primal(choices), mode=md)
    ts = _member_tangents(choices)
    dy = np.choose(sel, [np.broadcast_to(t, np.broadcast_shapes(np.shape(t), np.shape(y))) for t in ts], mode=md)
    return Dual(y, fit_tangent(dy, y))


def _select_masks(condlist: Any, shape: tuple) -> tuple[list, np.ndarray]:
    """Where each choice is taken (the first true condition wins), and where the default is."""
    taken, free = [], np.ones(shape, dtype=bool)
    for c in condlist:
        c = np.broadcast_to(np.asarray(c, dtype=bool), shape)
        taken.append(c & free)
        free = free & ~c
    return taken, free


def _select_rrule(condlist, choicelist, default=0):
    conds = primal(condlist)
    y = np.select(conds, primal(choicelist), default=primal(default))
    result = output(y)

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(result, dy)
        taken, free = _select_masks(conds, np.shape(y))
        r_choices = _deliver_members(choicelist, [np.where(m, g, 0) for m in taken])
        r_default = NoRData
        if isinstance(default, CoDual):
            d = primal(default)
            r_default = _deliver_dense(d, default.fdata, _fit_to(np.where(free, g, 0), np.shape(d)))
        return NoRData, NoRData, r_choices, r_default

    return result, pullback


def _select_frule(condlist, choicelist, default=0):
    conds = primal(condlist)
    y = np.select(conds, primal(choicelist), default=primal(default))
    ts = [np.asarray(t, dtype=y.dtype) for t in _member_tangents(choicelist)]
    dd = np.asarray(_dense_tangent(primal(default), tangent(default)), dtype=y.dtype)
    return Dual(y, fit_tangent(np.select(conds, ts, default=dd), y))


_register((np.take, (np.ndarray, "take")), _take_rrule, _take_frule)
_register((np.compress,), _compress_rrule, _compress_frule)
_register((np.extract,), _extract_rrule, _extract_frule)
_register((np.take_along_axis,), _take_along_axis_rrule, _take_along_axis_frule)
_register((np.put_along_axis,), _put_along_axis_rrule, _put_along_axis_frule)
_register((np.put, (np.ndarray, "put")), _put_rrule, _put_frule)
_register(((np.ufunc, "at"),), _ufunc_at_rrule, _ufunc_at_frule)
_register((np.choose,), _choose_rrule, _choose_frule)
_register((np.select,), _select_rrule, _select_frule)

# np.ix_ (index builder): declared in nondifferentiable.py


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------

# Every rule here moves, copies or adds values at positions the indices fix: linear in the
# indexed and written values jointly (the tangent call redoes the read or write on tangents).
linear((tuple, "__getitem__"), operator.delitem, (np.ndarray, "__delitem__"), (list, "__delitem__"),
       (dict, "__delitem__"), np.take, (np.ndarray, "take"), np.compress, np.extract, np.take_along_axis)
# writes into arrays: an int written is a value (x.put(0, 1) writes tangent 0). operator.setitem
# and list/dict __setitem__ are declared in second_order.py (a data argument there would copy a
# list written into a list, and the copy would lose the list's identity).
linear((np.ndarray, "__setitem__"), np.put, (np.ndarray, "put"), np.put_along_axis, data=(2, "v", "values"))
linear((np.ufunc, "at"), data=(3, "b"))  # np.add.at / np.subtract.at (the others are refused)
linear(np.choose, data=(1, "choices"))
linear(np.select, data=(1, 2, "choicelist", "default"))


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


_base = randn(4, 5)
_line = randn(6)
_Pair = namedtuple("_Pair", "value weights")

CASES = [
    # ndarray getitem: basic (views and scalars)
    Case(operator.getitem, randn(5), 2, name="array[int]"),
    Case(operator.getitem, randn(5), -1, name="array[-1]"),
    Case(operator.getitem, randn(3, 4), (1, slice(None, None, 2)), name="array[1, ::2]"),
    Case(operator.getitem, randn(3, 4), (Ellipsis, None, 1), name="array[..., None, 1]"),
    Case(operator.getitem, randn(3, 4), (1, 2), name="array[1, 2] scalar"),
    Case(operator.getitem, np.array(1.5), (), name="0-d array[()]"),
    Case(operator.getitem, np.array(1.5), Ellipsis, name="0-d array[...]"),
    Case(operator.getitem, randn(4), slice(2, 2), name="array[2:2] empty"),
    Case(operator.getitem, randn(3, 4, dtype=np.float32), slice(1, None), name="float32 array[1:]"),
    Case(operator.getitem, randc(3, 2), (slice(None), 0), name="complex array[:, 0]"),
    # advanced: repeated indices, masks, mixed
    Case(operator.getitem, randn(5), [0, 2, 2, -1, 0], name="array[repeated list]"),
    Case(operator.getitem, randn(4, 3), np.array([[1, 1], [3, 0]]), name="array[2-D int array]"),
    Case(operator.getitem, randn(4, 3), randn(4, 3) > 0, name="array[bool mask]"),
    Case(operator.getitem, randn(4, 3), (slice(1, None), [2, 2, 0]), name="array[1:, [2, 2, 0]]"),
    Case(operator.getitem, randn(4, 3), ([0, 3], 1), name="array[[0, 3], 1]"),
    Case(operator.getitem, randn(4), np.array([], dtype=int), name="array[empty int array]"),
    Case(operator.getitem, randn(2, 3), np.array(1), name="array[0-d int array]"),
    Case(np.ndarray.__getitem__, randn(3, 4), (slice(None), [1, 1]), name="ndarray.__getitem__"),
    # lists, tuples, dicts, str
    Case(operator.getitem, [1.0, 2.0, 3.0], 1, name="list of floats[1]"),
    Case(operator.getitem, [1.0, 2.0, 3.0], -1, name="list of floats[-1]"),
    Case(operator.getitem, [randn(2), randn(3)], 1, name="list of arrays[1]"),
    Case(operator.getitem, [1.0, randn(2), 3, [4.0]], slice(None, None, -1), name="mixed list[::-1]"),
    Case(operator.getitem, [(randn(2), 1.5), 2.0], 0, name="list of (array, float)[0]"),
    Case(list.__getitem__, [1.0, 2.0, 3.0], slice(0, 2), name="list.__getitem__ slice"),
    Case(operator.getitem, (randn(3), 2.5), 0, name="tuple (array, float)[0]"),
    Case(operator.getitem, (randn(3), 2.5), 1, name="tuple (array, float)[1]"),
    Case(operator.getitem, (randn(3), 2.5, 1.0j + 2), -1, name="tuple[-1] complex"),
    Case(operator.getitem, (1.0, randn(2), 3.0, 4), slice(1, None), name="tuple[1:]"),
    Case(operator.getitem, _Pair(1.5, randn(2)), 0, name="namedtuple[0]"),
    Case(tuple.__getitem__, _Pair(1.5, randn(2)), slice(None, None, -1), name="namedtuple[::-1]"),
    Case(operator.getitem, {"a": 1.5, "b": randn(2)}, "a", name="dict[float key]"),
    Case(operator.getitem, {"a": 1.5, "b": randn(2)}, "b", name="dict[array key]"),
    Case(dict.__getitem__, {"a": (randn(2), 3.0)}, "a", name="dict.__getitem__ tuple value"),
    Case(operator.getitem, "hello", slice(1, 3), name="str[1:3]"),
    # ndarray setitem
    Case(operator.setitem, randn(5), 2, 3.5, name="array[int] = float"),
    Case(operator.setitem, randn(5), -1, 3.5, name="array[-1] = float"),
    Case(operator.setitem, randn(3, 4), (slice(None), 1), randn(3), name="array[:, 1] = array"),
    Case(operator.setitem, randn(3, 4), slice(1, None), randn(4), name="array[1:] = broadcast row"),
    Case(operator.setitem, randn(3, 4), 0, randn(1, 4), name="array[0] = (1, 4) value"),
    Case(operator.setitem, randn(3, 4), Ellipsis, 2.0, name="array[...] = float"),
    Case(operator.setitem, randn(3, 4), (None, 1), randn(4), name="array[None, 1] = row"),
    Case(operator.setitem, randn(3, 4), randn(3, 4) > 0.3, 0.5, name="array[mask] = float"),
    Case(operator.setitem, randn(3, 4), ([0, 2], [1, 3]), randn(2), name="array[fancy] = array"),
    Case(operator.setitem, randn(5), [3, 0], [1.5, 2.5], name="array[list] = list of floats"),
    Case(operator.setitem, randn(3, dtype=np.float32), 1, 2.0, name="float32 array[1] = float"),
    Case(operator.setitem, randc(3), slice(0, 2), randc(2), name="complex array[:2] = complex"),
    Case(operator.setitem, np.array(1.5), (), 2.5, name="0-d array[()] = float"),
    Case(operator.setitem, _base[1:3], slice(0, 1), 5.0, name="view of 2-D array[0:1] = float"),
    Case(operator.setitem, _line[1:], Ellipsis, _line[:-1], name="view[...] = overlapping view"),
    Case(operator.setitem, _base[1:3], 0, _base[0], name="view[0] = another view of the base"),
    Case(np.ndarray.__setitem__, randn(4), slice(1, 3), randn(2), name="ndarray.__setitem__"),
    # list, dict setitem
    Case(operator.setitem, [1.0, 2.0, 3.0], 1, 5.0, name="list of floats[1] = float"),
    Case(operator.setitem, [1.0, 2.0, 3.0], -1, randn(2), name="list[-1] = array (type changes)"),
    Case(operator.setitem, [randn(2), randn(3)], 0, randn(4), name="list of arrays[0] = array"),
    Case(operator.setitem, [(randn(2), 1.5), 2.0], 0, (randn(3), 2.5), name="list[0] = (array, float)"),
    Case(operator.setitem, [1.0, 2.0, 3.0, 4.0], slice(1, 3), [5.0, 6.0], name="list[1:3] = list"),
    Case(operator.setitem, [1.0, 2.0, 3.0, 4.0], slice(None, None, 2), (5.0, 6.0), name="list[::2] = tuple"),
    Case(operator.setitem, [1.0, 2.0, 3.0], slice(0, 2), randn(2), name="list[:2] = 1-D array"),
    Case(operator.setitem, [randn(2), 1.0], slice(0, 2), randn(2, 2), name="list[:2] = 2-D array rows"),
    Case(list.__setitem__, [1.0, randn(2), 3.0], 2, 1.5, name="list.__setitem__"),
    Case(operator.setitem, {"a": 1.0, "b": randn(2)}, "a", 2.5, name="dict[existing] = float"),
    Case(operator.setitem, {"a": 1.0, "b": randn(2)}, "b", randn(3), name="dict[existing] = array"),
    Case(dict.__setitem__, {"a": 1.0}, "a", (randn(2), 3.0), name="dict.__setitem__ (array, float)"),
    # structure-changing mutations (a list grows or shrinks, a dict gains or loses a key)
    Case(operator.setitem, [1.0, 2.0, 3.0], slice(0, 2), [5.0], name="list[:2] = shorter list"),
    Case(operator.setitem, [1.0, randn(2)], slice(1, 1), [5.0, randn(3)], name="list[1:1] = insert"),
    Case(operator.setitem, [1.0, 2.0], slice(0, 1), [[3.0, 4.0], 5.0], name="list[:1] = nested"),
    Case(operator.setitem, {"a": 1.0, "b": randn(2)}, "c", 2.5, name="dict[new key] = float"),
    Case(operator.setitem, {"a": 1.0}, "c", randn(3), name="dict[new key] = array"),
    Case(operator.delitem, [1.0, randn(2), 3.0], 1, name="del list[1]"),
    Case(operator.delitem, [1.0, randn(2), 3.0, 4.0], -1, name="del list[-1]"),
    Case(operator.delitem, [1.0, 2.0, 3.0, 4.0, 5.0], slice(None, None, -2), name="del list[::-2]"),
    Case(list.__delitem__, [1.0, 2.0, 3.0, 4.0], slice(1, 3), name="list.__delitem__ slice"),
    Case(operator.delitem, {"a": 1.0, "b": randn(2), "c": 3.0}, "a", name="del dict[first]"),
    Case(dict.__delitem__, {"a": 1.0, "b": randn(2)}, "b", name="dict.__delitem__ last"),
    Case(operator.getitem, defaultdict(float, {"a": 1.0}), "b", name="defaultdict[missing]"),
    Case(operator.getitem, defaultdict(list, {"a": [1.0]}), "a", name="defaultdict[present]"),
    # np.take, np.compress, np.extract
    Case(np.take, randn(5), [0, 3, 3, -1], name="take flat repeated"),
    Case(np.take, randn(3, 4), np.array([[2, 0], [2, 2]]), kwargs={"axis": 1}, name="take axis=1"),
    Case(np.take, randn(3, 4), 1, kwargs={"axis": 0}, name="take int axis=0"),
    Case(np.take, randn(3, 4), 7, name="take flat scalar"),
    Case(np.take, randn(4, dtype=np.float32), [5, -6], kwargs={"mode": "wrap"}, name="take wrap float32"),
    Case(np.take, randc(4), [5, -1, 2], kwargs={"mode": "clip"}, name="take clip complex"),
    Case(np.ndarray.take, randn(2, 3), [1, 1], kwargs={"axis": -1}, name="ndarray.take"),
    Case(np.compress, [True, False, True], randn(3, 2), kwargs={"axis": 0}, name="compress axis=0"),
    Case(np.compress, [False, True], randn(2, 2), name="compress flat"),
    Case(np.extract, randn(3, 4) > 0, randn(3, 4), name="extract"),
    # np.take_along_axis, np.put_along_axis, np.put
    Case(np.take_along_axis, randn(3, 4), np.array([[0, 0], [3, 1], [2, 2]]), kwargs={"axis": 1}, name="take_along_axis"),
    Case(np.take_along_axis, randn(3, 4), np.array([[0, 2, 2, 1]]), kwargs={"axis": 0}, name="take_along_axis broadcast"),
    Case(np.take_along_axis, randn(3, 2), np.array([5, 0, 5]), kwargs={"axis": None}, name="take_along_axis None"),
    Case(np.put_along_axis, randn(3, 4), np.array([[0], [3], [1]]), randn(3, 1), 1, name="put_along_axis"),
    Case(np.put_along_axis, randn(3, 4), np.array([[0, 2, 2, 1]]), 2.5, -2, name="put_along_axis float axis=-2"),
    Case(np.put, randn(3, 4), [0, 7, -1], randn(3), name="put"),
    Case(np.put, randn(5), [0, 2, 4, 1], randn(2), name="put short v repeats"),
    Case(np.put, randn(4), [1, 6], 3.0, kwargs={"mode": "wrap"}, name="put float wrap"),
    Case(np.ndarray.put, randc(4), [0, 1], randc(2), name="ndarray.put complex"),
    # ufunc.at
    Case(np.add.at, randn(5), [0, 1, 1, 4, 1], randn(5), name="add.at repeated"),
    Case(np.add.at, randn(3, 4), (slice(None), [0, 0]), randn(3, 2), name="add.at mixed"),
    Case(np.add.at, randn(3, 4), ([0, 0, 2],), randn(4), name="add.at broadcast rows"),
    Case(np.subtract.at, randn(5), np.array([2, 2, 0]), 1.5, name="subtract.at float"),
    Case(np.add.at, randn(4), randn(4) > 0, randn(1), name="add.at mask"),
    Case(np.add.at, _line[2:], [0, 0], _line[:2], name="add.at b aliases a"),
    Case(np.add.at, randn(4, dtype=np.float32), [1, 1], randn(2, dtype=np.float32), name="add.at float32"),
    # np.choose, np.select
    Case(np.choose, np.array([0, 2, 1, 2]), [randn(4), randn(4), randn(1)], name="choose list of arrays"),
    Case(np.choose, np.array([[0, 1], [1, 0]]), (randn(2, 2), 1.5), name="choose tuple (array, float)"),
    Case(np.choose, np.array([3, -1, 1]), randn(2, 3), kwargs={"mode": "wrap"}, name="choose array choices wrap"),
    Case(np.choose, np.array([0, 1]), [1.0, randn(2)], name="choose float choice"),
    Case(np.select, [np.array([True, False, False]), np.array([True, True, False])], [randn(3), randn(3)],
         name="select default 0"),
    Case(np.select, [randn(2, 3) > 0, randn(3) > 0], [randn(2, 3), 2.5], randn(3), name="select float, default array"),
    Case(np.select, [randn(4) > 0], [randc(4)], 1.5 + 0.5j, name="select complex"),
    Case(operator.getitem, randn(3, 4), np.ix_([0, 2], [3, 1, 1]), name="array[np.ix_ repeated]"),
    Case(np.ix_, [0, 2], np.array([True, False, True])),
]

