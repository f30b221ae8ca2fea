"""Shared references, cycles, views and deep nesting in the tangent model."""
import numpy as np
import pytest

import yuebing.tangents as T
from yuebing.testing import assert_structurally_equal, check_tangent_interface, compare


class RingNode:
    def __init__(self, value):
        self.value = value
        self.next = self
        self.prev = self


def ring(n):
    nodes = [RingNode(float(i)) for i in range(n)]
    for i, node in enumerate(nodes):
        node.next = nodes[(i + 1) % n]
        node.prev = nodes[(i - 1) % n]
    return nodes[0]


def test_doubly_linked_ring_gives_a_ring_of_tangents():
    head = ring(5)
    t = T.zero_tangent(head)
    node = t
    for _ in range(5):
        assert node.next.prev is node and node.prev.next is node
        node = node.next
    assert node is t
    check_tangent_interface(head)


def test_ring_increment_counts_each_node_once():
    head = ring(4)
    a = T.zero_tangent(head)
    b = T.zero_tangent(head)
    node = b
    for _ in range(4):
        node.value = 1.0
        node = node.next
    T.increment(a, b)
    node = a
    for _ in range(4):
        assert node.value == 1.0
        node = node.next
    assert T.dot(a, a) == 4.0


def test_list_that_contains_itself():
    x = [1.0, 2.0]
    x.append(x)
    t = T.randn_tangent(np.random.default_rng(0), x)
    assert t[2] is t
    moved = T.add_to_primal(x, t)
    assert moved[2] is moved and moved is not x
    check_tangent_interface(x)


def test_dict_whose_value_is_the_dict():
    d = {"a": 1.0}
    d["self"] = d
    t = T.zero_tangent(d)
    assert t["self"] is t
    check_tangent_interface(d)


def test_tuple_holding_the_same_array_twice():
    a = np.ones(3)
    x = (a, a)
    t = T.randn_tangent(np.random.default_rng(0), x)
    assert t[0] is t[1]
    assert T.dot(t, t) == pytest.approx(float(t[0] @ t[0]))  # counted once
    T.increment(t, t)  # aliased: doubled once, not quadrupled
    check_tangent_interface(x)


def test_increment_does_not_double_count_shared_list():
    inner = [1.0, np.zeros(2)]
    x = {"p": inner, "q": inner}
    a = T.zero_tangent(x)
    b = T.zero_tangent(x)
    b["p"][0] = 1.0
    b["p"][1][:] = 2.0
    T.increment(a, b)
    assert a["p"] is a["q"]
    assert a["p"][0] == 1.0 and np.all(a["q"][1] == 2.0)


def test_views_share_tangent_memory():
    base = np.arange(6.0).reshape(2, 3)
    x = [base, base[1], base.T]
    t = T.zero_tangent(x)
    t[0][1, 2] = 5.0
    assert t[1][2] == 5.0 and t[2][2, 1] == 5.0
    assert T.dot(t, t) == 25.0  # the shared memory counts once
    check_tangent_interface(x)


def test_two_views_of_a_hidden_base_share_tangent_memory():
    hidden = np.zeros(10)
    x = (hidden[:6], hidden[4:])
    t = T.zero_tangent(x)
    t[0][5] = 1.0
    assert t[1][1] == 1.0
    check_tangent_interface(x)


def test_a_lone_view_gets_its_own_small_tangent():
    big = np.zeros(10_000)
    t = T.zero_tangent([big[:3]])
    assert t[0].base is None and t[0].shape == (3,)


def test_add_to_primal_keeps_views():
    base = np.arange(4.0)
    x = [base, base[::2]]
    moved = T.add_to_primal(x, T.randn_tangent(np.random.default_rng(0), x))
    moved[0][0] = 100.0
    assert moved[1][0] == 100.0 and base[0] == 0.0


DEPTH = 10_000


def nested_list(depth):
    x = [1.0]
    for _ in range(depth):
        x = [x, 2.0]
    return x


def test_ten_thousand_deep_list():
    x = nested_list(DEPTH)
    t = T.randn_tangent(np.random.default_rng(0), x)
    zero = T.zero_tangent(x)
    assert T.dot(t, zero) == 0.0
    T.increment(zero, t)
    assert T.dot(zero, zero) == pytest.approx(T.dot(t, t))
    moved = T.add_to_primal(x, t)
    assert compare(x, moved, check_values=False) is None
    assert_structurally_equal(T.scale(t, 2.0), T.add(t, t))
    T.set_to_zero(t)
    assert T.dot(t, t) == 0.0


@pytest.mark.slow  # 25 s: the default run keeps test_ten_thousand_deep_list
def test_ten_thousand_deep_tuples_and_objects():
    x = (1.0,)
    for _ in range(DEPTH):
        x = (x, 2.0)
    f, r = T.fdata(T.zero_tangent(x)), T.rdata(T.zero_tangent(x))
    assert f is T.NoFData
    assert T.join(f, r) is not None
    head = RingNode(0.0)
    node = head
    for i in range(DEPTH):
        node.next = RingNode(float(i))
        node = node.next
    check_tangent_interface(head)


def test_deep_structure_error_reports_path():
    x = nested_list(3)
    t = T.zero_tangent(x)
    t[0][0][0][0] = "bad"
    with pytest.raises(TypeError, match=r"x\[0\]\[0\]\[0\]\[0\]"):
        T.add_to_primal(x, t)
