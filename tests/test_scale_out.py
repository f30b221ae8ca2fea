"""Scale-out (issue 18, items 2, 3, 7): ``jacobian``, ``hessian`` and ``map_grad`` with
``executor=`` -- a thread pool, a process pool, and a real Dask ``LocalCluster`` of two worker
processes -- give exactly the in-process result, which is itself checked against central finite
differences; ``client.map(yb.grad(f), xs)`` works as is; one prepared gradient and one
``yb.grad`` function are right when four threads call them at once; a progress bar appears
when asked for and not otherwise."""
import io
import multiprocessing
import sys
import threading
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor

import numpy as np
import pytest

import yuebing as yb
from tests import helpers_pickling as H
from yuebing.api import scale

RNG = np.random.default_rng(182)
X = RNG.standard_normal(7)
W = RNG.uniform(0.5, 1.5, 7)
BATCH = RNG.standard_normal((9, 4))


def _assert_same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        for k in a:
            _assert_same(a[k], b[k])
    elif isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            _assert_same(u, v)
    else:
        # an executor moves the arithmetic; a worker process's first passes of a Hessian column may
        # round the last bit differently from the caller's warm ones (seen with per-column Hessians)
        np.testing.assert_allclose(a, b, rtol=1e-14, atol=1e-15)


# the computations every executor runs, each with its in-process reference
WORK = {
    "jacobian-rev": lambda ex, cs: yb.jacobian(H.vector, executor=ex, chunk_size=cs)(X),
    "jacobian-fwd": lambda ex, cs: yb.jacobian(H.vector, mode="fwd", executor=ex, chunk_size=cs)(X),
    "jacobian-argnums": lambda ex, cs: yb.jacobian(H.loss_of_two, argnums=(0, 1), executor=ex, chunk_size=cs)(X, W),
    "jacobian-kwargs": lambda ex, cs: yb.jacobian(H.scaled, mode="fwd", executor=ex, chunk_size=cs)(X, scale=3.0),
    "jacobian-of-grad": lambda ex, cs: yb.jacobian(yb.grad(H.loss), mode="fwd", executor=ex, chunk_size=cs)(X),
    "hessian": lambda ex, cs: yb.hessian(H.loss, executor=ex, chunk_size=cs)(X),
    "hessian-blocks": lambda ex, cs: yb.hessian(H.loss_of_two, argnums=(0, 1), executor=ex, chunk_size=cs)(X, W),
    "prepare_hessian": lambda ex, cs: yb.prepare_hessian(H.loss, X, executor=ex, chunk_size=cs)(X),
    "map_grad-rows": lambda ex, cs: yb.map_grad(H.loss, BATCH, executor=ex, chunk_size=cs),
    "map_grad-pairs": lambda ex, cs: yb.map_grad(H.loss_of_two, [(x, x * x + 0.5) for x in BATCH], argnums=(0, 1),
                                                 executor=ex, chunk_size=cs),
}
REFERENCE = {name: work(None, None) for name, work in WORK.items()}


def test_in_process_results_match_finite_differences():
    np.testing.assert_allclose(REFERENCE["jacobian-rev"], H.central_jacobian(H.vector, X), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(REFERENCE["jacobian-fwd"], REFERENCE["jacobian-rev"], rtol=1e-12, atol=1e-12)
    assert np.shape(REFERENCE["jacobian-argnums"][1]) == (7,)
    np.testing.assert_allclose(REFERENCE["jacobian-kwargs"], H.central_gradient(lambda x: H.scaled(x, scale=3.0), X),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(REFERENCE["jacobian-argnums"][1],
                               H.central_gradient(lambda w: H.loss_of_two(X, w), W), rtol=1e-6, atol=1e-8)
    hess = H.central_jacobian(yb.grad(H.loss), X)
    for name in ("hessian", "prepare_hessian", "jacobian-of-grad"):
        np.testing.assert_allclose(REFERENCE[name], hess, rtol=1e-5, atol=1e-7)
    blocks = REFERENCE["hessian-blocks"]
    np.testing.assert_allclose(blocks[0][1], H.central_jacobian(lambda w: yb.grad(H.loss_of_two)(X, w), W),
                               rtol=1e-5, atol=1e-7)
    for row, x in zip(REFERENCE["map_grad-rows"], BATCH):
        np.testing.assert_allclose(row, H.central_gradient(H.loss, x), rtol=1e-6, atol=1e-8)
    gx, gw = REFERENCE["map_grad-pairs"]
    assert gx.shape == gw.shape == BATCH.shape
    np.testing.assert_allclose(gw[3], H.central_gradient(lambda w: H.loss_of_two(BATCH[3], w), BATCH[3] ** 2 + 0.5),
                               rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("chunk_size", [None, 1, 3, 1000])
@pytest.mark.parametrize("name", WORK)
def test_thread_pool_gives_the_in_process_result(name, chunk_size, thread_pool):
    # (the same chunk_size in process: a Hessian's batched passes carry chunk_size directions, and
    # may round differently from one pass per column)
    _assert_same(WORK[name](thread_pool, chunk_size), REFERENCE[name] if chunk_size is None else WORK[name](None, chunk_size))


@pytest.fixture(scope="module")
def thread_pool():
    with ThreadPoolExecutor(3) as pool:
        yield pool


@pytest.fixture(scope="module")
def process_pool():
    """One process pool for the module: forked where the platform can (spawned workers, which
    receive everything by pickle alone, are tested in test_pickling.py)."""
    method = "fork" if "fork" in multiprocessing.get_all_start_methods() else "spawn"
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context(method)) as pool:
        yield pool


@pytest.mark.parametrize("name", ["jacobian-rev", "hessian-blocks", "prepare_hessian", "map_grad-pairs"])
def test_process_pool_gives_the_in_process_result(name, process_pool):
    _assert_same(WORK[name](process_pool, None), REFERENCE[name])


def test_process_pool_refuses_a_lambda_plainly(process_pool):
    with pytest.raises(TypeError, match="ProcessPoolExecutor.*module level"):
        yb.hessian(lambda x: np.sum(x ** 4), executor=process_pool)(X)


# --------------------------------------------------------------------------------------------
# Dask: a real local cluster of two worker processes
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dask_client():
    distributed = pytest.importorskip("distributed")
    with distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        yield client


def test_dask_executor_gives_the_in_process_result(dask_client):
    executor = dask_client.get_executor()
    assert scale.workers_of(executor) == 2
    for name in ("jacobian-rev", "hessian-blocks", "map_grad-pairs"):
        _assert_same(WORK[name](executor, None), REFERENCE[name])


def test_dask_client_map_of_grad_as_is(dask_client):
    xs = list(BATCH)
    got = dask_client.gather(dask_client.map(yb.grad(H.loss), xs))
    _assert_same(got, [yb.grad(H.loss)(x) for x in xs])
    w = W[:4].copy()
    closure = lambda x: np.sum(np.tanh(x * w) ** 2)  # noqa: E731 - sent by value, with its source
    got = dask_client.gather(dask_client.map(yb.value_and_grad(closure), xs))
    _assert_same(got, [yb.value_and_grad(closure)(x) for x in xs])
    np.testing.assert_allclose(got[0][1], H.central_gradient(closure, xs[0]), rtol=1e-6, atol=1e-8)
    hess = yb.hessian(closure, executor=dask_client.get_executor())(xs[1])
    _assert_same(hess, yb.hessian(closure)(xs[1]))


# --------------------------------------------------------------------------------------------
# Chunks, options, inputs
# --------------------------------------------------------------------------------------------


class CountingPool(ThreadPoolExecutor):
    def __init__(self, workers):
        super().__init__(workers)
        self.submitted = []

    def submit(self, fn, *args, **kwargs):
        self.submitted.append(args[-1])
        return super().submit(fn, *args, **kwargs)


def test_default_chunks_are_n_over_four_times_workers():
    x = RNG.standard_normal(40)
    with CountingPool(2) as pool:
        hess = yb.hessian(H.loss, executor=pool)(x)
        assert [len(r) for r in pool.submitted] == [5] * 8  # 40 columns / (4 * 2 workers)
        pool.submitted.clear()
        yb.hessian(H.loss, executor=pool, chunk_size=16)(x)
        assert [len(r) for r in pool.submitted] == [16, 16, 8]
    _assert_same(hess, yb.hessian(H.loss)(x))


def test_bad_options_are_refused():
    with pytest.raises(TypeError, match="executor must be a concurrent.futures.Executor"):
        yb.jacobian(H.vector, executor=object())
    with pytest.raises(ValueError, match="chunk_size must be a positive int"):
        yb.hessian(H.loss, chunk_size=0)
    with pytest.raises(ValueError, match="chunk_size"):
        yb.map_grad(H.loss, BATCH, chunk_size=2.5)
    with pytest.raises(TypeError, match="progress must be"):
        yb.jacobian(H.vector, progress="yes")


def test_map_grad_inputs():
    floats = yb.map_grad(lambda a: a ** 3 + np.sin(a), np.linspace(-1.0, 1.0, 5))  # 1-D: float examples
    np.testing.assert_allclose(floats, 3 * np.linspace(-1.0, 1.0, 5) ** 2 + np.cos(np.linspace(-1.0, 1.0, 5)),
                               rtol=1e-12)
    params = {"W": RNG.standard_normal((2, 3)), "b": RNG.standard_normal(2)}
    data = [(params, RNG.standard_normal(3), RNG.standard_normal(2)) for _ in range(4)]
    stacked = yb.map_grad(H.example_loss, data)
    assert stacked["W"].shape == (4, 2, 3) and stacked["b"].shape == (4, 2)
    one = yb.grad(H.example_loss)(*data[2])
    np.testing.assert_allclose(stacked["W"][2], one["W"], rtol=1e-12)
    b_fd = H.central_gradient(lambda b: H.example_loss({"W": params["W"], "b": b}, *data[2][1:]), params["b"])
    np.testing.assert_allclose(stacked["b"][2], b_fd, rtol=1e-6, atol=1e-8)
    with pytest.raises(ValueError, match="no examples"):
        yb.map_grad(H.loss, [])
    with pytest.raises(ValueError, match="different shapes"):
        yb.map_grad(H.loss, [X, X[:3]])
    with pytest.raises(TypeError, match="leading axis is the batch"):
        yb.map_grad(H.loss, 3.0)


# --------------------------------------------------------------------------------------------
# Threads (issue 12 item 8): one object, four threads, 200 calls
# --------------------------------------------------------------------------------------------


@pytest.fixture
def frequent_switches():
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # the calls really interleave
    yield
    sys.setswitchinterval(before)


def test_one_prepared_gradient_and_one_grad_from_four_threads(frequent_switches):
    inputs = [(RNG.standard_normal(6), RNG.uniform(0.5, 1.5, 6)) for _ in range(200)]
    expected = [yb.grad(H.loss_of_two, argnums=(0, 1))(x, w) for x, w in inputs]
    for k in (0, 199):
        x, w = inputs[k]
        np.testing.assert_allclose(expected[k][0], H.central_gradient(lambda v: H.loss_of_two(v, w), x),
                                   rtol=1e-6, atol=1e-8)
    prepared = yb.prepare_gradient(H.loss_of_two, *inputs[0], argnums=(0, 1))
    gradient = yb.grad(H.loss_of_two, argnums=(0, 1))
    start = threading.Barrier(4)

    def job(k):
        if k < 4:
            start.wait()  # the first four calls begin together
        x, w = inputs[k]
        _, (gx, gw) = prepared(x, w)
        from_prepared = (gx.copy(), gw.copy())  # the next call from this thread reuses the buffers
        return from_prepared, gradient(x, w)

    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(job, range(200)))
    wrong = [k for k, (a, b) in enumerate(results)
             if not all(np.array_equal(u, v) for u, v in zip(a + b, expected[k] + expected[k]))]
    assert not wrong, f"{len(wrong)} of 200 threaded gradients differ"


# --------------------------------------------------------------------------------------------
# Progress
# --------------------------------------------------------------------------------------------


def test_progress_true_shows_a_tqdm_bar_and_false_does_not(capsys):
    pytest.importorskip("tqdm")
    yb.hessian(H.loss, progress=True)(X)
    yb.map_grad(H.loss, BATCH, progress=True)
    err = capsys.readouterr().err
    assert "hessian(loss)" in err and "7/7" in err and "map_grad(loss)" in err and "9/9" in err
    with ThreadPoolExecutor(2) as pool:
        yb.jacobian(H.vector, progress=True, executor=pool)(X)
    assert "jacobian(vector)" in capsys.readouterr().err
    yb.hessian(H.loss, progress=False)(X)
    yb.jacobian(H.vector, progress=False)(X)
    yb.map_grad(H.loss, BATCH, progress=False)
    yb.hessian(H.loss)(X)  # auto, and stderr is not a terminal here
    assert capsys.readouterr().err == ""


class _Terminal(io.StringIO):
    def isatty(self):
        return True


def test_auto_progress_appears_on_a_terminal_after_the_delay(monkeypatch):
    pytest.importorskip("tqdm")
    terminal = _Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    yb.hessian(H.loss)(X)  # well under the delay: no bar
    assert terminal.getvalue() == ""
    monkeypatch.setattr(scale, "PROGRESS_DELAY", 0.0)
    yb.hessian(H.loss, chunk_size=1)(X)
    assert "hessian(loss)" in terminal.getvalue() and "7/7" in terminal.getvalue()
