"""Indexing with ``[]``: reading, writing and deleting items of arrays and containers.

Covered: ``operator.getitem``/``setitem``/``delitem`` and the methods ``__getitem__``,
``__setitem__``, ``__delitem__`` of ``np.ndarray``, ``list``, ``tuple``, ``dict`` (and ``str``,
``bytes``, ``range``: non-differentiable), each rule dispatching on the container's type.
NumPy's gather and scatter functions (``np.take``, ``np.put``...) are in ``gather_scatter.py``;
the data model both follow (slots, views, the mutation convention) is described in
``common.py``, which holds the helpers they share.

Convention: assigning through an *advanced* index that repeats a position (``a[[0, 0]] = v``)
raises ``RuleArgumentError``: NumPy does not specify which write wins.
"""
from __future__ import annotations

import operator
import types
from collections import defaultdict, namedtuple
from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent, zero_rdata
from ..cases import Case, randc, randn
from ..core import CoDual, Dual, frule, primal
from ..second_order import linear, zero
from ..util import defined_rrule, fit_tangent, out_cotangent, output, tangent
from .common import (
    _NONDIFF_SEQUENCES, _add_rdata, _array_write, _array_write_forward, _carried_slot, _check_no_repeats,
    _check_plain, _cleared_slot, _deliver_elements, _fd, _fresh_slot, _full, _is_basic, _no_pullback, _register,
    _scatter_add, _sequence_elements, _sequence_tangents, _slot_fdata, _slot_rdata, _tuple_like, _unsupported,
)

# --------------------------------------------------------------------------------------------
# getitem
# --------------------------------------------------------------------------------------------


def _array_getitem(a: CoDual, idx: Any) -> tuple[CoDual, Callable]:
    x, f = a.primal, _fd(a)
    _check_plain(x, np.ndarray, "__getitem__")
    y = x[idx]
    has_f = isinstance(f, np.ndarray)
    if _is_basic(idx):
        if isinstance(y, (np.ndarray, np.void)):  # a view (a record too): the same view of the fdata
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
    missing = missing_definition(x, key)
    if missing is not None:
        return defined_rrule(missing, a, CoDual(key))
    y = x[key]
    if type(f) is not dict:
        return output(y), _no_pullback(3)
    key_rdata = zero_rdata(key)  # a key selects: its derivative is zero (0.0 for a float key)

    def pullback(dy: Any) -> tuple:
        if dy is not NoRData:
            f[key] = _add_rdata(f.get(key, NoTangent), dy)
        return NoRData, NoRData, key_rdata

    return CoDual(y, _slot_fdata(f.get(key, NoTangent))), pullback


def missing_definition(x: Any, key: Any) -> Callable | None:
    """How ``x[key]`` is differentiated when dict subclass ``x`` lacks ``key`` and its class has a
    ``__missing__`` (every mode; second order through ``transform/lifting.py``): as a Python
    function, so the default's derivatives (a ``Counter``'s, a user's ``__missing__`` reading
    other entries) are followed and its insertion is undone; None for any other read."""
    if type(x) is dict or key in x:
        return None
    method = getattr(type(x), "__missing__", None)
    if method is None:
        return None
    return _default_inserted if method is defaultdict.__missing__ else _missing_value


def _missing_value(d: dict, key: Any) -> Any:
    """A class's own ``__missing__``, written in Python (``Counter``'s returns 0)."""
    return type(d).__missing__(d, key)


def _default_inserted(d: defaultdict, key: Any) -> Any:
    """``defaultdict.__missing__``: the factory's value, inserted (a ``KeyError`` without one)."""
    factory = default_factory_of(d)
    if factory is None:
        raise KeyError(key)
    value = factory()
    d[key] = value
    return value


def default_factory_of(d: defaultdict) -> Any:
    """A defaultdict's ``default_factory``, with the derivatives of what it captures
    (``containers/dict_subclasses.py``)."""
    return d.default_factory


#: read-only containers without derivatives: text, ranges, a mappingproxy (a signature's
#: parameters, a class's namespace: ``for name, p in sig.parameters.items()``), and an array's
#: flags (``a.flags['FORTRAN']`` in scipy.linalg's find_best_blas_type)
_NONDIFF_LOOKUPS = (*_NONDIFF_SEQUENCES, types.MappingProxyType, type(np.empty(0).flags))


def _record_getitem(a: CoDual, idx: Any) -> tuple[CoDual, Callable]:
    """A field of a structured array's record (``for row in table: row["mass"]``). The record's
    fdata is the same record of the array's tangent (a view: tangents/structured.py), so a
    sub-array or nested field is the same view of it, and a number's cotangent is added there."""
    x, f = a.primal, _fd(a)
    y = x[idx]
    has_f = type(f) is np.void
    if isinstance(y, (np.ndarray, np.void)):
        return CoDual(y, f[idx] if has_f else output(y).fdata), _no_pullback(3)
    if not has_f or not isinstance(y, (np.inexact, float, complex)):
        return output(y), _no_pullback(3)

    def pullback(dy: Any) -> tuple:
        if dy is not NoRData:
            f[idx] = f[idx] + (np.real(dy) if np.isrealobj(f[idx]) else dy)
        return NoRData, NoRData, NoRData

    return CoDual(y, NoFData), pullback


def _record_as_array(a: Any) -> CoDual:
    """Record ``a`` as the 0-d array view of its memory, its fdata the same view of its tangent."""
    f = _fd(a)
    return CoDual(np.asarray(primal(a)), np.asarray(f) if type(f) is np.void else NoFData)


def _record_getitem_forward(x: np.void, idx: Any, t: Any) -> Dual:
    y = x[idx]
    if type(t) is not np.void:
        return Dual(y, fit_tangent(NoTangent, y))
    return Dual(y, t[idx] if isinstance(y, (np.ndarray, np.void)) else fit_tangent(t[idx], y))


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
    if isinstance(x, _NONDIFF_LOOKUPS):
        return output(x[idx]), _no_pullback(3)
    if isinstance(x, np.void):
        return _record_getitem(a, idx)
    if _scalar_itself(x, idx):
        return output(x[()] if isinstance(x, np.generic) else x), _identity_pullback
    if _scalar_as_array(x, idx):
        out = output(np.asarray(x)[idx])
        return out, lambda dy: (NoRData, _sum_of(out_cotangent(out, dy), x), NoRData)
    _raise_as_python_does(x, idx)
    raise _unsupported("getitem", x)


def _raise_as_python_does(x: Any, idx: Any) -> None:
    """Index a number as Python would, raising its IndexError or TypeError: code probing whether
    a value is a sequence catches that (SciPy's splint tries ``c[0][0]``), not a refusal."""
    if isinstance(x, (np.generic, int, float, complex)):
        x[idx]


def _scalar_as_array(x: Any, idx: Any) -> bool:
    """``v[..., np.newaxis]`` of a number (a NumPy scalar where SciPy expects a 0-d array: the
    multivariate normal's log-determinant and rank): the 0-d array's view, new axes only."""
    items = idx if type(idx) is tuple else (idx,)
    return isinstance(x, np.generic) and bool(items) and all(i is Ellipsis or i is None for i in items)


def _sum_of(g: Any, x: Any) -> Any:
    if not isinstance(x, (float, complex, np.inexact)):
        return NoRData  # (an int's, a bool's: a count, a rank)
    total = np.sum(g)
    return complex(total) if isinstance(x, (complex, np.complexfloating)) else float(np.real(total))


def _scalar_itself(x: Any, idx: Any) -> bool:
    """``v[()]`` of a NumPy scalar is the scalar itself (SciPy's statistics end with
    ``return vals[()]``, which gives a scalar for a 0-d array and leaves a scalar as it is). A
    float is let through too: second order reads the item of the scalar's tangent, a float."""
    return isinstance(x, (np.generic, float)) and type(idx) is tuple and not idx


def _identity_pullback(dy: Any) -> tuple:
    return NoRData, dy, NoRData


def _getitem_frule(a: Any, b: Any) -> Dual:
    x, idx, t = primal(a), primal(b), tangent(a)
    if isinstance(x, np.ndarray):
        _check_plain(x, np.ndarray, "__getitem__")
        y = x[idx]
        if not isinstance(t, np.ndarray):
            return Dual(y, fit_tangent(NoTangent, y))
        ty = t[idx]
        return Dual(y, ty if isinstance(y, (np.ndarray, np.void)) else fit_tangent(ty, y))
    if isinstance(x, dict):
        _check_plain(x, dict, "__getitem__")
        missing = missing_definition(x, idx)
        if missing is not None:
            return frule(missing, a, Dual(idx, NoTangent))
        y = x[idx]
        if type(t) is not dict:
            return Dual(y, _full(Dual(y, NoTangent)))
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
    if isinstance(x, _NONDIFF_LOOKUPS):
        return Dual(x[idx], NoTangent)
    if isinstance(x, np.void):
        return _record_getitem_forward(x, idx, t)
    if _scalar_itself(x, idx):
        return Dual(x[()] if isinstance(x, np.generic) else x, t)
    if _scalar_as_array(x, idx):
        y = np.asarray(x)[idx]
        return Dual(y, fit_tangent(NoTangent, y) if t is NoTangent else np.asarray(t, dtype=y.dtype)[idx].copy())
    _raise_as_python_does(x, idx)
    raise _unsupported("getitem", x)


# --------------------------------------------------------------------------------------------
# setitem
# --------------------------------------------------------------------------------------------



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
    if isinstance(x, np.void):  # a record: a view of its array, written as its 0-d array
        return _array_setitem(_record_as_array(a), idx, c)
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
    elif isinstance(x, np.void):  # a record: a view of its array, written as its 0-d array
        _array_write_forward(Dual(np.asarray(x), np.asarray(t) if type(t) is np.void else NoTangent), idx, c)
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

# np.ix_ (the index builder): declared in nondifferentiable.py


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------

# Every rule here moves or copies values at positions the index fixes: linear in the indexed
# and written values jointly (the tangent call redoes the read or write on tangents).
linear((tuple, "__getitem__"), operator.delitem, (np.ndarray, "__delitem__"), (list, "__delitem__"),
       (dict, "__delitem__"))
# writes into arrays: an int written is a value (x[0] = 1 writes tangent 0). operator.setitem
# and list/dict __setitem__ are declared in second_order.py (a data argument there would copy a
# list written into a list, and the copy would lose the list's identity).
linear((np.ndarray, "__setitem__"), data=(2, "v", "values"))
zero((str, "__getitem__"), (bytes, "__getitem__"), (range, "__getitem__"))
# (default_factory_of: its rules keep a factory's derivatives, containers/dict_subclasses.py)


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
    Case(operator.getitem, randn(3, 4), np.ix_([0, 2], [3, 1, 1]), name="array[np.ix_ repeated]"),
    Case(np.ix_, [0, 2], np.array([True, False, True])),
]
