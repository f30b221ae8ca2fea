"""Plain ``yb.grad(f)(x)`` / ``yb.value_and_grad(f)(x)`` calls (issue 16 item 2): a call with plain
arguments runs the derived rule's generated passes directly, as ``prepare_gradient``'s hot path
does. Every repeated call must give what the general (uncached) path gives and what central
differences give, whatever changed between calls -- the arguments' values, their structure,
aliasing, what the function captures, the function itself -- and the gradients it returns are
new objects each call, also when two threads call at once."""
import linecache
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import yuebing as yb
from yuebing.api import reverse as reverse_api
from yuebing.rules import register_rrule
from yuebing.rules.core import RRULES
from yuebing.rules.util import accumulate, output
from yuebing.tangents import NoRData
from yuebing.transform import buffers

REPEATS = 3


@pytest.fixture
def direct_calls(monkeypatch):
    """How many calls took the direct path (``_direct_gradient``) since the test began."""
    count = [0]
    direct = reverse_api._direct_gradient

    def counted(*args, **kwargs):
        count[0] += 1
        return direct(*args, **kwargs)

    monkeypatch.setattr(reverse_api, "_direct_gradient", counted)
    return count


def general_path(f, args, argnums=0, has_aux=False):
    """``(value, gradient)`` by the general path (no cache, no direct passes)."""
    value, gradient, _ = reverse_api._gradient_call(f, argnums, has_aux, "value_and_grad", args, {})
    return value, gradient


def central(f, args, i, h=1e-6):
    """The gradient of scalar ``f`` in argument ``i`` (a float array or a float), by central
    differences on copies (``f`` may mutate its arguments)."""
    def at(value):
        copies = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        copies[i] = value
        return f(*copies)

    x = args[i]
    if isinstance(x, float):
        return (at(x + h) - at(x - h)) / (2 * h)
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        g.flat[k] = (at(x + e) - at(x - e)) / (2 * h)
    return g


def assert_tree_close(a, b, **tolerances):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            assert_tree_close(a[k], b[k], **tolerances)
    elif isinstance(a, tuple):
        assert isinstance(b, tuple) and len(a) == len(b)
        for x, y in zip(a, b):
            assert_tree_close(x, y, **tolerances)
    else:
        np.testing.assert_allclose(a, b, **tolerances)


# ------------------------------------------------------------------------------------------------
# The functions
# ------------------------------------------------------------------------------------------------


def loss(x):
    return np.sum(np.sin(x) * np.exp(-x) + x * x)


def two_arguments(x, w):
    return np.sum(np.tanh(x * w)) + 0.5 * np.sum(w * w)


def floats(a, b):
    return a * a * b + np.sin(b)


def mixed(x, s):
    return s * np.sum(x ** 3) + s * s


def dict_loss(params):
    return np.sum(params["w"] * params["b"]) + np.sum(params["w"] ** 2)


def mutating(x):
    x *= 2.0  # the gradient is with respect to x before this
    x[0] = x[0] * x[1]
    return np.sum(x ** 2)


def mutating_returns_array(x):
    x += 1.0
    return x * 2.0


def zero_dim_output(x):
    return np.sum(x * x) * np.ones(())


def with_aux(x):
    y = np.sum(x ** 2)
    return y, {"double": 2.0 * x, "sum": y}


def make_closure(w):
    """A function reading the array ``w`` it captures, and a way to rebind it."""
    def scaled(x):
        return np.sum(np.sin(w * x))

    def rebind(new):
        nonlocal w
        w = new

    return scaled, rebind


# ------------------------------------------------------------------------------------------------
# Repeated calls: the general path's results and central differences, every time
# ------------------------------------------------------------------------------------------------


CASES = [
    ("one array", loss, lambda rng: (rng.standard_normal(6),), 0),
    ("2-d array", loss, lambda rng: (rng.standard_normal((3, 4)),), 0),
    ("two arrays", two_arguments, lambda rng: (rng.standard_normal(5), rng.uniform(0.5, 1.5, 5)), (0, 1)),
    ("second of two", two_arguments, lambda rng: (rng.standard_normal(5), rng.uniform(0.5, 1.5, 5)), 1),
    ("floats", floats, lambda rng: (float(rng.uniform(0.5, 1.5)), float(rng.standard_normal())), (0, 1)),
    ("array and float", mixed, lambda rng: (rng.standard_normal(4), float(rng.uniform(0.5, 1.5))), (0, 1)),
    ("mutating", mutating, lambda rng: (rng.standard_normal(4),), 0),
    ("transposed view", loss, lambda rng: (rng.standard_normal((3, 5)).T,), 0),
    ("strided vector", loss, lambda rng: (rng.standard_normal(12)[::2],), 0),
    ("float32", loss, lambda rng: (rng.standard_normal(5).astype(np.float32),), 0),
]


def _numeric(args):
    return all(isinstance(a, float) or isinstance(a, np.ndarray) and a.dtype == np.float64 for a in args)


@pytest.mark.parametrize("name, f, make_args, argnums", CASES, ids=[c[0] for c in CASES])
def test_repeated_calls_agree_with_the_general_path_and_differences(name, f, make_args, argnums, direct_calls):
    rng = np.random.default_rng(0)
    vg = yb.value_and_grad(f, argnums=argnums)
    g = yb.grad(f, argnums=argnums)
    nums = (argnums,) if isinstance(argnums, int) else argnums
    for _ in range(REPEATS):
        args = make_args(rng)
        before = [a.copy() if isinstance(a, np.ndarray) else a for a in args]
        expected_value, expected = general_path(f, args, argnums)
        value, gradient = vg(*args)
        assert_tree_close(value, expected_value, rtol=1e-12)
        assert_tree_close(gradient, expected, rtol=1e-12)
        assert_tree_close(g(*args), expected, rtol=1e-12)
        for a, b in zip(args, before):  # a mutating function leaves its arguments as they were
            np.testing.assert_array_equal(a, b)
        if _numeric(args):
            by_differences = tuple(central(f, args, i) for i in nums)
            assert_tree_close(gradient if isinstance(argnums, tuple) else (gradient,), by_differences,
                              rtol=1e-6, atol=1e-6)
    assert direct_calls[0] == 2 * REPEATS  # every one of these took the direct path


def test_the_same_function_on_new_shapes_and_dtypes(direct_calls):
    g = yb.grad(loss)
    for shape, dtype in [((3,), np.float64), ((2, 2), np.float64), ((3,), np.float32), ((), np.float64),
                         ((3,), np.float64)]:
        x = np.linspace(0.1, 0.9, int(np.prod(shape))).reshape(shape).astype(dtype)
        gradient = g(x)
        assert gradient.shape == x.shape and gradient.dtype == x.dtype
        assert_tree_close(gradient, general_path(loss, (x,))[1], rtol=1e-6)
    assert direct_calls[0] == 5


def test_zero_dim_output_and_aux(direct_calls):
    x = np.array([0.5, -1.0, 2.0])
    value, gradient = yb.value_and_grad(zero_dim_output)(x)
    expected_value, expected = general_path(zero_dim_output, (x,))
    assert_tree_close(value, expected_value)
    assert_tree_close(gradient, expected)
    for _ in range(REPEATS):
        (value, aux), gradient = yb.value_and_grad(with_aux, has_aux=True)(x)
        (expected_value, expected_aux), expected = general_path(with_aux, (x,), has_aux=True)
        assert_tree_close((value, aux, gradient), (expected_value, expected_aux, expected))
        gradient, aux = yb.grad(with_aux, has_aux=True)(x)
        assert_tree_close((gradient, aux), (expected, expected_aux))
    assert direct_calls[0] == 1 + 2 * REPEATS


def test_prepared_with_aux_on_its_hot_path(direct_calls):
    x = np.array([0.5, -1.0, 2.0])
    prepared = yb.prepare_gradient(with_aux, x, has_aux=True)
    (expected_value, expected_aux), expected = general_path(with_aux, (x,), has_aux=True)
    for _ in range(REPEATS):
        (value, aux), gradient = prepared(x)
        assert_tree_close((value, aux, gradient), (expected_value, expected_aux, expected))
    assert direct_calls[0] == REPEATS - 1  # the first call makes the buffers


@pytest.mark.parametrize("has_aux, message", [(False, "must return a scalar"), (True, "must return a pair")])
def test_a_refused_output_leaves_the_argument_restored(has_aux, message, direct_calls):
    f = mutating if has_aux else mutating_returns_array  # mutating returns a float, not a pair
    x = np.array([1.0, 2.0])
    for g, args in [(yb.grad(f, has_aux=has_aux), (x,)),  # the direct path
                    (yb.grad(lambda d: f(d["x"]), has_aux=has_aux), ({"x": x},))]:  # the general path
        for _ in range(2):
            with pytest.raises(TypeError, match=message):
                g(*args)
            np.testing.assert_array_equal(x, [1.0, 2.0])
    assert direct_calls[0] == 2


# ------------------------------------------------------------------------------------------------
# Calls the direct path does not take: containers, aliasing, keywords, ints
# ------------------------------------------------------------------------------------------------


def test_dicts_of_arrays(direct_calls):
    g = yb.grad(dict_loss)
    rng = np.random.default_rng(1)
    for _ in range(REPEATS):
        params = {"w": rng.standard_normal(3), "b": rng.standard_normal(3)}
        gradient = g(params)
        assert_tree_close(gradient, {"w": params["b"] + 2 * params["w"], "b": params["w"]})
    assert direct_calls[0] == 0


def test_aliasing_arguments_after_plain_ones(direct_calls):
    """The same arrays passed twice, or a view with its base, after calls with separate
    arrays: each slot is differentiated on its own, as the general path does."""
    g = yb.grad(two_arguments, argnums=(0, 1))
    x = np.array([0.3, -0.7, 1.1, 0.2, 0.9])
    w = np.array([1.2, 0.8, 0.5, 1.5, 1.0])
    assert_tree_close(g(x, w), general_path(two_arguments, (x, w), (0, 1))[1])
    for args in [(x, x), (x, x[::-1]), (w[:5], w), (x, w)]:
        expected = general_path(two_arguments, args, (0, 1))[1]
        assert_tree_close(g(*args), expected)
        by_differences = tuple(central(two_arguments, [a.copy() for a in args], i) for i in (0, 1))
        assert_tree_close(g(*args), by_differences, rtol=1e-6, atol=1e-6)
    assert direct_calls[0] == 3  # (x, w) each time; the aliasing calls never


def test_keywords_ints_and_non_plain_arrays_take_the_general_path(direct_calls):
    def scaled(x, scale=2.0):
        return scale * np.sum(x * x)

    x = np.array([1.0, 2.0])
    g = yb.grad(scaled)
    assert_tree_close(g(x), 4.0 * x)  # direct, the default filled in
    assert_tree_close(g(x, scale=3.0), 6.0 * x)  # a keyword
    assert_tree_close(g(x, 3.0), 6.0 * x)  # direct
    with pytest.raises(TypeError, match="int64, which has no derivative"):
        g(np.array([1, 2]), 2.0)  # an int array: the general path's error
    assert_tree_close(yb.grad(scaled, argnums=1)(x, 2.0), 5.0)  # direct
    assert_tree_close(g(x, np.float64(2.0)), 4.0 * x)  # a NumPy scalar
    assert_tree_close(g(x, 2), 4.0 * x)  # an int
    with pytest.raises(ValueError, match="out of range"):
        g()  # too few arguments: the general path's error
    assert direct_calls[0] == 3


def with_defaults(x, w=np.array([1.0, -2.0, 0.5]), scale=1.5, trace=[]):
    w += 1.0  # a default array mutated in place, restored by the reverse pass
    trace.append(len(trace))  # a default list mutated, restored by the reverse pass too
    return scale * np.sum(np.sin(w * x)) + float(len(trace) > 0)


@pytest.mark.parametrize("make_grad", [yb.grad, lambda f: _prepared_grad(f, np.zeros(3))], ids=["grad", "prepared"])
def test_defaults(make_grad, direct_calls):
    g = make_grad(with_defaults)
    x = np.array([0.3, -0.1, 0.7])
    w = with_defaults.__defaults__[0]
    w_before, calls_before = w.copy(), len(with_defaults.__defaults__[2])
    for args in [(x,), (x, w_before * 2), (x,), (x, w_before, 3.0), (x,)]:
        expected = general_path(with_defaults, args)[1]
        assert_tree_close(g(*args), expected)
        np.testing.assert_array_equal(w, w_before)
    assert len(with_defaults.__defaults__[2]) == calls_before
    saved = with_defaults.__defaults__
    try:
        with_defaults.__defaults__ = (w_before * 3, 2.0, [])  # defaults replaced between calls
        assert_tree_close(g(x), 2.0 * (w_before * 3 + 1) * np.cos((w_before * 3 + 1) * x))
    finally:
        with_defaults.__defaults__ = saved
    assert direct_calls[0] == (6 if make_grad is yb.grad else 1)  # prepared: (x,) after (x,)


# ------------------------------------------------------------------------------------------------
# What the function depends on changes between calls
# ------------------------------------------------------------------------------------------------


def test_closure_whose_captured_array_changes(direct_calls):
    w = np.array([1.0, 2.0, 3.0])
    scaled, rebind = make_closure(w)
    g = yb.grad(scaled)
    x = np.array([0.5, -0.2, 0.1])
    assert_tree_close(g(x), w * np.cos(w * x))
    w *= 2.0  # mutated in place
    assert_tree_close(g(x), w * np.cos(w * x))
    rebind(np.array([-1.0, 0.5, 4.0]))  # the cell rebound to another array
    assert_tree_close(g(x), np.array([-1.0, 0.5, 4.0]) * np.cos(np.array([-1.0, 0.5, 4.0]) * x))
    assert_tree_close(g(x), central(scaled, [x], 0), rtol=1e-6, atol=1e-6)
    assert direct_calls[0] == 4


def _prompt(source, namespace, cell=[0]):
    """Run ``source`` as a cell of an interactive prompt (IPython registers each cell's text
    under a name of its own, as here)."""
    cell[0] += 1
    filename = f"<prompt-cell-{cell[0]}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)


def test_functions_redefined_at_the_prompt():
    namespace = {"np": np, "yb": yb}
    _prompt("def helper(x):\n    return x * x\n\ndef f(x):\n    return np.sum(helper(x))\n", namespace)
    _prompt("g_first = yb.grad(f)\n", namespace)
    x = np.array([1.0, -2.0, 0.5])
    assert_tree_close(namespace["g_first"](x), 2.0 * x)
    _prompt("def helper(x):\n    return x * x * x\n", namespace)  # what f calls, redefined
    assert_tree_close(namespace["g_first"](x), 3.0 * x * x)
    _prompt("def f(x):\n    return np.sum(np.sin(x))\n", namespace)  # f redefined, same name
    _prompt("g_second = yb.grad(f)\n", namespace)
    assert_tree_close(namespace["g_second"](x), np.cos(x))
    assert_tree_close(namespace["g_first"](x), 3.0 * x * x)  # the old f, with the new helper
    assert_tree_close(namespace["g_second"](x), np.cos(x))


def _prepared_grad(f, example=np.zeros(2)):
    prepared = yb.prepare_gradient(f, example)
    return lambda *args: prepared(*args)[1]


GRADIENT_MAKERS = pytest.mark.parametrize("make_grad", [yb.grad, _prepared_grad], ids=["grad", "prepared"])


@GRADIENT_MAKERS
def test_code_object_replaced(make_grad):
    def f(x):
        return np.sum(x * x)

    def other(x):
        return np.sum(np.sin(x))

    g = make_grad(f)
    x = np.array([0.5, 1.5])
    assert_tree_close(g(x), 2.0 * x)
    f.__code__ = other.__code__
    assert_tree_close(g(x), np.cos(x))


@GRADIENT_MAKERS
def test_rule_registered_after_the_first_call(make_grad):
    def f(x):
        return np.sum(x * x)

    def rule(x):
        def pullback(dy):
            return NoRData, accumulate(x, 3.0 * dy * x.primal)  # deliberately not 2x: which rule ran

        return output(float(np.sum(x.primal ** 2))), pullback

    g = make_grad(f)
    x = np.array([0.5, 1.5])
    assert_tree_close(g(x), 2.0 * x)
    register_rrule(f, rule)
    try:
        assert_tree_close(g(x), 3.0 * x)
    finally:
        RRULES.by_function.pop(f, None)
    assert_tree_close(g(x), 2.0 * x)


# ------------------------------------------------------------------------------------------------
# Returned gradients belong to the caller
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("n", [5, buffers.MIN_SIZE + 3], ids=["small", "pooled"])
def test_returned_gradients_are_independent_objects(n):
    g = yb.grad(two_arguments, argnums=(0, 1))
    x1, w1 = np.linspace(-1, 1, n), np.linspace(0.5, 1.5, n)
    x2, w2 = x1[::-1].copy(), w1 * 2.0
    first = g(x1, w1)
    kept = tuple(a.copy() for a in first)
    second = g(x2, w2)
    for a, b in zip(first, second):
        assert a is not b and not np.shares_memory(a, b)
    assert_tree_close(first, kept, rtol=0, atol=0)  # call 2 left call 1's gradients alone
    first[0][:] = 7.0  # the caller may write into what it got
    del second
    third = g(x2, w2)  # ...and a dropped gradient may come back from the pool
    assert_tree_close(third, general_path(two_arguments, (x2, w2), (0, 1))[1])
    assert np.all(first[0] == 7.0)
    value, gradient = yb.value_and_grad(loss)(x1)
    assert gradient is not yb.value_and_grad(loss)(x1)[1]


# ------------------------------------------------------------------------------------------------
# Threads
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def frequent_switches():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


@pytest.mark.parametrize("n", [7, buffers.MIN_SIZE + 3], ids=["small", "pooled"])
def test_threads_calling_one_gradient_function_at_once(n, frequent_switches, direct_calls):
    rng = np.random.default_rng(2)
    inputs = [(rng.standard_normal(n), rng.uniform(0.5, 1.5, n)) for _ in range(64)]
    vg = yb.value_and_grad(two_arguments, argnums=(0, 1))
    expected = [general_path(two_arguments, args, (0, 1)) for args in inputs]

    def job(i):
        return vg(*inputs[i])

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(job, range(len(inputs))))
    for result, want in zip(results, expected):
        assert_tree_close(result, want, rtol=1e-12)
    grads = [r[1][0] for r in results]
    assert len({id(a) for a in grads}) == len(grads)  # each call its own arrays
    assert direct_calls[0] == len(inputs)
