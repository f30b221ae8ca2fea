"""NumPy's gathers and scatters: ``np.take``, ``np.put``, ``np.take_along_axis``,
``np.put_along_axis``, ``ufunc.at`` (``np.add.at`` and ``np.subtract.at`` as rules; every other
ufunc's, ``multiply``, ``power``, ``negative``..., as a Python loop over the positions), ``np.compress``,
``np.extract``, ``np.choose``, ``np.select``.

Gathers return a copy with fresh fdata; their pullback scatters the cotangent back (with
``np.add.at`` where positions may repeat). Writes follow the mutation convention described in
``common.py``.

Conventions: ``np.put`` and ``np.put_along_axis`` with an index that repeats a position raise
``RuleArgumentError`` (NumPy does not specify which write wins). ``np.choose``/``np.select``
send the cotangent to the choice each element came from.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent
from ..cases import Case, randc, randn
from .. import aliasing_views
from ..core import CoDual, Dual, RuleArgumentError, frule, primal
from ..second_order import linear
from ..util import (accumulate, defined_rrule, fit_tangent, out_cotangent, output, refuse_numbers_into_object_array,
                    tangent)
from .common import (
    _array_write, _array_write_forward, _check_no_repeats, _deliver_dense, _deliver_elements, _dense_tangent, _fd,
    _fit_to, _is_basic, _register, _sequence_elements, _sequence_tangents,
)

# --------------------------------------------------------------------------------------------
# Gathers and scatters
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
    refuse_numbers_into_object_array("numpy.put", x, value)
    flat = _put_positions(x, primal(ind), md) if x.size else np.zeros(0, dtype=np.intp)
    positions = _flat_index(x.shape, flat)
    saved = x[positions]
    np.put(x, primal(ind), value, mode=md)
    aliasing_views.note_write(x)
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
    refuse_numbers_into_object_array("numpy.put", x, value)
    flat = _put_positions(x, primal(ind), md) if x.size else np.zeros(0, dtype=np.intp)
    np.put(x, primal(ind), value, mode=md)
    if isinstance(t, np.ndarray) and flat.size:
        dv = np.ravel(_dense_tangent(value, tangent(v)))
        dv = dv[np.arange(flat.size) % dv.size]
        t[_flat_index(x.shape, flat)] = np.real(dv) if t.dtype.kind == "f" else dv
    return Dual(None, NoTangent)


_AT_SIGNS = {np.add: 1.0, np.subtract: -1.0}  # the ufuncs whose ``at`` is a rule; the others' is ``_at_by_loop``


def _at_sign(ufunc: Any) -> float:
    sign = _AT_SIGNS.get(ufunc)
    if sign is None:
        raise RuleArgumentError(
            f"numpy.ufunc.at: yuebing differentiates np.{getattr(ufunc, '__name__', ufunc)}.at with the operands "
            "NumPy takes (a, indices, and b for a ufunc of two inputs); check the call's arguments"
        )
    return sign


def _at_by_loop(ufunc: Any, a: Any, indices: Any, b: Any = None) -> None:
    """``ufunc.at(a, indices[, b])`` as Python code yuebing differentiates: the positions
    ``indices`` selects (repeats included, in NumPy's order), each updated in turn, by its element
    of the broadcast ``b`` for a ufunc of two inputs. A repeated position of ``multiply.at`` gets
    the product of all its factors, each factor's derivative the product of the others (no
    division: zeros are exact); ``np.negative.at`` at a position twice negates it twice."""
    positions = np.arange(np.size(a)).reshape(np.shape(a))[indices]
    values = None if ufunc.nin == 1 else np.broadcast_to(b, np.shape(positions)).reshape(-1)
    for k, flat in enumerate(positions.reshape(-1).tolist()):
        where = np.unravel_index(flat, np.shape(a))
        a[where] = ufunc(a[where]) if values is None else ufunc(a[where], values[k])


def _by_loop(args: tuple, kwargs: dict) -> Callable | None:
    """The Python definition a ``ufunc.at`` call is differentiated as (every ufunc of one output
    but ``np.add`` and ``np.subtract``, given the operands it takes), or None (a rule's)."""
    u = args[0] if args else None
    operands = len(args) + len(kwargs) - 1
    return _at_by_loop if isinstance(u, np.ufunc) and u not in _AT_SIGNS and u.nout == 1 and u.nin in (1, 2) \
        and operands == 2 + (u.nin == 2) else None


def _given(u: Any, a: Any, indices: Any, b: Any) -> tuple:
    """The arguments of ``u.at(a, indices[, b])`` as the call gave them."""
    return (u, a, indices) if primal(b) is None else (u, a, indices, b)


def _ufunc_at_rrule(self, a, indices, b=None):
    u, x, f, idx = primal(self), primal(a), _fd(a), primal(indices)
    if _by_loop(_given(u, a, indices, b), {}):
        return defined_rrule(_at_by_loop, *_given(self, a, indices, b))
    sign = _at_sign(u)
    if primal(b) is None:
        raise RuleArgumentError(f"numpy.{u.__name__}.at needs the operand b")
    refuse_numbers_into_object_array(f"numpy.{u.__name__}.at", x, b)
    saved = x[idx]  # the old values (a copy; a view for a basic index, copied below)
    if isinstance(saved, np.ndarray) and _is_basic(idx):
        saved = saved.copy()
    u.at(x, idx, primal(b))
    aliasing_views.note_write(x)

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
    if _by_loop(_given(u, a, indices, b), {}):
        return frule(_at_by_loop, *_given(self, a, indices, b))
    _at_sign(u)
    refuse_numbers_into_object_array(f"numpy.{u.__name__}.at", x, b)
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


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------

# Every rule here moves, copies or adds values at positions the indices fix: linear in the
# indexed and written values jointly (the tangent call redoes the read or write on tangents).
linear(np.take, (np.ndarray, "take"), np.compress, np.extract, np.take_along_axis)
# writes into arrays: an int written is a value (x.put(0, 1) writes tangent 0)
linear(np.put, (np.ndarray, "put"), np.put_along_axis, data=(2, "v", "values"))
linear((np.ufunc, "at"), data=(3, "b"), delegate=_by_loop)  # add.at, subtract.at; the others as the loop
linear(np.choose, data=(1, "choices"))
linear(np.select, data=(1, 2, "choicelist", "default"))


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


_line = randn(6)

CASES = [
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
    Case(np.multiply.at, randn(5), [0, 1, 1, 4, 1], randn(5), name="multiply.at repeated"),
    Case(np.multiply.at, randn(3, 4), (slice(None), [0, 0]), randn(3, 2), name="multiply.at mixed"),
    Case(np.maximum.at, randn(4), [3, 3, 0], randn(3), name="maximum.at repeated"),
    # np.choose, np.select
    Case(np.choose, np.array([0, 2, 1, 2]), [randn(4), randn(4), randn(1)], name="choose list of arrays"),
    Case(np.choose, np.array([[0, 1], [1, 0]]), (randn(2, 2), 1.5), name="choose tuple (array, float)"),
    Case(np.choose, np.array([3, -1, 1]), randn(2, 3), kwargs={"mode": "wrap"}, name="choose array choices wrap"),
    Case(np.choose, np.array([0, 1]), [1.0, randn(2)], name="choose float choice"),
    Case(np.select, [np.array([True, False, False]), np.array([True, True, False])], [randn(3), randn(3)],
         name="select default 0"),
    Case(np.select, [randn(2, 3) > 0, randn(3) > 0], [randn(2, 3), 2.5], randn(3), name="select float, default array"),
    Case(np.select, [randn(4) > 0], [randc(4)], 1.5 + 0.5j, name="select complex"),
]

