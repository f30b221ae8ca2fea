"""numpy.ma masked arrays reaching NumPy's joins, ``np.where``, ``np.diff`` and ``np.sort``.

NumPy's own functions treat a masked array each in their way, and each is defined here as NumPy
computes it, over ``numpy_masked.py``'s primitives (``_like`` says what NumPy returns):

* ``np.where(c, x, y)`` and the joins (``np.concatenate``, ``np.stack``, ``np.vstack``,
  ``np.hstack``, ``np.column_stack``, ``np.dstack``, ``np.append``) read the data and drop the
  masks: ``np.where`` returns a plain array, a join a masked array with nothing masked. So the
  data under a mask reaches the result, with its derivative. ``np.ma.where`` and
  ``np.ma.concatenate``, which keep the masks, are the same data with numpy.ma's mask.
* ``np.diff(m)`` (and ``np.ma.diff``) runs NumPy's algorithm: ``np.subtract`` of two slices ``n``
  times (masked where either entry is), after joining ``prepend``/``append`` (which drops the mask).
* ``np.sort(m)`` and ``np.ma.sort(m)`` sort a copy: the data taken along the order
  ``MaskedArray.argsort`` gives (masked entries last), the mask NumPy's. ``m.sort()`` moves the
  mask in place, which earlier operations may still read: refused, advising ``m = np.sort(m)``.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .core import RuleArgumentError
from .declare import nondifferentiable
from .numpy_masked import AWARE, DEFINITIONS, FORM_FINDERS, MaskedArray, _data, _data_of, _finish, _like
from .second_order import defined_as


def _normal_axis(axis: int, ndim: int) -> int:
    return axis % ndim  # (out of range: NumPy's own call raised first)


def _sort_order(a: Any, axis: int, kind: Any, order: Any, endwith: Any, fill_value: Any, stable: Any) -> np.ndarray:
    """The order ``MaskedArray.sort`` puts ``a`` in along ``axis`` (its ``argsort``)."""
    return np.ma.asanyarray(a).argsort(axis=axis, kind=kind, order=order, endwith=endwith, fill_value=fill_value,
                                       stable=stable)


def _sort_options(fn: Callable, endwith: Any, fill_value: Any, stable: Any) -> dict:
    """The keywords ``fn`` (``np.sort`` or ``np.ma.sort``) takes beyond the order's."""
    options = {} if fn is np.sort else {"endwith": endwith, "fill_value": fill_value}
    return options if stable is None else {**options, "stable": stable}


def _along(axis: int, ndim: int, part: slice) -> tuple:
    return (slice(None),) * axis + (part,) + (slice(None),) * (ndim - axis - 1)


nondifferentiable(_normal_axis, _sort_order, _sort_options, _along)


def _joined(fn: Callable) -> Callable:
    """A join of arrays (``np.concatenate([m, x])``): ``fn`` of their data, as NumPy returns it."""
    def joined(arrays: Any, *args: Any, **kwargs: Any) -> Any:
        like = _like(fn, arrays, *args, **kwargs)
        return _finish(fn([_data_of(a) for a in arrays], *args, **kwargs), like)

    joined.__qualname__ = f"{fn.__name__} of masked arrays"
    return joined


def _appended(arr: Any, values: Any, axis: Any = None) -> Any:
    """``np.append(m, values)``: NumPy joins the two (flattened without an axis)."""
    if axis is None:
        return np.concatenate((np.ravel(arr), np.ravel(values)), axis=0)
    return np.concatenate((arr, values), axis=axis)


def _numpy_where(condition: Any, *choices: Any) -> Any:
    """``np.where(c, x, y)``: NumPy reads each array's data (a plain array results)."""
    like = _like(np.where, condition, *choices)
    return _finish(np.where(_data_of(condition), *[_data_of(c) for c in choices]), like)


def _masked_where(condition: Any, x: Any = np._NoValue, y: Any = np._NoValue) -> Any:
    """``np.ma.where(c, x, y)``: ``np.where`` of the data (a masked condition counts as False),
    masked where numpy.ma masks it."""
    like = _like(np.ma.where, condition, x, y)
    if x is np._NoValue:
        return like.value  # (the indices: no derivative)
    chosen = np.ma.filled(condition, False)
    return _finish(np.where(_data_of(chosen), _data_of(x), _data_of(y)), like)


def _masked_concatenate(arrays: Any, axis: int = 0) -> Any:
    """``np.ma.concatenate``: the data joined, the masks joined."""
    like = _like(np.ma.concatenate, arrays, axis)
    return _finish(np.concatenate([_data_of(a) for a in arrays], axis=axis), like)


def _edge(value: Any, a: Any, axis: int) -> Any:
    """``prepend``/``append`` of ``np.diff``: a number broadcast to one slice along ``axis``."""
    if np.ndim(value) == 0:
        shape = list(np.shape(a))
        shape[axis] = 1
        return np.broadcast_to(value, tuple(shape))
    return value


def _masked_diff(a: Any, n: int = 1, axis: int = -1, prepend: Any = np._NoValue, append: Any = np._NoValue) -> Any:
    """``np.diff(m)``: NumPy's algorithm on the masked array (``np.subtract`` of slices)."""
    _like(np.diff, a, n, axis, prepend, append)  # (NumPy's own errors)
    a = np.ma.asanyarray(a)
    axis = _normal_axis(axis, a.ndim)
    joined = [_edge(prepend, a, axis)] if prepend is not np._NoValue else []
    joined = joined + [a] + ([_edge(append, a, axis)] if append is not np._NoValue else [])
    if len(joined) > 1:
        a = np.concatenate(joined, axis=axis)
    for _ in range(n):
        a = np.subtract(a[_along(axis, a.ndim, slice(1, None))], a[_along(axis, a.ndim, slice(None, -1))])
    return a


def _sorted(fn: Callable) -> Callable:
    """``np.sort(m)``, ``np.ma.sort(m)``: a sorted copy (``axis=None``: of the flattened array)."""
    def sorted_copy(a: Any, axis: Any = -1, kind: Any = None, order: Any = None, endwith: Any = True,
                    fill_value: Any = None, *, stable: Any = None) -> Any:
        like = _like(fn, a, axis, kind, order, **_sort_options(fn, endwith, fill_value, stable))
        a = np.ma.asanyarray(a)
        if axis is None:
            a, axis = a.ravel(), -1
        taken = _sort_order(a, axis, kind, order, endwith, fill_value, bool(stable))
        return _finish(np.take_along_axis(_data(a), taken, axis=axis), like)

    sorted_copy.__qualname__ = f"{fn.__module__}.{fn.__name__} of a masked array"
    return sorted_copy


def _sort_in_place(self: MaskedArray, *args: Any, **kwargs: Any) -> None:
    raise RuleArgumentError(
        "numpy.ma.MaskedArray.sort: yuebing does not differentiate sorting a masked array in place (it moves the "
        "mask, which earlier operations may still read); sort a copy instead: m = np.sort(m)")


_JOINS = (np.concatenate, np.stack, np.vstack, np.hstack, np.column_stack, np.dstack)
_NUMPY_FORMS: dict[Any, Callable] = {**{fn: _joined(fn) for fn in _JOINS}, np.append: _appended,
                                     np.where: _numpy_where, np.diff: _masked_diff, np.sort: _sorted(np.sort)}


def _masked_inside(value: Any) -> bool:
    return isinstance(value, MaskedArray) or isinstance(value, (list, tuple)) and any(
        isinstance(e, MaskedArray) for e in value)


def _numpy_form_of(fn: Any, values: list, kwargs: dict) -> Callable | None:
    """The definition of NumPy's join, ``np.where``, ``np.diff`` or ``np.sort`` given a masked
    array (or a list holding one) among its positional arguments, or None."""
    try:
        found = _NUMPY_FORMS.get(fn)
    except TypeError:  # an unhashable callable
        return None
    if found is None or not any(_masked_inside(v) for v in values):
        return None
    return found


FORM_FINDERS.append(_numpy_form_of)

MASKED_DEFINITIONS: dict[Any, Callable] = {
    np.ma.where: _masked_where, np.ma.concatenate: _masked_concatenate, np.ma.diff: _masked_diff,
    np.ma.sort: _sorted(np.ma.sort), MaskedArray.sort: _sort_in_place,
}
for _target, _definition in MASKED_DEFINITIONS.items():
    defined_as(_target, _definition)
DEFINITIONS.update(MASKED_DEFINITIONS)
AWARE.update(MASKED_DEFINITIONS)
AWARE.update(_NUMPY_FORMS.values())
