"""Check that a value is a valid tangent of a primal: right types, shapes, dtypes and aliasing.

``validate_tangent(x, t)`` raises ``StructureError`` (a ``TypeError``) naming the path of the
first problem. Beyond types it checks DESIGN.md §2's aliasing rule: two references to one mutable
primal object must meet one tangent object (and distinct mutable primals distinct tangents), and
arrays that are views of one base must have tangents that are the same views of one tangent base.
"""
from __future__ import annotations

import collections
from typing import Any

import numpy as np

from . import kinds as K
from .arrays import array_root
from .dict_views import view_name
from .object_arrays import is_object_array
from .ops import _aligned_children, _describe, _is_number, primal_links
from .types import MutableTangent, NoTangent, SetTangent, Tangent
from .walk import StructureError, format_key


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _check_leaf(x: Any, kind: str, t: Any) -> None:
    if kind is K.FLOAT:
        if not (isinstance(t, float) or _is_number(t) and not isinstance(t, (complex, np.complexfloating))):
            raise StructureError(f"the tangent of a float must be a float, got {_describe(t)}")
    elif kind is K.COMPLEX:
        if not _is_number(t):
            raise StructureError(f"the tangent of a complex number must be complex, got {_describe(t)}")
    elif kind is K.ARRAY and isinstance(x, np.void):  # a record's tangent is a record (structured.py)
        if type(t) is not np.void or t.dtype != x.dtype:
            raise StructureError(f"the tangent of a record of dtype {x.dtype} must be a record of that dtype, "
                                 f"got {_describe(t)}")
    elif kind is K.ARRAY:
        if not isinstance(t, np.ndarray) or t.shape != x.shape or t.dtype != x.dtype:
            raise StructureError(
                f"the tangent of an array of shape {x.shape} and dtype {x.dtype} must be an array "
                f"of that shape and dtype, got {_describe(t)}"
            )
    elif type(t) is SetTangent and isinstance(x, (set, frozenset)) and set(t) == x \
            and all(v is NoTangent for v in t.values()):
        return  # a set of labels built by a rule carries an (empty) SetTangent: it may gain floats
    elif is_object_array(x) and is_object_array(t) and t.shape == x.shape and all(v is NoTangent for v in t.flat):
        return  # an object array of labels made in the function has a tangent: floats may be written in
    elif t is not NoTangent:
        raise StructureError(f"{_describe(x)} has tangent NoTangent, got {_describe(t)}")


def _check_container_type(x: Any, kind: str, t: Any) -> None:
    if t is NoTangent and kind not in K.MUTABLE_KINDS:
        return  # immutable containers with nothing differentiable inside
    expected: type
    if kind is K.TUPLE:
        expected = type(x) if hasattr(type(x), "_fields") else tuple
    elif kind is K.LIST:
        expected = list
    elif kind is K.DICT:
        expected = dict
    elif kind is K.SET:
        expected = SetTangent
    elif kind is K.DEQUE:
        expected = collections.deque
    elif kind is K.OBJECT_ARRAY:
        expected = np.ndarray
    elif kind is K.VIEW:  # the same view of the dict's tangent (a plain dict, whatever x's dict is)
        expected = type(getattr({}, view_name(x))())
    elif kind in K.MUTABLE_KINDS:
        expected = MutableTangent
    else:
        expected = Tangent
    if type(t) is not expected:
        raise StructureError(f"the tangent of a {type(x).__qualname__} must be a {expected.__qualname__}, got {_describe(t)}")
    if kind is K.OBJECT_ARRAY and (t.dtype.kind != "O" or t.shape != x.shape):
        raise StructureError(f"the tangent of an object array of shape {x.shape} must be an object array of "
                             f"that shape, got {_describe(t)}")
    if kind is K.DEQUE and t.maxlen != x.maxlen:
        raise StructureError(f"the tangent of a deque with maxlen={x.maxlen} must have that maxlen, got {t.maxlen}")


def validate_tangent(x: Any, t: Any) -> None:
    """Raise ``StructureError`` unless ``t`` is a valid tangent of ``x`` with mirrored aliasing."""
    x_links = primal_links(x)
    forward: dict[int, int] = {}
    backward: dict[int, int] = {}
    root_pairs: dict[int, tuple[int, int]] = {}
    keep: list = []
    stack: list[tuple[Any, Any, str]] = [(x, t, "")]
    while stack:
        x, t, path = stack.pop()
        try:
            kind = K.primal_kind(x)
            mutable = kind in K.MUTABLE_KINDS or kind is K.ARRAY
            if mutable:
                fa, fb = forward.get(id(x)), backward.get(id(t))
                if fa is not None or fb is not None:
                    if fa == id(t) and fb == id(x):
                        continue
                    raise StructureError(
                        "aliasing differs: one mutable primal must have exactly one tangent object"
                    )
                forward[id(x)], backward[id(t)] = id(t), id(x)
                keep.append((x, t))
            if kind in (K.FLOAT, K.COMPLEX, K.ARRAY, K.NONDIFF):
                _check_leaf(x, kind, t)
                if kind is K.ARRAY and isinstance(x, np.ndarray):
                    _check_view(x, t, x_links, root_pairs)
                continue
            _check_container_type(x, kind, t)
            keys, children, style = K.parts(x, kind)
            child_tangents = _aligned_children(kind, keys, t)
            if isinstance(t, (Tangent, MutableTangent)) and set(t.fields) - set(keys):
                raise StructureError(f"tangent has fields the primal lacks: {sorted(set(t.fields) - set(keys))}")
        except StructureError as error:
            error.path = error.path or path
            raise
        for key, cx, ct in zip(keys, children, child_tangents):
            stack.append((cx, ct, path + format_key(key, style)))


def _check_view(x: np.ndarray, t: np.ndarray, x_links, root_pairs: dict) -> None:
    root = x_links.root_of(x)
    if root is None:
        return
    t_root = array_root(t)
    offset = _address(x) - _address(root)
    pair = root_pairs.setdefault(id(root), (id(t_root), 0))
    if pair[0] != id(t_root) or _address(t) - _address(t_root) != offset or t.strides != x.strides:
        raise StructureError("views of one array must have tangents that are the same views of one tangent array")
