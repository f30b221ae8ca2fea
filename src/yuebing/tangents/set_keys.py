"""A set's tangent keyed by the elements of a copy of the set.

A ``SetTangent`` maps each element of its set to the element's tangent. Numbers, tuples and frozen
objects are keys by value, so a copy of the set finds its tangent under the same keys; an object
hashed by identity (a node, a task) is not, and the copy holds a copy of it. The entry points copy
their arguments (``structural_copy``) before differentiating them: ``rekeyed`` moves the entries of
every ``SetTangent`` in a direction from the original elements to their copies, so no element's
tangent is left behind under a key the copied set does not hold (which would read as zero).
"""
from __future__ import annotations

from typing import Any

from .ops import tangent_parts
from .types import NoTangent, SetTangent


def rekeyed(t: Any, element_copies: dict) -> Any:
    """``t`` (a fresh tangent, changed in place) with every ``SetTangent`` keyed by the copies
    ``element_copies`` lists (``structural_copy``'s ``id(element) -> (element, copy)``)."""
    if not element_copies:
        return t
    stack, seen = [t], set()
    while stack:
        u = stack.pop()
        if u is NoTangent or id(u) in seen:
            continue
        seen.add(id(u))
        _, _, children, _ = tangent_parts(u)
        stack.extend(children)
        if type(u) is SetTangent:
            entries = [(_copy_of(k, element_copies), v) for k, v in u.items()]
            u.clear()
            u.update(entries)
    return t


def _copy_of(element: Any, element_copies: dict) -> Any:
    found = element_copies.get(id(element))
    return found[1] if found is not None and found[0] is element else element


def originals_of(element_copies: dict) -> dict:
    """The inverse of ``element_copies``: ``rekeyed`` with it keys derivatives found for the copies
    by the caller's own elements."""
    return {id(copy): (copy, original) for original, copy in element_copies.values()}
