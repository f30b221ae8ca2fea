"""NumPy joins and splits: concatenate, stack, hstack, vstack, dstack, column_stack; split,
array_split, hsplit, vsplit, dsplit.

A join's inputs may be arrays, numbers or (nested) lists of them, passed as a list, a tuple or an
array; each receives its slice of the output cotangent. ``out=`` is refused. The pieces of a
split are views of the input (``numpy_shape``'s docstring: their fdata are the same views of the
input's fdata) unless the input is not an array.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from .cases import Case, randc, randn
from .core import CoDual, Dual, RuleArgumentError, primal
from .numpy_arguments import deliver, deliver_value, dense_tangent, forward, rule, zeros_or
from .numpy_shape import STRIDED, chain, step
from .second_order import linear
from .util import fit_tangent, out_cotangent, output, tangent


# --------------------------------------------------------------------------------------------
# Joining: concatenate, stack, hstack, vstack, dstack, column_stack
# --------------------------------------------------------------------------------------------


def deliver_items(arg: Any, pieces: list) -> Any:
    """Give ``pieces[i]`` to element ``i`` of sequence argument ``arg`` (a list, tuple or array)."""
    if not isinstance(arg, CoDual):
        return NoRData
    xs, fd = arg.primal, arg.fdata
    if isinstance(xs, np.ndarray):
        return deliver(arg, np.stack(pieces) if pieces else np.zeros(xs.shape))
    if isinstance(xs, list):
        for i, xi in enumerate(xs):
            fi = fd[i] if isinstance(fd, list) else NoFData
            r = deliver_value(xi, fi, pieces[i])
            if r is not NoRData and isinstance(fd, list):
                fd[i] = fd[i] + r  # a number in a list: its cotangent lives in the list's fdata
        return NoRData
    rs = [deliver_value(xi, fd[i] if isinstance(fd, tuple) else NoFData, pieces[i]) for i, xi in enumerate(xs)]
    return NoRData if all(r is NoRData for r in rs) else tuple(rs)


def _item_tangents(xs: Any, ts: Any) -> list:
    """Forward tangents of a sequence argument's elements, zeros where there are none."""
    if isinstance(xs, np.ndarray):
        return [zeros_or(None if ts is NoTangent else ts[i], xs[i]) for i in range(len(xs))]
    ts = [NoTangent] * len(xs) if ts is NoTangent else ts
    return [zeros_or(dense_tangent(x, t), x) for x, t in zip(xs, ts)]


def _joiner(fn: Callable, placement: Callable, keywords: tuple) -> None:
    """Rules for ``fn(seq, *options)``, a concatenation along one axis of reshaped inputs.

    ``placement(shapes, *options) -> (shapes inside the concatenation, axis)``.
    """

    def rrule_(seq, *opts, **kw):
        opts_p = [primal(o) for o in opts]
        kw_p = {k: primal(v) for k, v in kw.items()}
        if kw_p.get("out") is not None or (len(opts_p) > 1 and opts_p[1] is not None and fn in (np.concatenate, np.stack)):
            raise RuleArgumentError(f"numpy.{fn.__name__}: yuebing does not support out=; assign the result instead")
        y = fn(primal(seq), *opts_p, **kw_p)
        out = output(y)

        def pullback(dy: Any) -> tuple:
            xs = primal(seq)
            shapes = [np.shape(x) for x in xs]
            inner, axis = placement(shapes, *opts_p, **{k: v for k, v in kw_p.items() if k not in keywords})
            g = np.asarray(out_cotangent(out, dy))
            if axis is None:
                g = g.ravel()
                axis = 0
            cuts = np.cumsum([s[axis] for s in inner])[:-1]
            pieces = [p.reshape(s) for p, s in zip(np.split(g, cuts, axis=axis), shapes)]
            return (deliver_items(seq, pieces),)

        return out, pullback

    def frule_(seq, *opts, **kw):
        opts_p = [primal(o) for o in opts]
        kw_p = {k: primal(v) for k, v in kw.items()}
        y = fn(primal(seq), *opts_p, **kw_p)
        kw_t = {k: v for k, v in kw_p.items() if k not in ("dtype", "casting", "out")}
        ty = fn(_item_tangents(primal(seq), tangent(seq)), *opts_p[:1], **kw_t)
        return Dual(y, fit_tangent(ty, y))

    params = [inspect.Parameter("arrays", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    params.append(inspect.Parameter("kw", inspect.Parameter.VAR_KEYWORD))
    if fn in (np.concatenate, np.stack):
        params.insert(1, inspect.Parameter("axis", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=0))
        params.insert(2, inspect.Parameter("out", inspect.Parameter.POSITIONAL_OR_KEYWORD, default=None))
    sig = inspect.Signature(params)
    rrule_.__signature__ = frule_.__signature__ = sig  # type: ignore[attr-defined]
    rule(fn)(rrule_)
    forward(fn)(frule_)


def _concatenate_place(shapes, axis=0, out=None):
    if axis is None:
        return [(int(np.prod(s)),) for s in shapes], None
    return shapes, int(axis) % len(shapes[0])


def _stack_place(shapes, axis=0, out=None):
    ax = int(axis) % (len(shapes[0]) + 1)
    return [s[:ax] + (1,) + s[ax:] for s in shapes], ax


def _at_least(shape: tuple, n: int) -> tuple:
    """The shape ``np.atleast_{n}d`` gives an array of ``shape``."""
    if len(shape) >= n:
        return shape
    if n <= 2:
        return (1,) * (n - len(shape)) + shape
    return {0: (1, 1, 1), 1: (1,) + shape + (1,), 2: shape + (1,)}[len(shape)]


def _hstack_place(shapes):
    inner = [_at_least(s, 1) for s in shapes]
    return inner, 0 if len(inner[0]) == 1 else 1


def _vstack_place(shapes):
    return [_at_least(s, 2) for s in shapes], 0


def _dstack_place(shapes):
    return [_at_least(s, 3) for s in shapes], 2


def _column_stack_place(shapes):
    return [s if len(s) >= 2 else (int(np.prod(s)), 1) for s in shapes], 1


_joiner(np.concatenate, _concatenate_place, ("dtype", "casting"))
_joiner(np.stack, _stack_place, ("dtype", "casting"))
_joiner(np.hstack, _hstack_place, ("dtype", "casting"))
_joiner(np.vstack, _vstack_place, ("dtype", "casting"))
_joiner(np.dstack, _dstack_place, ())
_joiner(np.column_stack, _column_stack_place, ())


# --------------------------------------------------------------------------------------------
# Splitting: the pieces are views of the input
# --------------------------------------------------------------------------------------------


def _split_axis(fn: Callable, x: Any, axis: int) -> int:
    if fn is np.hsplit:
        return 1 if np.ndim(x) > 1 else 0
    return {np.vsplit: 0, np.dsplit: 2}.get(fn, axis)


def _refuse_list_split(fn: Callable, x: Any, ys: list, call: Callable) -> None:
    """NumPy splits a list along an axis other than the first by the list's length, not by that
    axis's (``np.split([[1, 2, 3]] * 2, [1], axis=1)`` drops a column): the tangent, split as
    an array, would not match; refused by name rather than differentiated differently."""
    if isinstance(x, (list, tuple)) and [np.shape(y) for y in ys] != [np.shape(y) for y in call(np.asarray(x))]:
        raise RuleArgumentError(f"numpy.{fn.__name__} of a {type(x).__name__}: NumPy splits it by the list's length "
                                f"({len(x)}), not by the length of the axis split, so its pieces differ from the "
                                "array's; convert the list with np.asarray first")


def _splitter(fn: Callable, has_axis: bool) -> None:
    def call(v, ios, axis):
        return fn(v, ios, axis) if has_axis else fn(v, ios)

    def rrule_(ary, indices_or_sections, axis=0):
        x, ios, ax = primal(ary), primal(indices_or_sections), primal(axis)
        ys = call(x, ios, ax)
        _refuse_list_split(fn, x, ys, lambda v: call(v, ios, ax))
        if isinstance(x, np.ndarray) and isinstance(ary.fdata, np.ndarray):
            return CoDual(ys, call(ary.fdata, ios, ax)), lambda dy: ()  # every piece is a view
        out = output(ys)

        def pullback(dy: Any) -> tuple:
            if not isinstance(out.fdata, list):
                return ()
            # a piece without fdata (an integer input's pieces) contributes a zero of its shape
            pieces = [f if isinstance(f, np.ndarray) else np.zeros(np.shape(y)) for f, y in zip(out.fdata, ys)]
            g = np.concatenate(pieces, axis=_split_axis(fn, x, ax))
            return (deliver(ary, g),)

        return out, pullback

    def frule_(ary, indices_or_sections, axis=0):
        x, ios, ax = primal(ary), primal(indices_or_sections), primal(axis)
        ys = call(x, ios, ax)
        _refuse_list_split(fn, x, ys, lambda v: call(v, ios, ax))
        t = dense_tangent(x, tangent(ary))
        if isinstance(x, np.ndarray) and x.dtype.kind not in "fc":
            return Dual(ys, [NoTangent] * len(ys))
        return Dual(ys, call(zeros_or(t, x) if not isinstance(t, np.ndarray) else t, ios, ax))

    if not has_axis:
        sig = inspect.Signature([inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                                 for n in ("ary", "indices_or_sections")])
        rrule_.__signature__ = frule_.__signature__ = sig  # type: ignore[attr-defined]
    rule(fn)(rrule_)
    forward(fn)(frule_)


for _fn, _has_axis in ((np.split, True), (np.array_split, True), (np.hsplit, False), (np.vsplit, False),
                       (np.dsplit, False)):
    _splitter(_fn, _has_axis)


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------

# structural: the tangent call redoes the join or split on tangents
linear(np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit)
linear(np.dstack, data=(0,))


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------

CASES = [
    # joining
    Case(np.concatenate, [randn(2, 3), randn(1, 3)]),
    Case(np.concatenate, (randn(2, 3), randn(2, 1)), kwargs={"axis": -1}),
    Case(np.concatenate, [randn(2, 2), randn(3)], kwargs={"axis": None}),
    Case(np.concatenate, [randn(2, dtype=np.float32), randn(2)]),
    Case(np.concatenate, [randc(2), randn(2)]),
    Case(np.concatenate, [[randn(), randn()], randn(2)], name="numpy.concatenate(list of float list, array)"),
    Case(np.concatenate, randn(2, 3), name="numpy.concatenate(2-D array: its rows)"),
    Case(np.concatenate, [randn(0, 3), randn(2, 3)]),
    Case(np.stack, [randn(3), randn(3)]),
    Case(np.stack, (randn(2, 3), randn(2, 3)), kwargs={"axis": -1}),
    Case(np.stack, [randn(), randn()], name="numpy.stack(floats)"),
    Case(np.hstack, [randn(2), randn(3)]),
    Case(np.hstack, [randn(2, 1), randn(2, 2)]),
    Case(np.hstack, (randn(), randn(2)), name="numpy.hstack(float, array)"),
    Case(np.vstack, [randn(3), randn(2, 3)]),
    Case(np.dstack, [randn(2), randn(2)]),
    Case(np.dstack, [randn(2, 3), randn(2, 3, 2)]),
    Case(np.column_stack, [randn(3), randn(3, 2)]),
    # splitting: views
    Case(np.split, randn(6), 3),
    Case(np.split, randn(4, 6), [1, 4], kwargs={"axis": 1}),
    Case(np.array_split, randn(7, 2), 3),
    Case(np.array_split, randn(5, dtype=np.float32), 2),
    Case(np.hsplit, randn(2, 4), 2),
    Case(np.vsplit, randn(4, 2), [1]),
    Case(np.dsplit, randn(2, 2, 4), 2),
    Case(chain(STRIDED, step(np.split, 2, axis=1)), randn(2, 8), name="split of a strided view"),
]
