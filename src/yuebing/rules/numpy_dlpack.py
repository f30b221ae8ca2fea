"""``np.from_dlpack`` of a NumPy array: the array itself, shared (a view, or a copy with
``copy=True``), as scikit-learn's array API helpers hand arrays between namespaces that are both
NumPy (``sklearn.utils._array_api.move_to``: ``log_loss``, ``hinge_loss``). An array of another
library (a tensor) is refused: its memory belongs to that library (``yuebing.interop``)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .cases import Case, randn
from .core import RuleArgumentError
from .numpy_shape import linear_op
from .second_order import linear


@linear_op(np.from_dlpack)
def _from_dlpack_spec(x: Any, device: Any = None, copy: Any = None) -> tuple[Callable, Callable]:
    if not isinstance(x, np.ndarray):
        raise RuleArgumentError(f"numpy.from_dlpack: yuebing differentiates it for NumPy arrays only, not "
                                f"{type(x).__qualname__}: memory shared with another library carries no "
                                "derivative (yuebing.interop differentiates through that library)")
    np.from_dlpack(x, device=device, copy=copy)  # (NumPy's own errors on the arguments)
    # the same memory as x[...], a view whose base is x: yuebing follows views by their base
    # chain, and from_dlpack's own result has a DLPack capsule for a base (a write through it
    # reached x's values and not its derivatives)
    return (lambda v: v.copy() if copy else v[...]), (lambda g: g)


linear(np.from_dlpack)

# (the view: check_rule finds views by their base chain too, and so takes NumPy's own result for
# a separate array; tests/test_array_exchange.py checks a write through it against the plain call)
CASES = [
    Case(np.from_dlpack, randn(2, 3), kwargs={"copy": True}, name="from_dlpack(array, copy=True)"),
]
