"""The tangent type of object-dtype arrays holding float data (docs/tangents.md, "Object arrays").

An object-dtype ndarray whose elements carry derivatives (floats, float arrays, lists or objects
holding them) has as its tangent an object-dtype ndarray of the same shape holding each element's
tangent, as a list's tangent is a list: a float element's slot is a float, an array element's slot
is that array's tangent (one tangent per array however often it is stored), a label (None, a
string, an int) has ``NoTangent``. The tangent is identity data (fdata): one tangent array per
primal array, changed in place. A view of an object array made in the function (``a[1:]``, ``a.T``)
has the same view of the tangent as its tangent, as a float array's has.

An object array of labels only (``np.array([[None] * n]).T``) passed in carries no derivative
(``NoTangent``); one made in the function always has a tangent, since floats may be written into
it later.
"""
from __future__ import annotations

from typing import Any, Iterable

import numpy as np

OBJECT_ARRAY = "object array"


def is_object_array(x: Any) -> bool:
    """Whether ``x`` is an exact ndarray of object dtype."""
    return type(x) is np.ndarray and x.dtype.kind == "O"


def elements(a: np.ndarray) -> list:
    """The elements of object array ``a`` in C order (the keys of its tangent are their positions)."""
    return list(a.flat)


def tangent_shell(a: np.ndarray) -> np.ndarray:
    """An object array shaped like ``a`` holding nothing yet (filled by ``fill``)."""
    return np.empty(a.shape, dtype=object)


def fill(shell: np.ndarray, values: Iterable) -> np.ndarray:
    """Store ``values`` into object array ``shell`` in C order, each as one element (an array
    stays one element: NumPy would spread a sequence over a slice); ``shell`` may be a view."""
    for index, v in zip(np.ndindex(shell.shape), values):
        shell[index] = v
    return shell


def write_back(target: np.ndarray, values: list) -> np.ndarray:
    """``fill`` touching only the positions whose value changed (identity kept elsewhere)."""
    for index, v in zip(np.ndindex(target.shape), values):
        if target[index] is not v:
            target[index] = v
    return target
