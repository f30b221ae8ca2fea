"""Sets and frozensets of floats (issue 13): their tangent is a ``SetTangent`` (element -> its
tangent), and building, reading and mutating them carries derivatives in reverse, forward and
second order. Checked against central differences taken at points where a small step neither
merges nor reorders elements (equal values in two operands move together)."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.tangents import SetTangent
from yuebing.testing import check_rule, check_tangent_interface

H = 1e-6
X = 0.7


def _central(f, x: float, h: float = H) -> float:
    return (f(x + h) - f(x - h)) / (2 * h)


def _all_modes(f, x: float = X) -> None:
    """grad, jvp and hvp of scalar ``f`` at ``x`` against central differences."""
    expected = _central(f, x)
    assert yb.grad(f)(x) == pytest.approx(expected, rel=1e-6, abs=1e-6)
    value, tangent = yb.jvp(f, (x,), (1.0,))
    assert value == pytest.approx(f(x))
    assert tangent == pytest.approx(expected, rel=1e-6, abs=1e-6)
    _, grads, hvps = yb.hvp(f, (x,), (1.0,))
    assert grads[0] == pytest.approx(expected, rel=1e-6, abs=1e-6)
    assert hvps[0] == pytest.approx(_central(yb.grad(f), x, 1e-5), rel=1e-5, abs=1e-5)


# ------------------------------------------------------------------------------------------------
# Building and reading
# ------------------------------------------------------------------------------------------------


def built_by_display(x):
    s = {x, 2.0 * x, 3.0}
    return sum(s) * max(s) + min(s) ** 2 + len(s)


def built_from_iterables(x):
    a = set([x, x * x, 1.5])
    b = frozenset((np.sin(x), 4.0))
    c = set(np.array([x, 3.0 * x]))
    return sum(a) * sum(b) + sum(v ** 2 for v in c)


def comprehension_and_loop(x):
    s = {v * x for v in [1.0, 2.0, 3.0]}
    total = 0.0
    for v in s:
        total += v ** 3
    return total + sum(sorted(s)[:2]) + list(sorted(s))[-1] * x


def membership_and_copies(x):
    s = {x, 5.0}
    t = s.copy()
    f = frozenset(t)
    bonus = 1.0 if 5.0 in f else 0.0
    return sum(t) * sum(f) + bonus * x + sum(list(s)) ** 2


@pytest.mark.parametrize("f", [built_by_display, built_from_iterables, comprehension_and_loop, membership_and_copies])
def test_build_and_read(f):
    _all_modes(f)


def test_the_construct_suites_sum_of_a_set():
    _all_modes(lambda x: sum({1.0, 2.0}) * x)


# ------------------------------------------------------------------------------------------------
# Operators and methods that build new sets
# ------------------------------------------------------------------------------------------------


def operators(x):
    a = {x, 2.0 * x, 3.0}
    b = {3.0, x * x}
    union = a | b
    both = a & {x, 9.0}  # x is in both: it moves with itself
    only = a - {3.0}
    either = a ^ {2.0 * x, 7.0 * x}
    return sum(v ** 2 for v in union) + sum(both) * 5.0 + max(only) * min(only) + sum(v ** 3 for v in either)


def methods(x):
    a = {x, 2.0 * x}
    u = a.union([x * x], (4.0,))
    i = u.intersection({2.0 * x, 8.0})
    d = u.difference([x])
    s = u.symmetric_difference(frozenset({x * x, 6.0}))
    return sum(u) * sum(i) + sum(d) ** 2 + sum(v * v for v in s)


def frozen_operators(x):
    a = frozenset({x, 1.0})
    b = a | frozenset({x ** 2})
    c = b
    c |= {3.0 * x}  # a frozenset has no in-place operators: c = c | {...}, b unchanged
    c -= {1.0}
    c ^= frozenset({np.exp(x)})
    c &= {x, 3.0 * x, np.exp(x)}
    return sum(b) * sum(a & {1.0, x}) + len(b) + sum(v ** 2 for v in c)


@pytest.mark.parametrize("f", [operators, methods, frozen_operators])
def test_operators_and_methods(f):
    _all_modes(f)


# ------------------------------------------------------------------------------------------------
# Mutation inside the function
# ------------------------------------------------------------------------------------------------


def mutations(x):
    s = set()
    s.add(x)
    s.add(2.0 * x)
    s.add(x)  # present: nothing changes
    s.update([x * x, 5.0], {np.cos(x)})
    s.discard(5.0)
    s.remove(2.0 * x)
    s |= {3.0 * x}
    s -= {x * x}
    s ^= {4.0, np.cos(x)}
    s &= {x, 3.0 * x, 4.0}
    return sum(v ** 2 for v in s) * max(s)


def popping(x):
    # which element pop() takes depends on the values' hashes, which any step reshuffles: pop
    # from a set of one, so central differences see one branch
    s = {10.0 * x}
    first = s.pop()
    s.update([x, x * x])
    rest = sum(s)
    s.clear()
    s.add(first * rest)
    return sum(s) + first ** 2


def method_updates(x):
    s = {x, 2.0 * x, 3.0}
    s.intersection_update([2.0 * x, 3.0])
    s.difference_update({3.0})
    s.symmetric_difference_update([x ** 3])
    return sum(v * v for v in s)


@pytest.mark.parametrize("f", [mutations, popping, method_updates])
def test_mutation_inside(f):
    _all_modes(f)


# ------------------------------------------------------------------------------------------------
# Equal values: Python keeps the first inserted, and its derivative
# ------------------------------------------------------------------------------------------------


def test_equal_values_keep_the_first_inserted():
    # at x = 1, x and x * x are equal: the set keeps x (the first), so its derivative is x's.
    # Moving x parts them (a kink), so the convention is checked against the kept element alone.
    def f(x):
        return sum({x, x * x})

    kept = _central(lambda x: x, 1.0)
    assert yb.grad(f)(1.0) == pytest.approx(kept)
    assert yb.jvp(f, (1.0,), (1.0,))[1] == pytest.approx(kept)

    def g(x):
        s = {x * x}
        s.add(x)  # equal to the element present: not added, as Python does
        return sum(s)

    assert yb.grad(g)(1.0) == pytest.approx(_central(lambda x: x * x, 1.0))
    assert yb.jvp(g, (1.0,), (1.0,))[1] == pytest.approx(_central(lambda x: x * x, 1.0))


# ------------------------------------------------------------------------------------------------
# Sets as arguments: gradients keyed by element, mutations undone
# ------------------------------------------------------------------------------------------------


def _moved(s, element, h):
    return type(s)(v + h if v == element else v for v in s)


def _set_gradient_by_differences(f, s, *rest):
    return {v: (f(_moved(s, v, H), *rest) - f(_moved(s, v, -H), *rest)) / (2 * H) for v in s}


def uses_and_mutates(s, x):
    s.add(x * x)
    s.discard(min(s))
    return sum(v ** 2 for v in s) * x + max(s)


def test_set_argument_gradient_and_restoration():
    s = {0.5, -1.25, np.float64(2.0)}
    snapshot = set(s)
    objects = {id(v) for v in s}
    gs, gx = yb.grad(uses_and_mutates, argnums=(0, 1))(s, X)
    assert s == snapshot and {id(v) for v in s} == objects  # the mutation was undone: the same objects
    assert isinstance(gs, SetTangent) and set(gs) == snapshot
    expected = _set_gradient_by_differences(lambda t, x: uses_and_mutates(set(t), x), s, X)
    for v in s:
        assert gs[v] == pytest.approx(expected[v], rel=1e-6, abs=1e-6)
    assert gx == pytest.approx(_central(lambda x: uses_and_mutates(set(s), x), X), rel=1e-6)


def test_set_argument_forward_and_second_order():
    s = {0.5, -1.25, 2.0}
    direction = SetTangent({0.5: 1.0, -1.25: -2.0, 2.0: 0.5})

    def along(h):
        return uses_and_mutates({v + h * direction[v] for v in s}, X)

    value, tangent = yb.jvp(lambda t: uses_and_mutates(t, X), (s,), (direction,))
    assert s == {0.5, -1.25, 2.0}
    assert tangent == pytest.approx(_central(along, 0.0), rel=1e-6)
    _, grads, hvps = yb.hvp(lambda t: uses_and_mutates(t, X), (s,), (direction,))
    assert s == {0.5, -1.25, 2.0}

    def gradient_along(h):  # d/dh of the gradient at s + h * direction, element by element
        moved = {v + h * direction[v]: v for v in s}
        g = yb.grad(lambda t: uses_and_mutates(t, X))(set(moved))
        return np.array([g[k] for k in sorted(moved, key=lambda k: moved[k])])

    expected = (gradient_along(1e-5) - gradient_along(-1e-5)) / 2e-5
    assert np.allclose([hvps[0][v] for v in sorted(s)], expected, rtol=1e-5, atol=1e-5)


def mutates_its_argument(s, x):
    s |= {x * x, 4.0}
    s -= {4.0}
    s.update([2.0 * x])
    s.discard(min(s))
    return sum(v ** 2 for v in s) * x + max(s)


def builds_from_its_argument(s, x):
    t = frozenset(v * x for v in s)
    return sorted(t | s)


def test_check_rule_on_functions_of_sets():
    # finite differences on the output and on the argument after the call, reverse against
    # forward, accumulation, restoration of the argument, aliasing, repeatability
    check_rule(mutates_its_argument, {0.5, -1.25, np.float64(2.0)}, X)
    check_rule(builds_from_its_argument, frozenset({0.5, -1.25}), X)


def test_frozenset_argument():
    fs = frozenset({1.5, -0.5})

    def f(t, x):
        return sum(v * x for v in t | {x}) + max(t) ** 2

    g = yb.grad(f)(fs, X)
    expected = _set_gradient_by_differences(f, fs, X)
    assert {v: pytest.approx(e) for v, e in expected.items()} == dict(g)


def test_tangent_interface_of_sets():
    shared = {1.0, 2.5}
    for value in ({1.0, 2.5, "label", 3}, frozenset({-1.0, 0.25}), [shared, (shared, 4.0)], {np.float64(1.5), 2j}):
        check_tangent_interface(value)


# ------------------------------------------------------------------------------------------------
# Refused, with the construct named
# ------------------------------------------------------------------------------------------------


def test_a_float_into_a_label_set_passed_in_is_refused():
    def f(labels, x):
        labels.add(x)
        return sum(v for v in labels if isinstance(v, float))

    labels = {1, 2}
    with pytest.raises(Exception, match="carries no derivatives"):
        yb.grad(f, argnums=1)(labels, X)
    assert labels == {1, 2}


def test_second_order_reads_a_set_by_element_whatever_the_tangents_order():
    # a SetTangent given in another order than the set iterates: list(s), for, enumerate and sum
    # find each element's tangent by the element (a Hessian-vector product against differences)
    s = {0.5, -1.25, 2.0}

    def f(t):
        return sum(v ** 3 for v in t) + sum(i * v * v for i, v in enumerate(sorted(t))) + sum(list(t)) ** 2

    for direction in (SetTangent({0.5: 1.0, -1.25: -2.0, 2.0: 0.5}), SetTangent({2.0: 0.5, -1.25: -2.0, 0.5: 1.0})):
        hvp = yb.hvp(f, (s,), (direction,))[2][0]

        def gradient_at(h):
            g = yb.grad(f)({v + h * direction[v] for v in s})
            return np.array([g[k] for k in sorted(g)])

        expected = (gradient_at(1e-5) - gradient_at(-1e-5)) / 2e-5
        assert np.allclose([hvp[v] for v in sorted(s)], expected, rtol=1e-5, atol=1e-5)


def _weighted(values):
    return sum(v * v * (i + 1) for i, v in enumerate(values))


def _extended_in_place(x, through_list):
    lst = [0.0]
    s = {x[0] ** 2, x[1] * 3.0, np.sin(x[2])}
    lst += list(s) if through_list else s
    return _weighted(lst)


def test_a_list_extended_by_a_set_in_place_is_refused_in_second_order_with_advice_that_works():
    # `lst += s` extended the list's tangent by the set's (a dict, in its own order): the HVP was
    # wrong; first order and forward mode follow the set's elements
    x, v = np.array([0.7, 0.2, 1.1]), np.array([1.0, -0.5, 0.3])
    with pytest.raises(yb.rules.core.RuleArgumentError, match=r"write lst \+= list\(s\)"):
        yb.hvp(lambda a: _extended_in_place(a, False), (x,), (v,))
    hvp = yb.hvp(lambda a: _extended_in_place(a, True), (x,), (v,))[2][0]
    gradient = yb.grad(lambda a: _extended_in_place(a, True))
    np.testing.assert_allclose(hvp, (gradient(x + 1e-5 * v) - gradient(x - 1e-5 * v)) / 2e-5, rtol=1e-5, atol=1e-5)
