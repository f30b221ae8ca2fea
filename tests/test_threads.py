"""Thread safety (issue 12, item 8): prepared objects and every cache on the gradient path
(derived rules, the buffer pool of large arrays, prepared buffers) called from many threads at
once give each call its own right answer. Every threaded result is compared with the same
computation done single-threaded, and that with central finite differences."""
import sys
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import buffers

THREADS = 8
CALLS = 50


@pytest.fixture(autouse=True)
def frequent_switches():
    """Switch threads every microsecond, so the calls really interleave."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def loss(x, w):
    y = np.sin(x * w)
    return np.sum(y * y + np.exp(-x) * w) + 0.5 * np.sum(x * x)


def scalar_loop(x, s):
    total = 0.0
    for i in range(len(x)):
        total = total + np.tanh(x[i] * s) ** 2
    return total * s


def _central(f, args, i, h=1e-6):
    """The gradient of ``f`` in argument ``i`` (a float array) by central differences."""
    x = args[i]
    g = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        plus = list(args); plus[i] = x + e
        minus = list(args); minus[i] = x - e
        g.flat[k] = (f(*plus) - f(*minus)) / (2 * h)
    return g


def _inputs(n, count, seed=0):
    rng = np.random.default_rng(seed)
    return [(rng.standard_normal(n), rng.uniform(0.5, 1.5, n)) for _ in range(count)]


def _in_threads(job, count=THREADS * CALLS):
    """``job(i)`` for ``i`` in ``range(count)`` on a pool of ``THREADS`` threads."""
    with ThreadPoolExecutor(THREADS) as pool:
        return list(pool.map(job, range(count)))


def _assert_all_equal(results, expected):
    wrong = [i for i, (r, e) in enumerate(zip(results, expected)) if not _same(r, e)]
    assert not wrong, f"{len(wrong)} of {len(results)} threaded results differ from the single-threaded ones"


def _same(a, b):
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return np.allclose(a, b, rtol=1e-12, atol=1e-12)


def _copied(result):
    """Copy arrays out of a result (a prepared gradient's buffers are reused by the next call)."""
    if isinstance(result, (tuple, list)):
        return tuple(_copied(r) for r in result)
    return np.array(result, copy=True)


def test_single_threaded_references_match_finite_differences():
    x, w = _inputs(5, 1)[0]
    g = yb.grad(loss, argnums=(0, 1))(x, w)
    np.testing.assert_allclose(g[0], _central(loss, (x, w), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(g[1], _central(loss, (x, w), 1), rtol=1e-6, atol=1e-8)
    gs = yb.grad(scalar_loop)(x, 0.7)
    np.testing.assert_allclose(gs, _central(scalar_loop, (x, 0.7), 0), rtol=1e-6, atol=1e-8)
    v = np.linspace(-1.0, 1.0, 5)
    _, _, (hv, _) = yb.hvp(loss, (x, w), (v, yb.NoTangent))
    grad_x = lambda x_: yb.grad(loss)(x_, w)  # noqa: E731
    h = 1e-5
    np.testing.assert_allclose(hv, (grad_x(x + h * v) - grad_x(x - h * v)) / (2 * h), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("n", [7, 3 * buffers.MIN_SIZE], ids=["small", "pooled-buffers"])
def test_one_prepared_gradient_from_many_threads(n):
    inputs = _inputs(n, THREADS * 2)
    expected = [yb.grad(loss, argnums=(0, 1))(x, w) for x, w in inputs]
    prepared = yb.prepare_gradient(loss, *inputs[0], argnums=(0, 1))
    count = THREADS * CALLS if n < buffers.MIN_SIZE else THREADS * 8

    def job(i):
        # each thread calls with a few argument objects again and again (the buffers' hot path)
        x, w = inputs[i % len(inputs)]
        return _copied(prepared(x, w)[1])

    _assert_all_equal(_in_threads(job, count), [expected[i % len(inputs)] for i in range(count)])


def test_one_prepared_gradient_on_the_same_arguments_from_many_threads():
    x, w = _inputs(9, 1)[0]
    expected = yb.grad(loss, argnums=(0, 1))(x, w)
    prepared = yb.prepare_gradient(loss, x, w, argnums=(0, 1))

    def job(i):
        value, gradient = prepared(x, w)
        return _copied(gradient)

    _assert_all_equal(_in_threads(job), [expected] * (THREADS * CALLS))


def test_a_threads_gradient_is_not_overwritten_by_other_threads():
    x, w = _inputs(6, 1)[0]
    prepared = yb.prepare_gradient(loss, x, w)
    _, mine = prepared(x, w)
    kept = mine.copy()
    others = _inputs(6, THREADS, seed=1)
    _in_threads(lambda i: prepared(*others[i % THREADS]), THREADS * 10)
    np.testing.assert_array_equal(mine, kept)


def test_grad_and_value_and_grad_from_many_threads():
    inputs = _inputs(6, THREADS)
    expected = [yb.grad(scalar_loop, argnums=(0, 1))(x, 0.8) for x, _ in inputs]
    expected_values = [scalar_loop(x, 0.8) for x, _ in inputs]

    def job(i):
        x, _ = inputs[i % THREADS]
        value, gradient = yb.value_and_grad(scalar_loop, argnums=(0, 1))(x, 0.8)
        return value, gradient

    results = _in_threads(job)
    _assert_all_equal([r[1] for r in results], [expected[i % THREADS] for i in range(len(results))])
    _assert_all_equal([r[0] for r in results], [expected_values[i % THREADS] for i in range(len(results))])


def test_hvp_prepared_hvp_and_prepared_hessian_from_many_threads():
    inputs = _inputs(4, THREADS)
    directions = [np.linspace(-1.0, 1.0, 4) * (k + 1) for k in range(THREADS)]
    expected_hvp = [yb.hvp(loss, (x, w), (v, yb.NoTangent)) for (x, w), v in zip(inputs, directions)]
    expected_hessian = [yb.hessian(loss)(x, w) for x, w in inputs]
    prepared_hvp = yb.prepare_hvp(loss, *inputs[0])
    prepared_hessian = yb.prepare_hessian(loss, *inputs[0])

    def job(i):
        k = i % THREADS
        (x, w), v = inputs[k], directions[k]
        return (_copied(yb.hvp(loss, (x, w), (v, yb.NoTangent))), _copied(prepared_hvp((x, w), (v, yb.NoTangent))),
                _copied(prepared_hessian(x, w)))

    results = _in_threads(job, THREADS * 10)
    for i, (plain, prepared, hess) in enumerate(results):
        k = i % THREADS
        assert _same(plain, _copied(expected_hvp[k]))
        assert _same(prepared, _copied(expected_hvp[k]))
        assert _same(hess, expected_hessian[k])


def test_jvp_and_jacobian_from_many_threads():
    inputs = _inputs(5, THREADS)

    def vector(x, w):
        return np.cumsum(np.sin(x) * w)

    expected_jvp = [yb.jvp(vector, (x, w), (w, x)) for x, w in inputs]
    expected_fwd = [yb.jacobian(vector, mode="fwd")(x, w) for x, w in inputs]
    expected_rev = [yb.jacobian(vector, mode="rev")(x, w) for x, w in inputs]

    def job(i):
        x, w = inputs[i % THREADS]
        return (yb.jvp(vector, (x, w), (w, x)), yb.jacobian(vector, mode="fwd")(x, w),
                yb.jacobian(vector, mode="rev")(x, w))

    for i, (j, fwd, rev) in enumerate(_in_threads(job, THREADS * 10)):
        k = i % THREADS
        assert _same(j, expected_jvp[k]) and _same(fwd, expected_fwd[k]) and _same(rev, expected_rev[k])


def test_first_calls_from_many_threads_derive_one_working_rule_each():
    """Several threads deriving the same function's rules at once (the caches fill concurrently)."""
    def fresh(x, s):  # a new code object: nothing cached yet
        return np.sum(np.cos(x * s) * x) * s

    x = np.linspace(0.1, 1.0, 5)
    results = _in_threads(lambda i: (yb.grad(fresh, argnums=(0, 1))(x, 1.3),
                                     yb.hvp(fresh, (x, 1.3), (x, 0.0))[2],
                                     yb.jvp(fresh, (x, 1.3), (x, 1.0))[1]), THREADS * 2)
    gx = _central(fresh, (x, 1.3), 0)
    for g, _, _ in results:
        np.testing.assert_allclose(g[0], gx, rtol=1e-6, atol=1e-8)
    for r in results[1:]:
        assert _same(r, results[0])
