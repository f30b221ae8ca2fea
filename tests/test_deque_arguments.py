"""A ``collections.deque`` passed into a differentiated function (issue 13): its gradient is a
deque with the same ``maxlen`` (docs/tangents.md, "Deques"), it may be changed in the function
(the caller's deque is left as it was), and derivatives agree with central differences in
reverse and forward mode and in second order (``yb.hvp``). ``rules/containers/deque_arguments.py``.
"""
from __future__ import annotations

import copy
import functools
import heapq
import itertools
import math
import operator
import statistics
from collections import deque

import numpy as np
import pytest

import yuebing as yb
from yuebing import tangents as T
from yuebing.testing import check_rule, check_tangent_interface
from yuebing.testing.structural import compare
from yuebing.tangents.validate import validate_tangent

H = 1e-6


# ------------------------------------------------------------------------------------------------
# The check: every mode against central differences, the caller's arguments untouched
# ------------------------------------------------------------------------------------------------


def _moved(args: tuple, v: tuple, step: float) -> tuple:
    return T.add_to_primal(T.structural_copy(args), v, step)


def _slope(f, args: tuple, v: tuple, h: float = H) -> float:
    return (f(*_moved(args, v, h)) - f(*_moved(args, v, -h))) / (2 * h)


def _unchanged(before: tuple, args: tuple, what: str) -> None:
    problem = compare(before, args)
    assert problem is None, f"{what} changed the caller's arguments: {problem}"


def check_modes(f, *args, tol: float = 1e-5, second_order: bool = True) -> None:
    """Gradient, JVP and Hessian-vector product of scalar ``f`` at ``args`` against central
    differences, each call leaving ``args`` as they were; gradients have the arguments' types
    (a deque's is a deque with its maxlen) and aliasing."""
    rng = np.random.default_rng(0)
    before = T.structural_copy(args)
    nums = tuple(range(len(args)))
    v = tuple(T.randn_tangent(rng, args))
    expected = _slope(f, args, v)

    value, grads = yb.value_and_grad(f, argnums=nums)(*args)
    _unchanged(before, args, "grad")
    assert value == pytest.approx(f(*T.structural_copy(args)), rel=1e-12)
    validate_tangent(args, grads)  # types (deques with their maxlen), shapes and aliasing
    assert T.dot(v, grads) == pytest.approx(expected, rel=tol, abs=tol), "reverse mode"

    _, tangent = yb.jvp(f, args, v)
    _unchanged(before, args, "jvp")
    assert tangent == pytest.approx(expected, rel=tol, abs=tol), "forward mode"

    if not second_order:
        return
    _, grads2, hv = yb.hvp(f, args, v)
    _unchanged(before, args, "hvp")
    validate_tangent(args, hv)
    w = tuple(T.randn_tangent(rng, args))
    assert T.dot(w, grads2) == pytest.approx(T.dot(w, grads), rel=1e-9, abs=1e-9), "hvp: gradient"
    gradient_along_w = lambda *xs: T.dot(w, yb.grad(f, argnums=nums)(*xs))  # noqa: E731
    assert T.dot(w, hv) == pytest.approx(_slope(gradient_along_w, args, v, 1e-5), rel=1e-4, abs=1e-4), "hvp"


def with_state_after(f, weights: list):
    """``f`` plus a projection of its deque argument's state after the call: the changes ``f``
    makes to the deque are differentiated too."""
    def g(d, *rest):
        y = f(d, *rest)
        return y + sum(w * v for w, v in zip(weights, d))

    return g


def _deques(*items: list, maxlens=(None, 3)) -> list:
    return [deque(xs, maxlen=m) for xs in items for m in maxlens]


# ------------------------------------------------------------------------------------------------
# Changing the deque: its methods, maxlen drops
# ------------------------------------------------------------------------------------------------


def window(d, x):
    for k in range(4):
        d.append(x * (k + 1.0))
    return sum(v * v for v in d)


def ends(d, x):
    d.appendleft(x * 2.0)
    v = d.pop()
    d.rotate(1)
    d.extend([x, x * x])
    w = d.popleft()
    d.extendleft([w * x])
    d.rotate(-2)
    return v * w + d[0] * d[-1]


def edits(d, x):
    d.insert(1, x * 3.0)  # (a full deque refuses, as CPython's: not at maxlen 3 here)
    d[0] = d[0] * x + 1.0  # (values kept apart: remove() below picks the first equal one)
    del d[-1]
    d.reverse()
    d += [x * x, 2.5]
    y = d.count(-9.0) + d.index(d[1]) + d[1]  # (no derivative; values chosen apart, not a kink)
    d.remove(d[2])
    return y * d[0] + d[-1]


def cleared(d, x):
    y = d[0] * x
    d.clear()
    d.append(y)
    d *= 2
    return y * d[-1]


CHANGES = [window, ends, edits, cleared]


@pytest.mark.parametrize("f", CHANGES, ids=lambda f: f.__name__)
@pytest.mark.parametrize("d", _deques([1.0, 2.0, 3.0], maxlens=(None, 3, 5)), ids=repr)
def test_changing_methods_every_mode(f, d):
    if f is edits and d.maxlen == 3:
        d = deque(d, maxlen=4)
    check_modes(with_state_after(f, [0.3, -1.1, 0.7, 0.2, 0.9, -0.4, 1.3, 0.5]), d, 0.7)


@pytest.mark.parametrize("f", CHANGES, ids=lambda f: f.__name__)
def test_changed_state_against_differences(f):
    """``check_rule`` compares the deque after the call too, in reverse and forward mode."""
    check_rule(f, deque([1.0, 2.0, 3.0], maxlen=4), 0.7)


def test_a_full_deque_refuses_insert_as_python_does():
    with pytest.raises(IndexError, match="maximum size"):
        yb.grad(edits, argnums=1)(deque([1.0, 2.0, 3.0], maxlen=3), 0.7)


def test_maxlen_zero_keeps_nothing():
    def f(d, x):
        d.append(x)
        d.extend([x, x])
        return x * len(d) + x * x

    check_modes(f, deque([], maxlen=0), 0.7)


# ------------------------------------------------------------------------------------------------
# Reading the deque: iteration, indexing, builtins, NumPy, star arguments
# ------------------------------------------------------------------------------------------------


def loops(d, x):
    total = 0.0
    for i, v in enumerate(d):
        total += (i + x) * v ** 2
    for v in d:
        total += v * x
    a, b, c = d
    return total + a * b * c + sum(u * w for u, w in zip(d, reversed(d)))


def builtins_(d, x):
    return min(d) * max(d) + sorted(d)[1] * x + math.fsum(d) + tuple(d)[0] * (-9.0 not in d) + next(iter(d)) * x


def numpy_(d, x):
    a = np.asarray(d)
    b = np.zeros(len(d))
    b[:] = d
    return float(a @ b) * x + float(np.mean(d)) + float(np.sum(np.array(d) ** 3))


def star(d, x):
    return max(*d) * x + np.hypot(*list(d)[:2]) + math.prod(d)


def containers(d, x):
    xs = [x]
    xs.extend(d)
    xs += d
    s = set()
    s.update(d)
    return sum(xs) * x + d[-1] * d[0] + len(s)


READS = [loops, builtins_, numpy_, star, containers]


@pytest.mark.parametrize("f", READS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("maxlen", [None, 3])
def test_reading_every_mode(f, maxlen):
    check_modes(f, deque([1.0, 2.0, 3.5], maxlen=maxlen), 0.7)


# ------------------------------------------------------------------------------------------------
# New deques, the deque returned, deques of arrays and objects
# ------------------------------------------------------------------------------------------------


def copies(d, x):
    e = d.copy()
    e.append(x)
    f = copy.copy(d)
    f.appendleft(x * x)
    g = d + deque([x])
    h = 2 * d
    k = copy.deepcopy(d)
    d.append(3.0 * x)
    return e[-1] * e[0] + f[0] * f[-1] + g[-1] * h[-1] + k[0] * d[-1]


def test_copies_every_mode():
    check_modes(copies, deque([1.0, 2.0], maxlen=3), 0.7)


def test_the_deque_returned():
    def f(d, x):
        d.append(x * x)
        d.rotate()
        return d

    d = deque([1.0, 2.0], maxlen=3)
    value, pullback = yb.vjp(f, d, 0.5)
    assert value == deque([0.25, 1.0, 2.0]) and value.maxlen == 3
    ct = deque([1.0, 10.0, 100.0], maxlen=3)
    g_d, g_x = pullback(ct)
    assert d == deque([1.0, 2.0])  # the pullback undoes the forward pass, as for a list
    assert type(g_d) is deque and g_d.maxlen == 3
    v = tuple(T.randn_tangent(np.random.default_rng(1), (d, 0.5)))
    plain = lambda d, x: T.dot(ct, f(d, x))  # noqa: E731
    assert T.dot(v, (g_d, g_x)) == pytest.approx(_slope(plain, (d, 0.5), v), rel=1e-6)
    out, tangent = yb.jvp(f, (d, 0.5), v)
    assert type(tangent) is deque and T.dot(ct, tangent) == pytest.approx(_slope(plain, (d, 0.5), v), rel=1e-6)


class Weight:
    def __init__(self, w):
        self.w = w


def arrays(d, x):
    d.appendleft(d[-1] * x)
    return float(np.sum(np.asarray(d) ** 2)) + float(np.sum(d[0] * d[1]))


def objects(d, x):
    d.append(Weight(x * d[0].w))
    d.popleft()
    d[0].w = d[0].w * x
    return d[0].w * d[-1].w + sum(o.w for o in d)


def test_a_deque_of_arrays_every_mode():
    check_modes(arrays, deque([np.ones(2), np.arange(2.0)], maxlen=2), 0.7)
    check_modes(arrays, deque([np.ones(3), np.linspace(0.0, 1.0, 3), np.full(3, 2.0)]), 0.7)


def test_a_deque_of_objects_every_mode():
    check_modes(objects, deque([Weight(1.5), Weight(2.0), Weight(-0.5)], maxlen=3), 0.7)


def test_gradients_are_deques_of_the_items_tangents():
    g = yb.grad(objects)(deque([Weight(1.5), Weight(2.0)], maxlen=4), 0.7)
    assert type(g) is deque and g.maxlen == 4 and all(type(t) is T.MutableTangent for t in g)
    g = yb.grad(arrays)(deque([np.ones(2), np.arange(2.0)]), 0.7)
    assert type(g) is deque and g.maxlen is None and all(type(t) is np.ndarray for t in g)


# ------------------------------------------------------------------------------------------------
# Aliasing
# ------------------------------------------------------------------------------------------------


def shared(p, x):
    d, e, xs = p
    d.append(x * xs[0])
    xs.append(x)
    return d[-1] * e[0] + e[-2] * xs[-1]


def holds_list(p, x):
    d, xs = p
    xs.append(x)
    d.append(x * x)
    return d[0][-1] * d[1] + xs[0] * d[-1]


def test_one_deque_reached_twice_shares_one_tangent():
    d = deque([1.0, 2.0, 3.0], maxlen=4)
    xs = [0.5]
    check_modes(shared, (d, d, xs), 0.7)
    g, _ = yb.grad(shared, argnums=(0, 1))((d, d, xs), 0.7)
    assert g[0] is g[1]  # one deque, one tangent deque (DESIGN.md §2)


def test_a_deque_holding_a_list_passed_beside_it():
    xs = [1.0, 2.0]
    check_modes(holds_list, (deque([xs, 3.0]), xs), 0.7)
    g = yb.grad(holds_list)((deque([xs, 3.0]), xs), 0.7)
    assert g[0][0] is g[1]  # the list's tangent, reached through the deque and beside it


def test_the_same_deque_as_two_arguments_is_refused_as_a_list_is():
    def f(d, e, x):
        d.append(x)
        return sum(d) * e[0]

    d = deque([1.0, 2.0])
    with pytest.raises(TypeError, match="argument 0 and argument 1 are the same deque.*lambda p: f"):
        yb.grad(f, argnums=(0, 1, 2))(d, d, 0.5)
    assert d == deque([1.0, 2.0])


def test_a_deque_made_outside_and_read_as_a_global():
    log = deque([1.0, 2.0], maxlen=3)

    def f(x):
        log.append(x)
        v = log.pop()
        log.appendleft(v * x)
        y = log[0] * log[-1]
        log.popleft()
        return y

    check_modes(f, 0.7)
    assert log == deque([1.0, 2.0])


# ------------------------------------------------------------------------------------------------
# The tangent type, and what stays refused
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("x", [deque([1.0, 2.5]), deque([1.0, np.ones(2), [3.0], (4.0, "a")], maxlen=6), deque(),
                               deque([Weight(1.0), 2], maxlen=2), (lambda q: [q, q, list(q)])(deque([1.0]))],
                         ids=["floats", "mixed", "empty", "objects", "aliased"])
def test_tangent_interface(x):
    check_tangent_interface(x)


def test_a_tangent_of_another_maxlen_or_type_is_refused():
    with pytest.raises(TypeError, match="maxlen=3"):
        validate_tangent(deque([1.0], maxlen=3), deque([1.0]))
    with pytest.raises(TypeError, match="must be a deque"):
        yb.jvp(lambda d: d[0], (deque([1.0]),), ([1.0],))


def test_a_subclass_of_deque_is_refused_by_name():
    class Window(deque):
        pass

    with pytest.raises(TypeError, match="Window, a subclass of collections.deque"):
        yb.grad(lambda d: d[0] * 2.0)(Window([1.0]))


def test_a_c_function_that_would_keep_the_deque_gets_the_deque():
    def f(d, x):
        kept = [d]
        kept[0].append(x)
        return kept[0][-1] * d[0]

    check_modes(f, deque([1.0, 2.0]), 0.7)


def test_jacobian_in_both_modes():
    f = lambda d, x: np.array([d[0] * x, d[-1] * d[0]])  # noqa: E731
    d = deque([1.0, 2.0], maxlen=4)
    rev = yb.jacobian(f, argnums=(0, 1))(d, 0.5)
    fwd = yb.jacobian(f, argnums=(0, 1), mode="fwd", chunk_size=1)(d, 0.5)
    assert type(rev[0]) is deque and rev[0].maxlen == 4
    for a, b in zip(list(rev[0]) + [rev[1]], list(fwd[0]) + [fwd[1]]):
        np.testing.assert_allclose(a, b, rtol=1e-12)
    np.testing.assert_allclose(rev[0][1], (f(deque([1.0, 2.0 + H]), 0.5) - f(deque([1.0, 2.0 - H]), 0.5)) / (2 * H),
                               rtol=1e-6)


def test_a_reader_that_changes_the_items_it_was_given_is_refused():
    """A call made on the list of a deque's items must not change that list: it would have
    changed the deque (the guard of ``deque_arguments._call_on_items``)."""
    from yuebing.rules.containers.deque_arguments import _call_on_items

    with pytest.raises(TypeError, match="cannot differentiate a C function that changes a collections.deque"):
        _call_on_items(lambda xs: xs.reverse(), (0,))(deque([1.0, 2.0]))
    assert _call_on_items(sum, (0,))(deque([1.0, 2.0])) == 3.0


def _read_ends(d, x):
    return np.array([d[0] * x, d[-1] * d[0]])


def _pushed_and_walked(d, x):
    d.append(x * x)  # (maxlen 3: the first item drops out)
    d.rotate(1)
    total = 0.0
    for v in d:
        total = total + v * x
    return np.array([total, d[0] * d[-1], d.pop() - d.popleft()])


def _extended(d, x):
    d.extend([x, 2.0 * x])
    d.appendleft(d[1] * x)
    return np.array([sum(d), max(d) * min(d)])


@pytest.mark.parametrize("f", [_read_ends, _pushed_and_walked, _extended], ids=lambda f: f.__name__)
def test_forward_jacobian_of_a_deque_argument(f):
    """Batched forward mode slices a deque's tangent into one deque per direction (its maxlen
    kept) and stacks them back; it asked for chunk_size=1 before."""
    d, x = deque([1.0, 2.0, -0.5], maxlen=3), 0.7
    before = T.structural_copy((d, x))
    forward = yb.jacobian(f, argnums=(0, 1), mode="fwd")(d, x)
    _unchanged(before, (d, x), "jacobian(mode='fwd')")
    reverse = yb.jacobian(f, argnums=(0, 1), mode="rev")(d, x)
    assert type(forward[0]) is deque and forward[0].maxlen == 3
    for i in range(len(d)):
        moved = [deque([v + (h if j == i else 0.0) for j, v in enumerate(d)], maxlen=3) for h in (1e-6, -1e-6)]
        expected = (f(moved[0], x) - f(moved[1], x)) / 2e-6
        np.testing.assert_allclose(forward[0][i], expected, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(reverse[0][i], expected, rtol=1e-5, atol=1e-6)
    expected_x = (f(copy.deepcopy(d), x + 1e-6) - f(copy.deepcopy(d), x - 1e-6)) / 2e-6
    np.testing.assert_allclose(forward[1], expected_x, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(reverse[1], expected_x, rtol=1e-5, atol=1e-6)


# ------------------------------------------------------------------------------------------------
# f(*x) of an iterable whose tangent the call cannot split: listed with its derivatives first (it
# once dropped them, then was refused: transform/runtime._listed_star)
# ------------------------------------------------------------------------------------------------


class Bag:
    def __init__(self, xs):
        self.xs = xs

    def __iter__(self):
        return iter(self.xs)


STARRED = {
    "deque made inside": lambda x: deque([x, 2.0 * x, x * x]),
    "user iterable": lambda x: Bag([x, 2.0 * x, x * x]),
    "dict values": lambda x: {"a": x, "b": 2.0 * x, "c": x * x}.values(),
    "set": lambda x: {x, 2.0 * x, x * x},
    "iterator": lambda x: iter([x, 2.0 * x, x * x]),
}


@pytest.mark.parametrize("make", STARRED.values(), ids=STARRED.keys())
def test_star_arguments_of_any_iterable_every_mode(make):
    # (it gave 3.0 for 6.0 at x = 1.5 in reverse and forward mode before it was refused)
    check_modes(lambda x: max(*make(x)) * x, 1.5)
    if make is not STARRED["set"]:  # (a set's order moves with its floats' hashes: not a smooth function)
        check_modes(lambda x: _spread(*make(x)) * x, 1.5)


def _spread(a, b, c):
    return a * math.sin(b) - c * c


def test_deques_inside_other_arguments_every_mode():
    def f(p, x):
        p["queues"][0].append(x)
        p["queues"][1].appendleft(x * x)
        return ends(p["queues"][0], x) + window(p["queues"][1], x) + p["w"] * p["queues"][1][0]

    check_modes(f, {"queues": [deque([1.0, 2.0, 3.0]), deque([0.5, 1.5], maxlen=3)], "w": 2.0}, 0.7)


def test_prepared_gradient_reuses_its_buffers_for_new_deques():
    prepared = yb.prepare_gradient(ends, deque([1.0, 2.0, 3.0], maxlen=3), 0.7)
    for d in (deque([1.0, 2.0, 3.0], maxlen=3), deque([2.0, -1.0, 0.5], maxlen=3)):
        value, gradient = prepared(d, 0.7)
        expected_value, expected = yb.value_and_grad(ends)(copy.deepcopy(d), 0.7)
        assert value == expected_value and type(gradient) is deque and gradient.maxlen == 3
        np.testing.assert_allclose(list(gradient), list(expected), rtol=1e-12)


LOG = deque([1.0, 2.0], maxlen=3)


def logged(x):
    LOG.append(x * x)
    LOG.rotate(1)
    y = LOG[0] * LOG[1] * x + sum(LOG)
    LOG.popleft()
    return y


def test_third_order_of_a_global_deque():
    from yuebing.testing.third_order import check_third_order

    check_third_order(logged, 0.7)
    assert LOG == deque([1.0, 2.0]) and LOG.maxlen == 3


def _first_times_last(a, *rest):
    return a * rest[-1]


IDIOMS = {
    "functools.reduce": lambda d, x: functools.reduce(operator.mul, d) * x,
    "heapq.nlargest": lambda d, x: sum(heapq.nlargest(2, d)) * x,
    "statistics.fmean": lambda d, x: statistics.fmean(d) * x,
    "sorted with key": lambda d, x: sorted(d, key=lambda v: -v)[0] * x + min(d, key=abs),
    "starred parameters": lambda d, x: _first_times_last(*d) * x,
    "truth and ==": lambda d, x: (x * d[0] if d else x) + x * d[1] * (d == deque([9.0])),
    "map": lambda d, x: sum(list(map(lambda v: v * v, d))) * x,
    "np.dot": lambda d, x: float(np.dot(d, np.arange(3.0))) * x,
    "sum with start": lambda d, x: sum(d, 1.0) * x,
    "itertools": lambda d, x: (list(itertools.accumulate(d))[-1] + sum(itertools.islice(d, 1, None))
                               + sum(itertools.chain(d, [x]))) * x,
    "dict of zip": lambda d, x: dict(zip("abc", d))["b"] * x,
}


@pytest.mark.parametrize("f", IDIOMS.values(), ids=IDIOMS.keys())
def test_everyday_reads_every_mode(f):
    check_modes(f, deque([1.0, 2.0, 3.5], maxlen=4), 0.7)


def _sum_squares(a) -> float:
    return float(np.sum(np.asarray(a) ** 2))


WITH_ARRAYS = {
    "ndarray.dot": lambda d, x: float((np.arange(3.0) * x).dot(d)),
    "array + deque": lambda d, x: _sum_squares(np.arange(3.0) * x + d) + _sum_squares(d - np.ones(3) * x),
    "deque * array": lambda d, x: _sum_squares(d * (np.arange(3.0) * x)),
    "array += deque": lambda d, x: _sum_squares(operator.iadd(np.arange(3.0) * x, d)),
}


@pytest.mark.parametrize("f", WITH_ARRAYS.values(), ids=WITH_ARRAYS.keys())
def test_arrays_meeting_a_deque_read_it_as_numpy_does(f):
    check_modes(f, deque([1.0, 2.0, 3.5], maxlen=4), 0.7)
