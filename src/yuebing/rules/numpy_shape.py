"""NumPy shape manipulation: functions and the matching ``ndarray`` methods.

Functions: reshape, ravel, transpose, swapaxes, moveaxis, squeeze, expand_dims, broadcast_to,
atleast_1d/2d/3d, concatenate, stack, hstack, vstack, dstack, column_stack, split, array_split,
hsplit, vsplit, dsplit, flip, fliplr, flipud, roll, rot90, tile, repeat, pad, sort.
Methods: reshape, ravel, flatten, transpose, swapaxes, squeeze, repeat, copy, astype, view, item,
tolist, sort (in place), fill (in place). ``.T`` is an attribute (the objects rules handle it).

Views (docs/writing-rules.md). Whether NumPy returns a view is decided at run time: when the
output's base chain ends at the input's (the test ``check_rule``'s aliasing check applies), the
output's fdata is the *same operation applied to the input's fdata*, which must itself be a view
of that fdata; the pullback then returns ``NoRData`` for the input (the cotangent already sits
in shared memory). When NumPy copies (``reshape`` of a non-contiguous array, ``flatten``, ``tile``
...), the output gets a fresh zero fdata and the pullback applies the adjoint (the inverse
permutation, a sum over repeats ...). If the input's fdata is laid out differently from the
input (possible only for a tangent created by other means), so that the same operation copies
it, the copy path is used: gradients are right, but later writes through the view are not
linked to the input's fdata.

``broadcast_to`` returns a read-only view with zero strides. Its fdata is deliberately NOT a
broadcast view of the input's fdata: several output elements share one memory cell, so
``fdata += g`` cannot add up their contributions (and the view is read-only). The output gets a
fresh fdata and the pullback sums it back to the input's shape. (Writes into the primal view are
illegal, so nothing is lost.) Forward mode returns the broadcast view of the tangent.

Conventions: ``np.sort``'s cotangent follows the stable sort permutation (tied elements keep
their order). ``ndarray.sort`` and ``ndarray.fill`` mutate ``self`` (the mutation convention:
the pullback reads the post-call cotangent from ``self``'s fdata, resets it to the pre-call
cotangent and restores ``self``). ``astype`` to an integer or bool dtype has zero derivative;
complex to real keeps the real part (the cotangent is real).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from ..tangents.arrays import array_root
from .cases import Case, randc, randn
from .core import CoDual, Dual, RuleArgumentError, frule, primal, register_frule, register_rrule, rrule
from .numpy_reductions import (Expect, as_array, deliver, deliver_value, dense_tangent, forward, refuse, rule,
                               zeros_or)
from .second_order import defined_by, linear, with_vjp
from .util import fit_tangent, out_cotangent, output, tangent, unbroadcast, zero_fdata

# --------------------------------------------------------------------------------------------
# Views and copies of one input
# --------------------------------------------------------------------------------------------


def is_view_of(y: Any, x: Any) -> bool:
    """Whether array ``y`` is a view into ``x``'s memory (same end of the base chain)."""
    return isinstance(y, np.ndarray) and isinstance(x, np.ndarray) and array_root(y) is array_root(x)


def view_fdata(fx: Any, y: Any, x: Any, op: Callable) -> Any:
    """``op(fx)`` when ``y = op(x)`` is a view of ``x`` and ``op(fx)`` a view of ``fx``; else None."""
    if not isinstance(fx, np.ndarray) or not is_view_of(y, x):
        return None
    fy = op(fx)
    return fy if is_view_of(fy, fx) else None


def linear_op(*targets: Any, views: bool = True) -> Callable:
    """Register rules for a structural (linear) op of one array argument from a *spec*.

    ``spec(x, *options, **keywords) -> (op, adjoint)`` gets primal values and returns ``op``
    (applied to the input, and to its fdata/tangent for views) and ``adjoint(g)`` (the
    cotangent of ``op``'s output taken back to ``x``'s shape). Only the first argument is
    differentiated. ``views=False`` never shares fdata (``broadcast_to``).
    """

    def decorate(spec: Callable) -> Callable:
        def rrule_(a, *opts, **kw):
            x = primal(a)
            op, adjoint = spec(x, *(primal(o) for o in opts), **{k: primal(v) for k, v in kw.items()})
            y = op(x)
            if y is x:
                return CoDual(x, a.fdata), lambda dy: ()
            fy = view_fdata(a.fdata, y, x, op) if views else None
            if fy is not None:
                return CoDual(y, fy), lambda dy: ()
            out = output(y)
            if not (isinstance(y, np.ndarray) and y.dtype.kind in "fc" or isinstance(y, (float, complex, np.inexact))):
                return out, lambda dy: (NoRData,)  # an int or bool result: no cotangent to take back
            return out, lambda dy: (deliver(a, adjoint(np.asarray(out_cotangent(out, dy)))),)

        def frule_(a, *opts, **kw):
            x = primal(a)
            op, _ = spec(x, *(primal(o) for o in opts), **{k: primal(v) for k, v in kw.items()})
            y = op(x)
            t = tangent(a)
            if y is x:
                return Dual(x, t)
            ty = view_fdata(t, y, x, op)
            if ty is not None:
                return Dual(y, ty)
            dt = dense_tangent(x, t)
            return Dual(y, fit_tangent(NoTangent if dt is None else op(np.asarray(dt)), y))

        sig = inspect.signature(spec)
        rrule_.__signature__ = frule_.__signature__ = sig  # type: ignore[attr-defined]
        rrule_.__qualname__ = frule_.__qualname__ = spec.__qualname__
        rule(*targets)(rrule_)
        forward(*targets)(frule_)
        return spec

    return decorate


def _reshaper(x: Any) -> Callable:
    shape = np.shape(x)
    return lambda g: np.reshape(g, shape)


def _resolve_order(x: Any, order: str) -> str:
    """The memory order ``'A'`` stands for (``'F'`` for Fortran-only-contiguous arrays)."""
    if order in ("A", "a"):
        f_only = isinstance(x, np.ndarray) and x.flags.f_contiguous and not x.flags.c_contiguous
        return "F" if f_only else "C"
    return order


def _memory_order_adjoint(x: Any) -> Callable:
    """Adjoint of ``ravel(order='K')``: the flat result lists ``x``'s elements in memory order."""
    xa = as_array(x)
    index = np.empty_like(xa, dtype=np.intp)
    index[...] = np.arange(xa.size).reshape(xa.shape)
    order = index.ravel(order="K")

    def adjoint(g: np.ndarray) -> np.ndarray:
        gx = np.zeros(xa.size, dtype=g.dtype)
        gx[order] = g
        return gx.reshape(xa.shape)

    return adjoint


def _ravel_spec(x, order="C"):
    if order in ("K", "k"):
        return (lambda v: np.ravel(v, order="K")), _memory_order_adjoint(x)
    resolved = _resolve_order(x, order)
    return (lambda v: np.ravel(v, order=resolved)), (lambda g: np.reshape(g, np.shape(x), order=resolved))


@linear_op(np.reshape)
def _reshape_spec(a, shape=None, order="C", copy=None):
    resolved = _resolve_order(a, order)
    kw = {} if copy is None else {"copy": copy}
    return (lambda v: np.reshape(v, shape, order=resolved, **kw)), (lambda g: np.reshape(g, np.shape(a), order=resolved))


@linear_op((np.ndarray, "reshape"))
def _reshape_method_spec(a, *shape, **kw):
    refuse("ndarray.reshape", "keywords other than order and copy", set(kw) - {"order", "copy"} or None)
    if len(shape) == 1 and (isinstance(shape[0], (tuple, list)) or shape[0] is None):
        shape = shape[0]
    return _reshape_spec(a, shape, kw.get("order", "C"), kw.get("copy"))


linear_op(np.ravel, (np.ndarray, "ravel"))(_ravel_spec)


@linear_op((np.ndarray, "flatten"))
def _flatten_spec(a, order="C"):
    op, adjoint = _ravel_spec(a, order)
    return (lambda v: np.array(op(v), copy=True)), adjoint  # flatten always copies


@linear_op((np.ndarray, "copy"))
def _copy_spec(a, order="C"):
    return (lambda v: v.copy(order=order)), (lambda g: g)


@linear_op(np.transpose)
def _transpose_spec(a, axes=None):
    if axes is None:
        return np.transpose, np.transpose
    perm = [int(i) % np.ndim(a) for i in axes]
    return (lambda v: np.transpose(v, perm)), (lambda g: np.transpose(g, np.argsort(perm)))


@linear_op((np.ndarray, "transpose"))
def _transpose_method_spec(a, *axes):
    if len(axes) == 1 and (isinstance(axes[0], (tuple, list)) or axes[0] is None):
        axes = axes[0]
    return _transpose_spec(a, axes or None)


@linear_op(np.swapaxes, (np.ndarray, "swapaxes"))
def _swapaxes_spec(a, axis1, axis2):
    swap = lambda v: np.swapaxes(v, axis1, axis2)  # noqa: E731 - its own adjoint
    return swap, swap


@linear_op(np.moveaxis)
def _moveaxis_spec(a, source, destination):
    return (lambda v: np.moveaxis(v, source, destination)), (lambda g: np.moveaxis(g, destination, source))


@linear_op(np.squeeze, (np.ndarray, "squeeze"))
def _squeeze_spec(a, axis=None):
    return (lambda v: np.squeeze(v, axis=axis)), _reshaper(a)


@linear_op(np.expand_dims)
def _expand_dims_spec(a, axis):
    return (lambda v: np.expand_dims(v, axis)), _reshaper(a)


@linear_op(np.broadcast_to, views=False)
def _broadcast_to_spec(array, shape, subok=False):
    refuse("numpy.broadcast_to", "subok", subok or None, None, "pass a plain ndarray")
    return (lambda v: np.broadcast_to(v, shape)), (lambda g: unbroadcast(g, np.shape(array)))


@linear_op((np.ndarray, "view"))
def _view_spec(a, *args, **kw):
    dtype = args[0] if args else kw.get("dtype", kw.get("type"))
    if len(args) > 1 or dtype not in (None, a.dtype, np.ndarray) or set(kw) - {"dtype", "type"}:
        raise RuleArgumentError("ndarray.view: yuebing differentiates only plain views (x.view()); "
                                "reinterpreting the dtype or type has no derivative")
    return (lambda v: v.view()), (lambda g: g)


@linear_op(np.flip)
def _flip_spec(m, axis=None):
    flip = lambda v: np.flip(v, axis)  # noqa: E731 - its own adjoint
    return flip, flip


@linear_op(np.fliplr)
def _fliplr_spec(m):
    return np.fliplr, np.fliplr


@linear_op(np.flipud)
def _flipud_spec(m):
    return np.flipud, np.flipud


@linear_op(np.rot90)
def _rot90_spec(m, k=1, axes=(0, 1)):
    return (lambda v: np.rot90(v, k, axes)), (lambda g: np.rot90(g, -k, axes))


@linear_op(np.roll)
def _roll_spec(a, shift, axis=None):
    back = tuple(-s for s in shift) if isinstance(shift, (tuple, list)) else -shift
    return (lambda v: np.roll(v, shift, axis)), (lambda g: np.roll(g, back, axis))


@linear_op(np.tile)
def _tile_spec(A, reps):
    shape = np.shape(A)
    reps_t = tuple(reps) if isinstance(reps, (tuple, list)) else (reps,)
    n = max(len(shape), len(reps_t))
    padded = (1,) * (n - len(shape)) + tuple(shape)
    reps_p = (1,) * (n - len(reps_t)) + reps_t

    def adjoint(g: np.ndarray) -> np.ndarray:
        interleaved = [d for pair in zip(reps_p, padded) for d in pair]
        summed = g.reshape(interleaved).sum(axis=tuple(range(0, 2 * n, 2)))
        return summed.reshape(shape)

    return (lambda v: np.tile(v, reps)), adjoint


@linear_op(np.repeat, (np.ndarray, "repeat"))
def _repeat_spec(a, repeats, axis=None):
    shape = np.shape(a)

    def adjoint(g: np.ndarray) -> np.ndarray:
        n = int(np.prod(shape)) if axis is None else shape[axis]
        source = np.repeat(np.arange(n), repeats)  # the input index of each output element
        moved = g if axis is None else np.moveaxis(g, axis, 0)
        gx = np.zeros((n,) + moved.shape[1:], dtype=g.dtype)
        np.add.at(gx, source, moved)
        return gx.reshape(shape) if axis is None else np.moveaxis(gx, 0, axis)

    return (lambda v: np.repeat(v, repeats, axis)), adjoint


def _sort_indices(x: Any, axis: Any) -> tuple[np.ndarray, Any]:
    xa = as_array(x)
    if axis is None:
        return np.argsort(xa, axis=None, kind="stable"), None
    return np.argsort(xa, axis=axis, kind="stable"), axis


def _permute(v: Any, idx: np.ndarray, axis: Any) -> np.ndarray:
    v = np.asarray(v)  # a list too (np.sort([x, y]))
    return np.take_along_axis(np.ravel(v) if axis is None else v, idx, axis=-1 if axis is None else axis)


def _unpermute(g: np.ndarray, idx: np.ndarray, axis: Any, shape: tuple) -> np.ndarray:
    gx = np.zeros(idx.shape, dtype=g.dtype)
    np.put_along_axis(gx, idx, g, axis=-1 if axis is None else axis)
    return gx.reshape(shape)


@linear_op(np.sort)
def _sort_spec(a, axis=-1, kind=None, order=None, stable=None):
    refuse("numpy.sort", "order", order, None, "sort a plain float array")
    idx, ax = _sort_indices(a, axis)
    return (lambda v: _permute(v, idx, ax)), (lambda g: _unpermute(g, idx, ax, np.shape(a)))


# --------------------------------------------------------------------------------------------
# atleast_1d/2d/3d (one or several arguments)
# --------------------------------------------------------------------------------------------


def _atleast(fn: Callable) -> None:
    def rrule_(*arys):
        xs = [primal(a) for a in arys]
        ys = [fn(x) for x in xs]
        outs, pulls = [], []
        for i, (a, x, y) in enumerate(zip(arys, xs, ys)):
            fy = a.fdata if y is x else view_fdata(a.fdata, y, x, fn)
            if fy is None:  # a fresh array (from a number or list): its cotangent goes back
                fy = zero_fdata(y)
                pulls.append((i, a, fy, np.shape(x)))
            outs.append(fy)

        def pullback(dy: Any) -> tuple:
            rdatas = [NoRData] * len(arys)
            for i, a, fy, shape in pulls:
                if isinstance(fy, np.ndarray):
                    rdatas[i] = deliver(a, fy.reshape(shape))
            return tuple(rdatas)

        if len(arys) == 1:
            return CoDual(ys[0], outs[0]), pullback
        fd = tuple(outs)
        return CoDual(tuple(ys), NoFData if all(f is NoFData for f in fd) else fd), pullback

    def frule_(*arys):
        ys = []
        for a in arys:
            x, t = primal(a), tangent(a)
            y = fn(x)
            ty = t if y is x else view_fdata(t, y, x, fn)
            if ty is None:
                dt = dense_tangent(x, t)
                ty = fit_tangent(NoTangent if dt is None else fn(np.asarray(dt)), y)
            ys.append(Dual(y, ty))
        if len(ys) == 1:
            return ys[0]
        return Dual(tuple(d.primal for d in ys), tuple(d.tangent for d in ys))

    rule(fn)(rrule_)
    forward(fn)(frule_)


for _fn in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    _atleast(_fn)


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


def _splitter(fn: Callable, has_axis: bool) -> None:
    def call(v, ios, axis):
        return fn(v, ios, axis) if has_axis else fn(v, ios)

    def rrule_(ary, indices_or_sections, axis=0):
        x, ios, ax = primal(ary), primal(indices_or_sections), primal(axis)
        ys = call(x, ios, ax)
        if isinstance(x, np.ndarray) and isinstance(ary.fdata, np.ndarray):
            return CoDual(ys, call(ary.fdata, ios, ax)), lambda dy: ()  # every piece is a view
        out = output(ys)

        def pullback(dy: Any) -> tuple:
            if not isinstance(out.fdata, list):
                return ()
            g = np.concatenate([np.asarray(f) for f in out.fdata], axis=_split_axis(fn, x, ax))
            return (deliver(ary, g),)

        return out, pullback

    def frule_(ary, indices_or_sections, axis=0):
        x, ios, ax = primal(ary), primal(indices_or_sections), primal(axis)
        ys = call(x, ios, ax)
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
# pad: a gather from the input (plus constants)
# --------------------------------------------------------------------------------------------

_GATHER_MODES = ("constant", "edge", "reflect", "symmetric", "wrap")


def _pad_setup(x: Any, pad_width: Any, mode: Any, kw: dict) -> tuple[np.ndarray, Any]:
    """``(source, constants)``: the flat input index of each output element (-1: a constant),
    and the value ``constant_values`` (0 when not given)."""
    if mode not in _GATHER_MODES or kw.get("reflect_type", "even") != "even" or set(kw) - {"constant_values", "reflect_type"}:
        raise RuleArgumentError(
            f"numpy.pad: yuebing differentiates modes {', '.join(_GATHER_MODES)} (reflect_type='even'); "
            f"got mode={mode!r} with {sorted(kw)}; build the padding with np.concatenate instead")
    shape = np.shape(x)
    index = np.arange(int(np.prod(shape))).reshape(shape)
    extra = {"constant_values": -1} if mode == "constant" else {}
    return np.pad(index, pad_width, mode=mode, **extra), kw.get("constant_values", 0)


def _constant_cotangent(g: np.ndarray, source: np.ndarray, shape: tuple, pad_width: Any, cv: Any) -> np.ndarray:
    """Cotangent of ``constant_values`` (its NumPy shape): g summed over each slot's region."""
    slots = np.zeros((len(shape), 2))
    result = np.zeros(slots.shape, dtype=g.dtype)
    for k in range(slots.size):
        slots.flat[k] = 1.0
        region = np.pad(np.zeros(shape), pad_width, constant_values=slots)
        result.flat[k] = np.sum(g * region)
        slots.flat[k] = 0.0
    return unbroadcast(result, np.shape(cv))


@rule(np.pad)
def _pad_rrule(array, pad_width, mode="constant", **kw):
    x, pw, md = primal(array), primal(pad_width), primal(mode)
    kw_p = {k: primal(v) for k, v in kw.items()}
    source, cv = _pad_setup(x, pw, md, kw_p)  # refuses unsupported modes before running
    out = output(np.pad(x, pw, mode=md, **kw_p))

    def pullback(dy: Any) -> tuple:
        g = np.asarray(out_cotangent(out, dy))
        taken = source >= 0
        gx = np.zeros(np.size(x), dtype=g.dtype)
        np.add.at(gx, source[taken], g[taken])
        named = {}
        if "constant_values" in kw and md == "constant":
            named["constant_values"] = deliver(kw["constant_values"], _constant_cotangent(g, source, np.shape(x), pw, cv))
        return deliver(array, gx.reshape(np.shape(x))), NoRData, NoRData, named

    return out, pullback


@forward(np.pad)
def _pad_frule(array, pad_width, mode="constant", **kw):
    x, pw, md = primal(array), primal(pad_width), primal(mode)
    kw_p = {k: primal(v) for k, v in kw.items()}
    y = np.pad(x, pw, mode=md, **kw_p)
    source, _ = _pad_setup(x, pw, md, kw_p)
    t = zeros_or(dense_tangent(x, tangent(array)), x).ravel()
    ty = np.where(source >= 0, t[np.maximum(source, 0)] if t.size else 0, 0)
    if "constant_values" in kw and md == "constant":
        tc = dense_tangent(kw_p["constant_values"], tangent(kw["constant_values"]))
        if tc is not None:
            ty = ty + np.pad(np.zeros(np.shape(x)), pw, constant_values=tc)
    return Dual(y, fit_tangent(ty, y))


# --------------------------------------------------------------------------------------------
# Methods: astype, item, tolist, and the in-place sort and fill
# --------------------------------------------------------------------------------------------


@rule((np.ndarray, "astype"))
def _astype_rrule(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    x = primal(a)
    y = x.astype(primal(dtype), order=primal(order), casting=primal(casting), subok=primal(subok), copy=primal(copy))
    if y is x:
        return CoDual(x, a.fdata), lambda dy: ()
    out = output(y)
    return out, lambda dy: (deliver(a, np.asarray(out_cotangent(out, dy))),)


@forward((np.ndarray, "astype"))
def _astype_frule(a, dtype, order="K", casting="unsafe", subok=True, copy=True):
    x = primal(a)
    y = x.astype(primal(dtype), order=primal(order), casting=primal(casting), subok=primal(subok), copy=primal(copy))
    if y is x:
        return Dual(x, tangent(a))
    return Dual(y, fit_tangent(tangent(a), y))


def _flat_index(x: np.ndarray, args: tuple) -> int:
    if not args:
        if x.size != 1:
            raise ValueError("can only convert an array of size 1 to a Python scalar")
        return 0
    if len(args) == 1 and isinstance(args[0], tuple):
        args = args[0]
    if len(args) == 1:
        return int(args[0]) % x.size
    return int(np.ravel_multi_index(tuple(int(i) % n for i, n in zip(args, x.shape)), x.shape))


@rule((np.ndarray, "item"))
def _item_rrule(a, *args):
    x = primal(a)
    y = x.item(*(primal(i) for i in args))

    def pullback(dy: Any) -> tuple:
        if isinstance(a.fdata, np.ndarray) and dy is not NoRData:
            a.fdata.flat[_flat_index(x, tuple(primal(i) for i in args))] += dy
        return ()

    return output(y), pullback


@forward((np.ndarray, "item"))
def _item_frule(a, *args):
    x, t = primal(a), tangent(a)
    y = x.item(*(primal(i) for i in args))
    if not isinstance(t, np.ndarray):
        return Dual(y, fit_tangent(NoTangent, y))
    return Dual(y, t.item(*(primal(i) for i in args)))


@rule((np.ndarray, "tolist"))
def _tolist_rrule(a):
    x = primal(a)
    out = output(x.tolist())

    def pullback(dy: Any) -> tuple:
        if x.ndim == 0:  # a Python number: its cotangent is the rdata
            return (deliver(a, out_cotangent(out, dy)),)
        # the output's fdata is a nested list of float tangents, read back as an array
        return (deliver(a, np.asarray(out.fdata).reshape(x.shape)),) if x.dtype.kind in "fc" else ()

    return out, pullback


@forward((np.ndarray, "tolist"))
def _tolist_frule(a):
    x, t = primal(a), tangent(a)
    y = x.tolist()
    if not isinstance(t, np.ndarray):
        return Dual(y, NoTangent if x.ndim == 0 or x.dtype.kind not in "fc" else _zeros_like_list(y))
    return Dual(y, t.tolist())


def _zeros_like_list(y: Any) -> Any:
    return [_zeros_like_list(v) for v in y] if isinstance(y, list) else NoTangent


@rule((np.ndarray, "sort"))
def _sort_inplace_rrule(a, axis=-1, kind=None, order=None, stable=None):
    refuse("ndarray.sort", "order", order, None, "sort a plain float array")
    x, ax = primal(a), primal(axis)
    idx = np.argsort(x, axis=ax, kind="stable")
    saved = x.copy()
    x[...] = np.take_along_axis(saved, idx, axis=ax)

    def pullback(dy: Any) -> tuple:
        x[...] = saved  # restore first: nothing below reads the sorted values
        if isinstance(a.fdata, np.ndarray):
            g = a.fdata.copy()  # cotangent of the sorted (post-call) state
            a.fdata[...] = 0  # the overwritten contents had no other use
            np.put_along_axis(a.fdata, idx, g, axis=ax)
        return ()

    return output(None), pullback


@forward((np.ndarray, "sort"))
def _sort_inplace_frule(a, axis=-1, kind=None, order=None, stable=None):
    refuse("ndarray.sort", "order", order, None, "sort a plain float array")
    x, ax, t = primal(a), primal(axis), tangent(a)
    idx = np.argsort(x, axis=ax, kind="stable")
    x[...] = np.take_along_axis(x, idx, axis=ax)
    if isinstance(t, np.ndarray):
        t[...] = np.take_along_axis(t, idx, axis=ax)
    return Dual(None, NoTangent)


@rule((np.ndarray, "fill"))
def _fill_rrule(a, value):
    x = primal(a)
    saved = x.copy()
    x.fill(primal(value))

    def pullback(dy: Any) -> tuple:
        x[...] = saved
        if not isinstance(a.fdata, np.ndarray):
            return ()
        g = a.fdata.sum()  # every element now holds the value: its cotangent is the sum
        a.fdata[...] = 0  # the overwritten contents did not reach the output
        return NoRData, deliver(value, g)

    return output(None), pullback


@forward((np.ndarray, "fill"))
def _fill_frule(a, value):
    x, t = primal(a), tangent(a)
    x.fill(primal(value))
    if isinstance(t, np.ndarray):
        tv = tangent(value)
        t.fill(0 if tv is NoTangent or not isinstance(primal(value), (float, complex, np.inexact, np.ndarray)) else tv)
    return Dual(None, NoTangent)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _every_other_column(x: np.ndarray) -> np.ndarray:
    """A strided (non-contiguous) view, for cases: rules on the view exercise strided inputs."""
    return x[:, ::2]


@linear_op(_every_other_column)
def _every_other_column_spec(x):
    def adjoint(g: np.ndarray) -> np.ndarray:
        gx = np.zeros(np.shape(x), dtype=g.dtype)
        gx[:, ::2] = g
        return gx

    return _every_other_column, adjoint


def chain(*steps: tuple) -> Callable:
    """A function ``x -> f_n(...f_1(x, *a_1, **k_1)..., *a_n, **k_n)`` whose rules are the
    composition of the steps' rules (for cases: views of views, strided inputs)."""

    def composite(x):
        for f, args, kw in steps:
            x = f(x, *args, **kw)
        return x

    def rrule_(a):
        pullbacks = []
        for f, args, kw in steps:
            a, pb = rrule(f, a, *(CoDual(v) for v in args), **{k: CoDual(v) for k, v in kw.items()})
            pullbacks.append(pb)

        def pullback(dy: Any) -> tuple:
            for pb in reversed(pullbacks):
                dy = pb(dy)[1]
            return NoRData, dy

        return a, pullback

    def frule_(d):
        for f, args, kw in steps:
            d = frule(f, d, *(Dual(v, NoTangent) for v in args), **{k: Dual(v, NoTangent) for k, v in kw.items()})
        return d

    composite.__qualname__ = " then ".join(getattr(f, "__name__", str(f)) for f, _, _ in steps)
    register_rrule(composite, rrule_)
    register_frule(composite, frule_)
    linear(composite)  # the cases chain linear steps only
    return composite


_PAD = ((1, 0), (0, 2))


def _pad_by(x, c):
    """``np.pad`` with a differentiated ``constant_values`` (check_rule does not differentiate
    keyword arguments, so the cases pass it positionally to this wrapper)."""
    return np.pad(x, _PAD, constant_values=c)


def _pad_by_rrule(a, c):
    out, pb = rrule(np.pad, a, CoDual(_PAD), constant_values=c)
    return out, lambda dy: (lambda r: (NoRData, r[1], r[3]))(pb(dy))


register_rrule(_pad_by, _pad_by_rrule)
register_frule(_pad_by, lambda a, c: frule(np.pad, a, Dual(_PAD, NoTangent), constant_values=c))


def _s(f: Callable, *args: Any, **kw: Any) -> tuple:
    return f, args, kw


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------


def _sort_vjp(g, y, a, axis=-1, kind=None, order=None, stable=None):
    """``np.sort``: the cotangent goes back through the stable sort permutation of the primal
    (piecewise linear: the permutation does not change under small perturbations)."""
    x = np.asarray(a)
    if axis is None:
        inverse = np.argsort(np.argsort(x, axis=None, kind="stable"), kind="stable")
        return np.reshape(np.ravel(g)[inverse], np.shape(x)), None, None, None, None
    inverse = np.argsort(np.argsort(x, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(g, inverse, axis=axis), None, None, None, None


# structural: views, copies, joins, splits, gathers (the tangent call redoes them on tangents)
linear(np.atleast_3d, np.fliplr, np.flipud, np.rot90, np.split, np.array_split, np.hsplit, np.vsplit,
       np.dsplit, _every_other_column)
linear(np.dstack, data=(0,))
linear((np.ndarray, "view"), (np.ndarray, "swapaxes"), (np.ndarray, "repeat"), (np.ndarray, "astype"),
       (np.ndarray, "tolist"))
linear(np.pad, data=("constant_values",))  # a gather of the input plus constant_values
linear(_pad_by, data=(1,))
linear((np.ndarray, "fill"), data=(1, "value"))  # x.fill(1): the int is a value (tangent 0)
# piecewise linear: the permutation comes from the primal
with_vjp(np.sort, _sort_vjp)


def _sort_in_place(a, axis=-1, kind=None, order=None):
    """``a.sort()``: the values of ``np.sort`` written back (the same permutation of the primal)."""
    a[...] = np.sort(a, axis=axis, kind=kind, order=order)


defined_by((np.ndarray, "sort"), _sort_in_place)
# ndarray.sort: none (in place, and the tangent must follow the primal's permutation)


_strided = _s(_every_other_column)


CASES = [
    # reshape (function and method), views and copies
    Case(np.reshape, randn(2, 6), (3, 4)),
    Case(np.reshape, randn(2, 6), (-1,)),
    Case(np.reshape, randn(2, 6), (4, -1), kwargs={"order": "F"}),
    Case(np.reshape, randn(2, 3, dtype=np.float32), (3, 2)),
    Case(np.reshape, randc(4), (2, 2)),
    Case(np.reshape, np.array(1.5), (1, 1)),
    Case(np.reshape, randn(), (1,), name="numpy.reshape(float)"),
    Case(np.reshape, np.zeros((0, 3)), (3, 0)),
    Case(np.reshape, randn(2, 6), (3, 4), kwargs={"copy": True}),
    Case(np.reshape, [randn(), randn()], (2, 1), name="numpy.reshape(list)"),
    Case(np.ndarray.reshape, randn(2, 6), 3, 4),
    Case(np.ndarray.reshape, randn(2, 6), (4, 3)),
    Case(np.ndarray.reshape, randn(2, 6), -1, kwargs={"order": "F"}),
    Case(chain(_strided, _s(np.reshape, (6,))), randn(3, 4), name="reshape of a strided view (copy)"),
    Case(chain(_strided, _s(np.reshape, (2, 3))), randn(2, 6), name="reshape of a strided view 2 (copy)"),
    Case(chain(_s(np.transpose), _s(np.reshape, (12,))), randn(3, 4), name="reshape of a transpose (copy)"),
    Case(chain(_s(np.reshape, (3, 4)), _s(np.reshape, (2, 6))), randn(12), name="reshape of a reshape (view of view)"),
    Case(chain(_s(np.transpose), _s(np.transpose)), randn(3, 4), name="transpose of a transpose"),
    Case(chain(_strided, _s(np.transpose), _s(np.flip, 0)), randn(3, 4), name="flip of transpose of strided"),
    Case(chain(_s(np.ravel), _s(np.expand_dims, 0), _s(np.squeeze)), randn(2, 3), name="view chain: ravel, expand, squeeze"),
    # ravel / flatten / copy / view
    Case(np.ravel, randn(3, 4)),
    Case(np.ravel, randn(3, 4), kwargs={"order": "F"}),
    # F-ordered inputs come from a transpose inside the case: check_rule's finite differences
    # do not keep a lone F-ordered argument's layout (see the report), so views would differ.
    Case(chain(_s(np.transpose), _s(np.ravel, order="K")), randn(3, 4), name="ravel(order=K) of F-ordered: view"),
    Case(chain(_s(np.transpose), _s(np.ravel, order="A")), randn(3, 4), name="ravel(order=A) of F-ordered: view"),
    Case(chain(_s(np.transpose), _s(np.ravel)), randn(3, 4), name="ravel of F-ordered: copy"),
    Case(chain(_strided, _s(np.ravel, order="K")), randn(3, 4), name="ravel(order=K) of strided: copy"),
    Case(chain(_s(np.transpose), _s(np.reshape, (2, 6), order="A")), randn(3, 4), name="reshape(order=A) of F-ordered"),
    Case(np.ndarray.ravel, randn(2, 3, dtype=np.float32)),
    Case(chain(_strided, _s(np.ravel)), randn(3, 4), name="ravel of a strided view"),
    Case(np.ndarray.flatten, randn(3, 4)),
    Case(np.ndarray.flatten, randn(3, 4), kwargs={"order": "F"}),
    Case(np.ndarray.copy, randn(3, 4)),
    Case(np.ndarray.copy, randc(3)),
    Case(np.ndarray.view, randn(3, 4)),
    # transpose / swapaxes / moveaxis / squeeze / expand_dims
    Case(np.transpose, randn(3, 4)),
    Case(np.transpose, randn(2, 3, 4), (1, -1, 0)),
    Case(np.transpose, randn(4, dtype=np.float32)),
    Case(np.transpose, np.zeros((0, 2))),
    Case(np.ndarray.transpose, randn(2, 3, 4), 2, 0, 1),
    Case(np.ndarray.transpose, randn(2, 3, 4), (2, 0, 1)),
    Case(np.ndarray.transpose, randn(2, 3)),
    Case(np.swapaxes, randn(2, 3, 4), 0, 2),
    Case(np.ndarray.swapaxes, randn(2, 3), 0, 1),
    Case(np.moveaxis, randn(2, 3, 4), 0, -1),
    Case(np.moveaxis, randn(2, 3, 4), (0, 1), (2, 0)),
    Case(np.squeeze, randn(1, 3, 1)),
    Case(np.squeeze, randn(1, 3, 1), kwargs={"axis": 0}),
    Case(np.ndarray.squeeze, randn(3, 1, dtype=np.float32)),
    Case(np.expand_dims, randn(3, 4), 1),
    Case(np.expand_dims, randn(3), (0, 2)),
    Case(np.expand_dims, randn(), 0, name="numpy.expand_dims(float)"),
    # broadcast_to: forward via check_rule; reverse gives a fresh fdata (see the module
    # docstring), which check_rule's aliasing check rejects for an output viewing the input,
    # so the reverse rule is checked against the explicit sum-back instead.
    Case(np.broadcast_to, randn(3), (2, 3), mode=("fwd",)),
    Case(np.broadcast_to, randn(3, 1), (3, 4), mode=("fwd",)),
    Expect(np.broadcast_to, np.array([1.0, 2.0, 3.0]), (2, 3), ybar=np.arange(6.0).reshape(2, 3),
           expected=[3.0, 5.0, 7.0], name="numpy.broadcast_to(sum back)"),
    Expect(np.broadcast_to, np.array([[1.0], [2.0]]), (2, 3), ybar=np.arange(6.0).reshape(2, 3),
           expected=[[3.0], [12.0]], name="numpy.broadcast_to(stretched axis)"),
    Case(np.broadcast_to, randn(), (2, 2), name="numpy.broadcast_to(float)"),
    # atleast_nd
    Case(np.atleast_1d, randn(3)),
    Case(np.atleast_1d, randn(), name="numpy.atleast_1d(float)"),
    Case(np.atleast_2d, randn(3)),
    Case(np.atleast_3d, randn(3, 2)),
    Case(np.atleast_2d, randn(3), randn(2, 2), np.array(0.5)),
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
    Case(chain(_strided, _s(np.split, 2, axis=1)), randn(2, 8), name="split of a strided view"),
    # flips, rolls, rotations
    Case(np.flip, randn(3, 4)),
    Case(np.flip, randn(3, 4), 1),
    Case(np.flip, randn(2, 3, 4), (0, 2)),
    Case(np.fliplr, randn(3, 4)),
    Case(np.flipud, randn(3, dtype=np.float32)),
    Case(np.roll, randn(5), 2),
    Case(np.roll, randn(3, 4), (1, -1), kwargs={"axis": (0, 1)}),
    Case(np.roll, randn(3, 4), -1, kwargs={"axis": 0}),
    Case(np.rot90, randn(3, 4)),
    Case(np.rot90, randn(2, 3, 4), 3, (1, 2)),
    Case(np.rot90, randc(2, 3), 2),
    # tile / repeat
    Case(np.tile, randn(3), 2),
    Case(np.tile, randn(2, 3), (2, 1, 2)),
    Case(np.tile, randn(), (2, 2), name="numpy.tile(float)"),
    Case(np.tile, randn(2, 3), (0, 1)),
    Case(np.repeat, randn(4), 2),
    Case(np.repeat, randn(2, 3), [1, 0, 2], kwargs={"axis": 1}),
    Case(np.repeat, randn(2, 3), 2),
    Case(np.repeat, randn(), 3, name="numpy.repeat(float)"),
    Case(np.ndarray.repeat, randn(2, 3), 2, kwargs={"axis": 0}),
    # pad
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
    # sort
    Case(np.sort, randn(6)),
    Case(np.sort, randn(3, 4), kwargs={"axis": 0}),
    Case(np.sort, randn(3, 4), kwargs={"axis": None}),
    Case(np.sort, randn(5, dtype=np.float32)),
    Case(np.ndarray.sort, randn(6)),
    Case(np.ndarray.sort, randn(3, 4), 0),
    Expect(np.sort, np.array([2.0, 1.0, 2.0]), ybar=np.array([10.0, 20.0, 30.0]), expected=[20.0, 10.0, 30.0],
           name="numpy.sort(ties: stable permutation)"),
    # astype / item / tolist / fill
    # a float32 output of float64 inputs: finite differences need single-precision settings
    Case(np.ndarray.astype, randn(3, 4), np.float32, rtol=3e-2, atol=1e-3, steps=(3e-2, 1e-2, 3e-3)),
    Case(np.ndarray.astype, randn(3, dtype=np.float32), np.float64),
    Case(np.ndarray.astype, randn(3), np.int64),
    Case(np.ndarray.astype, randn(3), np.complex128),
    Case(np.ndarray.astype, randn(3), np.float64, kwargs={"copy": False}),
    Case(np.ndarray.item, randn(3, 4), 5),
    Case(np.ndarray.item, randn(3, 4), 2, -1),
    Case(np.ndarray.item, randn(3, 4), (1, 2)),
    Case(np.ndarray.item, np.array([0.25])),
    Case(np.ndarray.item, randc(2), 1),
    Case(np.ndarray.tolist, randn(2, 3)),
    Case(np.ndarray.tolist, randn(4, dtype=np.float32)),
    Case(np.ndarray.tolist, np.array(0.5)),
    Case(np.ndarray.fill, randn(3, 4), randn()),
    Case(np.ndarray.fill, randn(3, dtype=np.float32), 2.0),
]
