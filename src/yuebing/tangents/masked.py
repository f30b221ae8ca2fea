"""numpy.ma masked arrays in the tangent model (docs/semantics.md, "Masked arrays").

A masked array of float dtype has the tangent of its data: a plain ndarray of the same shape and
dtype, the masked entries included. NumPy's masked operations decide what the data under the
mask holds (``m + n`` keeps ``m``'s data there, ``m.data`` reads it), so the derivative follows the
data wherever it goes, and an operation that ignores masked entries (``m.sum()``) gives them a
zero cotangent. The mask itself carries no derivative.

These helpers rebuild a masked array around new data (``add_to_primal``, ``structural_copy``) and
take the difference of two (finite differences), on the data alone.
"""
from __future__ import annotations

from typing import Any

import numpy as np

MaskedArray = np.ma.MaskedArray

#: True once a masked array has been met (its type classified by ``kinds.py``, or one made by
#: numpy.ma's definitions): before that no rule can receive one, and the refusal of masked
#: arguments (``rules/numpy_masked.py``), run at every rule call, returns at once
SEEN = [False]


def is_masked(x: Any) -> bool:
    """Whether ``x`` is a numpy.ma masked array (``np.ma.masked`` included)."""
    return isinstance(x, MaskedArray)


def with_data(x: MaskedArray, data: np.ndarray) -> MaskedArray:
    """A new masked array like ``x`` (a copy of its mask, its fill value and hardness) holding ``data``."""
    out = data.view(type(x))
    out._update_from(x)
    out._mask = x._mask if x._mask is np.ma.nomask else x._mask.copy()
    out._sharedmask = False
    return out


def moved(x: MaskedArray, t: Any, scale: float) -> MaskedArray:
    """``x`` moved by ``scale * t`` in its data (masked entries too), or copied when ``t`` is None."""
    data = np.array(x.data, copy=True, order="K")
    if t is not None:
        np.add(data, scale * np.asarray(t), out=data, casting="unsafe")
    return with_data(x, data)


def data_of(x: Any) -> Any:
    """The data of a masked array (a view), anything else unchanged."""
    return x.data if isinstance(x, MaskedArray) else x
