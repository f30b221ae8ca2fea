"""Third order of NumPy selections (``np.unique``): their forward derivatives written as NumPy code.

Third order (``transform/third_order.py``) does not lift the ``selection`` class (a choice of the
input's values by their order); ``np.unique`` is given here its value and tangent instead
(``jvp_defined_by``: each argument followed by its tangent), the first-order rule's: each unique
value's tangent is the mean of the tangents of the elements equal to it. The mean is taken by a
constant averaging matrix, so the tangent is linear in the input's, and its second order, which
third order takes like user code's, follows. NumPy's set routines (``union1d``, ``intersect1d``,
``setdiff1d``, ``setxor1d``), derived from NumPy's source, call it.
"""
from __future__ import annotations

import numpy as np

from ..tangents import NoTangent
from .second_order import jvp_defined_by


def _averaging(inverse, counts):
    """The matrix taking the elements' tangents (flat, or along the axis) to each unique value's:
    row ``k`` averages the elements equal to value ``k``."""
    return (np.arange(counts.size)[:, None] == np.ravel(inverse)[None, :]) / counts[:, None]


def _unique_jvp(ar, ar_t, return_index=False, return_index_t=NoTangent, return_inverse=False,
                return_inverse_t=NoTangent, return_counts=False, return_counts_t=NoTangent, axis=None,
                axis_t=NoTangent, *, equal_nan=True, equal_nan_t=NoTangent, sorted=True, sorted_t=NoTangent):
    y = np.unique(ar, return_index, return_inverse, return_counts, axis, equal_nan=equal_nan, sorted=sorted)
    _, _, inverse, counts = np.unique(ar, True, True, True, axis, equal_nan=equal_nan, sorted=sorted)
    x = np.asarray(ar)
    t = np.zeros(x.shape) if ar_t is NoTangent else np.asarray(ar_t)
    along = np.reshape(t, (-1,)) if axis is None else np.moveaxis(t, axis, 0)
    per = np.tensordot(_averaging(inverse, counts), along, axes=1)
    tangent = per if axis is None else np.moveaxis(per, 0, axis)
    if isinstance(y, tuple):  # the indices, inverse and counts have none
        return y, (tangent,) + (NoTangent,) * (len(y) - 1)
    return y, tangent


jvp_defined_by(np.unique, _unique_jvp)

CASES: list = []  # checked by tests/test_third_order_linalg.py (third derivatives against differences)
