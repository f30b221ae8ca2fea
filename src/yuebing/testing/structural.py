"""Cycle-safe, aliasing-aware structural equality, and the structural copy it pairs with.

``structural_copy(x)`` (re-exported from ``yuebing.tangents``) copies ``x`` keeping every cycle,
every shared sub-object and every view relation. ``compare(x, y)`` is its inverse check: it
returns ``None`` when ``y`` is a faithful copy of ``x`` (same types, keys and values, the same
aliasing graph, the same view relations between arrays) and otherwise a one-line description of
the first difference, with its path. It is the tool that proves a pullback restored its inputs.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..tangents import kinds as K
from ..tangents.ops import primal_links
from ..tangents.structured import close as structured_close
from ..tangents.types import NoTangent, SetTangent
from ..tangents.walk import StructureError, format_key


def _close_numbers(a: Any, b: Any, rtol: float, atol: float) -> bool:
    if a == b:
        return True
    if a != a and b != b:  # both NaN
        return True
    return abs(a - b) <= atol + rtol * abs(b)


def _close_arrays(a: np.ndarray, b: np.ndarray, rtol: float, atol: float) -> bool:
    if a.dtype.fields is not None:  # a structured array: its float fields within tolerance
        return structured_close(a, b, rtol, atol)
    if a.dtype.kind not in "fc":
        return bool(np.array_equal(a, b))
    if rtol == 0 and atol == 0:
        return bool(np.array_equal(a, b, equal_nan=True))
    return bool(np.allclose(a, b, rtol=rtol, atol=atol, equal_nan=True))


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


class _Bijection:
    """Pairs objects of ``x`` with objects of ``y`` one-to-one, by identity."""

    def __init__(self) -> None:
        self.forward: dict[int, int] = {}
        self.backward: dict[int, int] = {}
        self.keep: list = []  # keep compared objects alive so ids stay unique

    def pair(self, a: Any, b: Any) -> str | None:
        """``"new"`` for a fresh pair, ``"seen"`` if already paired, ``None`` on a conflict."""
        fa, fb = self.forward.get(id(a)), self.backward.get(id(b))
        if fa is None and fb is None:
            self.forward[id(a)] = id(b)
            self.backward[id(b)] = id(a)
            self.keep.append((a, b))
            return "new"
        if fa == id(b) and fb == id(a):
            return "seen"
        return None


def compare(x: Any, y: Any, rtol: float = 0.0, atol: float = 0.0, check_values: bool = True) -> str | None:
    """``None`` if ``y`` matches ``x`` structurally (values within tolerance), else the first
    difference as ``"x[0].next: ..."``. With ``check_values=False`` only types, keys, shapes,
    aliasing and views are compared (float and array values may differ)."""
    x_links, y_links = primal_links(x), primal_links(y)
    objects, roots = _Bijection(), _Bijection()
    visited_values: set[tuple[int, int]] = set()
    stack: list[tuple[Any, Any, str]] = [(x, y, "")]
    while stack:
        a, b, path = stack.pop()
        where = f"x{path}"
        if _empty_set_tangent(a) and _empty_set_tangent(b):
            continue  # a set of labels: NoTangent, or the SetTangent a rule gave it (it may gain floats)
        if type(a) is not type(b):
            return f"{where}: type {type(a).__qualname__} vs {type(b).__qualname__}"
        try:
            kind = K.primal_kind(a)
        except StructureError:
            if a is b or _safe_equal(a, b):
                continue
            return f"{where}: {a!r:.60} != {b!r:.60}"
        if kind is K.FLOAT or kind is K.COMPLEX:
            if check_values and not _close_numbers(a, b, rtol, atol):
                return f"{where}: {a!r} != {b!r}"
            continue
        if isinstance(a, np.void):  # a structured array's record
            if check_values and not structured_close(a, b, rtol, atol):
                return f"{where}: {a!r:.60} != {b!r:.60}"
            continue
        if isinstance(a, np.ndarray) and kind is not K.OBJECT_ARRAY:  # (an object array: a container)
            problem = _compare_arrays(a, b, x_links, y_links, objects, roots, rtol, atol, check_values)
            if problem:
                return f"{where}: {problem}"
            continue
        if kind is K.NONDIFF:
            if K.is_mutable_nondiff(a):
                state = objects.pair(a, b)
                if state is None:
                    return f"{where}: aliasing differs"
            if a is not b and not _safe_equal(a, b):
                return f"{where}: {a!r:.60} != {b!r:.60}"
            continue
        if kind in K.MUTABLE_KINDS:
            state = objects.pair(a, b)
            if state is None:
                return f"{where}: aliasing differs (one side shares this object with another place)"
            if state == "seen":
                continue
        else:
            if (id(a), id(b)) in visited_values:
                continue
            visited_values.add((id(a), id(b)))
            objects.keep.append((a, b))
        if kind is K.SET:  # elements paired by rank, each compared as a value (an object's fields too)
            left, right = K.canonical_order(a), K.canonical_order(b)
            if len(left) != len(right):
                return f"{where}: a set of {len(left)} elements vs {len(right)}"
            stack.extend((u, v, f"{path}{{{k}}}") for k, (u, v) in enumerate(zip(left, right)))
            continue
        a_keys, a_children, style = K.parts(a, kind)
        b_keys, b_children, _ = K.parts(b, kind)
        if type(a) is SetTangent:  # keyed by a set's elements: paired by rank (tangents at nearby sets)
            a_keys, b_keys = K.canonical_order(a), K.canonical_order(b)
            if len(a_keys) != len(b_keys):
                return f"{where}: a set's tangent of {len(a_keys)} elements vs {len(b_keys)}"
            a_children, b_children = [a[k] for k in a_keys], [b[k] for k in b_keys]
            b_keys = a_keys
        if a_keys != b_keys:
            return f"{where}: keys {_short(a_keys)} vs {_short(b_keys)}"
        if kind is K.FUNCTION and a.__code__ is not b.__code__:
            return f"{where}: different functions {a.__qualname__} and {b.__qualname__}"
        for key, ca, cb in zip(a_keys, a_children, b_children):
            stack.append((ca, cb, path + format_key(key, style)))
    return None


def _empty_set_tangent(t: Any) -> bool:
    return t is NoTangent or type(t) is SetTangent and all(v is NoTangent for v in t.values())


def _compare_arrays(a, b, x_links, y_links, objects, roots, rtol, atol, check_values) -> str | None:
    if objects.pair(a, b) is None:
        return "aliasing differs (one side shares this array with another place)"
    if a.dtype != b.dtype or a.shape != b.shape:
        return f"array {a.dtype}{a.shape} vs {b.dtype}{b.shape}"
    if check_values and not _close_arrays(a, b, rtol, atol):
        bad = np.argwhere(~np.isclose(a, b, rtol=rtol, atol=atol, equal_nan=True)) if a.dtype.kind in "fc" else []
        at = tuple(int(i) for i in bad[0]) if len(bad) else ()
        left, right = (a[at].item(), b[at].item()) if at else (a, b)
        return f"array values differ, first at index {at}: {left!r:.60} vs {right!r:.60}"
    ra, rb = x_links.root_of(a), y_links.root_of(b)
    if (ra is None) != (rb is None):
        return "view relation differs (one side shares memory with another array, the other not)"
    if ra is not None:
        if roots.pair(ra, rb) is None:
            return "view relation differs (views of different bases)"
        if _address(a) - _address(ra) != _address(b) - _address(rb) or a.strides != b.strides:
            return "view relation differs (different offset or strides into the base)"
    return None


def _safe_equal(a: Any, b: Any) -> bool:
    state = K.rng_state(a)
    if state is not None:
        return _safe_equal(state, K.rng_state(b))
    if isinstance(a, dict) and isinstance(b, dict):  # RNG state dicts hold arrays
        return a.keys() == b.keys() and all(_safe_equal(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return bool(np.array_equal(a, b))
    try:
        return bool(a == b)
    except Exception:
        return False


def _short(keys: list) -> str:
    text = repr(keys)
    return text if len(text) < 80 else text[:77] + "..."


def structurally_equal(x: Any, y: Any, rtol: float = 0.0, atol: float = 0.0) -> bool:
    """True if ``y`` is a faithful structural copy of ``x`` (see ``compare``)."""
    return compare(x, y, rtol, atol) is None


def assert_structurally_equal(x: Any, y: Any, rtol: float = 0.0, atol: float = 0.0, what: str = "") -> None:
    """Raise ``AssertionError`` naming the first difference between ``x`` and ``y``."""
    problem = compare(x, y, rtol, atol)
    if problem is not None:
        prefix = f"{what}: " if what else ""
        raise AssertionError(f"{prefix}{problem}")


__all__ = ["compare", "structurally_equal", "assert_structurally_equal"]
