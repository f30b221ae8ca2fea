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
Complex leaves are refused: SciPy's optimisers work over the reals. ``unflatten`` is
differentiable (``yb.grad(lambda v: loss(unflatten(v)))``, ``yb.hessian`` of the same).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..rules.core import CoDual, Dual, register_frule, register_rrule, rrule
from ..rules.second_order import _register as _so_register
from ..rules.util import accumulate, output
from ..tangents import NoFData, NoRData, NoTangent, add_to_primal, join, structured
from ..tangents.kinds import register_nondifferentiable_type
from ..tangents.ops import _from_primal


def _values(x: Any) -> Any:
    """``x``'s differentiable leaves as a tangent (copies)."""
    return _from_primal(x, lambda leaf: np.array(leaf, copy=True) if isinstance(leaf, np.ndarray) else leaf)


def _zeroed(x: Any) -> Any:
    """A copy of ``x`` whose differentiable leaves are exactly zero (``x - x``)."""
    return add_to_primal(x, _values(x), -1.0)


def _vector(x: Any) -> np.ndarray:
    parts: list = []

    def collect(leaf: Any) -> Any:
        if structured.is_structured(leaf):  # its float fields (tangents/structured.py)
            leaf = structured.field_values(leaf)
        if np.iscomplexobj(leaf):
            raise TypeError("yuebing.flatten: complex values cannot be laid out for a real optimiser")
        parts.append(np.ravel(np.asarray(leaf, dtype=np.float64)))
        return leaf

    _from_primal(x, collect)
    return np.concatenate(parts) if parts else np.zeros(0)


@register_nondifferentiable_type
class Unflatten:
    """``unflatten(v)``: a new structure like ``x`` whose leaves hold ``v``'s values. It is linear
    in ``v``, and differentiable in every mode by the rules at the end of this module (a
    function of ``v`` that unflattens it has a gradient, a Hessian, a Jacobian)."""

    def __init__(self, x: Any, size: int) -> None:
        self._x, self._size, self._zeroed = x, size, _zeroed(x)

    def _leaves(self, v: Any) -> Any:
        """``x``'s differentiable leaves as a tangent holding ``v``'s values (copies)."""
        v = np.asarray(v, dtype=np.float64)
        if v.shape != (self._size,):
            raise ValueError(f"unflatten: expected a vector of {self._size} values, got shape {v.shape}")
        offset = 0

        def take(leaf: Any) -> Any:
            nonlocal offset
            if structured.is_structured(leaf):  # its float fields, in field_values' order
                size = structured.field_values(leaf).size
                offset += size
                return structured.from_field_values(leaf, v[offset - size:offset])
            if isinstance(leaf, np.ndarray):
                value = v[offset:offset + leaf.size].reshape(leaf.shape).astype(leaf.dtype)
                offset += leaf.size
                return value
            offset += 1
            return float(v[offset - 1])

        return _from_primal(self._x, take)

    def __call__(self, v: Any) -> Any:
        return add_to_primal(self._zeroed, self._leaves(v))

    def tangent(self, dv: Any) -> Any:
        """The tangent of ``self(v)`` for a tangent ``dv`` of ``v`` (the map is linear)."""
        return self._leaves(np.zeros(self._size) if dv is NoTangent else dv)

    def vector(self, tangent: Any) -> np.ndarray:
        """The cotangent of ``v`` for a cotangent (tangent) of ``self(v)``."""
        return flatten_tangent(self._x, tangent)


def flatten(x: Any) -> tuple[np.ndarray, Callable[[np.ndarray], Any]]:
    """``(vector, unflatten)`` for ``x`` (see the module docstring)."""
    vector = _vector(x)
    return vector, Unflatten(x, vector.size)


def flatten_tangent(x: Any, tangent: Any) -> np.ndarray:
    """A tangent (gradient) of ``x`` as a vector in ``flatten(x)``'s order."""
    return _vector(add_to_primal(_zeroed(x), tangent))


# --------------------------------------------------------------------------------------------
# Rules: unflatten is linear in v (reverse: its cotangent laid out as a vector; forward: the
# tangent laid out as the structure; second order: both, twice)
# --------------------------------------------------------------------------------------------


def _unflatten_rrule(unflatten: CoDual, v: CoDual) -> tuple:
    u = unflatten.primal
    out = output(u(v.primal))

    def pullback(dy: Any) -> tuple:
        return NoRData, NoRData, accumulate(v, u.vector(join(out.fdata, dy)))

    return out, pullback


def _unflatten_frule(unflatten: Dual, v: Dual) -> Dual:
    u = unflatten.primal
    return Dual(u(v.primal), u.tangent(v.tangent))


def _unflatten_second_order(f: tuple, args: tuple, kwargs: dict) -> tuple:
    (u, *_), v = args
    call = CoDual(Unflatten.__call__, NoFData)
    out1, pullback1 = rrule(call, CoDual(u, NoFData), CoDual(v[0], v[1]))
    out2, pullback2 = rrule(call, CoDual(u, NoFData), CoDual(v[0], v[3]))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return pullback1(dy), pullback2(dy_d)

    return (out1.primal, out1.fdata, u.tangent(v[2]), out2.fdata), pullback


register_rrule(Unflatten.__call__, _unflatten_rrule)
register_frule(Unflatten.__call__, _unflatten_frule)
_so_register((Unflatten.__call__,), _unflatten_second_order)

__all__ = ["flatten", "flatten_tangent", "Unflatten"]
