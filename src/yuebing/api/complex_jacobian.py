"""Complex numbers in ``yb.jacobian`` (JAX's ``jacfwd``/``jacrev`` conventions).

Real inputs with complex outputs give the complex Jacobian ``d Re y/dx + i d Im y/dx``. Complex
inputs need ``holomorphic=True``: the Jacobian is then ``f'(z)``, which forward mode gets from the
direction 1 and reverse mode from the cotangent 1 (conjugated: yuebing's cotangent of a complex
number is ``g`` times the conjugate derivative, docs/conventions.md). A function that is not
holomorphic has no such Jacobian: ``holomorphic=True`` is the caller's promise, as in JAX.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import kinds as K


def is_complex_leaf(v: Any) -> bool:
    """A complex number or a complex array."""
    return K.primal_kind(v) is K.COMPLEX or isinstance(v, np.ndarray) and v.dtype.kind == "c"


def leaf_dtype(v: Any) -> type:
    """The dtype of a Jacobian block's axes for leaf ``v``."""
    return np.complex128 if is_complex_leaf(v) else np.float64


def block_dtype(y_leaf: Any, x_leaf: Any) -> type:
    """A block is complex when its output or its input leaf is."""
    return np.complex128 if is_complex_leaf(y_leaf) or is_complex_leaf(x_leaf) else np.float64


def check_input_leaves(leaves: list, index: int, holomorphic: bool) -> None:
    """Refuse complex leaves of argument ``index`` without ``holomorphic``, real ones with it."""
    for v in leaves:
        if is_complex_leaf(v) != holomorphic:
            raise TypeError(_input_message(v, index, holomorphic))


def _input_message(v: Any, index: int, holomorphic: bool) -> str:
    name = type(v).__qualname__ + (f" of {v.dtype}" if isinstance(v, np.ndarray) else "")
    if holomorphic:
        return (f"jacobian(holomorphic=True) takes complex inputs, but argument {index} holds a real value "
                f"({name}); pass it as complex (x + 0j), or leave out holomorphic=True for the real Jacobian")
    return (f"jacobian: argument {index} contains a complex value ({name}); for a holomorphic function pass "
            "holomorphic=True (the complex Jacobian f'(z)), otherwise split it into real and imaginary parts "
            "(differentiate lambda x, y: f(x + 1j * y) in real x and y)")


def check_output_leaves(leaves: list, holomorphic: bool) -> None:
    """``holomorphic=True`` needs complex outputs (JAX's rule: a real output of complex inputs is
    not holomorphic unless constant)."""
    for v in leaves:
        if holomorphic and not is_complex_leaf(v):
            name = type(v).__qualname__ + (f" of {v.dtype}" if isinstance(v, np.ndarray) else "")
            raise TypeError(f"jacobian(holomorphic=True) needs complex outputs, but the function returned a real "
                            f"value ({name}); a real function of complex inputs is not holomorphic: split the "
                            "inputs into real and imaginary parts and leave out holomorphic=True")


def as_leaf_array(v: Any, t: Any) -> np.ndarray:
    """Tangent (or cotangent) ``t`` of leaf ``v`` as an array of ``v``'s shape."""
    shape = np.shape(v)
    return np.asarray(t, dtype=leaf_dtype(v)).reshape(shape)


__all__ = ["as_leaf_array", "block_dtype", "check_input_leaves", "check_output_leaves", "is_complex_leaf",
           "leaf_dtype"]
