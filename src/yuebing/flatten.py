"""Flat vectors for optimisers: ``flatten(x) -> (vector, unflatten)``.

SciPy's optimisers want one float64 vector; models live in dicts, dataclasses and objects of
arrays. ``flatten`` lists every differentiable leaf of ``x`` (floats and float arrays; an array
referenced twice, or views of one array, count once) into a vector; ``unflatten(v)`` builds a
new structure like ``x`` (same types, aliasing and cycles, non-differentiable parts kept) whose
leaves hold the values of ``v``. ``flatten_tangent(x, g)`` lays out a gradient of ``x`` (as
``yb.grad`` returns it) in the same order::

    v0, unflatten = yb.flatten(params)

    def fun(v):
        value, g = yb.value_and_grad(loss)(unflatten(v), data)
        return value, yb.flatten_tangent(params, g)

    scipy.optimize.minimize(fun, v0, jac=True, method="L-BFGS-B")

All three walk ``x`` the same way (``tangents.ops._from_primal``), which fixes the order.
Complex leaves are refused: SciPy's optimisers work over the reals.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .tangents import add_to_primal
from .tangents.ops import _from_primal


def _values(x: Any) -> Any:
    """``x``'s differentiable leaves as a tangent (copies)."""
    return _from_primal(x, lambda leaf: np.array(leaf, copy=True) if isinstance(leaf, np.ndarray) else leaf)


def _zeroed(x: Any) -> Any:
    """A copy of ``x`` whose differentiable leaves are exactly zero (``x - x``)."""
    return add_to_primal(x, _values(x), -1.0)


def _vector(x: Any) -> np.ndarray:
    parts: list = []

    def collect(leaf: Any) -> Any:
        if np.iscomplexobj(leaf):
            raise TypeError("yuebing.flatten: complex values cannot be laid out for a real optimiser")
        parts.append(np.ravel(np.asarray(leaf, dtype=np.float64)))
        return leaf

    _from_primal(x, collect)
    return np.concatenate(parts) if parts else np.zeros(0)


def flatten(x: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """``(vector, unflatten)`` for ``x`` (see the module docstring)."""
    vector = _vector(x)
    zeroed = _zeroed(x)

    def unflatten(v: Any) -> Any:
        v = np.asarray(v, dtype=np.float64)
        if v.shape != vector.shape:
            raise ValueError(f"unflatten: expected a vector of {vector.size} values, got shape {v.shape}")
        offset = 0

        def take(leaf: Any) -> Any:
            nonlocal offset
            if isinstance(leaf, np.ndarray):
                value = v[offset:offset + leaf.size].reshape(leaf.shape).astype(leaf.dtype)
                offset += leaf.size
                return value
            offset += 1
            return float(v[offset - 1])

        return add_to_primal(zeroed, _from_primal(x, take))

    return vector, unflatten


def flatten_tangent(x: Any, tangent: Any) -> np.ndarray:
    """A tangent (gradient) of ``x`` as a vector in ``flatten(x)``'s order."""
    return _vector(add_to_primal(_zeroed(x), tangent))


__all__ = ["flatten", "flatten_tangent"]
