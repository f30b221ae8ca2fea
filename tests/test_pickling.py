"""Pickling (issue 18, item 1): everything yuebing returns -- ``grad``, ``value_and_grad``,
``jacobian``, ``hessian`` and the prepared objects -- pickles by reference to the user's function
(module-level functions and bound methods by name with plain ``pickle``, lambdas and closures by
value with ``cloudpickle``), never its generated code, caches or buffers, and computes the same
derivatives after loading, in this process and in worker processes started by fork and by spawn.
Every derivative compared is itself checked against central finite differences."""
import inspect
import multiprocessing
import pickle
from concurrent.futures import ProcessPoolExecutor

import cloudpickle
import numpy as np
import pytest

import yuebing as yb
from tests import helpers_pickling as H

RNG = np.random.default_rng(18)
X = RNG.standard_normal(6)
W = RNG.uniform(0.5, 1.5, 6)
XS = [RNG.standard_normal(5) for _ in range(6)]


def _round_trip(obj, dumps=pickle.dumps):
    return pickle.loads(dumps(obj))


def _assert_same(a, b):
    """Equal values, structure by structure (a pickled function computes exactly what the original does)."""
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert type(a) is type(b) and len(a) == len(b)
        for u, v in zip(a, b):
            _assert_same(u, v)
    else:
        np.testing.assert_array_equal(a, b)


def test_the_references_match_finite_differences():
    np.testing.assert_allclose(yb.grad(H.loss)(X), H.central_gradient(H.loss, X), rtol=1e-6, atol=1e-8)
    g_w = yb.grad(H.loss_of_two, argnums=1)(X, W)
    np.testing.assert_allclose(g_w, H.central_gradient(lambda w: H.loss_of_two(X, w), W), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(yb.jacobian(H.vector)(X), H.central_jacobian(H.vector, X), rtol=1e-6, atol=1e-8)
    hess = yb.hessian(H.loss)(X)
    np.testing.assert_allclose(hess, H.central_jacobian(yb.grad(H.loss), X), rtol=1e-5, atol=1e-7)
    model = H.Model(0.3)
    np.testing.assert_allclose(yb.grad(model.loss)(X), H.central_gradient(model.loss, X), rtol=1e-6, atol=1e-8)


MADE = {
    "grad": (lambda: yb.grad(H.loss), (X,)),
    "grad-argnums": (lambda: yb.grad(H.loss_of_two, argnums=(0, 1)), (X, W)),
    "grad-has_aux": (lambda: yb.grad(H.loss_with_aux, has_aux=True), (X,)),
    "value_and_grad": (lambda: yb.value_and_grad(H.loss_of_two, argnums=1), (X, W)),
    "grad-bound-method": (lambda: yb.grad(H.Model(0.3).loss), (X,)),
    "jacobian-rev": (lambda: yb.jacobian(H.vector), (X,)),
    "jacobian-fwd": (lambda: yb.jacobian(H.vector, mode="fwd"), (X,)),
    "jacobian-of-grad": (lambda: yb.jacobian(yb.grad(H.loss), mode="fwd"), (X,)),
    "hessian": (lambda: yb.hessian(H.loss_of_two, argnums=(0, 1)), (X, W)),
    "prepare_gradient": (lambda: yb.prepare_gradient(H.loss_of_two, X, W, argnums=(0, 1)), (X, W)),
    "prepare_hessian": (lambda: yb.prepare_hessian(H.loss, X), (X,)),
    "prepare_hvp": (lambda: yb.prepare_hvp(H.loss_of_two, X, W), ((X, W), (W, yb.NoTangent))),
}


@pytest.mark.parametrize("name", MADE)
def test_plain_pickle_round_trip_gives_the_same_derivatives(name):
    make, args = MADE[name]
    made = make()
    expected = made(*args)  # called first: caches, buffers and generated code exist and are not pickled
    loaded = _round_trip(made)
    assert type(loaded) is type(made)
    _assert_same(loaded(*args), expected)
    _assert_same(loaded(*args), expected)  # and again, on the rebuilt caches


def test_grad_and_value_and_grad_are_rebuilt_lazily_and_pickle_small():
    g = yb.grad(H.loss)
    g(X)
    data = pickle.dumps(g)
    assert len(data) < 300, len(data)  # the function by name, argnums, has_aux: nothing generated
    loaded = pickle.loads(data)
    assert loaded._calls._rule._resolved == (None, None)  # no rule until the first call
    loaded(X)
    assert loaded._calls._rule._resolved[1] is not None


def test_prepared_objects_pickle_without_their_buffers():
    big = RNG.standard_normal(50_000)
    prepared = yb.prepare_gradient(H.loss, big)
    value, gradient = prepared(big)
    assert len(pickle.dumps(prepared)) < 500
    loaded = _round_trip(prepared)
    value2, gradient2 = loaded(big)
    assert value2 == value
    np.testing.assert_array_equal(gradient2, gradient)
    hvp = yb.prepare_hvp(H.loss, big)
    hvp((big,), (big,))
    assert len(pickle.dumps(hvp)) < 500


def test_prepare_pullback_pickles():
    prepared = yb.prepare_pullback(H.vector, X)
    loaded = _round_trip(prepared)
    ct = np.linspace(-1.0, 1.0, X.size + 1)
    (expected,) = prepared(X)[1](ct)
    (got,) = loaded(X)[1](ct)
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_allclose(got, ct @ H.central_jacobian(H.vector, X), rtol=1e-6, atol=1e-8)


def test_lambdas_and_closures_pickle_with_cloudpickle():
    w = W.copy()
    closure = lambda x: np.sum(np.sin(x * w))  # noqa: E731 - a closure over w, pickled by value
    for made, args in [(yb.grad(closure), (X,)), (yb.value_and_grad(closure), (X,)),
                       (yb.hessian(closure), (X,)), (yb.jacobian(yb.grad(closure)), (X,))]:
        loaded = _round_trip(made, cloudpickle.dumps)
        _assert_same(loaded(*args), made(*args))
    np.testing.assert_allclose(yb.grad(closure)(X), H.central_gradient(closure, X), rtol=1e-6, atol=1e-8)


def test_plain_pickle_of_a_lambda_fails_loudly():
    with pytest.raises((pickle.PicklingError, AttributeError), match="lambda"):
        pickle.dumps(yb.grad(lambda x: np.sum(x * x)))


def test_pickled_jacobian_leaves_its_executor_behind():
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(2) as pool:
        jac = yb.jacobian(H.vector, executor=pool, chunk_size=2)
        loaded = _round_trip(jac)
        assert loaded.executor is None and loaded.chunk_size == 2
        np.testing.assert_array_equal(loaded(X), jac(X))


def test_metadata_repr_and_method_binding():
    g = yb.grad(H.loss_of_two, argnums=(0, 1))
    assert g.__name__ == "loss_of_two" and g.__doc__ == H.loss_of_two.__doc__ and g.__wrapped__ is H.loss_of_two
    assert g.__module__ == H.__name__
    assert str(inspect.signature(g)) == "(x, w)"
    assert repr(g) == "yb.grad(loss_of_two, argnums=(0, 1))"
    assert repr(yb.value_and_grad(H.loss_with_aux, has_aux=True)) == "yb.value_and_grad(loss_with_aux, argnums=0, has_aux=True)"
    assert repr(yb.hessian(H.loss)) == "yb.hessian(loss, argnums=0)"
    assert yb.hessian(H.loss).__name__ == "hessian(loss)"

    class Holder:
        gradient = yb.grad(lambda self, x: np.sum(x ** 3), argnums=1)  # a function would bind self: so does this

    np.testing.assert_allclose(Holder().gradient(X), 3 * X ** 2, rtol=1e-12)


# --------------------------------------------------------------------------------------------
# Worker processes: fork, spawn, ProcessPoolExecutor
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def spawn_pool():
    """One spawned pool for the module (starting one costs about a second)."""
    with multiprocessing.get_context("spawn").Pool(2) as pool:
        yield pool


def _expected_gradients():
    return [yb.grad(H.loss)(x) for x in XS]


def _assert_all_same(got, expected):
    assert len(got) == len(expected)
    for a, b in zip(got, expected):
        _assert_same(a, b)


def test_pool_map_under_fork():
    with multiprocessing.get_context("fork").Pool(2) as pool:
        _assert_all_same(pool.map(yb.grad(H.loss), XS), _expected_gradients())


def test_pool_map_under_spawn(spawn_pool):
    _assert_all_same(spawn_pool.map(yb.grad(H.loss), XS), _expected_gradients())
    model = H.Model(0.3)
    _assert_all_same(spawn_pool.map(yb.grad(model.loss), XS), [yb.grad(model.loss)(x) for x in XS])
    prepared = yb.prepare_gradient(H.loss_of_two, X, W, argnums=(0, 1))
    pairs = [(x, W[:5]) for x in XS]
    expected = [yb.value_and_grad(H.loss_of_two, argnums=(0, 1))(*p) for p in pairs]
    _assert_all_same(spawn_pool.starmap(prepared, pairs), expected)


NOTEBOOK_CELL = """
import numpy as np

def helper(z):
    return np.cos(z) * z

def make(w):
    return lambda x: np.sum(np.sin(x * w)) + np.sum(helper(x))
"""


def _notebook_closure():
    """A closure as a notebook makes one: its module is not importable and its file is only in
    this process's linecache (there is no such file), so cloudpickle sends it by value, without source."""
    import linecache

    filename = "/nonexistent/notebook_cell_18.py"
    linecache.cache[filename] = (len(NOTEBOOK_CELL), None, NOTEBOOK_CELL.splitlines(True), filename)
    namespace = {"__name__": "notebook_cell_18"}
    exec(compile(NOTEBOOK_CELL, filename, "exec"), namespace)
    return namespace["make"](W.copy())


def test_a_closure_sent_by_value_takes_its_source_along(spawn_pool):
    """A spawned worker has neither the file nor its linecache entry: the source travels with the
    pickle (api/pickling.py), and the gradient there is the one computed here."""
    closure = _notebook_closure()
    expected = yb.grad(closure)(X)
    np.testing.assert_allclose(expected, H.central_gradient(closure, X), rtol=1e-6, atol=1e-8)
    for made, args, want in [(yb.grad(closure), (X,), expected),
                             (yb.hessian(closure), (X,), yb.hessian(closure)(X))]:
        data = cloudpickle.dumps(made)
        _assert_same(spawn_pool.apply(H.load_and_call, (data,) + args), want)


def test_process_pool_executor():
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("fork")) as pool:
        _assert_all_same(list(pool.map(yb.grad(H.loss), XS)), _expected_gradients())
        got = list(pool.map(yb.value_and_grad(H.loss_with_aux, has_aux=True), XS))
    _assert_all_same(got, [yb.value_and_grad(H.loss_with_aux, has_aux=True)(x) for x in XS])
