"""The tangent type of structured arrays and their records (docs/tangents.md, "Structured arrays").

A structured array (``np.zeros(n, dtype=[("a", float), ("n", int)])``) with at least one float or
complex field, at any depth (a nested structure, a sub-array field ``("v", float, (3,))``), has
as its tangent a structured array of the same shape and the *same dtype*: its float and complex
fields hold the derivatives, its other fields (ints, strings, bools...) hold zeros that no
operation reads or writes. Keeping the dtype, and so the byte layout, makes every view of the
primal (``arr["a"]``, ``arr[1:]``, a record ``arr[0]``) the same view of the tangent, so rules
index a tangent with the primal's index. A record (``np.void``, what ``arr[0]`` or ``for row in
arr`` gives) has an ``np.void`` of the same dtype as its tangent; a record read from an array is a
view of it, and its tangent the same view of the array's tangent.

Tangent arithmetic runs field by field on the float leaves (NumPy has no ``+`` for structured
dtypes); a record is handled as the 0-d array view ``np.asarray(record)`` of its memory.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def has_float_fields(dtype: np.dtype) -> bool:
    """Whether structured ``dtype`` holds a float or complex field at any depth."""
    if dtype.fields is None:
        return dtype.base.kind in "fc"
    return any(has_float_fields(dtype.fields[name][0]) for name in dtype.names)


def is_structured(x: Any) -> bool:
    """Whether ``x`` is a structured array or record (a dtype with fields)."""
    return isinstance(x, (np.ndarray, np.void)) and x.dtype.fields is not None


def carries_derivative(x: Any) -> bool:
    """Whether structured ``x`` (array or record) has a tangent: a float field somewhere."""
    return is_structured(x) and has_float_fields(x.dtype)


def as_array(x: Any) -> np.ndarray:
    """``x`` as an ndarray sharing its memory (a record becomes the 0-d view of it)."""
    return np.asarray(x) if isinstance(x, np.void) else x


def float_fields(a: Any) -> list[np.ndarray]:
    """The float and complex leaf fields of structured ``a`` as views of its memory, in dtype
    order (a sub-array field's view has the extra axes)."""
    return [v for v in _leaf_fields(a) if v.dtype.kind in "fc"]


def zero_labels(a: Any) -> None:
    """Zero the fields of structured ``a`` that are not float (a tangent's are never read)."""
    for v in _leaf_fields(a):
        if v.dtype.kind not in "fc":
            v[...] = np.zeros((), v.dtype)


def _leaf_fields(a: Any) -> list[np.ndarray]:
    found, stack = [], [as_array(a)]
    while stack:
        v = stack.pop()
        if v.dtype.fields is None:
            found.append(v)
        else:
            stack.extend(v[name] for name in reversed(v.dtype.names))
    return found


def field_values(a: Any) -> np.ndarray:
    """The values of ``a``'s float fields, each raveled, one after another (``yb.flatten``)."""
    fields = float_fields(a)
    return np.concatenate([np.ravel(f) for f in fields]) if fields else np.zeros(0)


def from_field_values(like: Any, values: np.ndarray) -> Any:
    """A structured value like ``like`` (zeros elsewhere) whose float fields hold ``values``, in
    ``field_values``' order."""
    out, offset = zeros_like(like), 0
    for field in float_fields(out):
        field[...] = np.reshape(values[offset:offset + field.size], field.shape)
        offset += field.size
    return out


def zeros_like(x: Any) -> Any:
    """The zero tangent of structured array or record ``x`` (same shape and dtype)."""
    if isinstance(x, np.void):
        return np.zeros((), x.dtype)[()]
    return np.zeros(x.shape, x.dtype)


def _like(x: Any, array: np.ndarray) -> Any:
    return array[()] if isinstance(x, np.void) else array


def mapped(leaf: Callable[..., Any], *operands: Any) -> Any:
    """A new structured value shaped like ``operands[0]`` whose float fields are
    ``leaf(*the operands' fields)``; its other fields are zero."""
    out = np.zeros(np.shape(as_array(operands[0])), operands[0].dtype)
    columns = [float_fields(out)] + [float_fields(o) for o in operands]
    for target, *sources in zip(*columns):
        target[...] = leaf(*sources)
    return _like(operands[0], out)


def add_into(target: Any, source: Any) -> None:
    """``target += source`` field by field, in place."""
    for t, s in zip(float_fields(target), float_fields(source)):
        t += s


def set_zero(target: Any) -> None:
    for t in float_fields(target):
        t[...] = 0


def inner(a: Any, b: Any) -> float:
    """The real inner product of two structured tangents (sum over their float fields)."""
    return float(sum(np.vdot(x, y).real for x, y in zip(float_fields(a), float_fields(b))))


def random_like(rng: np.random.Generator, x: Any) -> Any:
    """A tangent of ``x`` with standard normal float fields (complex: both parts)."""
    def draw(field: np.ndarray) -> np.ndarray:
        t = rng.standard_normal(field.shape)
        return t + 1j * rng.standard_normal(field.shape) if field.dtype.kind == "c" else t

    return mapped(draw, x)


def copied(x: Any) -> Any:
    """A copy of structured array or record ``x`` owning its memory."""
    return _like(x, np.array(as_array(x), copy=True))


def moved(x: Any, t: Any, scale: float) -> Any:
    """A copy of ``x`` with ``scale * t`` added to its float fields (its other fields copied)."""
    out = np.array(as_array(x), copy=True)
    for field, step in zip(float_fields(out), float_fields(t)):
        field += scale * step
    return _like(x, out)


def difference(x: Any, y: Any) -> Any:
    """The tangent ``x - y`` of two structured values of the same dtype (equal entries exact 0)."""
    def subtract(a: np.ndarray, b: np.ndarray) -> np.ndarray:
        with np.errstate(invalid="ignore"):
            return np.where(a == b, 0, a - b)

    return mapped(subtract, x, y)


def same_structure(a: Any, b: Any) -> bool:
    """Whether ``b`` can be a tangent of (or be added to) structured ``a``: same shape and dtype."""
    return is_structured(b) and b.dtype == a.dtype and np.shape(as_array(a)) == np.shape(as_array(b))


def close(a: Any, b: Any, rtol: float, atol: float) -> bool:
    """Whether structured ``a`` and ``b`` of one dtype agree: float fields within tolerance (NaN
    equal to NaN), the other fields exactly."""
    if a.dtype != b.dtype or np.shape(as_array(a)) != np.shape(as_array(b)):
        return False
    if not _labels_equal(a, b):
        return False
    return all(np.allclose(u, v, rtol=rtol, atol=atol, equal_nan=True) for u, v in zip(float_fields(a), float_fields(b)))


def _labels_equal(a: Any, b: Any) -> bool:
    """Whether the non-float fields of ``a`` and ``b`` are equal."""
    stack = [(as_array(a), as_array(b))]
    while stack:
        u, v = stack.pop()
        if u.dtype.fields is not None:
            stack.extend((u[name], v[name]) for name in u.dtype.names)
        elif u.dtype.kind not in "fc" and not np.array_equal(u, v):
            return False
    return True
