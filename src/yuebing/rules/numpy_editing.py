"""NumPy's editing functions: ``append``, ``insert`` and ``delete`` (a new array with elements
added or removed) and ``pad`` in every mode.

* ``append``/``insert``/``delete`` are gathers from their array arguments. NumPy itself, called
  on *element numbers* in place of the data (``_numbered``: the flat position of each element of
  each differentiated argument, one numbering across them), says where each output element comes
  from, so every form of ``obj``, ``axis`` and broadcast ``values`` NumPy accepts is followed
  exactly, with NumPy's own errors. The pullback adds the cotangent back to each source
  (``np.add.at``: a broadcast value feeds several places); forward mode gathers the tangents.
  Second order: linear. ``insert`` casts ``values`` to the array's dtype (an integer array stays
  integer, with no derivative), ``append`` takes the common dtype.
* ``pad``: modes constant, edge, reflect, symmetric, wrap and empty are gathers too (the element
  numbers padded, -1 for the pad area of constant and empty), with ``constant_values``
  differentiated (``_pad_gather``, a primitive). Modes maximum, minimum, mean, median (with
  ``stat_length``) and linear_ramp (``end_values`` differentiated) are written in plain NumPy
  (``_pad_definition``: NumPy's order, one axis after another, each axis's statistics or ramps
  computed from the array padded along the axes before it, so corners are as NumPy makes them) and
  differentiated like user code in every mode, after ``np.pad`` itself has checked the arguments.
  ``np.pad``'s second order is that definition's (it calls ``_pad_gather`` for the gather modes).

Conventions: ``mode='empty'`` leaves the pad area undefined; its derivative there is zero.
``maximum``/``minimum`` split ties evenly (``np.max``'s convention), ``median`` follows
``np.median``'s. Refused: ``reflect_type='odd'`` (a linear map that is not a gather: pad with
``np.concatenate`` of ``2 * edge - reflected`` instead) and a callable ``mode``.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from . import core
from ..tangents import NoRData, NoTangent
from .cases import Case, randc, randn
from .core import CoDual, Dual, RuleArgumentError, primal, register_frule, register_rrule
from .declare import nondifferentiable
from .numpy_arguments import deliver, dense_tangent, forward, rule, zeros_or
from .second_order import defined_by, linear
from .util import fit_tangent, is_differentiable, out_cotangent, output, tangent, unbroadcast

# --------------------------------------------------------------------------------------------
# append, insert, delete: gathers located by NumPy on element numbers
# --------------------------------------------------------------------------------------------


def _numbered(args: tuple, positions: tuple) -> tuple[list, list]:
    """The primal arguments with those at ``positions`` replaced by their element numbers (one
    numbering across them, in order), and ``(start, shape)`` of each numbered argument."""
    values, spans, start = [primal(a) for a in args], [], 0
    for p in positions:
        shape = np.shape(values[p])
        size = math.prod(shape)
        values[p] = np.arange(start, start + size).reshape(shape)
        spans.append((start, shape))
        start += size
    return values, spans


def _gather_rrule(fn: Any, args: tuple, positions: tuple) -> tuple[CoDual, Any]:
    """Reverse rule of ``fn(*args)``, a gather from the arguments at ``positions``."""
    y = fn(*(primal(a) for a in args))
    out = output(y)
    if not is_differentiable(y):
        return out, lambda dy: ()
    numbered, spans = _numbered(args, positions)
    source = np.ravel(fn(*numbered))
    total = sum(math.prod(shape) for _, shape in spans)

    def pullback(dy: Any) -> tuple:
        g = np.ravel(np.asarray(out_cotangent(out, dy)))
        flat = np.zeros(total, dtype=g.dtype)
        np.add.at(flat, source, g)  # a broadcast value reaches several places
        rdatas = [NoRData] * len(args)
        for p, (start, shape) in zip(positions, spans):
            rdatas[p] = deliver(args[p], flat[start:start + math.prod(shape)].reshape(shape))
        return tuple(rdatas)

    return out, pullback


def _gather_frule(fn: Any, args: tuple, positions: tuple) -> Dual:
    """Forward rule of ``fn(*args)``, a gather from the arguments at ``positions``."""
    y = fn(*(primal(a) for a in args))
    tangents = [dense_tangent(primal(args[p]), tangent(args[p])) for p in positions]
    if not is_differentiable(y) or all(t is None for t in tangents):
        return Dual(y, fit_tangent(NoTangent, y))
    numbered, _ = _numbered(args, positions)
    flat = np.concatenate([np.ravel(zeros_or(t, primal(args[p]))) for p, t in zip(positions, tangents)])
    source = fn(*numbered)
    return Dual(y, fit_tangent(flat[source] if flat.size else 0.0, y))


@rule(np.append)
def _append_rrule(arr, values, axis=None):
    return _gather_rrule(np.append, (arr, values, axis), (0, 1))


@forward(np.append)
def _append_frule(arr, values, axis=None):
    return _gather_frule(np.append, (arr, values, axis), (0, 1))


@rule(np.insert)
def _insert_rrule(arr, obj, values, axis=None):
    return _gather_rrule(np.insert, (arr, obj, values, axis), (0, 2))


@forward(np.insert)
def _insert_frule(arr, obj, values, axis=None):
    return _gather_frule(np.insert, (arr, obj, values, axis), (0, 2))


@rule(np.delete)
def _delete_rrule(arr, obj, axis=None):
    return _gather_rrule(np.delete, (arr, obj, axis), (0,))


@forward(np.delete)
def _delete_frule(arr, obj, axis=None):
    return _gather_frule(np.delete, (arr, obj, axis), (0,))


# --------------------------------------------------------------------------------------------
# pad, the gather modes: a primitive of its own (np.pad's definition calls it)
# --------------------------------------------------------------------------------------------

_GATHER_MODES = ("constant", "edge", "reflect", "symmetric", "wrap", "empty")
_DEFINED_MODES = ("maximum", "minimum", "mean", "median", "linear_ramp")


def _pad_source(x: Any, pad_width: Any, mode: str, kw: dict) -> np.ndarray:
    """The flat input index of each output element (-1: a constant, or the undefined pad area of
    mode ``empty``), found by padding the element numbers."""
    if kw.get("reflect_type", "even") != "even":
        raise RuleArgumentError(
            f"numpy.pad: yuebing differentiates reflect_type='even' only (got {kw['reflect_type']!r}); "
            "build the odd reflection with np.concatenate of 2 * edge - reflected values")
    shape = np.shape(x)
    index = np.arange(math.prod(shape)).reshape(shape)
    if mode in ("constant", "empty"):
        return np.pad(index, pad_width, mode="constant", constant_values=-1)
    return np.pad(index, pad_width, mode=mode)


def _constant_cotangent(g: np.ndarray, shape: tuple, pad_width: Any, cv: Any) -> np.ndarray:
    """Cotangent of ``constant_values`` (its NumPy shape): g summed over each slot's region."""
    slots = np.zeros((len(shape), 2))
    result = np.zeros(slots.shape, dtype=g.dtype)
    for k in range(slots.size):
        slots.flat[k] = 1.0
        region = np.pad(np.zeros(shape), pad_width, constant_values=slots)
        result.flat[k] = np.sum(g * region)
        slots.flat[k] = 0.0
    return unbroadcast(result, np.shape(cv))


def _pad_gather(array, pad_width, mode="constant", **kw):
    """``np.pad`` in a gather mode (the primitive the rules below differentiate)."""
    return np.pad(array, pad_width, mode=mode, **kw)


@rule(_pad_gather)
def _pad_gather_rrule(array, pad_width, mode="constant", **kw):
    x, pw, md = primal(array), primal(pad_width), primal(mode)
    kw_p = {k: primal(v) for k, v in kw.items()}
    out = output(np.pad(x, pw, mode=md, **kw_p))
    if not is_differentiable(out.primal):
        return out, lambda dy: ()
    source = _pad_source(x, pw, md, kw_p)

    def pullback(dy: Any) -> tuple:
        g = np.asarray(out_cotangent(out, dy))
        taken = source >= 0
        gx = np.zeros(np.size(x), dtype=g.dtype)
        np.add.at(gx, source[taken], g[taken])
        named = {}
        if "constant_values" in kw and md == "constant":
            cv = kw_p["constant_values"]
            named["constant_values"] = deliver(kw["constant_values"], _constant_cotangent(g, np.shape(x), pw, cv))
        return deliver(array, gx.reshape(np.shape(x))), NoRData, NoRData, named

    return out, pullback


@forward(_pad_gather)
def _pad_gather_frule(array, pad_width, mode="constant", **kw):
    x, pw, md = primal(array), primal(pad_width), primal(mode)
    kw_p = {k: primal(v) for k, v in kw.items()}
    y = np.pad(x, pw, mode=md, **kw_p)
    if not is_differentiable(y):
        return Dual(y, NoTangent)
    source = _pad_source(x, pw, md, kw_p)
    t = zeros_or(dense_tangent(x, tangent(array)), x).ravel()
    ty = np.where(source >= 0, t[np.maximum(source, 0)] if t.size else 0, 0)
    if "constant_values" in kw and md == "constant":
        tc = dense_tangent(kw_p["constant_values"], tangent(kw["constant_values"]))
        if tc is not None:
            ty = ty + np.pad(np.zeros(np.shape(x)), pw, constant_values=tc)
    return Dual(y, fit_tangent(ty, y))


linear(_pad_gather, data=("constant_values",))  # a gather of the input plus constant_values


# --------------------------------------------------------------------------------------------
# pad, every mode: the definition (statistics and ramps in plain NumPy)
# --------------------------------------------------------------------------------------------


def _width_pairs(widths: Any, ndim: int) -> list:
    """``pad_width``/``stat_length`` as one ``[before, after]`` pair per axis (NumPy's reading:
    one number for all, one pair for every axis, or a pair per axis); None stays None."""
    if widths is None:
        return [[None, None]] * ndim
    w = np.asarray(widths)
    if w.size == 1:
        w = w.reshape(1, 1)
    elif w.size == 2 and w.shape != (2, 1):
        w = w.reshape(1, 2)
    return np.broadcast_to(w, (ndim, 2)).tolist()


nondifferentiable(_width_pairs)  # integer widths and lengths


def _value_pairs(values: Any, ndim: int) -> Any:
    """``end_values`` read as ``_width_pairs`` reads widths: an ``(ndim, 2)`` array (differentiable)."""
    v = np.asarray(values)
    if v.size == 1:
        v = np.reshape(v, (1, 1))
    elif v.size == 2 and v.shape != (2, 1):
        v = np.reshape(v, (1, 2))
    return np.broadcast_to(v, (ndim, 2))


def _statistic(chunk: Any, mode: str) -> Any:
    """NumPy's statistic of mode ``mode`` along axis 0, kept as a length-1 axis."""
    if mode == "maximum":
        return np.max(chunk, axis=0, keepdims=True)
    if mode == "minimum":
        return np.min(chunk, axis=0, keepdims=True)
    if mode == "mean":
        return np.mean(chunk, axis=0, keepdims=True)
    return np.median(chunk, axis=0, keepdims=True)


def _stat_blocks(z: Any, left: int, right: int, lengths: list, mode: str) -> tuple:
    """The two pad blocks of axis 0 of ``z``: the statistic of the first ``lengths[0]`` (last
    ``lengths[1]``) elements, repeated ``left`` (``right``) times."""
    n = z.shape[0]
    first = n if lengths[0] is None else min(n, lengths[0])
    last = n if lengths[1] is None else min(n, lengths[1])
    before = np.broadcast_to(_statistic(z[:first], mode), (left,) + z.shape[1:])
    after = np.broadcast_to(_statistic(z[n - last:], mode), (right,) + z.shape[1:])
    return before, after


def _ramp_blocks(z: Any, left: int, right: int, end_before: Any, end_after: Any) -> tuple:
    """The two pad blocks of axis 0 of ``z`` in mode linear_ramp: from each end value to the
    edge, the edge itself left out (NumPy's ``linspace`` with ``endpoint=False``)."""
    before = np.linspace(end_before, z[0], left, endpoint=False, dtype=z.dtype, axis=0)
    after = np.linspace(end_after, z[-1], right, endpoint=False, dtype=z.dtype, axis=0)
    return before, after[::-1]


def _pad_definition(array, pad_width, mode="constant", stat_length=None, constant_values=0, end_values=0,
                    reflect_type="even"):
    """``np.pad`` in every mode yuebing differentiates, written with covered functions."""
    if mode == "constant":
        return _pad_gather(array, pad_width, mode, constant_values=constant_values)
    if mode == "reflect" or mode == "symmetric":
        return _pad_gather(array, pad_width, mode, reflect_type=reflect_type)
    if mode in _GATHER_MODES:
        return _pad_gather(array, pad_width, mode)
    x = np.asarray(array)
    widths = _width_pairs(pad_width, x.ndim)
    lengths = _width_pairs(stat_length, x.ndim)
    ends = _value_pairs(end_values, x.ndim)
    y = x
    for axis in range(x.ndim):
        z = np.moveaxis(y, axis, 0)
        left, right = widths[axis]
        if mode == "linear_ramp":
            before, after = _ramp_blocks(z, left, right, ends[axis, 0], ends[axis, 1])
        else:
            before, after = _stat_blocks(z, left, right, lengths[axis], mode)
        y = np.moveaxis(np.concatenate([before, z, after], axis=0), 0, axis)
    return y


def _pad_mode(rest: tuple, kw: dict) -> Any:
    return primal(rest[0]) if rest else primal(kw.get("mode", "constant"))


def _pad_route(array: Any, pad_width: Any, rest: tuple, kw: dict) -> Any:
    """What differentiates this ``np.pad`` call: ``_pad_gather``, the definition, or nothing
    (an integer array: its result is integer). Refuses a callable mode."""
    mode = _pad_mode(rest, kw)
    if callable(mode):
        raise RuleArgumentError(
            "numpy.pad: yuebing does not differentiate a callable mode (it writes into views of the "
            "result); build the padding with np.concatenate, or use one of NumPy's named modes")
    if mode in _GATHER_MODES:
        return _pad_gather
    values = {k: primal(v) for k, v in kw.items()}
    y = np.pad(primal(array), primal(pad_width), *(primal(r) for r in rest), **values)  # NumPy's own checks
    if not is_differentiable(y):
        return None
    if mode not in _DEFINED_MODES:  # pragma: no cover - NumPy has refused unknown modes above
        raise RuleArgumentError(f"numpy.pad: mode {mode!r} is not differentiated")
    return _pad_definition


def _pad_rrule(array, pad_width, *rest, **kw):
    target = _pad_route(array, pad_width, rest, kw)
    if target is None:
        out = output(np.pad(primal(array), primal(pad_width), *map(primal, rest), **{k: primal(v) for k, v in kw.items()}))
        return out, lambda dy: (NoRData,) * (3 + len(rest) + len(kw))
    return core.rrule(target, array, pad_width, *rest, **kw)


def _pad_frule(array, pad_width, *rest, **kw):
    target = _pad_route(array, pad_width, rest, kw)
    if target is None:
        return Dual(np.pad(primal(array), primal(pad_width), *map(primal, rest), **{k: primal(v) for k, v in kw.items()}),
                    NoTangent)
    return core.frule(target, array, pad_width, *rest, **kw)


register_rrule(np.pad, _pad_rrule)
register_frule(np.pad, _pad_frule)
defined_by(np.pad, _pad_definition)


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------

linear(np.append, data=(0, 1, "arr", "values"))  # the common dtype: an integer array's tangent is 0
linear(np.insert, data=(2, "values"))  # values are cast to the array's dtype
linear(np.delete)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


_PAD = ((1, 0), (0, 2))


def _pad_by(x, c):
    """``np.pad`` with a differentiated ``constant_values`` (check_rule does not differentiate
    keyword arguments, so the cases pass it positionally to this wrapper)."""
    return np.pad(x, _PAD, constant_values=c)


def _ramp_to(x, e):
    """``np.pad`` in mode linear_ramp with a differentiated ``end_values``."""
    return np.pad(x, _PAD, mode="linear_ramp", end_values=e)



CASES = [
    # append
    Case(np.append, randn(3), randn(2)),
    Case(np.append, randn(2, 3), randn(2, 3)),
    Case(np.append, randn(2, 3), randn(1, 3), kwargs={"axis": 0}),
    Case(np.append, randn(2, 3), randn(2, 2), kwargs={"axis": 1}),
    Case(np.append, randn(3), randn(), name="numpy.append(array, float)"),
    Case(np.append, randc(3), randc(2)),
    Case(np.append, randn(3, dtype=np.float32), randn(2, dtype=np.float32)),
    # insert
    Case(np.insert, randn(5), 2, randn()),
    Case(np.insert, randn(5), [1, 1, 4], randn(3)),
    Case(np.insert, randn(5), slice(1, 4), randn(), name="numpy.insert(slice, broadcast float)"),
    Case(np.insert, randn(3, 4), 1, randn(4), kwargs={"axis": 0}),
    Case(np.insert, randn(3, 4), 2, randn(3), kwargs={"axis": 1}),
    Case(np.insert, randn(3, 4), [0, 2], randn(3, 1), kwargs={"axis": 1}),
    Case(np.insert, randn(3, 4), 1, randn(), kwargs={"axis": 1}, name="numpy.insert(axis=1, broadcast float)"),
    Case(np.insert, randc(4), -1, randc(2)),
    # delete
    Case(np.delete, randn(6), 2),
    Case(np.delete, randn(6), [0, 3, -1]),
    Case(np.delete, randn(6), slice(None, None, 2)),
    Case(np.delete, randn(3, 4), 1, kwargs={"axis": 0}),
    Case(np.delete, randn(3, 4), np.array([True, False, True, False]), kwargs={"axis": 1}),
    Case(np.delete, randc(2, 3), [0, 4]),
    # pad, gather modes
    Case(np.pad, randn(3), 2),
    Case(np.pad, randn(2, 3), ((1, 0), (0, 2))),
    Case(np.pad, randn(2, 3), 1, kwargs={"constant_values": 1.5}),
    Case(np.pad, randn(3, 2), ((1, 2), (2, 1)), kwargs={"mode": "edge"}),
    Case(np.pad, randn(4), (2, 3), kwargs={"mode": "reflect"}),
    Case(np.pad, randn(4, 3), 2, kwargs={"mode": "symmetric"}),
    Case(np.pad, randn(4), 5, kwargs={"mode": "wrap"}),
    Case(np.pad, randn(3, dtype=np.float32), 1),
    Case(np.pad, randc(2, 2), 1, kwargs={"mode": "edge"}),
    Case(_pad_by, randn(2, 3), randn(), name="numpy.pad(constant_values=float, differentiated)"),
    Case(_pad_by, randn(2, 3), (randn(), randn()), name="numpy.pad(constant_values=(before, after))"),
    Case(_pad_by, randn(2, 3), ((randn(), randn()), (randn(), randn())), name="numpy.pad(constant_values per axis)"),
    # pad, defined modes (statistics, ramps)
    Case(np.pad, randn(5), (2, 3), kwargs={"mode": "mean"}),
    Case(np.pad, randn(3, 4), ((1, 2), (2, 1)), kwargs={"mode": "maximum"}),
    Case(np.pad, randn(3, 4), 2, kwargs={"mode": "minimum", "stat_length": ((1, 2), (3, 2))}),
    Case(np.pad, randn(5, 3), 1, kwargs={"mode": "median"}),
    Case(np.pad, randn(4, 3), ((2, 1), (1, 2)), kwargs={"mode": "mean", "stat_length": 2}),
    Case(np.pad, randn(4), 3, kwargs={"mode": "linear_ramp"}),
    Case(np.pad, randn(3, 2), ((1, 2), (2, 0)), kwargs={"mode": "linear_ramp", "end_values": (1.0, -2.0)}),
    Case(np.pad, randc(4), 2, kwargs={"mode": "mean"}),
    Case(_ramp_to, randn(2, 3), randn(), name="numpy.pad(linear_ramp, end_values=float, differentiated)"),
    Case(_ramp_to, randn(2, 3), ((randn(), randn()), (randn(), randn())), name="numpy.pad(linear_ramp, end_values per axis)"),
]
