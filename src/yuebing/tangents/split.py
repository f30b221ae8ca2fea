"""The fdata/rdata split of a tangent (DESIGN.md §3, after Mooncake.jl).

Data identified by *identity* -- arrays, lists, dicts, mutable objects, closure cells -- has
**fdata**: its tangent object, created beside the primal in the forward pass and incremented in
place by pullbacks. Data identified by *value* -- floats, complex numbers -- has **rdata**: returned
by pullbacks and summed by the caller. Tuples and immutable objects split field by field:

    primal  (np.ones(3), 2.0)
    tangent (array([..]), 0.5)
    fdata   (array([..]), NoFData)      # travels forward with the primal
    rdata   (NoRData, 0.5)              # travels back out of a pullback

A container whose fields have no fdata (rdata) has fdata ``NoFData`` (rdata ``NoRData``).
``join(fdata(t), rdata(t))`` rebuilds ``t``.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .ops import T_IMMUTABLE, T_LEAF, T_TUPLE, tangent_parts, zero_tangent
from .types import NoFData, NoRData, NoTangent, Tangent
from .walk import Node, StructureError, evaluate


def _rebuild_like(t: Any, kind: str, keys: list, values: list, empty: Any) -> Any:
    if all(v is empty for v in values):
        return empty
    if kind is T_TUPLE:
        return tuple(values) if not hasattr(type(t), "_fields") else tuple.__new__(type(t), values)
    return Tangent(t.primal_type, dict(zip(keys, values)))


def _split(t: Any, want_fdata: bool) -> Any:
    def expand(t: Any) -> Any:
        if t is NoTangent:
            return NoFData if want_fdata else NoRData
        kind, keys, children, style = tangent_parts(t)
        if kind is T_LEAF:
            if isinstance(t, (np.ndarray, np.void)):  # (a record's tangent: a view, structured.py)
                return t if want_fdata else NoRData
            return NoFData if want_fdata else t
        if kind is T_TUPLE or kind is T_IMMUTABLE:
            empty = NoFData if want_fdata else NoRData
            return Node(children, lambda vs: _rebuild_like(t, kind, keys, vs, empty), keys, style)
        return t if want_fdata else NoRData  # list, dict, MutableTangent: identity data

    return evaluate(t, expand)


def fdata(t: Any) -> Any:
    """The forward-data half of tangent ``t`` (mutable tangent objects, in place)."""
    return _split(t, want_fdata=True)


def rdata(t: Any) -> Any:
    """The reverse-data half of tangent ``t`` (floats and complex numbers, by value)."""
    return _split(t, want_fdata=False)


def join(f: Any, r: Any) -> Any:
    """The tangent whose fdata is ``f`` and rdata is ``r``."""

    def expand(job: tuple) -> Any:
        f, r = job
        if f is NoFData and r is NoRData:
            return NoTangent
        if r is NoRData and not isinstance(f, (tuple, Tangent)):
            return f
        if f is NoFData and not isinstance(r, (tuple, Tangent)):
            return r
        shape = f if f is not NoFData else r
        kind, keys, children, style = tangent_parts(shape)
        if kind is not T_TUPLE and kind is not T_IMMUTABLE:
            raise StructureError(f"cannot join fdata {f!r:.60} with rdata {r!r:.60}")
        f_children = _children_or(f, NoFData, keys)
        r_children = _children_or(r, NoRData, keys)
        return Node(
            list(zip(f_children, r_children)),
            lambda vs: _rebuild_like(shape, kind, keys, vs, NoTangent),
            keys,
            style,
        )

    return evaluate((f, r), expand)


def _children_or(v: Any, empty: Any, keys: list) -> list:
    if v is empty:
        return [empty] * len(keys)
    if isinstance(v, tuple):
        if len(v) != len(keys):
            raise StructureError(f"fdata and rdata tuples differ in length: {len(v)} vs {len(keys)}")
        return list(v)
    return [v.fields.get(k, empty) for k in keys]


def zero_rdata(x: Any) -> Any:
    """The zero rdata of primal ``x`` (what a pullback returns for an argument it did not use)."""
    return rdata(zero_tangent(x))
