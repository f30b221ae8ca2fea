"""Hypothesis strategies for nested Python/NumPy data with shared references and cycles.

``values()`` draws a tree of every primal kind of DESIGN.md §3 -- floats, complex numbers,
float32/float64/complex/int arrays, ints, strings, tuples, namedtuples, lists, dicts, frozen
dataclasses, plain objects, ``__slots__`` objects, objects mixing both, closures, partials and
bound methods -- then injects aliasing: references from mutable containers to other nodes
(shared sub-objects), to their own ancestors (cycles), and to views of arrays already present.

Requires ``hypothesis`` (the ``test`` extra).
"""
from __future__ import annotations

import collections
import dataclasses
import functools
from typing import Any

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp


@dataclasses.dataclass(frozen=True)
class FrozenPoint:
    """A frozen dataclass with a float, an int and a payload."""

    x: float
    n: int
    payload: Any


class Box:
    """A plain mutable object with a ``__dict__``."""

    def __init__(self, value: Any) -> None:
        self.value = value
        self.label = "box"

    def get(self) -> Any:
        return self.value


class Slotted:
    """An object with ``__slots__`` only."""

    __slots__ = ("value", "scale", "unset")

    def __init__(self, value: Any) -> None:
        self.value = value
        self.scale = 2.0


class Mixed(Slotted):
    """A subclass that adds a ``__dict__`` to a ``__slots__`` base."""

    def __init__(self, value: Any) -> None:
        super().__init__(value)
        self.extra = 1.5


Pair = collections.namedtuple("Pair", ["first", "second"])


def _payload_function(value: Any, *rest: Any) -> Any:
    return value


def _closure_over(value: Any) -> Any:
    def closure() -> Any:
        return value

    return closure


_finite = st.floats(-4.0, 4.0, allow_nan=False, allow_infinity=False)

_arrays = st.one_of(
    hnp.arrays(st.sampled_from([np.float64, np.float32]), hnp.array_shapes(min_dims=0, max_dims=2, max_side=3),
               elements=st.floats(-4.0, 4.0, width=32)),
    hnp.arrays(np.complex128, hnp.array_shapes(min_dims=1, max_dims=2, max_side=3),
               elements=st.complex_numbers(max_magnitude=4.0, allow_nan=False, allow_infinity=False)),
    hnp.arrays(np.int64, hnp.array_shapes(min_dims=1, max_dims=1, max_side=3), elements=st.integers(-5, 5)),
)

leaves = st.one_of(
    _finite,
    st.complex_numbers(max_magnitude=4.0, allow_nan=False, allow_infinity=False),
    st.integers(-5, 5),
    st.sampled_from(["a", None, True]),
    _finite.map(np.float64),
    _arrays,
)

_CONTAINERS = ("tuple", "pair", "list", "dict", "frozen", "box", "slotted", "mixed", "closure", "partial", "method")


def _blueprint(children: st.SearchStrategy) -> st.SearchStrategy:
    return st.tuples(st.sampled_from(_CONTAINERS), st.lists(children, min_size=1, max_size=3))


def _build(blueprint: Any, mutables: list, nodes: list) -> Any:
    """Turn a blueprint tree into values; record every node and every mutable container."""
    if not (isinstance(blueprint, tuple) and len(blueprint) == 2 and blueprint[0] in _CONTAINERS
            and isinstance(blueprint[1], list)):
        nodes.append(blueprint)
        return blueprint
    tag, raw_children = blueprint
    kids = [_build(child, mutables, nodes) for child in raw_children]
    first = kids[0]
    value: Any
    if tag == "tuple":
        value = tuple(kids)
    elif tag == "pair":
        value = Pair(first, kids[-1])
    elif tag == "list":
        value = list(kids)
        mutables.append(value)
    elif tag == "dict":
        value = {f"k{i}": kid for i, kid in enumerate(kids)}
        mutables.append(value)
    elif tag == "frozen":
        value = FrozenPoint(1.25, 3, first)
    elif tag == "box":
        value = Box(first)
        mutables.append(value)
    elif tag == "slotted":
        value = Slotted(first)
        mutables.append(value)
    elif tag == "mixed":
        value = Mixed(first)
        mutables.append(value)
    elif tag == "closure":
        value = _closure_over(first)
    elif tag == "partial":
        value = functools.partial(_payload_function, *kids)
    else:
        box = Box(first)
        mutables.append(box)
        value = box.get
    nodes.append(value)
    return value


def _store(container: Any, item: Any, slot: int) -> None:
    """Put ``item`` into a mutable container (a new element, key or attribute)."""
    if isinstance(container, list):
        container.append(item)
    elif isinstance(container, dict):
        container[f"alias{slot}"] = item
    elif isinstance(container, Slotted):
        container.value = item
    else:
        setattr(container, f"alias{slot}", item)


@st.composite
def values(draw: st.DrawFn, max_leaves: int = 10, max_aliases: int = 4) -> Any:
    """A nested value with shared references, cycles and array views injected."""
    blueprint = draw(st.recursive(leaves, _blueprint, max_leaves=max_leaves))
    mutables: list = []
    nodes: list = []
    root = _build(blueprint, mutables, nodes)
    if isinstance(root, (list, dict, Box, Slotted)):
        pass
    else:  # wrap so there is always somewhere to inject aliases
        root = [root]
        mutables.append(root)
        nodes.append(root)
    for slot in range(draw(st.integers(0, max_aliases))):
        target = draw(st.sampled_from(mutables))
        source = draw(st.sampled_from(nodes))
        if isinstance(source, np.ndarray) and source.ndim >= 1 and draw(st.booleans()):
            source = source[::2] if draw(st.booleans()) else source.T
        _store(target, source, slot)
    return root


__all__ = ["Box", "FrozenPoint", "Mixed", "Pair", "Slotted", "leaves", "values"]
