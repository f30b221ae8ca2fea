"""An explicit-stack evaluator for structural recursion over (possibly cyclic) data.

Every tangent operation is a recursion over nested containers. Python's own stack would overflow
on data nested a few thousand levels deep (a 10,000-deep linked list is ordinary data), so the
operations describe one level at a time and ``evaluate`` drives them with a work list:

* ``expand(job)`` returns either a finished value, or a ``Node`` naming the child jobs and a
  ``finish(child_results)`` callback that builds the value once every child is done.
* Cycles are the caller's business: an operation that builds a mutable result registers an empty
  shell in its memo before returning the ``Node``, so meeting the same object again returns the
  shell instead of recursing (``finish`` fills it later).

When an operation raises ``StructureError`` the evaluator adds the path from the root to the
offending element (``x[3].field['k']``), so messages point at the data, not at our code.
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

ATTR = "."  # key style: attribute access
ITEM = "[]"  # key style: subscription


class StructureError(TypeError):
    """Two structures that should match do not, or a value has no tangent type."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path = ""

    def __str__(self) -> str:
        if self.path:
            return f"at x{self.path}: {self.message}"
        return self.message


class Node:
    """One level of a structural recursion: child jobs and how to combine their results."""

    __slots__ = ("children", "finish", "keys", "style")

    def __init__(
        self,
        children: Sequence[Any],
        finish: Callable[[list], Any],
        keys: Sequence[Any] | None = None,
        style: str = ITEM,
    ) -> None:
        self.children = children
        self.finish = finish
        self.keys = keys
        self.style = style


def format_key(key: Any, style: str) -> str:
    return f".{key}" if style == ATTR else f"[{key!r}]"


def _path(frames: list) -> str:
    parts = []
    for node, results in frames:
        i = len(results)
        if i < len(node.children):
            key = node.keys[i] if node.keys is not None else i
            parts.append(format_key(key, node.style))
    return "".join(parts)


def evaluate(job: Any, expand: Callable[[Any], Any]) -> Any:
    """Run a structural recursion rooted at ``job`` without growing the Python stack."""
    first = expand(job)
    if type(first) is not Node:
        return first
    frames: list = [(first, [])]
    try:
        while True:
            node, results = frames[-1]
            i = len(results)
            if i < len(node.children):
                value = expand(node.children[i])
                if type(value) is Node:
                    frames.append((value, []))
                else:
                    results.append(value)
            else:
                frames.pop()
                value = node.finish(results)
                if not frames:
                    return value
                frames[-1][1].append(value)
    except StructureError as error:
        if not error.path:
            error.path = _path(frames)
        raise
