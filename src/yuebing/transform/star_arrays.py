"""``f(*array)`` at a call site: a NumPy array unpacked into its elements, as Python unpacks it.

Python iterates the array along its first axis: a 1-d array gives NumPy scalars (values: each
element's cotangent is rdata, added back into the array's fdata at its index), a higher-dimensional
array gives row views (each row's fdata is the same view of the array's fdata, so the gradient
flows through shared memory and the rows' rdata is none). Used by every mode's star expansion
(``runtime``, ``forward_runtime``, ``second_order``).
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..rules.core import CoDual, Dual
from ..tangents import NoFData, NoRData, NoTangent, zero_tangent


def is_star_array(value: Any) -> bool:
    """An array unpacked with ``*`` (a 0-d array is not iterable: Python's TypeError stands). A
    structured array is not one: it is listed as ``list(arr)`` is, its records each with its tangent
    (transform/structured_dispatch.py); split here, its tangent's records were read as numbers."""
    return isinstance(value, np.ndarray) and value.ndim >= 1 and value.dtype.fields is None


def _element_tangent(t: Any, i: int, element: Any) -> Any:
    """The tangent of ``array[i]`` given the array's tangent (a number for a 1-d array, a view
    of the tangent's row otherwise)."""
    if not isinstance(t, np.ndarray):
        return NoTangent if isinstance(element, np.ndarray) and element.dtype.kind not in "fc" else zero_tangent(element)
    if t.ndim == 1:
        return complex(t[i]) if t.dtype.kind == "c" else float(t[i])
    return t[i]


def star_coduals(seq: CoDual) -> list[CoDual]:
    """Reverse mode: a codual per element; a row of a 2-d or higher array shares the array's fdata."""
    x, f = seq.primal, seq.fdata
    if x.ndim >= 2 and isinstance(f, np.ndarray):
        return [CoDual(x[i], f[i]) for i in range(len(x))]
    return [CoDual(x[i], NoFData) for i in range(len(x))]  # numbers (values: rdata routed back), or constants


def route_star_rdata(seq: CoDual, rdatas: list) -> Any:
    """Each element's rdata into the array's fdata at its index (a 1-d float array); rows were
    views of the fdata already. The array's own rdata is none (fdata carries it)."""
    f = seq.fdata
    if seq.primal.ndim == 1 and isinstance(f, np.ndarray):
        for i, r in enumerate(rdatas):
            if r is not NoRData:
                f[i] += r
    return NoRData


def star_duals(seq: Dual) -> list[Dual]:
    """Forward mode: a dual per element, its tangent the element's (or row's) of the array's."""
    x, t = seq.primal, seq.tangent
    return [Dual(x[i], _element_tangent(t, i, x[i])) for i in range(len(x))]


def star_tangents(seq: Any, seq_tangent: Any) -> list:
    """Second order: the value tangent of each element of an unpacked array."""
    return [_element_tangent(seq_tangent, i, seq[i]) for i in range(len(seq))]
