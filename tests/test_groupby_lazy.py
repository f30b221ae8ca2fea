"""``itertools.groupby`` is CPython's lazy iterator under differentiation (``ir/lazy_itertools.GroupBy``):
groups are iterators over the shared one, a group taken after the next was reached is empty, the
key is called once per item read, and comparison dunders of user classes that write are
differentiated as user code. Checked in every mode against central differences, and the value
against the plain call."""
import itertools

import numpy as np
import pytest

from .modes import check_every_mode

X = np.array([0.3, 0.7, 1.1, 0.2])


def sums_of_runs(x):
    xs = [x[0], x[1], x[2], x[3], 0.9]
    return sum(k * sum(g) for k, g in itertools.groupby(xs, key=lambda v: 1.0 if v > 0.5 else 2.0))


def groups_taken_late(x):  # CPython: every group listed after the groupby is exhausted is empty
    xs = [x[0], x[0], x[1], x[2]]
    groups = list(itertools.groupby(xs))
    return sum(k * (1 + len(list(g))) for k, g in groups)


def group_partly_taken(x):
    pairs = [(1, x[0]), (1, x[1]), (2, x[2]), (2, x[3]), (3, x[0] * x[3])]
    total = 0.0
    for k, g in itertools.groupby(pairs, key=lambda p: p[0]):
        total += k * next(g)[1]  # only the first of each group
    return total


def grouper_outlives_its_turn(x):
    it = itertools.groupby([x[0], x[0], x[1]])
    _, first = next(it)
    head = next(first)
    _, second = next(it)
    return head * sum(first) + sum(second) * 3.0  # first is empty once the groupby moved on


def list_changed_before_grouping(x):
    xs = [x[0], x[1], x[1]]
    g = itertools.groupby(xs)
    xs.append(x[2] * x[3])
    return sum(k * len(list(v)) for k, v in g)


class Logged:
    """A key whose == writes into a list: the writes carry derivatives."""

    def __init__(self, value, log):
        self.value, self.log = value, log

    def __eq__(self, other):
        self.log.append(self.value * other.value)
        return round(self.value) == round(other.value)


def dunders_that_write(x):
    log = []
    keys = [Logged(x[0] * 2.0, log), Logged(x[1], log), Logged(x[2] * 3.0, log)]
    sizes = [len(list(g)) for _, g in itertools.groupby(keys)]
    return sum(log) + float(sum(sizes))


@pytest.mark.parametrize("f", [sums_of_runs, groups_taken_late, group_partly_taken, grouper_outlives_its_turn,
                               list_changed_before_grouping, dunders_that_write], ids=lambda f: f.__name__)
def test_groupby_follows_cpython(f):
    check_every_mode(f, X)


class Node:
    def __init__(self, value):
        self.value, self.other = value, None


def cycle_through_a_rule(x):  # a groupby and its group reach each other; so do these two nodes
    a, b = Node(x[0]), Node(x[1] * x[2])
    a.other, b.other = b, a
    nodes = [a, b, a]
    return sum(n.value * n.other.value for n in sorted(nodes, key=lambda n: n.value))


def test_batched_forward_slices_a_cycle_of_objects():
    check_every_mode(cycle_through_a_rule, X[:3])
