"""Tangents given for views of one array, made views of one tangent array.

When a primal holds arrays that share memory (``(a, a[1:])``, ``[a, a[::2]]``), its tangent must
be the same views of one tangent array (DESIGN.md §2): a perturbation of shared memory is seen
through every view of it. A caller of ``yb.jvp`` or ``yb.hvp`` may instead hand one separate
array per view (``(np.ones(4), np.ones(3))``). ``share_view_tangents`` accepts that when the
arrays agree on the elements the views share: it writes them into one tangent array per memory
and hands out its views (elements no view covers are zero). When two of them give different
values for one element there is no perturbation of the memory they describe, and it raises
``ValueError`` naming both places rather than pick one.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from . import kinds as K
from .arrays import array_root, view_like
from .ops import _aligned_children, _map_tangents, primal_links
from .walk import StructureError, format_key


def share_view_tangents(x: Any, t: Any, what: str = "x") -> Any:
    """``t`` (a tangent of ``x``) with the tangents of arrays sharing memory in ``x`` made views of
    one tangent array; ``t`` itself when they already are, when nothing in ``x`` shares memory, or
    when ``t`` does not have ``x``'s structure (the caller's validation says what is wrong).
    ``what`` names ``x`` in the error for tangents that disagree on shared memory."""
    links = primal_links(x)
    if not links:
        return t
    pairs = _linked_pairs(x, t, links)
    if pairs is None or _already_shared(pairs, links):
        return t
    replacements = _merged_views(pairs, links, what)
    if replacements is None:
        return t
    return _map_tangents((t,), lambda leaf: replacements.get(id(leaf), leaf), by_root=False)


def _linked_pairs(x: Any, t: Any, links: Any) -> list | None:
    """``(primal array, tangent array, path)`` for each array of ``x`` whose memory another array
    of ``x`` shares, in a fixed order; None when ``t`` does not match ``x``'s structure."""
    pairs: list = []
    seen: set[int] = set()
    stack: list = [(x, t, "")]
    while stack:
        v, tv, path = stack.pop()
        kind = K.primal_kind(v)
        if kind in (K.FLOAT, K.COMPLEX, K.NONDIFF):
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if kind is K.ARRAY:
            if links.root_of(v) is not None:
                if not isinstance(tv, np.ndarray) or tv.shape != v.shape:
                    return None
                pairs.append((v, tv, path))
            continue
        try:
            keys, children, style = K.parts(v, kind)
            child_tangents = _aligned_children(kind, keys, tv)
        except StructureError:
            return None
        for key, cv, ct in reversed(list(zip(keys, children, child_tangents))):
            stack.append((cv, ct, path + format_key(key, style)))
    return pairs


def _address(a: np.ndarray) -> int:
    return a.__array_interface__["data"][0]


def _already_shared(pairs: list, links: Any) -> bool:
    """Whether every tangent is already the view of one tangent array that its primal is of its
    memory (what ``validate_tangent`` asks)."""
    tangent_roots: dict[int, int] = {}
    for v, tv, _ in pairs:
        root, t_root = links.root_of(v), array_root(tv)
        if tangent_roots.setdefault(id(root), id(t_root)) != id(t_root) or tv.strides != v.strides \
                or _address(tv) - _address(t_root) != _address(v) - _address(root):
            return False
    return True


def _merged_views(pairs: list, links: Any, what: str) -> dict | None:
    """``{id(tangent array): its view of the merged tangent array of its memory}``; None when one
    tangent array is given for two different arrays (the caller's validation refuses that)."""
    merged: dict[int, tuple] = {}
    replacements: dict[int, np.ndarray] = {}
    for number, (v, tv, path) in enumerate(pairs):
        root = links.root_of(v)
        if id(root) not in merged:
            # owners: which pair (number + 1) wrote each element, 0 for none
            merged[id(root)] = (np.zeros_like(root, subok=False), np.zeros_like(root, subok=False))
        values, owners = (view_like(v, root, r) for r in merged[id(root)])
        _check_agreement(values, owners, tv, pairs, path, what)
        values[...] = tv
        owners[...] = number + 1
        if replacements.setdefault(id(tv), values) is not values:
            return None
    return replacements


def _check_agreement(values: np.ndarray, owners: np.ndarray, tv: np.ndarray, pairs: list, path: str,
                     what: str) -> None:
    with np.errstate(invalid="ignore"):
        same = (values == tv) | (np.isnan(values) & np.isnan(tv))
    clash = (owners != 0) & ~same
    if not clash.any():
        return
    index = tuple(int(i) for i in np.argwhere(clash)[0])
    other = pairs[int(owners[index].real) - 1][2]
    raise ValueError(
        f"the tangents given for {what}{other} and {what}{path} disagree on the memory the two arrays "
        f"share (at {what}{path}[{', '.join(map(str, index))}]: {values[index].item()!r} vs {tv[index].item()!r}). They "
        "are views of one array, so a perturbation of that memory is one perturbation, seen through "
        "both: give the same values where they overlap, or give views of one tangent array "
        "(yb.tangents.zero_tangent(x) builds a tangent laid out that way)"
    )
