"""NumPy functions that select, place or count values: ``partition`` (and ``ndarray.partition``),
``unique`` (and the array-API ``unique_values``/``unique_counts``/``unique_inverse``/``unique_all``),
``histogram`` and ``histogram_bin_edges``, ``copyto``, ``place``, ``putmask`` and ``piecewise``.
``argpartition`` has zero derivative.

* ``partition``: a permutation of the input read off the primal result (``_partition_source``:
  the stable sort of input and result matched up), applied to the tangent and transposed for the
  cotangent. Second order: selection (the permutation comes from the primal).
* ``unique``: each unique value is the common value of the equal elements that map to it; its
  tangent is their mean and its cotangent is split evenly among them (``np.max``'s convention for
  ties), along ``axis`` too. Indices, inverse and counts have zero derivative. Second order:
  selection.
* ``histogram``/``histogram_bin_edges`` are written in plain NumPy (``_histogram``) and
  differentiated like user code, after NumPy has checked the arguments: the counts have zero
  derivative in the data, ``weights=`` sums are linear in the weights, and the edges (and so a
  ``density=True`` histogram) move with the data's minimum and maximum when they come from it
  (``bins`` a number or an estimator name, no ``range``), with ``range`` or with ``bins`` given as
  edges. Each element is put in the bin NumPy puts it in (``edges[i] <= a < edges[i + 1]``, the
  last bin closed); the values are NumPy's, except weighted sums over given edges, which NumPy
  takes as differences of cumulative sums (equal up to rounding).
* ``copyto``, ``place``, ``putmask`` write into their first argument (the mutation convention):
  each is an assignment ``dst[...] = np.where(where, src, dst)`` / ``arr[positions] = values``,
  differentiated like user code, after NumPy has run the same call on a scratch copy for its own
  errors. ``piecewise`` is NumPy's algorithm written with covered constructs: the functions in
  ``funclist`` are differentiated like user code (a constant is a differentiable value).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoTangent
from .cases import Case, randc, randn
from .core import Dual, primal
from .declare import nondifferentiable, nondifferentiable_methods
from .numpy_arguments import deliver, dense_tangent, forward, refuse, rule
from .numpy_shape import linear_op
from .second_order import defined_as, selection
from .util import fit_tangent, output, tangent

# --------------------------------------------------------------------------------------------
# partition: a permutation read off the result
# --------------------------------------------------------------------------------------------


def _partition_source(x: np.ndarray, y: np.ndarray, axis: int) -> np.ndarray:
    """Indices ``s`` along ``axis`` with ``take_along_axis(x, s) == y`` (``y`` a permutation of
    ``x`` along ``axis``): the k-th smallest of ``y`` comes from the k-th smallest of ``x``."""
    from_x = np.argsort(x, axis=axis, kind="stable")
    rank_in_y = np.argsort(np.argsort(y, axis=axis, kind="stable"), axis=axis, kind="stable")
    return np.take_along_axis(from_x, rank_in_y, axis=axis)


@linear_op(np.partition)
def _partition_spec(a, kth, axis=-1, kind="introselect", order=None):
    refuse("numpy.partition", "order", order, None, "partition a plain float array")
    x = np.asarray(a)
    flat = axis is None
    xs, ax = (x.ravel(), 0) if flat else (x, axis)
    source = _partition_source(xs, np.partition(xs, kth, axis=ax, kind=kind), ax)

    def op(v: Any) -> np.ndarray:
        v = np.asarray(v)
        return np.take_along_axis(v.ravel() if flat else v, source, axis=ax)

    def adjoint(g: np.ndarray) -> np.ndarray:
        gx = np.zeros(source.shape, dtype=g.dtype)
        np.put_along_axis(gx, source, g, axis=ax)
        return gx.reshape(x.shape)

    return op, adjoint


def _partition_in_place(a, kth, axis=-1, kind="introselect", order=None):
    """``a.partition(kth)``: ``np.partition``'s values written back (the same permutation)."""
    a[...] = np.partition(a, kth, axis=axis, kind=kind, order=order)


selection(np.partition)
defined_as((np.ndarray, "partition"), _partition_in_place)
nondifferentiable(np.argpartition)
nondifferentiable_methods(np.ndarray, "argpartition")


# --------------------------------------------------------------------------------------------
# unique: equal elements share their unique value's cotangent
# --------------------------------------------------------------------------------------------


def _unique_parts(x: Any, axis: Any, kw: dict) -> tuple:
    """``(full, inverse, counts)``: NumPy's result with every optional output, the inverse as a
    flat index (of the flattened input, or along ``axis``) and the counts."""
    full = np.unique(x, return_index=True, return_inverse=True, return_counts=True, axis=axis, **kw)
    return full, np.ravel(full[2]), full[3]


def _wanted(full: tuple, return_index: bool, return_inverse: bool, return_counts: bool) -> Any:
    """The outputs the call asked for, as ``np.unique`` returns them."""
    flags = (True, return_index, return_inverse, return_counts)
    picked = tuple(part for part, flag in zip(full, flags) if flag)
    return picked[0] if len(picked) == 1 else picked


def _share_back(g: np.ndarray, inverse: np.ndarray, counts: np.ndarray, shape: tuple, axis: Any) -> np.ndarray:
    """Each unique value's cotangent split evenly among the elements equal to it."""
    if axis is None:
        return (g / counts)[inverse].reshape(shape)
    moved = np.moveaxis(g, axis, 0)
    per = moved / counts.reshape((-1,) + (1,) * (moved.ndim - 1))
    return np.moveaxis(per[inverse], 0, axis)


def _mean_of_equals(t: np.ndarray, inverse: np.ndarray, counts: np.ndarray, axis: Any) -> np.ndarray:
    """Each unique value's tangent: the mean of the tangents of the elements equal to it."""
    moved = np.ravel(t) if axis is None else np.moveaxis(t, axis, 0)
    total = np.zeros((counts.size,) + moved.shape[1:], dtype=moved.dtype)
    np.add.at(total, inverse, moved)
    per = total / counts.reshape((-1,) + (1,) * (moved.ndim - 1))
    return per if axis is None else np.moveaxis(per, 0, axis)


@rule(np.unique)
def _unique_rrule(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    x, ax = np.asarray(primal(ar)), primal(axis)
    full, inverse, counts = _unique_parts(x, ax, {k: primal(v) for k, v in kw.items()})
    out = output(_wanted(full, primal(return_index), primal(return_inverse), primal(return_counts)))

    def pullback(dy: Any) -> tuple:
        g = out.fdata[0] if isinstance(out.fdata, tuple) else out.fdata  # NoFData: ints, nothing to send
        if not isinstance(g, np.ndarray):
            return ()
        return (deliver(ar, _share_back(g, inverse, counts, x.shape, ax)),)

    return out, pullback


@forward(np.unique)
def _unique_frule(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kw):
    x, ax = np.asarray(primal(ar)), primal(axis)
    full, inverse, counts = _unique_parts(x, ax, {k: primal(v) for k, v in kw.items()})
    y = _wanted(full, primal(return_index), primal(return_inverse), primal(return_counts))
    t = dense_tangent(x, tangent(ar))
    u = full[0]
    tu = fit_tangent(NoTangent if t is None else _mean_of_equals(np.asarray(t), inverse, counts, ax), u)
    if not isinstance(y, tuple):
        return Dual(y, tu)
    return Dual(y, type(y)((tu,) + (NoTangent,) * (len(y) - 1)))


selection(np.unique)


def _unique_values(x):
    """``np.unique_values`` (NumPy's own code: the unique values, unsorted, NaNs kept apart)."""
    return np.unique(x, equal_nan=False, sorted=False)


def _unique_counts(x):
    """``np.unique_counts``, as NumPy writes it."""
    values, counts = np.unique(x, return_counts=True, equal_nan=False, sorted=False)
    return np.lib._arraysetops_impl.UniqueCountsResult(values, counts)


def _unique_inverse(x):
    """``np.unique_inverse``, as NumPy writes it (the inverse has the input's shape)."""
    values, inverse = np.unique(x, return_inverse=True, equal_nan=False, sorted=False)
    return np.lib._arraysetops_impl.UniqueInverseResult(values, np.reshape(inverse, np.shape(x)))


def _unique_all(x):
    """``np.unique_all``, as NumPy writes it."""
    values, indices, inverse, counts = np.unique(x, True, True, True, equal_nan=False, sorted=False)
    return np.lib._arraysetops_impl.UniqueAllResult(values, indices, np.reshape(inverse, np.shape(x)), counts)


for _target, _definition in ((np.unique_values, _unique_values), (np.unique_counts, _unique_counts),
                             (np.unique_inverse, _unique_inverse), (np.unique_all, _unique_all)):
    defined_as(_target, _definition, validate=True)


# --------------------------------------------------------------------------------------------
# histogram: counts located on the primal, edges and weights differentiated
# --------------------------------------------------------------------------------------------


def _bin_count(a: Any, bins: Any, range: Any, weights: Any) -> int:  # noqa: A002 - NumPy's name
    """The number of equal bins NumPy makes (for ``bins`` a number or an estimator name)."""
    return np.histogram_bin_edges(a, bins, range, weights).size - 1


def _bin_numbers(a: Any, edges: Any) -> np.ndarray:
    """The bin of each element of flat ``a`` (-1 outside ``edges``): ``edges[i] <= a < edges[i+1]``,
    the last bin closed, as NumPy counts."""
    which = np.searchsorted(edges, a, side="right") - 1
    which[a == edges[-1]] = edges.size - 2
    which[~((a >= edges[0]) & (a <= edges[-1]))] = -1
    return which


def _bin_totals(which: np.ndarray, n: int) -> np.ndarray:
    """How many elements fall in each of the ``n`` bins (NumPy's integer counts)."""
    return np.bincount(which[which >= 0], minlength=n)


def _edge_dtype(a: Any) -> Any:
    kind = np.result_type(a, 0.0)
    return np.float64 if np.issubdtype(kind, np.integer) else kind


nondifferentiable(_bin_count, _bin_numbers, _bin_totals, _edge_dtype)


def _histogram_bin_edges(a, bins=10, range=None, weights=None):  # noqa: A002 - NumPy's names
    """``np.histogram_bin_edges``: ``bins`` itself when it is the edges, else equal bins from the
    data's minimum and maximum (or ``range``), one half beyond each when they are equal."""
    a = np.ravel(a)
    if np.ndim(bins) == 1:
        return np.asarray(bins)
    n = _bin_count(a, bins, range, weights)
    if range is not None:
        first, last = range[0], range[1]
    elif a.size == 0:
        first, last = 0.0, 1.0
    else:
        first, last = np.min(a), np.max(a)
    if first == last:
        first, last = first - 0.5, last + 0.5
    return np.linspace(first, last, n + 1, endpoint=True, dtype=_edge_dtype(a))


def _histogram(a, bins=10, range=None, density=None, weights=None):  # noqa: A002 - NumPy's names
    """``np.histogram``: counts (or ``weights`` sums) per bin, normalised when ``density``."""
    edges = _histogram_bin_edges(a, bins, range, weights)
    a = np.ravel(a)
    which = _bin_numbers(a, edges)
    if weights is None:
        hist = _bin_totals(which, edges.size - 1)
    else:
        inside = which >= 0
        w = np.ravel(weights)
        hist = np.zeros(edges.size - 1, dtype=np.result_type(w, 0.0))
        np.add.at(hist, which[inside], w[inside])
    if density:
        return hist / np.diff(edges) / np.sum(hist), edges
    return hist, edges


defined_as(np.histogram, _histogram, validate=True)
defined_as(np.histogram_bin_edges, _histogram_bin_edges, validate=True)


# --------------------------------------------------------------------------------------------
# copyto, place, putmask: writes, checked by NumPy on a scratch copy
# --------------------------------------------------------------------------------------------


def _check_write(fn: Any, dst: Any, *rest: Any, **kw: Any) -> None:
    """NumPy's own errors for writing into ``dst``, from the same call on a copy."""
    if not isinstance(dst, np.ndarray):
        raise TypeError(f"{fn.__name__} argument 1 must be numpy.ndarray, not {type(dst).__name__}")
    fn(dst.copy(), *rest, **kw)


def _flat_plan(arr: Any, mask: Any, vals: Any, cycle_by_position: bool) -> tuple:
    """Where ``place``/``putmask`` write (a multi-index of ``arr``) and which flat element of
    ``vals`` each place gets: the k-th written place the k-th value (``place``) or position ``n``
    value ``n`` (``putmask``), cycling through ``vals``."""
    flat = np.flatnonzero(np.ravel(mask))
    size = np.size(vals)
    which = (flat if cycle_by_position else np.arange(flat.size)) % max(size, 1)
    return np.unravel_index(flat, np.shape(arr)), which


nondifferentiable(_check_write, _flat_plan)


def _copyto(dst, src, casting="same_kind", where=True):
    """``np.copyto``: ``dst`` takes ``src`` (broadcast) where ``where`` holds."""
    _check_write(np.copyto, dst, src, casting=casting, where=where)
    dst[...] = np.where(where, src, dst)  # a fresh array: src may overlap dst


def _place(arr, mask, vals):
    """``np.place``: the places where ``mask`` holds take ``vals`` in order, cycling."""
    _check_write(np.place, arr, mask, vals)
    places, which = _flat_plan(arr, mask, vals, False)
    if which.size:
        arr[places] = np.ravel(vals)[which]


def _putmask(a, mask, values):
    """``np.putmask``: ``a.flat[n] = values.flat[n % values.size]`` where ``mask.flat[n]``."""
    _check_write(np.putmask, a, mask, values)
    places, which = _flat_plan(a, mask, values, True)
    if which.size:
        a[places] = np.ravel(values)[which]


defined_as(np.copyto, _copyto)
defined_as(np.place, _place)
defined_as(np.putmask, _putmask)


# --------------------------------------------------------------------------------------------
# piecewise: NumPy's algorithm, the functions differentiated like user code
# --------------------------------------------------------------------------------------------


def _conditions(x: np.ndarray, condlist: Any, n_functions: int) -> np.ndarray:
    """``condlist`` as NumPy's ``piecewise`` reads it: a bool array with one condition per
    function, the "otherwise" condition added when there is one function more."""
    if np.isscalar(condlist) or (not isinstance(condlist[0], (list, np.ndarray)) and x.ndim != 0):
        condlist = [condlist]
    conds = np.asarray(condlist, dtype=bool)
    if len(conds) == n_functions - 1:
        conds = np.concatenate([conds, ~np.any(conds, axis=0, keepdims=True)], axis=0)
    elif len(conds) != n_functions:
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or {len(conds) + 1} functions are expected")
    return conds


nondifferentiable(_conditions)


def _piecewise(x, condlist, funclist, *args, **kw):
    """``np.piecewise``: each function (or constant) fills the places of its condition, later
    conditions overwriting earlier ones."""
    x = np.asanyarray(x)
    conds = _conditions(x, condlist, len(funclist))
    y = np.zeros_like(x)
    for k in range(len(funclist)):
        cond = conds[k]
        func = funclist[k]
        if not callable(func):
            y[cond] = func
        else:
            vals = x[cond]
            if vals.size > 0:
                y[cond] = func(vals, *args, **kw)
    return y


defined_as(np.piecewise, _piecewise)


# --------------------------------------------------------------------------------------------
# Cases
# --------------------------------------------------------------------------------------------


def _copy_into(dst, src):
    np.copyto(dst, src)


def _copy_where(dst, src):
    np.copyto(dst, src, where=np.array([True, False, True]))


def _place_into(arr, vals):
    np.place(arr, np.array([[True, False, True], [False, True, True]]), vals)


def _putmask_into(a, values):
    np.putmask(a, np.array([[True, False, True], [False, True, True]]), values)


def _pieces(x, c):
    return np.piecewise(x, [x < -0.5, x > 0.5], [lambda v: v ** 2, lambda v: np.sin(v) * c, c])


def _unique_with_counts(x):
    values, counts = np.unique(x, return_counts=True)
    return values * counts


def _weighted_histogram(w, a):
    return np.histogram(a, bins=4, weights=w)[0]


def _density(a):
    return np.histogram(a, bins=5, density=True)


CASES = [
    # partition
    Case(np.partition, randn(7), 3),
    Case(np.partition, randn(7), (1, 4)),
    Case(np.partition, randn(3, 5), 2, kwargs={"axis": 0}),
    Case(np.partition, randn(3, 5), 2, kwargs={"axis": None}),
    Case(np.partition, randn(6, dtype=np.float32), 2),
    Case(np.ndarray.partition, randn(6), 2),
    Case(np.ndarray.partition, randn(3, 4), 1, 0),
    # unique
    Case(np.unique, randn(6)),
    Case(np.unique, randn(3, 4), kwargs={"return_counts": True, "return_inverse": True}),
    Case(np.unique, randn(4, 3), kwargs={"axis": 0}),
    Case(np.unique, randn(3, 4), kwargs={"axis": 1, "return_inverse": True}),
    Case(np.unique, randc(5)),
    Case(np.unique_values, randn(5)),
    Case(np.unique_all, randn(5)),
    Case(_unique_with_counts, randn(6)),
    # histogram
    Case(np.histogram, randn(20)),
    Case(np.histogram, randn(20), kwargs={"bins": "auto"}),
    Case(np.histogram, randn(20), np.array([-3.0, -0.5, 0.0, 1.0, 3.0])),
    Case(np.histogram, randn(30), kwargs={"bins": 4, "range": (-1.0, 1.0), "density": True}),
    Case(_weighted_histogram, randn(20), np.round(randn(20), 1), name="numpy.histogram(weights=)"),
    Case(_density, randn(20), name="numpy.histogram(density=True)"),
    Case(np.histogram_bin_edges, randn(10), kwargs={"bins": 3}),
    # writes
    Case(np.copyto, randn(3), randn(3)),
    Case(np.copyto, randn(2, 3), randn(3)),
    Case(_copy_into, randn(2, 3), randn(), name="numpy.copyto(float)"),
    Case(_copy_where, randn(3), randn(3), name="numpy.copyto(where=)"),
    Case(np.copyto, randc(3), randc(3)),
    Case(_place_into, randn(2, 3), randn(2), name="numpy.place(cycling values)"),
    Case(_putmask_into, randn(2, 3), randn(2), name="numpy.putmask(cycling values)"),
    Case(_putmask_into, randn(2, 3), randn(2, 3), name="numpy.putmask"),
    Case(np.putmask, randc(4), np.array([True, False, True, True]), randc(4)),
    # piecewise
    Case(_pieces, randn(8), randn(), name="numpy.piecewise(functions and a constant)"),
    Case(np.piecewise, randn(5), randn(5) > 0, [np.sin, np.cos]),
    Case(np.piecewise, randn(2, 3), [randn(2, 3) > 0], [np.exp]),
]
