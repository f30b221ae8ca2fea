"""The containers of ``collections`` (issue 13): ``defaultdict`` (its factory ``float``, ``list``, a
lambda, ``lambda: np.zeros(3)``), ``OrderedDict`` (``move_to_end``, ``popitem``), ``Counter`` of
floats (``+=``, ``most_common``), ``ChainMap``, and ``deque``; each built in the function and
passed in, in every mode against central differences (``tests/all_modes.py``), the arguments
restored after each call."""
from __future__ import annotations

import collections
import copy

import numpy as np
import pytest

import yuebing as yb
from tests.all_modes import check_all_modes
from tests.modes import check_every_mode

# ------------------------------------------------------------------------------------------------
# Built inside the function
# ------------------------------------------------------------------------------------------------


def defaultdict_float(x):
    d = collections.defaultdict(float)
    for key, value in [("a", x), ("b", x * x), ("a", 3.0 * x)]:
        d[key] += value
    return d["a"] * d["b"] + d["c"] + len(d)


def defaultdict_list(x):
    d = collections.defaultdict(list)
    d["a"].append(x)
    d["a"].append(x * x)
    d["b"].append(np.sin(x))
    return sum(d["a"]) * d["b"][0]


def defaultdict_lambda(x):
    d = collections.defaultdict(lambda: 1.5)
    d["a"] *= x
    d["b"] += x * x
    return d["a"] * d["b"] + d["c"]


def defaultdict_zeros(x):
    d = collections.defaultdict(lambda: np.zeros(3))
    d["a"] += x * np.arange(3.0)
    d["a"] += x * x
    d["b"][1] = np.cos(x)
    return float(np.sum(d["a"] ** 2) + np.sum(d["b"]))


def defaultdict_methods(x):
    d = collections.defaultdict(float, {"a": x})
    d.setdefault("b", x * 2.0)
    d.update(c=x ** 3)
    e = d.copy()
    e["d"] += 1.0
    return d.pop("a") * d.get("b") + sum(e.values()) * d.get("z", 0.5)


def ordered_dict(x):
    d = collections.OrderedDict()
    d["a"] = x
    d["b"] = x * x
    d["c"] = 2.0
    d.move_to_end("a")
    d.move_to_end("c", last=False)
    key, value = d.popitem()
    first_key, first = d.popitem(last=False)
    d["e"] = np.exp(x)
    return value * first + sum(d.values()) * len(key + first_key)


def ordered_dict_from_pairs(x):
    d = collections.OrderedDict([("a", x), ("b", x * 3.0)], c=x * x)
    d.move_to_end("b")
    del d["a"]
    return list(d.values())[0] * d["b"] + d.pop("c")


def counter(x):
    c = collections.Counter()
    c["a"] += x
    c["b"] += x * x
    c["a"] += 1.0
    (key, top), = c.most_common(1)
    return top * c["b"] + c["missing"] * x


def counter_update(x):
    c = collections.Counter({"a": x, "b": 2.0})
    c.update({"a": x * x, "c": 1.0})
    c += collections.Counter({"b": x})
    return sum(v * w for (_, v), w in zip(c.most_common(), (1.0, 2.0, 3.0)))


def chain_map(x):
    a = {"a": x}
    b = {"a": 2.0, "b": x * x}
    m = collections.ChainMap(a, b)
    m["c"] = x ** 3
    return m["a"] * m["b"] + a["c"] + len(m)


def deque_window(x):
    q = collections.deque(maxlen=3)  # a sliding window: a full deque drops the other end
    for k in range(5):
        q.append(x * k + 1.0)
    q.appendleft(x * x)
    q.rotate(1)
    a, b = q.pop(), q.popleft()
    s = 0.0
    for v in q:
        s += v
    assert isinstance(q, collections.deque) and q.maxlen == 3
    return a * b + s * q[0]


def deque_edits(x):
    q = collections.deque([x, 2.0 * x, x * x])
    q.extendleft([np.sin(x), 3.0])
    q.rotate(-2)
    q[1] *= x
    del q[0]
    q += [x ** 3]
    r = q.copy()
    r.reverse()
    r.extend(q)
    return sum(q) * len(q) + q[-1] * max(q) + r[0] * r[-2] + sum(r) * (2.0 in q)


def deque_to_numpy(x):
    q = collections.deque([x, 2.0 * x, x * x], maxlen=3)
    q.append(x ** 3)
    return float(np.mean(q)) + float(np.sum(np.asarray(q) ** 2)) + float(np.dot(q, [1.0, 2.0, 3.0]))


BUILT = [deque_window, deque_edits, deque_to_numpy, defaultdict_float, defaultdict_list, defaultdict_lambda, defaultdict_zeros, defaultdict_methods,
         ordered_dict, ordered_dict_from_pairs, counter, counter_update, chain_map]


@pytest.mark.parametrize("f", BUILT, ids=lambda f: f.__name__)
def test_built_in_the_function(f):
    check_all_modes(f, 0.7)


@pytest.mark.parametrize("f", [deque_window, defaultdict_zeros, ordered_dict, counter_update],
                         ids=lambda f: f.__name__)
def test_hessian_and_forward_jacobian(f):
    check_every_mode(f, 0.7)  # also yb.hessian and yb.jacobian(mode="fwd") against differences


def test_a_factory_capturing_derivatives_is_followed():
    """(It was refused; tests/test_defaultdict_factories.py has more.)"""
    def f(x):
        d = collections.defaultdict(lambda: x)
        return d["a"] * x

    check_every_mode(f, 0.7)


# ------------------------------------------------------------------------------------------------
# Passed in: the gradient is the argument's structure, and the argument is left as it was
# ------------------------------------------------------------------------------------------------


def _fill_defaultdict(d, x):
    d["new"] += x * d["a"]
    d["a"] *= x
    return d["a"] + d["new"] * d["b"]


def _reorder(d, x):
    d.move_to_end("a")
    k, v = d.popitem(last=False)
    d[k] = v * x
    return d[k] * d["a"] + sum(d.values())


def _count_into(c, x):
    c["z"] += x
    c["a"] *= x
    (_, top), = c.most_common(1)
    return top * c["a"] + c["z"]


@pytest.mark.parametrize("make, f", [
    (lambda: collections.defaultdict(float, {"a": 1.3, "b": -0.4}), _fill_defaultdict),
    (lambda: collections.OrderedDict([("a", 1.3), ("b", -0.4), ("c", 0.9)]), _reorder),
    (lambda: collections.Counter({"a": 1.3, "b": 0.4}), _count_into),
], ids=["defaultdict", "OrderedDict", "Counter"])
def test_passed_in_and_restored(make, f):
    d, x, h = make(), 0.7, 1e-6
    before = list(d.items())
    g_d, g_x = yb.grad(f, argnums=(0, 1))(d, x)
    assert list(d.items()) == before and type(d) is type(make())
    for key in d:
        up, down = make(), make()
        up[key] += h
        down[key] -= h
        np.testing.assert_allclose(g_d[key], (f(up, x) - f(down, x)) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g_x, (f(make(), x + h) - f(make(), x - h)) / (2 * h), rtol=1e-6)
    _, t = yb.jvp(lambda x: f(make(), x), (x,), (1.0,))
    np.testing.assert_allclose(t, g_x, rtol=1e-9)
    hv = yb.hvp(lambda x: f(make(), x), (x,), (1.0,))[2][0]
    g = lambda x: yb.grad(lambda x: f(make(), x))(x)  # noqa: E731
    np.testing.assert_allclose(hv, (g(x + 1e-5) - g(x - 1e-5)) / 2e-5, rtol=1e-5)
    assert list(d.items()) == before


# ------------------------------------------------------------------------------------------------
# copy.copy and copy.deepcopy of user objects (second order copies the object's tangent)
# ------------------------------------------------------------------------------------------------


class _Box:
    def __init__(self, a, b, items):
        self.a, self.b, self.items = a, b, items


def copies_of_objects(x):
    box = _Box(x, np.array([x, 2.0 * x]), [x * x])
    shallow = copy.copy(box)
    shallow.a = np.sin(x)  # rebinds the copy's field only
    shallow.b *= x  # the array is shared: the original sees it
    shallow.items.append(x ** 3)  # so is the list
    deep = copy.deepcopy(box)
    deep.b[0] = x ** 4  # the deep copy's own array
    deep.items[0] *= 3.0
    return box.a * shallow.a + float(np.sum(box.b ** 2)) + sum(box.items) * deep.items[0] + float(np.sum(deep.b))


def copies_of_nested_objects(x):
    inner = _Box(x, np.ones(2) * x, [])
    outer = _Box(inner, inner, [inner])  # one object reached three ways: the copy keeps that
    twin = copy.deepcopy(outer)
    twin.a.a = x * x
    return twin.b.a * twin.items[0].a + outer.a.a * float(np.sum(copy.copy(twin.a).b))


@pytest.mark.parametrize("f", [copies_of_objects, copies_of_nested_objects], ids=lambda f: f.__name__)
def test_copies_of_user_objects(f):
    check_all_modes(f, 0.7)


# ------------------------------------------------------------------------------------------------
# A module's global written as an attribute (mod.G = x) or through globals() (issue 13 item 5)
# ------------------------------------------------------------------------------------------------

from tests.corpus import module_state  # noqa: E402

LEVEL = 0.5


def write_module_attribute(x):
    module_state.SCALE = x * x  # read by name in module_state.scaled: the derivative reaches it
    module_state.SCALE += np.sin(x)
    return module_state.scaled(x) + module_state.SCALE * x


def write_through_globals(x):
    globals()["LEVEL"] = x * 3.0
    globals()["LEVEL"] *= x
    return LEVEL * x + globals()["LEVEL"] + read_level()


def read_level():
    return LEVEL ** 2


@pytest.mark.parametrize("f", [write_module_attribute, write_through_globals], ids=lambda f: f.__name__)
def test_globals_written_as_attributes_or_items(f):
    saved = module_state.SCALE, LEVEL
    try:
        check_all_modes(f, 0.7)
    finally:
        module_state.SCALE = saved[0]
        globals()["LEVEL"] = saved[1]


def test_other_uses_of_globals_work():
    def f(x):
        g = globals()  # measured too: a GlobalsView (tests/test_globals_view.py)
        g["LEVEL"] = x * x
        return LEVEL * len(g)

    saved = LEVEL
    try:
        check_all_modes(f, 0.7)
    finally:
        globals()["LEVEL"] = saved


# ------------------------------------------------------------------------------------------------
# Writes through x.flat: any memory layout, fewer values than places repeated (issue 13 item 6)
# ------------------------------------------------------------------------------------------------


def flat_write_into_transpose(v):
    a = np.outer(v, np.ones(3))  # 2 x 3
    t = a.T  # not C-contiguous: its flat order is not its memory order
    t.flat[1] = v[0] * v[1]
    t.flat[2:5] = v[1] ** 3
    t.flat[[0, 5]] += v
    return float(np.sum(a ** 2) + a[1, 0] * a[0, 2])


def flat_write_into_strided_slice(v):
    a = np.concatenate([v, v * v, np.sin(v)])  # 6 elements
    s = a[::2]
    s.flat[1:] = [v[0] * 3.0, 2.0]
    return float(np.sum(a * np.arange(1.0, 7.0)) + s[2] * s[1])


def flat_write_repeated(v):
    a = np.ones((2, 3)) * v[0]
    a.flat[:5] = [v[1] * v[1], 2.0]  # NumPy repeats: places 0..4 take x1^2, 2, x1^2, 2, x1^2
    a.flat[5] = v[0] * 7.0
    return float(np.sum(a ** 2 * np.arange(6.0).reshape(2, 3)))


@pytest.mark.parametrize("f", [flat_write_into_transpose, flat_write_into_strided_slice, flat_write_repeated],
                         ids=lambda f: f.__name__)
def test_flat_writes(f):
    check_all_modes(f, np.array([0.7, -1.3]))


# ------------------------------------------------------------------------------------------------
# Counting: Counter(iterable) and Counter.update(iterable) run a C loop (collections._count_elements),
# followed as its Python equivalent: counts are ints, float counts keep their derivatives
# ------------------------------------------------------------------------------------------------


def _counted_labels(x):
    c = collections.Counter("abcab")
    return sum(c[k] * v for k, v in zip("abc", x))


def _counted_into_float_counts(x):
    c = collections.Counter({"a": x[0], "b": x[1]})
    c.update(["a", "c", "a"])
    c.update({"b": x[2]})
    return c["a"] * c["b"] + c["c"] * x[0] + sum(c.values()) * x[1]


def _most_common_of_counted_ints(x):
    c = collections.Counter([1, 2, 2, 3, 3, 3])
    (k, n), = c.most_common(1)
    return x[0] * n + x[k - 1] * c.total() ** 2


@pytest.mark.parametrize("f", [_counted_labels, _counted_into_float_counts, _most_common_of_counted_ints])
def test_counting_an_iterable(f):
    check_every_mode(f, np.array([0.7, 0.35, 1.2]))
