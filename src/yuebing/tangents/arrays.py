"""Arrays that share memory: views and their base.

NumPy views share memory with their base, and yuebing's tangents must too (DESIGN.md §2): if a
structure holds ``a`` and ``a[1:]``, a perturbation of one is seen through the other, so their
tangents must be a tangent array and the same view of it.

The unit of memory is the *root*: the last ndarray on an array's ``.base`` chain. When two or more
distinct arrays inside one structure share a root, the tangent operations act on the root once
(so nothing is counted twice) and rebuild every array as the same view of the result root. An
array that is the only one in the structure from its root is treated on its own, so a small view
of a large buffer never drags the whole buffer into the tangent.
"""
from __future__ import annotations

from typing import Any, Callable, Iterable

import numpy as np


def array_root(a: np.ndarray) -> np.ndarray:
    """The ndarray at the end of ``a``'s base chain (``a`` itself if it owns its memory)."""
    root = a
    base = a.base
    while isinstance(base, np.ndarray):
        root = base
        base = base.base
    return root


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _contiguous(a: np.ndarray) -> bool:
    return a.flags.c_contiguous or a.flags.f_contiguous


def view_like(view: np.ndarray, root: np.ndarray, new_root: np.ndarray) -> np.ndarray:
    """The view of ``new_root`` that ``view`` is of ``root`` (same byte offset and strides)."""
    if view is root:
        return new_root
    offset = _address(view) - _address(root)
    made = np.ndarray(view.shape, view.dtype, buffer=new_root, offset=offset, strides=view.strides)
    return made[()] if isinstance(view, np.void) else made  # (a structured array's record: structured.py)


def same_layout(a: np.ndarray, b: np.ndarray) -> bool:
    return a.shape == b.shape and a.dtype == b.dtype and a.strides == b.strides


class ArrayLinks:
    """Which roots are shared by two or more arrays of one structure (see module docstring)."""

    __slots__ = ("_roots",)

    def __init__(self, arrays: Iterable[np.ndarray]) -> None:
        members: dict[int, set[int]] = {}
        roots: dict[int, np.ndarray] = {}
        for a in arrays:
            if not a.flags.writeable and 0 in a.strides and a.size > 1:
                continue  # a broadcast view: read-only, cells shared; its tangent is not a view
            root = array_root(a)
            if root.dtype != a.dtype or not _contiguous(root):
                continue
            members.setdefault(id(root), set()).add(id(a))
            roots[id(root)] = root
        self._roots = {key: roots[key] for key, ids in members.items() if len(ids) > 1}

    def __bool__(self) -> bool:
        return bool(self._roots)

    def root_of(self, a: np.ndarray) -> np.ndarray | None:
        """``a``'s root if it is shared within the structure, else ``None``."""
        if not self._roots:
            return None
        root = array_root(a)
        return root if id(root) in self._roots else None

    @staticmethod
    def paired_root(a: np.ndarray, a_root: np.ndarray, b: np.ndarray) -> np.ndarray | None:
        """``b``'s root, if ``b`` sits in it exactly as ``a`` sits in ``a_root``; else ``None``."""
        b_root = array_root(b)
        if not same_layout(a_root, b_root) or a.strides != b.strides:
            return None
        if _address(a) - _address(a_root) != _address(b) - _address(b_root):
            return None
        return b_root


class RootMemo:
    """Apply an array operation once per shared root and hand out views of the result."""

    __slots__ = ("links", "results")

    def __init__(self, links: ArrayLinks) -> None:
        self.links = links
        self.results: dict[int, Any] = {}

    def build(self, a: np.ndarray, make: Callable[[np.ndarray], np.ndarray]) -> np.ndarray | None:
        """``view_like(a, root, make(root))`` for a linked ``a`` (``make`` runs once per root)."""
        root = self.links.root_of(a)
        if root is None:
            return None
        new_root = self.results.get(id(root))
        if new_root is None:
            new_root = make(root)
            if not _contiguous(new_root) or new_root.strides != root.strides:
                new_root = np.ascontiguousarray(new_root) if root.flags.c_contiguous else np.asfortranarray(new_root)
            self.results[id(root)] = new_root
        return view_like(a, root, new_root)
