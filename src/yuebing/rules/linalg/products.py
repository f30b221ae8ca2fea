"""Linear algebra products: ``np.dot``, ``vdot``, ``inner``, ``outer``, ``matmul`` and the ``@`` /
``@=`` operators, ``tensordot``, ``einsum``, ``kron``, ``trace``, ``ndarray.dot``/``.trace`` and
``np.linalg.multi_dot``.

``out=`` is refused; lists and tuples must be converted with ``np.asarray`` before they can carry
a derivative (``multi_dot`` takes its list of arrays as NumPy does).

Second order (``yb.hvp``, ``yb.hessian``; the end of the file): the products are ``multilinear``,
``trace`` is ``linear``, ``@=`` is written as a product assigned back. ``multi_dot``'s second
order is a chain of ``@`` (``array_api._multi_dot``).
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import numpy as np

from ...tangents import NoFData, NoRData, NoTangent
from ..cases import Case, randc, randn
from ..core import CoDual, Dual, frule_for, primal, rrule_for
from ..second_order import defined_by, linear, multilinear
from .. import util
from ..util import accumulate, fit_tangent, out_cotangent, output, unbroadcast
from ..operators.in_place import as_array_frule, as_array_rrule, numpy_gives_result
from .common import (add, carries_gradient, conj, fit, linalg_rule, mH, no_out, normalise_axes, refuse,
                     refuse_containers, tangent_or_none)

try:  # NumPy 2
    from numpy._core.einsumfunc import _parse_einsum_input
except ImportError:  # pragma: no cover - NumPy 1
    from numpy.core.einsumfunc import _parse_einsum_input

# --------------------------------------------------------------------------------------------
# dot, vdot, inner, outer, tensordot, matmul, kron, trace
# --------------------------------------------------------------------------------------------


def _tensordot_parts(a: Any, b: Any, ax_a: list, ax_b: list) -> tuple[Callable, Callable]:
    """jvp and vjp of ``tensordot(a, b, (ax_a, ax_b))`` (output: free axes of a, then of b)."""
    na, nb = np.ndim(a), np.ndim(b)
    free_a = [i for i in range(na) if i not in ax_a]
    free_b = [i for i in range(nb) if i not in ax_b]

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.tensordot(da, b, (ax_a, ax_b)),
                   None if db is None else np.tensordot(a, db, (ax_a, ax_b)))

    def vjp(g: Any, need: tuple) -> tuple:
        g = np.asarray(g)
        ga = gb = None
        if need[0]:  # axes of t: free_a, then b's contracted axes in increasing order
            t = np.tensordot(g, conj(b), (list(range(len(free_a), g.ndim)), free_b))
            ga = np.transpose(t, np.argsort(free_a + [ax_a[j] for j in np.argsort(ax_b)]))
        if need[1]:  # axes of t: a's contracted axes in increasing order, then free_b
            t = np.tensordot(conj(a), g, (free_a, list(range(len(free_a)))))
            gb = np.transpose(t, np.argsort([ax_b[j] for j in np.argsort(ax_a)] + free_b))
        return ga, gb

    return jvp, vjp


@linalg_rule(np.dot, (np.ndarray, "dot"), diff=(0, 1))
def _dot(a, b, out=None):
    no_out("numpy.dot", out)
    y = np.dot(a, b)
    na, nb = np.ndim(a), np.ndim(b)
    if na == 0 or nb == 0:
        ax_a, ax_b = [], []
    else:
        ax_a, ax_b = [na - 1], [0 if nb == 1 else nb - 2]
    return (y, *_tensordot_parts(a, b, ax_a, ax_b))


@linalg_rule(np.inner, diff=(0, 1))
def _inner(a, b):
    y = np.inner(a, b)
    na, nb = np.ndim(a), np.ndim(b)
    ax_a, ax_b = ([], []) if na == 0 or nb == 0 else ([na - 1], [nb - 1])
    return (y, *_tensordot_parts(a, b, ax_a, ax_b))


@linalg_rule(np.tensordot, diff=(0, 1))
def _tensordot(a, b, axes=2):
    y = np.tensordot(a, b, axes)
    na, nb = np.ndim(a), np.ndim(b)
    try:
        n = operator.index(axes)
        ax_a, ax_b = list(range(na - n, na)), list(range(n))
    except TypeError:
        ax_a, ax_b = normalise_axes(axes[0], na), normalise_axes(axes[1], nb)
    return (y, *_tensordot_parts(a, b, ax_a, ax_b))


@linalg_rule(np.outer, diff=(0, 1))
def _outer(a, b, out=None):
    no_out("numpy.outer", out)
    y = np.outer(a, b)
    fa, fb = np.ravel(a), np.ravel(b)
    jvp, flat_vjp = _tensordot_parts(fa, fb, [], [])

    def vjp(g: Any, need: tuple) -> tuple:
        ga, gb = flat_vjp(g, need)
        return (None if ga is None else ga.reshape(np.shape(a)),
                None if gb is None else gb.reshape(np.shape(b)))

    return y, lambda da, db: jvp(None if da is None else np.ravel(da), None if db is None else np.ravel(db)), vjp


@linalg_rule(np.vdot, diff=(0, 1))
def _vdot(a, b):
    y = np.vdot(a, b)

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.vdot(da, b), None if db is None else np.vdot(a, db))

    def vjp(g: Any, need: tuple) -> tuple:  # y = sum(conj(a) * b): not holomorphic in a
        ga = np.reshape(np.asarray(b) * np.conj(g), np.shape(a)) if need[0] else None
        gb = np.reshape(np.asarray(a) * g, np.shape(b)) if need[1] else None
        return ga, gb

    return y, jvp, vjp


def _matmul_parts(a: Any, b: Any) -> tuple[Callable, Callable]:
    """jvp and vjp of ``a @ b`` with NumPy's 1-D promotion and batch broadcasting."""
    a2 = a if np.ndim(a) > 1 else np.reshape(a, (1, -1))
    b2 = b if np.ndim(b) > 1 else np.reshape(b, (-1, 1))

    def jvp(da: Any, db: Any) -> Any:
        return add(None if da is None else np.matmul(da, b), None if db is None else np.matmul(a, db))

    def vjp(g: Any, need: tuple) -> tuple:
        batch = np.broadcast_shapes(np.shape(a2)[:-2], np.shape(b2)[:-2])
        g2 = np.reshape(g, batch + (np.shape(a2)[-2], np.shape(b2)[-1]))
        ga = unbroadcast(g2 @ mH(b2), np.shape(a2)).reshape(np.shape(a)) if need[0] else None
        gb = unbroadcast(mH(a2) @ g2, np.shape(b2)).reshape(np.shape(b)) if need[1] else None
        return ga, gb

    return jvp, vjp


def _array_operands(label: str, a: Any, b: Any) -> None:
    if not isinstance(a, np.ndarray) and not isinstance(b, np.ndarray):
        refuse(label, f"yuebing's rule handles NumPy arrays only, not {type(a).__qualname__} @ "
                      f"{type(b).__qualname__}; register a rule for the type's __matmul__ with "
                      "yuebing.rules.register_rrule")


@linalg_rule(np.matmul, diff=(0, 1))
def _matmul(x1, x2, out=None):
    no_out("numpy.matmul", out)
    return (np.matmul(x1, x2), *_matmul_parts(x1, x2))


@linalg_rule(operator.matmul, diff=(0, 1))
def _matmul_operator(a, b):
    _array_operands("operator.matmul", a, b)
    return (operator.matmul(a, b), *_matmul_parts(a, b))


@rrule_for(operator.imatmul)
def _imatmul_rrule(a, b):
    x = a.primal
    if numpy_gives_result(operator.imatmul, x, b):  # list @= array: NumPy's new array
        return as_array_rrule(operator.matmul, a, b)
    if not isinstance(x, np.ndarray):  # no in-place @= : Python rebinds a to a @ b
        return _matmul_operator.rrule(a, b)
    refuse_containers("operator.imatmul", [x, primal(b)], (1,))
    saved = x.copy()
    _, vjp = _matmul_parts(saved, primal(b))
    operator.imatmul(x, primal(b))  # NumPy checks shapes and casting, and handles b aliasing a

    def pullback(dy: Any) -> tuple:
        if a.fdata is NoFData:
            x[...] = saved
            return NoRData, NoRData, NoRData
        g = a.fdata.copy()  # cotangent of a after the call
        a.fdata[...] = 0  # its old contents were overwritten
        x[...] = saved  # restore first: b may be (a view of) a
        ga, gb = vjp(g, (True, carries_gradient(b)))
        accumulate(a, ga)
        rb = accumulate(b, gb) if gb is not None else NoRData
        return NoRData, NoRData, rb

    return CoDual(x, a.fdata), pullback


@frule_for(operator.imatmul)
def _imatmul_frule(a, b):
    x = a.primal
    if numpy_gives_result(operator.imatmul, x, b):
        return as_array_frule(operator.matmul, a, b)
    if not isinstance(x, np.ndarray):
        return _matmul_operator.frule(a, b)
    refuse_containers("operator.imatmul", [x, primal(b)], (1,))
    jvp, _ = _matmul_parts(x, primal(b))
    dy = jvp(tangent_or_none(a), tangent_or_none(b))  # before x changes: b may alias it
    operator.imatmul(x, primal(b))
    if isinstance(a.tangent, np.ndarray):
        a.tangent[...] = fit_tangent(NoTangent if dy is None else dy, x)
    return Dual(x, a.tangent)


@linalg_rule(np.kron, diff=(0, 1))
def _kron(a, b):
    y = kron_product(a, b)

    def jvp(da: Any, db: Any) -> Any:
        if da is not None and db is not None and np.shape(da) == np.shape(a) and np.shape(db) == np.shape(b) \
                and np.ndim(a) == np.ndim(b) >= 1:
            return kron_sum_of_two(da, b, a, db)
        return add(None if da is None else kron_product(da, b), None if db is None else kron_product(a, db))

    def vjp(g: Any, need: tuple) -> tuple:
        ga = kron_cotangent_of_first(g, conj(b), np.shape(a)) if need[0] else None
        gb = kron_cotangent_of_second(g, conj(a), np.shape(b)) if need[1] else None
        return ga, gb

    return y, jvp, vjp


# kron(a, b) reshaped to (a0, b0, a1, b1, ...) is the outer product a[i] * b[k] per axis: a
# factor's cotangent contracts the output's cotangent g, so reshaped, with the other factor over
# the other factor's axes. Written as a batched matrix product over the last two axes (each
# (a_last, b_last) block of g times a vector), then a sum over the leading axes the product did
# not contract: one contiguous pass over g in BLAS, about twice as fast as einsum's loop over the
# same axes. With a last axis of one or two entries the blocks are too small for a matrix product
# to pay its per-block cost, and einsum runs.


def _padded_shapes(shape_a: tuple, shape_b: tuple) -> tuple[tuple, tuple]:
    nd = max(len(shape_a), len(shape_b))
    return (1,) * (nd - len(shape_a)) + tuple(shape_a), (1,) * (nd - len(shape_b)) + tuple(shape_b)


def _small_blocks(sa: tuple, sb: tuple) -> bool:
    return sa[-1] * sb[-1] < 8


def kron_cotangent_of_first(g: Any, b: Any, shape_a: tuple) -> np.ndarray:
    """The cotangent of ``a`` in ``kron(a, b)`` from the output's cotangent ``g`` (``b`` already
    conjugated for complex numbers): ``g`` contracted with ``b`` over ``b``'s axes."""
    sa, sb = _padded_shapes(shape_a, np.shape(b))
    nd = len(sa)
    g_pairs = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    if nd == 0 or _small_blocks(sa, sb):
        ia, ib = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
        return np.einsum(g_pairs, list(range(2 * nd)), np.reshape(b, sb), ib, ia).reshape(shape_a)
    # b as (1, b0, 1, b1, ..., b_last, 1): its leading axes broadcast against g's batch axes
    column = np.reshape(b, [m for n in sb[:-1] for m in (1, n)] + [sb[-1], 1])
    per_block = np.matmul(g_pairs, column)  # (a0, b0, ..., a_last, 1)
    return per_block.sum(axis=tuple(range(1, 2 * nd - 2, 2)) + (-1,)).reshape(shape_a)


def kron_cotangent_of_second(g: Any, a: Any, shape_b: tuple) -> np.ndarray:
    """The cotangent of ``b`` in ``kron(a, b)`` from the output's cotangent ``g`` (``a`` already
    conjugated for complex numbers): ``g`` contracted with ``a`` over ``a``'s axes."""
    sa, sb = _padded_shapes(np.shape(a), shape_b)
    nd = len(sa)
    g_pairs = np.reshape(g, [n for pair in zip(sa, sb) for n in pair])
    if nd == 0 or _small_blocks(sa, sb):
        ia, ib = list(range(0, 2 * nd, 2)), list(range(1, 2 * nd, 2))
        return np.einsum(g_pairs, list(range(2 * nd)), np.reshape(a, sa), ia, ib).reshape(shape_b)
    # a as (a0, 1, a1, 1, ..., 1, a_last): a row times each (a_last, b_last) block of g
    row = np.reshape(a, [m for n in sa[:-1] for m in (n, 1)] + [1, sa[-1]])
    per_block = np.matmul(row, g_pairs)  # (a0, b0, ..., 1, b_last)
    return per_block.sum(axis=tuple(range(0, 2 * nd - 2, 2)) + (-2,)).reshape(shape_b)


def kron_product(a: Any, b: Any) -> Any:
    """``np.kron(a, b)``, for float arrays into a buffer of the pool (``util.EMPTY``): a fresh
    output costs more in page faults than the products. Each product ``a[i] * b[k]`` is the one
    NumPy computes, so the numbers are the same."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.ndim == 0 or b.ndim == 0 \
            or a.dtype.kind not in "fc" or b.dtype.kind not in "fc":
        return np.kron(a, b)
    sa, sb = _padded_shapes(a.shape, b.shape)
    out = util.EMPTY([m for pair in zip(sa, sb) for m in pair], np.result_type(a, b))
    if a.size * sb[-1] + b.size * sa[-1] <= out.size // 4 and sa[-1] > 1:
        _kron_by_rows(np.reshape(a, sa), np.reshape(b, sb), out)
    else:
        spread_a = np.reshape(a, [m for n in sa for m in (n, 1)])  # (a0, 1, a1, 1, ...)
        spread_b = np.reshape(b, [m for n in sb for m in (1, n)])
        np.multiply(spread_a, spread_b, out=out)
    return out.reshape([p * q for p, q in zip(sa, sb)])


def _kron_by_rows(a: np.ndarray, b: np.ndarray, out: np.ndarray) -> None:
    """``kron`` into ``out`` (shaped ``(a0, b0, ..., a_last, b_last)``) one contiguous row of
    ``a_last * b_last`` products at a time: the row of ``a`` with each entry repeated ``b_last``
    times, times the row of ``b`` tiled ``a_last`` times. NumPy's multiply over the interleaved
    axes runs an inner loop of only ``b_last`` entries; these rows are ``a_last`` times longer,
    for about half the time, at the cost of the two small repeated copies (at most a quarter
    of the output: the caller checks)."""
    rows_a = np.repeat(a, b.shape[-1], axis=-1)  # a[..., k] at k * b_last + l
    rows_b = np.tile(b, (1,) * (b.ndim - 1) + (a.shape[-1],))  # b[..., l] at k * b_last + l
    lead_a = [m for n in a.shape[:-1] for m in (n, 1)]  # (a0, 1, a1, 1, ...): batch axes broadcast
    lead_b = [m for n in b.shape[:-1] for m in (1, n)]
    np.multiply(rows_a.reshape(lead_a + [-1]), rows_b.reshape(lead_b + [-1]),
                out=out.reshape(list(out.shape[:-2]) + [-1]))


def kron_sum_of_two(a: Any, b: Any, c: Any, d: Any) -> np.ndarray:
    """``kron(a, b) + kron(c, d)`` (``a``, ``c`` of one shape, ``b``, ``d`` of another, all of one
    number of axes) as one batched matrix product written straight into the output: in kron's
    layout ``(a0, b0, a1, b1, ...)`` each trailing ``(a_last, b_last)`` block is ``[a, c] @ [b;
    d]`` (an inner dimension of 2), so the output is written once, with no temporary, where two
    full krons and their sum cost three arrays of the output's size (5 MB for a 20x20 by 40x40
    kron) and two extra passes."""
    sa, sb = np.shape(a), np.shape(b)
    left = np.stack([a, c], axis=-1)  # sa + (2,)
    right = np.stack([b, d], axis=-2)  # sb[:-1] + (2, b_last)
    batch_a = [m for n in sa[:-1] for m in (n, 1)]  # (a0, 1, a1, 1, ...): the batch axes broadcast
    batch_b = [m for n in sb[:-1] for m in (1, n)]
    out = util.EMPTY([m for pair in zip(sa, sb) for m in pair], np.result_type(a, b, c, d))  # (pooled when large)
    np.matmul(left.reshape(batch_a + [sa[-1], 2]), right.reshape(batch_b + [2, sb[-1]]), out=out)
    return out.reshape([p * q for p, q in zip(sa, sb)])


def _trace_parts(x: np.ndarray, offset: int, axis1: int, axis2: int, dtype: Any) -> tuple[Callable, Callable]:
    def jvp(dx: Any) -> Any:
        return np.trace(dx, offset, axis1, axis2, dtype=dtype)

    def vjp(g: Any, need: tuple) -> tuple:
        gx = np.zeros(x.shape, dtype=np.result_type(x, np.asarray(g)))
        moved = np.moveaxis(gx, (axis1, axis2), (-2, -1))  # a view of gx
        n1, n2 = moved.shape[-2:]
        start = max(0, -offset)
        rows = np.arange(start, start + max(0, min(n1 - start, n2 - start - offset)))
        moved[..., rows, rows + offset] = np.asarray(g)[..., None]
        return (gx,)

    return jvp, vjp


@linalg_rule(np.trace, (np.ndarray, "trace"))
def _trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    no_out("numpy.trace", out)
    y = np.trace(a, offset, axis1, axis2, dtype=dtype)
    x = np.asarray(a)
    ax1, ax2 = axis1 % x.ndim, axis2 % x.ndim
    return (y, *_trace_parts(x, offset, ax1, ax2, dtype))


# --------------------------------------------------------------------------------------------
# einsum
# --------------------------------------------------------------------------------------------

_EINSUM_KEYWORDS = {"optimize"}


def _einsum_layout(args: list) -> tuple[list, list]:
    """Positions of the operands among einsum's arguments, and their expanded subscripts."""
    if isinstance(primal(args[0]), str):
        positions = list(range(1, len(args)))
    else:  # interleaved form: op, sublist, op, sublist, ..., [output sublist]
        positions = list(range(0, len(args) - 1, 2))
    ins, out, _ = _parse_einsum_input([primal(a) for a in args])
    return positions, ins.split(",") + [out]


def _einsum_check(kwargs: dict) -> dict:
    extra = set(kwargs) - _EINSUM_KEYWORDS
    if extra:
        refuse("numpy.einsum", f"yuebing supports only the optimize= keyword, not {sorted(extra)}; "
                               "assign the result instead of out=, and cast with .astype for dtype=")
    return {k: primal(v) for k, v in kwargs.items()}


def _einsum_operand_cotangent(i: int, subs: list, ops: list, g: Any, kwargs: dict) -> np.ndarray:
    """Cotangent of operand ``i``: an einsum of the output cotangent with the other operands."""
    *in_subs, out_sub = subs
    mine = in_subs[i]
    x = np.asarray(ops[i])
    others = [j for j in range(len(ops)) if j != i]
    unique = "".join(dict.fromkeys(mine))
    present = set(out_sub).union(*(in_subs[j] for j in others))
    kept = "".join(c for c in unique if c in present)
    sizes = {c: x.shape[mine.index(c)] for c in unique}
    spec = ",".join([out_sub] + [in_subs[j] for j in others]) + "->" + kept
    grad = np.einsum(spec, np.asarray(g), *(conj(np.asarray(ops[j])) for j in others), **kwargs)
    # labels only this operand sums over: the cotangent is constant along them
    grad = grad.reshape([grad.shape[kept.index(c)] if c in kept else 1 for c in unique])
    grad = np.broadcast_to(grad, [max(n, sizes[c]) for n, c in zip(grad.shape, unique)])
    grad = unbroadcast_labels(grad, [sizes[c] for c in unique])
    if len(unique) == len(mine):
        return np.transpose(grad, [unique.index(c) for c in mine])
    # repeated labels (a diagonal): write into the diagonal of a zero array
    full = np.zeros(x.shape, dtype=np.result_type(x, grad))
    strides = [sum(full.strides[k] for k, c in enumerate(mine) if c == u) for u in unique]
    diagonal = np.lib.stride_tricks.as_strided(full, shape=grad.shape, strides=strides)
    diagonal[...] = grad
    return full


def unbroadcast_labels(g: np.ndarray, sizes: list) -> np.ndarray:
    """Sum ``g`` (same ndim) over the axes where ``sizes`` is 1 but ``g`` is longer."""
    axes = tuple(k for k, (n, s) in enumerate(zip(g.shape, sizes)) if s == 1 and n != 1)
    return np.sum(g, axis=axes, keepdims=True) if axes else g


def _einsum_view_of(y: Any, args: list, positions: list) -> CoDual | None:
    """The operand ``y`` is a view of (einsum returns views for pure transposes/diagonals)."""
    if len(positions) == 1 and isinstance(y, np.ndarray) and y.base is not None:
        x = primal(args[positions[0]])
        if isinstance(x, np.ndarray) and np.shares_memory(y, x):
            return args[positions[0]]
    return None


@rrule_for(np.einsum)
def _einsum_rrule(*args, **kwargs):
    options = _einsum_check(kwargs)
    positions, subs = _einsum_layout(list(args))
    ops = [primal(args[p]) for p in positions]
    y = np.einsum(*(primal(a) for a in args), **options)
    n_rdata = len(args) + len(kwargs) + 1
    source = _einsum_view_of(y, list(args), positions)
    if source is not None:  # y is a view of the operand: its fdata is the same view of the fdata
        fd = source.fdata
        view = np.einsum(*(fd if a is source else primal(a) for a in args)) if isinstance(fd, np.ndarray) else NoFData
        return CoDual(y, view), lambda dy: (NoRData,) * n_rdata
    out = output(y)

    def pullback(dy: Any) -> tuple:
        g = out_cotangent(out, dy)
        rdatas = [NoRData] * n_rdata
        for i, p in enumerate(positions):
            if carries_gradient(args[p]):
                rdatas[p + 1] = accumulate(args[p], _einsum_operand_cotangent(i, subs, ops, g, options))
        return tuple(rdatas)

    return out, pullback


@frule_for(np.einsum)
def _einsum_frule(*args, **kwargs):
    options = _einsum_check(kwargs)
    positions, subs = _einsum_layout(list(args))
    ops = [primal(args[p]) for p in positions]
    y = np.einsum(*(primal(a) for a in args), **options)
    source = _einsum_view_of(y, list(args), positions)
    if source is not None:
        t = source.tangent
        view = np.einsum(*(t if a is source else primal(a) for a in args)) if isinstance(t, np.ndarray) else NoTangent
        return Dual(y, view)
    spec = ",".join(subs[:-1]) + "->" + subs[-1]
    dy = None
    for i, p in enumerate(positions):
        dx = tangent_or_none(args[p])
        if dx is not None:
            dy = add(dy, np.einsum(spec, *(dx if j == i else op for j, op in enumerate(ops)), **options))
    return Dual(y, fit(dy, y))


# --------------------------------------------------------------------------------------------
# multi_dot
# --------------------------------------------------------------------------------------------


def _multi_dot_chain(arrays: list) -> tuple[list, list, tuple]:
    """Matrices (1-D ends promoted), prefix and suffix products (None: identity)."""
    ms = [np.asarray(m) for m in arrays]
    if ms[0].ndim == 1:
        ms[0] = ms[0][None, :]
    if ms[-1].ndim == 1:
        ms[-1] = ms[-1][:, None]
    prefix, suffix = [None], [None]
    for m in ms[:-1]:
        prefix.append(m if prefix[-1] is None else prefix[-1] @ m)
    for m in ms[:0:-1]:
        suffix.append(m if suffix[-1] is None else m @ suffix[-1])
    return ms, prefix, suffix[::-1]


def _multi_dot_check(arrays: Any) -> None:
    if not isinstance(arrays, (list, tuple)) or not all(isinstance(m, np.ndarray) for m in arrays):
        refuse("numpy.linalg.multi_dot", "yuebing needs a list or tuple of NumPy arrays")


_NOT_GIVEN = object()  # multi_dot's out= default: tells whether the call passed out=


@rrule_for(np.linalg.multi_dot)
def _multi_dot_rrule(arrays, out=_NOT_GIVEN):
    no_out("numpy.linalg.multi_dot", None if out is _NOT_GIVEN else primal(out))
    n_rdata = 2 if out is _NOT_GIVEN else 3
    xs = arrays.primal
    _multi_dot_check(xs)
    y = np.linalg.multi_dot(xs)
    result = output(y)
    fds = arrays.fdata

    def pullback(dy: Any) -> tuple:
        if fds is NoFData:
            return (NoRData,) * n_rdata
        ms, prefix, suffix = _multi_dot_chain(xs)
        g = np.reshape(out_cotangent(result, dy), (ms[0].shape[0], ms[-1].shape[1]))
        for i, (x, fd) in enumerate(zip(xs, fds)):
            if isinstance(fd, np.ndarray):
                gi = g if suffix[i] is None else g @ mH(suffix[i])
                gi = gi if prefix[i] is None else mH(prefix[i]) @ gi
                fd += np.reshape(np.real(gi) if fd.dtype.kind == "f" else gi, x.shape)
        return (NoRData,) * n_rdata

    return result, pullback


@frule_for(np.linalg.multi_dot)
def _multi_dot_frule(arrays, out=_NOT_GIVEN):
    no_out("numpy.linalg.multi_dot", None if out is _NOT_GIVEN else primal(out))
    xs = arrays.primal
    _multi_dot_check(xs)
    y = np.linalg.multi_dot(xs)
    ts = arrays.tangent
    if ts is NoTangent:
        return Dual(y, fit(None, y))
    ms, prefix, suffix = _multi_dot_chain(xs)
    dy = None
    for i, (m, t) in enumerate(zip(ms, ts)):
        if isinstance(t, np.ndarray):
            term = np.reshape(t, m.shape)
            term = term if prefix[i] is None else prefix[i] @ term
            dy = add(dy, term if suffix[i] is None else term @ suffix[i])
    return Dual(y, fit(None if dy is None else np.reshape(dy, np.shape(y)), y))


# --------------------------------------------------------------------------------------------
# Second order
# --------------------------------------------------------------------------------------------


multilinear(operator.matmul, np.matmul, np.dot, (np.ndarray, "dot"), np.inner, np.outer, np.kron,
            np.tensordot, np.einsum, np.vdot)
linear(np.trace, (np.ndarray, "trace"))


def _imatmul(a, b):
    """``a @= b``: the product written back into ``a`` (NumPy's shape check kept)."""
    product = a @ b
    if not isinstance(a, np.ndarray):
        return product  # no in-place @=: Python rebinds a
    if product.shape != a.shape:
        raise ValueError(f"matmul: the product's shape {product.shape} does not match the array's {a.shape} for @=")
    a[...] = product
    return a


defined_by(operator.imatmul, _imatmul)


# operator.imatmul is not multilinear (in place: that rule would run the product on the primal
# twice), hence defined_by. np.linalg.multi_dot (its factors are the elements of one list
# argument, which neither multilinear nor with_vjp delivers cotangents to) is defined_by a chain
# of @ in array_api.py.


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


f32 = np.float32

CASES = [
    # dot / ndarray.dot
    Case(np.dot, randn(3), randn(3)),
    Case(np.dot, randn(2, 3), randn(3, 4)),
    Case(np.dot, randn(2, 3), randn(3)),
    Case(np.dot, randn(3), randn(3, 2)),
    Case(np.dot, randn(2, 3, 4), randn(5, 4, 2)),
    Case(np.dot, randn(), randn(3, 2)),
    Case(np.dot, randn(2, 3, dtype=f32), randn(3, 2, dtype=f32)),
    Case(np.dot, randc(2, 3), randc(3, 2)),
    Case(np.dot, randn(2, 3), randc(3)),
    Case(np.dot, randn(0, 3), randn(3, 2)),
    Case(np.dot, np.arange(6).reshape(2, 3), randn(3, 2)),
    Case(np.ndarray.dot, randn(2, 3), randn(3, 4)),
    # vdot, inner, outer, tensordot
    Case(np.vdot, randn(2, 3), randn(6)),
    Case(np.vdot, randc(4), randc(4)),
    Case(np.inner, randn(2, 3), randn(4, 3)),
    Case(np.inner, randn(3), randn(3)),
    Case(np.inner, randn(), randn(2, 3)),
    Case(np.inner, randc(2, 3), randc(3)),
    Case(np.outer, randn(3), randn(2, 2)),
    Case(np.outer, randc(2), randc(3)),
    Case(np.tensordot, randn(2, 3, 4), randn(3, 4, 5)),
    Case(np.tensordot, randn(2, 3, 4), randn(4, 2, 5), kwargs={"axes": ([0, 2], [1, 0])}),
    Case(np.tensordot, randn(2, 3), randn(4), kwargs={"axes": 0}),
    Case(np.tensordot, randn(3, 4, dtype=f32), randn(4, 2, dtype=f32), kwargs={"axes": 1}),
    Case(np.tensordot, randc(2, 3), randc(3, 2), kwargs={"axes": ([-1], [0])}),
    # matmul and @, @=
    Case(np.matmul, randn(2, 3), randn(3, 4)),
    Case(np.matmul, randn(3), randn(3)),
    Case(np.matmul, randn(3), randn(2, 3, 4)),
    Case(np.matmul, randn(2, 1, 3, 4), randn(5, 4, 2)),
    Case(np.matmul, randn(4, 2, 3), randn(3)),
    Case(np.matmul, randn(2, 3, dtype=f32), randn(3, 2, dtype=f32)),
    Case(np.matmul, randc(2, 2, 3), randc(3, 4)),
    Case(np.matmul, randn(2, 3), randc(3, 2)),
    Case(np.matmul, randn(0, 3), randn(3, 2)),
    Case(operator.matmul, randn(2, 3), randn(3, 4)),
    Case(operator.imatmul, randn(2, 3), randn(3, 3)),
    Case(operator.imatmul, randn(3), randn(3, 3)),
    Case(operator.imatmul, randc(2, 2), randc(2, 2)),
    Case(operator.imatmul, randn(2, 3, 3), randn(3, 3)),
    Case(operator.imatmul, *(lambda a: (a, a))(randn(3, 3)), name="operator.imatmul(a, a)"),
    Case(operator.imatmul, *(lambda a: (a, a.T))(randn(3, 3)), name="operator.imatmul(a, a.T)"),
    # kron, trace
    Case(np.kron, randn(2, 3), randn(3, 2)),
    Case(np.kron, randn(3), randn(2, 2)),
    Case(np.kron, randc(2), randc(2)),
    # blocks of at least 8 entries: the cotangents as batched matrix products
    Case(np.kron, randn(3, 4), randn(2, 5)),
    Case(np.kron, randn(2, 3, 4), randn(3, 3)),
    Case(np.kron, randn(12), randn(2, 2)),
    Case(np.kron, randc(2, 3), randc(2, 4)),
    Case(np.kron, randn(3, 4)[:, ::2], randn(5, 4).T),
    Case(np.trace, randn(3, 3)),
    Case(np.trace, randn(3, 4), kwargs={"offset": 1}),
    Case(np.trace, randn(4, 3), kwargs={"offset": -2}),
    Case(np.trace, randn(2, 3, 4), kwargs={"axis1": 1, "axis2": 2}),
    Case(np.trace, randn(3, 2, 3), kwargs={"axis1": 0, "axis2": -1, "offset": 1}),
    Case(np.trace, randn(3, 3, dtype=f32)),
    Case(np.trace, randc(3, 3)),
    Case(np.trace, randn(2, 3), kwargs={"offset": 5}),
    Case(np.ndarray.trace, randn(3, 3), kwargs={"offset": -1}),
    # einsum
    Case(np.einsum, "ij,jk->ik", randn(2, 3), randn(3, 4)),
    Case(np.einsum, "ij,jk", randn(2, 3), randn(3, 4)),
    Case(np.einsum, "ii->i", randn(3, 3)),
    Case(np.einsum, "ii", randn(3, 3)),
    Case(np.einsum, "iij->j", randn(3, 3, 2)),
    Case(np.einsum, "ij->", randn(2, 3)),
    Case(np.einsum, "ij->j", randn(2, 3)),
    Case(np.einsum, "ij->ji", randn(2, 3)),
    Case(np.einsum, "i,i->", randn(3), randn(3)),
    Case(np.einsum, "i,j->ij", randn(3), randn(2)),
    Case(np.einsum, "...ij,...jk->...ik", randn(2, 2, 3), randn(3, 4)),
    Case(np.einsum, "...i,i", randn(2, 3), randn(3)),
    Case(np.einsum, "i...->...", randn(3, 2)),
    Case(np.einsum, "ij,jk,kl->il", randn(2, 3), randn(3, 4), randn(4, 2), kwargs={"optimize": True}),
    Case(np.einsum, "ij,ij->i", randn(1, 3), randn(4, 3)),
    Case(np.einsum, "ij,jk->ik", randn(2, 3, dtype=f32), randn(3, 2, dtype=f32)),
    Case(np.einsum, "ij,jk->ik", randc(2, 3), randc(3, 2)),
    Case(np.einsum, "ii,ij->j", randn(3, 3), randn(3, 2)),
    Case(np.einsum, randn(2, 3), [0, 1], randn(3, 4), [1, 2], [0, 2]),
    Case(np.einsum, "ij,j->i", randn(0, 3), randn(3)),
    # multi_dot
    Case(np.linalg.multi_dot, [randn(3), randn(3, 4), randn(4, 2)]),
    Case(np.linalg.multi_dot, [randn(2, 3), randn(3, 4), randn(4, 2), randn(2)]),
    Case(np.linalg.multi_dot, (randc(2, 3), randc(3, 3))),
]
