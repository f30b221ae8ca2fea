"""A set holding tuples of floats (``{(x, 1.0), (y, "b")}``): its ``SetTangent`` keeps each tuple's
tangent (a tuple, ``NoTangent`` for the labels in it) as it keeps a float's. Before, such a set
was refused ("a set's tangent holds the derivatives of float and complex elements only"). Built,
combined, mutated and read, each case against central differences in reverse, forward and second
order; a set passed in is restored and its gradient is a ``SetTangent`` of tuples.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.tangents import NoTangent, SetTangent
from yuebing.testing import check_tangent_interface

from .modes import check_every_mode


def pairs_summed(x):
    s = {(x[0], 1.0), (x[1] * x[2], 2.0), (x[0], 1.0)}  # the equal pair is not added again
    return sum(a * b for a, b in s)


def pairs_added_and_discarded(x):
    s = set()
    for k in range(3):
        s.add((x[k] * (k + 1), k))
    s.discard((x[1] * 2, 1))
    s |= {(x[3], 7)}
    return sum(a * a * (k + 1) for a, k in sorted(s, key=lambda p: p[1]))


def pairs_combined(x):
    a = {(x[0], "a"), (x[1], "b")}
    b = {(x[1], "b"), (x[2] * x[3], "c")}
    union, both, only = a | b, a & b, a - b
    return sum(v * v for v, _ in union) + 3.0 * sum(v for v, _ in both) + sum(v for v, _ in only) ** 2


def nested_pairs_in_frozenset(x):
    fs = frozenset({((x[0], 2), x[1]), ((x[2], 3), 0.5)})
    return sum(p[0][0] * p[1] * p[0][1] for p in fs)


def pair_popped_and_looked_up(x):
    s = {(x[0], 1), (x[1], 2)}
    t = set([(x[2] * x[3], "only")])  # (which element pop takes depends on the hashes: one here)
    first = t.pop()
    return first[0] * 3.0 + sum(v for v, _ in s) + ((x[0], 1) in s) * x[2] + max(s)[0] * x[3] + len(t)


CASES = [pairs_summed, pairs_added_and_discarded, pairs_combined, nested_pairs_in_frozenset,
         pair_popped_and_looked_up]
X = np.array([0.3, 0.8, 1.3, 0.55])


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_sets_of_tuples_in_every_mode(f):
    check_every_mode(f, X)


def _weighted(s, w):
    s.add((w * w, "w"))
    return sum(a * a for a, _ in s) * w


def test_a_set_of_tuples_passed_in_is_restored_and_gets_its_gradient():
    s, w, h = {(0.5, "a"), (-1.25, "b")}, 0.75, 1e-6
    before = set(s)
    value, (gs, gw) = yb.value_and_grad(_weighted, argnums=(0, 1))(s, w)
    assert s == before
    assert value == pytest.approx(_weighted(set(s), w))
    assert type(gs) is SetTangent
    for a, label in before:
        up = {(b + h, m) if m == label else (b, m) for b, m in before}
        down = {(b - h, m) if m == label else (b, m) for b, m in before}
        expected = (_weighted(up, w) - _weighted(down, w)) / (2 * h)
        assert gs[(a, label)][0] == pytest.approx(expected, rel=1e-6)
    assert gw == pytest.approx((_weighted(set(s), w + h) - _weighted(set(s), w - h)) / (2 * h), rel=1e-6)
    t = yb.jvp(_weighted, (s, w), (SetTangent({(0.5, "a"): (1.0, NoTangent),
                                                (-1.25, "b"): (0.0, NoTangent)}), 0.0))[1]
    assert s == before
    assert t == pytest.approx(gs[(0.5, "a")][0], rel=1e-9)


def test_tangent_interface_of_sets_of_tuples():
    shared = (1.0, "a")
    for value in ({shared, (2.5, ("b", -0.5)), 3}, frozenset({(np.float64(0.25), 1), (2j, "c")}), [{shared}, shared]):
        check_tangent_interface(value)
