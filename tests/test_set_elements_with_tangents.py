"""A set holding frozensets of floats, hashable objects with float data (a frozen dataclass, an
instance hashed by identity, a task ``asyncio.wait`` returned): its ``SetTangent`` keeps each
element's tangent as the tangent model gives it (a frozenset's ``SetTangent``, a ``Tangent``, the
object's own ``MutableTangent``). Before, such a set was refused ("a set's tangent holds the
derivatives of numbers and of tuples of them only"). Built, combined, mutated and read, each case
against central differences in reverse, forward and second order; a set passed in is restored.
"""
from __future__ import annotations

import asyncio
import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.tangents import MutableTangent, SetTangent, Tangent

from yuebing.testing import check_tangent_interface

from .modes import check_every_mode


@dataclasses.dataclass(frozen=True)
class Point:
    v: float
    label: str = "p"


class Node:
    """Hashed by identity, its float data changed after it joined the set."""

    def __init__(self, v):
        self.v = v


def frozensets_summed(x):
    s = {frozenset([x[0], 2.0]), frozenset([x[1] * x[2]]), frozenset(["a", x[3]])}
    return sum(sum(v for v in e if not isinstance(v, str)) * x[0] for e in s)


def frozen_points_added_and_discarded(x):
    s = {Point(x[0]), Point(2.0 * x[1], "q")}
    s.add(Point(x[2] * x[3]))
    s.discard(Point(2.0 * x[1], "q"))
    s |= {Point(x[3] ** 2, "r")}
    return sum(p.v ** 2 for p in s)


def nodes_written_after_joining(x):
    a, b = Node(x[0]), Node(x[1])
    s = {a, b}
    a.v = a.v * x[2]
    t = set(s) | {Node(x[3])}
    return sum(n.v * x[0] for n in t)


def mixed_elements_combined(x):
    a = {(frozenset([x[0]]), 1), Point(x[1])}
    b = {Point(x[1]), Point(x[2] * 2.0), x[3]}
    union, both = a | b, a & b
    total = 0.0
    for e in union:
        total += e.v ** 3 if isinstance(e, Point) else e * e if isinstance(e, float) else sum(e[0]) ** 2
    return total + sum(p.v for p in both) * x[3]


def element_popped(x):
    s = {Point(x[0] * x[1])}
    p = s.pop()
    s.add(Point(p.v * x[2]))
    return next(iter(s)).v * x[3] + p.v


CASES = [frozensets_summed, frozen_points_added_and_discarded, nodes_written_after_joining,
         mixed_elements_combined, element_popped]
X = np.array([0.3, 0.8, 1.3, 0.55])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_sets_of_objects_in_every_mode(f):
    check_every_mode(f, X)


def _weighted(s, w):
    s.add(Point(w * w, "w"))
    return sum(p.v ** 2 for p in s) * w


def test_a_set_of_frozen_points_passed_in_is_restored_and_gets_its_gradient():
    s, w, h = {Point(0.5, "a"), Point(-1.25, "b")}, 0.75, 1e-6
    before = set(s)
    value, (gs, gw) = yb.value_and_grad(_weighted, argnums=(0, 1))(s, w)
    assert s == before
    assert value == pytest.approx(_weighted(set(s), w))
    assert type(gs) is SetTangent and all(type(t) is Tangent for t in gs.values())
    for p in before:
        up = {Point(q.v + h, q.label) if q == p else q for q in before}
        down = {Point(q.v - h, q.label) if q == p else q for q in before}
        assert gs[p].v == pytest.approx((_weighted(up, w) - _weighted(down, w)) / (2 * h), rel=1e-6)
    assert gw == pytest.approx((_weighted(set(s), w + h) - _weighted(set(s), w - h)) / (2 * h), rel=1e-6)
    yb.jvp(_weighted, (s, w), (yb.tangents.zero_tangent(s), 1.0))
    yb.hvp(_weighted, (s, w), (yb.tangents.zero_tangent(s), 1.0))
    assert s == before


def _scaled_nodes(s, w):
    for n in s:
        n.v = n.v * w
    return sum(n.v ** 2 for n in s)


def test_a_set_of_nodes_passed_in_is_restored_and_its_gradient_is_the_nodes():
    a, b, w, h = Node(0.5), Node(-1.5), 1.25, 1e-6
    s = {a, b}
    value, (gs, gw) = yb.value_and_grad(_scaled_nodes, argnums=(0, 1))(s, w)
    assert (a.v, b.v) == (0.5, -1.5) and s == {a, b}
    assert type(gs[a]) is MutableTangent
    for n in (a, b):  # d/dv of sum((v w)^2) is 2 v w^2
        assert gs[n].v == pytest.approx(2 * n.v * w * w, rel=1e-9)
    expected = (_scaled_nodes({Node(0.5), Node(-1.5)}, w + h) - _scaled_nodes({Node(0.5), Node(-1.5)}, w - h)) / (2 * h)
    assert gw == pytest.approx(expected, rel=1e-6)
    t = yb.tangents.zero_tangent(s)
    t[a].v = 1.0
    assert yb.jvp(_scaled_nodes, (s, w), (t, 0.0))[1] == pytest.approx(2 * 0.5 * w * w, rel=1e-9)
    assert (a.v, b.v) == (0.5, -1.5)


async def _square(v):
    await asyncio.sleep(0)
    return v * v


async def _tasks_waited(x):
    tasks = [asyncio.create_task(_square(x)), asyncio.create_task(_square(2.0 * x))]
    done, _ = await asyncio.wait(tasks)
    return sum(t.result() for t in set(done)) * x


def test_a_set_of_the_tasks_asyncio_wait_returns():
    check_every_mode(lambda x: asyncio.run(_tasks_waited(x)), 0.7)


def test_tangent_interface_of_sets_of_objects():
    shared = Node(0.25)
    for value in ({frozenset({1.0, 2.5}), Point(0.5), shared, (1.0, "a"), "label"},
                  frozenset({Point(-1.0, "x"), frozenset({0.75})}), [{shared}, shared]):
        check_tangent_interface(value)
