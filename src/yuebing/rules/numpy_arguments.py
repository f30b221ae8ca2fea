"""Helpers the NumPy reduction and shape rule modules share (no rules of its own).

* Registering: ``rule`` (a reverse rule whose pullback returns rdata for the arguments only) and
  ``forward``; ``vjp_pullback``, the pullback of a primitive declared ``with_vjp(f, vjp)``, which
  delivers the cotangents ``vjp`` gives (so the formula is written once, in the cotangent map
  that second order differentiates); ``refuse``/``no_out`` raise ``RuleArgumentError`` for
  arguments yuebing does not differentiate.
* Array-like arguments: ``deliver`` gives a cotangent shaped like ``np.asarray(primal(arg))`` to
  an argument that may be an array, a number or a (nested) list or tuple of them;
  ``dense_tangent``/``zeros_or`` read such an argument's forward tangent as an array.
* NumPy's reduction arguments, read from plain values: ``axes_of`` (``axis`` as a sorted tuple),
  ``keeps_dims``, ``where_mask``, ``expand`` (a reduction's cotangent broadcast back to the
  input), ``sum_to_shape`` (undoing a broadcast), ``reduced_count``/``element_count``,
  ``conj_if_complex``. These are written so that yuebing's forward transform can follow them (no
  generators, no in-place writes): the cotangent maps of the ``with_vjp`` declarations call them,
  and are differentiated in second order.
"""
from __future__ import annotations

import functools
import inspect
import operator
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from . import core
from .core import CoDual, RuleArgumentError, primal, register_frule, register_rrule
from .util import accumulate, out_cotangent, tangent, unbroadcast

NV = np._NoValue  # NumPy's "argument not given" marker: the default of keepdims, where, initial...


# --------------------------------------------------------------------------------------------
# Registering rules, refusing arguments
# --------------------------------------------------------------------------------------------


def rule(*targets: Any) -> Callable:
    """Register a reverse rule whose pullback returns rdata for the arguments only.

    The wrapper adds ``f``'s rdata and pads to one entry per argument the call passed (defaults
    the call left out are not counted), so a rule can be written with NumPy's full signature.
    A rule taking ``**kwargs`` (keywords passed through) may end its tuple with a dict of
    keyword rdata by name. A rule with an ``out`` parameter never sees an ``out=`` array: the
    call is run as ``out[...] = f(..., out=None)`` (``out_assigned``).
    """

    def decorate(fn: Callable) -> Callable:
        run = out_assigned(fn)

        @functools.wraps(fn)
        def wrapped(*args: Any, **kwargs: Any) -> tuple:
            out, inner = run(*args, **kwargs)
            n = len(args)

            def pullback(dy: Any) -> tuple:
                rs = inner(dy)
                named = rs[-1] if rs and isinstance(rs[-1], dict) else {}
                rs = rs[:-1] if named else rs
                positional = (*rs[:n], *(NoRData,) * (n - len(rs)))
                return (NoRData, *positional, *(named.get(k, NoRData) for k in kwargs))

            return out, pullback

        for target in targets:
            register_rrule(target, wrapped)
        return fn

    return decorate


def vjp_pullback(vjp: Callable, result: CoDual, args: tuple) -> Callable:
    """The pullback (for ``rule``: rdata of the arguments only) of a primitive declared
    ``with_vjp(f, vjp)``: ``vjp(g, y, *primals of args)`` gives one cotangent per argument (None,
    or a missing trailing entry, for none), delivered to ``args`` (the rule's parameters in order:
    coduals, or the defaults the call left out)."""

    def pullback(dy: Any) -> tuple:
        if dy is NoRData and not isinstance(result.fdata, np.ndarray):
            return ()  # a number with a zero cotangent, or an int or bool result: nothing flows back
        cotangents = vjp(out_cotangent(result, dy), result.primal, *(primal(a) for a in args))
        return tuple(NoRData if c is None else deliver(a, c) for a, c in zip(args, cotangents))

    return pullback


def forward(*targets: Any) -> Callable:
    """Register a forward rule (``out=`` handled as for ``rule``: ``out_assigned_forward``)."""

    def decorate(fn: Callable) -> Callable:
        run = out_assigned_forward(fn)
        for target in targets:
            register_frule(target, run)
        return fn

    return decorate


# --------------------------------------------------------------------------------------------
# out=: the result assigned into the given array
# --------------------------------------------------------------------------------------------
# NumPy's f(..., out=o) computes f and writes it into o (converting to o's dtype), returning o.
# Written as o[...] = f(..., out=None), the derivative is that of the assignment, whose rule
# already saves and restores o's contents and sends o's cotangent to the result: out= may alias an
# input (np.cumsum(x, out=x)) and o's old contents get cotangent 0, in every mode.


def _out_position(fn: Callable) -> int | None:
    """The position of parameter ``out`` in rule ``fn``'s signature (None when it has none)."""
    try:
        names = list(inspect.signature(fn).parameters)
    except (TypeError, ValueError):
        return None
    return names.index("out") if "out" in names else None


def _given_out(value: Any) -> bool:
    """Whether an ``out`` argument is an array, not None or a marker (NumPy's functions other
    than ufuncs refuse ``out=(array,)`` themselves)."""
    return isinstance(primal(value), np.ndarray)


def _take_out(args: tuple, kwargs: dict, k: int) -> tuple[tuple, dict, Any]:
    """The call's arguments with ``out`` set to None, and the ``out`` argument (None if not given)."""
    if k < len(args) and _given_out(args[k]):
        return args[:k] + (None,) + args[k + 1:], kwargs, args[k]
    if "out" in kwargs and _given_out(kwargs["out"]):
        return args, {**kwargs, "out": None}, kwargs["out"]
    return args, kwargs, None


def check_out_shape(result: Any, out: np.ndarray) -> None:
    """NumPy wants ``out=`` of the result's shape exactly (an assignment would broadcast)."""
    if np.shape(result) != out.shape:
        raise ValueError(f"out= has shape {out.shape}, but the result has shape {np.shape(result)} "
                         "(NumPy refuses this call too)")


def out_assigned(fn: Callable) -> Callable:
    """Reverse rule ``fn`` (returning ``(result, pullback)``) with ``out=`` run as an assignment."""
    k = _out_position(fn)
    if k is None:
        return fn

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> tuple:
        args, kwargs, out = _take_out(args, kwargs, k)
        if out is None:
            return fn(*args, **kwargs)
        result, inner = fn(*args, **kwargs)
        check_out_shape(result.primal, primal(out))
        target = CoDual(out.primal, out.fdata) if isinstance(out, CoDual) else CoDual(out, NoFData)
        _, assign_pullback = core.rrule(operator.setitem, target, CoDual(Ellipsis, NoFData), result)

        def pullback(dy: Any) -> tuple:
            rs = assign_pullback(NoRData)  # o's cotangent to the result; o restored, its fdata zeroed
            return inner(rs[3])

        return target, pullback

    return run


def out_assigned_forward(fn: Callable) -> Callable:
    """Forward rule ``fn`` with ``out=`` run as an assignment."""
    k = _out_position(fn)
    if k is None:
        return fn

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> Any:
        args, kwargs, out = _take_out(args, kwargs, k)
        if out is None:
            return fn(*args, **kwargs)
        result = fn(*args, **kwargs)
        check_out_shape(result.primal, primal(out))
        target = core.Dual(primal(out), tangent(out))
        core.frule(operator.setitem, target, core.Dual(Ellipsis, NoTangent), result)
        return target

    return run


def refuse(name: str, what: str, value: Any, default: Any = None, fix: str = "") -> None:
    """Raise ``RuleArgumentError`` unless argument ``what`` has its default value."""
    v = primal(value)
    if v is not default and not (default is None and v is None):
        raise RuleArgumentError(f"{name}: yuebing does not differentiate calls with {what}={v!r:.40}; {fix}")


def no_out(name: str, out: Any) -> None:
    refuse(name, "out", out, None, "assign the result instead (y[...] = f(x))")


def given_keywords(**pairs: Any) -> dict:
    """Keyword arguments for the NumPy call, leaving out the ones that were not given."""
    return {k: primal(v) for k, v in pairs.items() if primal(v) is not NV and not (k == "dtype" and primal(v) is None)}


# --------------------------------------------------------------------------------------------
# Array-like arguments: cotangents in, tangents out
# --------------------------------------------------------------------------------------------


def as_array(x: Any) -> np.ndarray:
    """The primal as an array (no copy for arrays)."""
    return x if isinstance(x, np.ndarray) else np.asarray(x)


def deliver(arg: Any, g: Any) -> Any:
    """Give cotangent ``g`` (shaped like ``np.asarray(primal(arg))``, or broadcast to a larger
    shape) to argument ``arg``: arrays are incremented in place, numbers give rdata, (nested)
    lists are incremented element by element in their fdata, tuples give tuple rdata."""
    if not isinstance(arg, CoDual):
        return NoRData
    return deliver_value(arg.primal, arg.fdata, g)


def deliver_value(x: Any, fd: Any, g: Any) -> Any:
    if isinstance(x, (list, tuple)):
        g = unbroadcast(np.asarray(g), np.shape(x))
        g = np.broadcast_to(g, np.shape(x))
        if isinstance(x, list):
            for i, xi in enumerate(x):
                fi = fd[i] if isinstance(fd, list) else NoFData
                r = deliver_value(xi, fi if isinstance(fi, np.ndarray) or isinstance(xi, (list, tuple)) else NoFData, g[i])
                if r is not NoRData and isinstance(fd, list) and not isinstance(xi, (list, tuple)):
                    fd[i] = fd[i] + r  # a number inside a list: its cotangent lives in the list's fdata
            return NoRData
        rs = [deliver_value(xi, fd[i] if isinstance(fd, tuple) else NoFData, g[i]) for i, xi in enumerate(x)]
        return NoRData if all(r is NoRData for r in rs) else tuple(rs)
    return accumulate(CoDual(x, fd), g)


def dense_tangent(x: Any, t: Any) -> np.ndarray | None:
    """The forward tangent of array-like primal ``x`` as an array (None when it is zero)."""
    if t is NoTangent:
        return None
    if isinstance(x, (list, tuple)):
        parts = [dense_tangent(xi, ti) for xi, ti in zip(x, t)]
        if all(p is None for p in parts):
            return None
        return np.asarray([np.zeros(np.shape(xi)) if p is None else p for xi, p in zip(x, parts)])
    return t


def zeros_or(t: np.ndarray | None, x: Any) -> np.ndarray:
    return np.zeros(np.shape(x), dtype=np.result_type(as_array(x), np.float64)) if t is None else np.asarray(t)


def initial_tangent(initial: Any) -> Any:
    """The forward tangent of ``initial=`` (None when it is a constant or not given)."""
    t = tangent(initial)
    return None if t is NoTangent or not np.any(t) else t


# --------------------------------------------------------------------------------------------
# Reduction arguments, from plain values (followed by the forward transform: see the docstring)
# --------------------------------------------------------------------------------------------


def axes_of(axis: Any, ndim: int) -> tuple:
    """``axis`` (None, int, negative, tuple) as a sorted tuple of non-negative axes."""
    if axis is None:
        return tuple(range(ndim))
    if ndim == 0:
        return ()
    if not isinstance(axis, (tuple, list)):
        return (int(axis) % ndim,)
    axes = []
    for a in axis:
        axes.append(int(a) % ndim)
    return tuple(sorted(axes))


def keeps_dims(keepdims: Any) -> bool:
    """The value of ``keepdims=`` (False when not given)."""
    return keepdims is not NV and bool(keepdims)


def where_mask(where: Any, shape: tuple) -> Any:
    """``where=`` broadcast to ``shape`` as a bool array (None when not given or ``True``)."""
    if where is NV or where is True:
        return None
    return np.broadcast_to(np.asarray(where, dtype=bool), shape)


def expand(g: Any, shape: tuple, axes: tuple, keep: bool) -> Any:
    """The cotangent of a reduction over ``axes``, broadcast back to the input ``shape``."""
    g = np.asarray(g)
    if not keep and axes:
        g = np.expand_dims(g, axes)
    return np.broadcast_to(g, shape)


def sum_to_shape(g: Any, shape: tuple) -> Any:
    """``g`` summed over the axes that broadcasting added or stretched to go beyond ``shape``
    (``util.unbroadcast``, written so that second order can follow it)."""
    g = np.asarray(g)
    extra = g.ndim - len(shape)
    if extra > 0:
        g = np.sum(g, axis=tuple(range(extra)))
    offset = len(shape) - g.ndim  # g may also have fewer axes (it broadcasts up to shape)
    stretched = []
    for i in range(g.ndim):
        if shape[offset + i] == 1 and g.shape[i] != 1:
            stretched.append(i)
    if stretched:
        g = np.sum(g, axis=tuple(stretched), keepdims=True)
    return g


def reduced_count(shape: tuple, axes: tuple) -> int:
    """The number of elements reduced into each output."""
    count = 1
    for ax in axes:
        count = count * shape[ax]
    return count


def element_count(mask: Any, shape: tuple, axes: tuple) -> Any:
    """Number of elements reduced into each output (keepdims shape when masked)."""
    if mask is None:
        return reduced_count(shape, axes)
    return np.sum(mask, axis=axes, keepdims=True)


def conj_if_complex(x: Any) -> Any:
    """``x``'s conjugate when it is complex (cotangents use conjugate partials), else ``x``."""
    return np.conj(x) if np.iscomplexobj(x) else x
