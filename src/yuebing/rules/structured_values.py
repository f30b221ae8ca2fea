"""Values written into structured arrays, and the derivatives that go back to them.

A structured array's tangent is a structured array of the same dtype (``tangents/structured.py``,
docs/tangents.md "Structured arrays"). Writing a value into a structured region (a record
``arr[0] = (x, "b")``, rows ``arr[:2] = [(x, 1.0), (y, 2.0)]``, the whole array from another,
``np.array([(x, 1.0)], dtype=dt)``) follows NumPy's reading of the value: a tuple is one record
(its items fill the fields in order, a nested tuple a nested structure), a list is an axis, a
number or a plain array fills every field of each record. The forward tangent of the region is
the value with each number replaced by its tangent, written the same way; the cotangent of the
value is the region's cotangent read back the same way (summed where NumPy broadcast).

This module registers no rule: ``indexing/common.py`` and ``numpy_creation.py`` call it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import NoTangent
from ..tangents import structured as S
from .util import add_cotangent, unbroadcast, unbroadcast_structured  # noqa: F401 (add_cotangent: its name here)

_LABELS = (bool, int, np.integer, np.bool_)


def carries(y: Any) -> bool:
    """Whether ``y`` is a structured array or record with float fields (it has a tangent)."""
    return S.carries_derivative(y)


def region_tangent(region: Any, value: Any, t: Any) -> Any:
    """Forward mode: the tangent of structured ``region`` after ``region[...] = value``, where
    ``t`` is the value's tangent; its non-float fields are zero."""
    out = np.zeros(np.shape(S.as_array(region)), region.dtype)
    out[...] = _tangent_as_value(value, t)
    S.zero_labels(out)
    return out[()] if isinstance(region, np.void) else out


def _tangent_as_value(value: Any, t: Any) -> Any:
    """``value`` with each number replaced by its tangent (ints by 0), labels kept, so that
    NumPy writes it as it wrote ``value``."""
    if isinstance(value, (float, complex, np.inexact)):
        return 0.0 if t is NoTangent else t
    if isinstance(value, _LABELS):
        return 0
    if S.is_structured(value):
        return t if S.is_structured(t) else S.zeros_like(value)
    if isinstance(value, np.ndarray):
        if value.dtype.kind in "fc":
            return t if isinstance(t, np.ndarray) else np.zeros(value.shape)
        return np.zeros(value.shape) if value.dtype.kind in "iub" else value
    if isinstance(value, (tuple, list)):  # (a namedtuple is written as a plain tuple)
        ts = t if isinstance(t, (tuple, list)) and len(t) == len(value) else [NoTangent] * len(value)
        items = [_tangent_as_value(v, tv) for v, tv in zip(value, ts)]
        return items if isinstance(value, list) else tuple(items)
    return value


def cotangent_as_value(g: Any, value: Any) -> Any:
    """Reverse mode: the cotangent of ``value`` written into a structured region whose cotangent
    is ``g`` (structured, the region's shape), shaped as ``value`` is: a structured array for a
    structured value, a tuple for a record, a list for an axis, the fields' sum for a number or
    a plain array (NumPy wrote it into every field)."""
    g = S.as_array(g)
    if S.is_structured(value):
        return unbroadcast_structured(g, np.shape(S.as_array(value)))
    if isinstance(value, tuple):  # one record, written into every record of the region
        return tuple(_field_cotangent(g[name], item) for name, item in zip(g.dtype.names, value))
    if isinstance(value, list):  # an axis of records (broadcast when it has length 1)
        g = unbroadcast_structured(g, _axes(value))
        return [cotangent_as_value(g[i], item) for i, item in enumerate(value)]
    total = sum(np.sum(field, axis=tuple(range(g.ndim, field.ndim))) for field in S.float_fields(g))
    return unbroadcast(np.asarray(total), np.shape(value))


def _axes(value: list) -> tuple:
    """The array shape a (nested) list of records stands for (tuples are records)."""
    shape = []
    while isinstance(value, list):
        shape.append(len(value))
        value = value[0] if value else None
    return tuple(shape)


def _field_cotangent(g_field: np.ndarray, item: Any) -> Any:
    """The cotangent of ``item``, written into one field of every record (``g_field``)."""
    if g_field.dtype.fields is not None:
        return cotangent_as_value(g_field, item)
    if g_field.dtype.kind not in "fc":
        return np.zeros(np.shape(item)) if isinstance(item, (list, np.ndarray)) else 0.0
    return unbroadcast(g_field, np.shape(item))


def field_pairs(f: Any, g: Any) -> list:
    """The float fields of structured ``f`` and ``g``, paired."""
    return list(zip(S.float_fields(f), S.float_fields(g)))


def without_markers(value: Any) -> Any:
    """``value`` with ``NoTangent`` replaced by 0: in second order the tangent call writes the
    tangent of a record, whose labels (``(x, 3, "name")``) have none, into the tangent array."""
    if value is NoTangent:
        return 0
    if type(value) in (tuple, list) and any(v is NoTangent or type(v) in (tuple, list) for v in value):
        return type(value)(without_markers(v) for v in value)
    return value


def batched_field(x: Any, t: Any, index: Any) -> bool:
    """Whether ``x[index]`` reads a float field of structured ``x`` whose tangent ``t`` has the
    batch axis of a batched forward pass: ``t[index]`` is then that field of every direction."""
    if not (type(x) is np.ndarray and S.carries_derivative(x) and type(t) is np.ndarray and t.ndim == x.ndim + 1):
        return False
    if not isinstance(index, str) or index not in x.dtype.names:
        return False
    return x.dtype.fields[index][0].base.kind in "fc"


def is_read_only_structured(a: Any) -> bool:
    """Whether ``a`` is a read-only structured array with float fields, or a field, record or view
    of one (a global table, a constant of the differentiation): the public face says why a write
    into it failed."""
    if not isinstance(a, (np.ndarray, np.void)) or a.flags.writeable:
        return False
    root = a
    while isinstance(getattr(root, "base", None), (np.ndarray, np.void)):
        root = root.base
    return S.carries_derivative(root)


def records_as_lists(a: Any) -> Any:
    """``a.tolist()`` of a structured array (or record), as Python code that differentiated code
    runs from its source: nested lists of records, each a tuple of its fields' values (a nested
    structure a tuple, a sub-array field a list)."""
    if isinstance(a, np.void):
        return tuple(_field_as_value(a[name]) for name in a.dtype.names)
    return [records_as_lists(row) for row in a]


def _field_as_value(v: Any) -> Any:
    if isinstance(v, (np.ndarray, np.void)) and v.dtype.names is not None:
        return records_as_lists(v)
    return v.tolist() if isinstance(v, np.ndarray) else v.item()


def record_fields(row: np.void) -> tuple:
    """A record unpacked field by field (``for (w, c), v in zip(table, x)``), as Python code that
    differentiated code runs from its source: each field read by position, with its derivative.
    ``tuple(row)`` runs as this too, and ``tuple(arr)`` of a structured array (its records)."""
    return tuple([row[i] for i in range(len(row))])


def listed_items(a: Any) -> list:
    """``list(a)`` of a record (its fields) or a structured array (its records, or sub-arrays),
    as Python code that differentiated code runs from its source: each item read by position,
    with its derivative (``f(*record)`` lists the record so)."""
    return [a[i] for i in range(len(a))]


def walked_listing(walk: Any, listed: tuple, *args: Any, **kwargs: Any) -> Any:
    """``walk(*args, **kwargs)`` (``zip``, ``enumerate``, ``reversed``, ``map``, ``filter``) with the
    structured arrays at positions ``listed`` listed first (``listed_items``): those rules split
    an array's tangent into numbers, so a record's derivative would be lost."""
    return walk(*[listed_items(a) if k in listed else a for k, a in enumerate(args)], **kwargs)
