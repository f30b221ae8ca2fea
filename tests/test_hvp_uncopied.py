"""``yb.hvp`` without copies of the arguments (``transform/argument_writes.py``): a function whose
IR provably writes into no array runs its passes on the caller's arrays and directions.

Each writing form must be refused by the proof and still leave the caller's data as it was; each
accepted function must give what the general path (which copies) gives, to the bit, and agree
with central differences of its gradient along the direction."""
from __future__ import annotations

import numpy as np
import pytest
from scipy.linalg import solve_triangular

import yuebing as yb
from yuebing.api import direct_hvp, second_order as so
from yuebing.bench.cases import gp_lml, simple_mlp
from yuebing.transform.argument_writes import writes_nothing
from yuebing.transform.second_order import dual_rule

from tests.test_hvp_direct import _general  # yb.hvp with the direct path (and so uncopied arguments) off


@pytest.fixture(autouse=True)
def _small_arrays_uncopied_too(monkeypatch):
    """The tests' arrays are small: below ``COPY_CHEAPER_BELOW`` the pass would copy them."""
    monkeypatch.setattr(direct_hvp, "COPY_CHEAPER_BELOW", 0)


def _proved(f) -> bool:
    return writes_nothing(dual_rule(f).ir, f.__globals__)


# -- functions that write nothing ---------------------------------------------------------------

def _methods(x, y):
    a = x.T @ y.reshape(x.shape)
    return np.sum(a) + x.sum(axis=0).dot(y[:, 0]) + len(x) * np.mean(y ** 2)


def _loops(x, s):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.sin(x * s) ** 2) / (i + 1)
    if total > 0:
        total = -total
    return total + s * np.linalg.norm(x) ** 2


def _solve(x, y):
    L = np.linalg.cholesky(x @ x.T + 4.0 * np.eye(len(x)))
    return np.sum(solve_triangular(L, y, lower=True) ** 2)


# -- functions that write ------------------------------------------------------------------------

def _iadd(x):
    x += 1.0
    return np.sum(x ** 2)


def _out(x):
    np.exp(x, out=x)
    return np.sum(x ** 2)


def _view_write(x):
    y = x.T
    y[0] = 2.0
    return np.sum(x ** 3)


def _sort(x):
    x.sort(axis=None)
    return np.sum(x[0] * x ** 2)


def _helper(a):
    a[0] = 0.5
    return a


def _through_helper(x):
    return np.sum(_helper(x) ** 3)


def _positional_out(x):
    y = x ** 2
    np.sum(y, 0, None, x[0])
    return np.sum(x * y)


def _overwrite(x, y):
    L = np.linalg.cholesky(x @ x.T + 4.0 * np.eye(len(x)))
    return np.sum(solve_triangular(L, y, lower=True, overwrite_b=True) ** 2)


def _raising(x):
    if x.shape[0] == 0:
        raise ValueError("empty")
    return np.sum(x ** 2)


def _closure_over(c):
    def f(x):
        return np.sum(x * c)
    return f


def _arrays(*shapes, seed=0):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(s) for s in shapes)


def test_the_proof_accepts_functions_writing_nothing():
    for f in (simple_mlp, gp_lml, _methods, _loops, _solve):
        assert _proved(f), f.__name__


@pytest.mark.parametrize("f", [_iadd, _out, _view_write, _sort, _through_helper, _positional_out, _raising])
def test_the_proof_refuses_every_write(f):
    assert not _proved(f)


def test_the_proof_refuses_overwrite_keywords_and_closures():
    assert not _proved(_overwrite)
    assert not _proved(_closure_over(np.ones(3)))


REDUCE = np.sum


def _through_global(x):
    return REDUCE(x ** 2)


def _writing_reduce(x):
    x[0] = 1.0
    return np.sum(x)


def test_a_rebound_global_is_seen_at_the_next_call(monkeypatch):
    x, v = _arrays(5, 5, seed=3)
    assert _proved(_through_global)
    monkeypatch.setitem(globals(), "REDUCE", _writing_reduce)  # (no `global` statement: a constant global)
    assert not _proved(_through_global)
    before = x.copy()
    yb.hvp(_through_global, (x,), (v,))
    yb.hvp(_through_global, (x,), (v,))
    np.testing.assert_array_equal(x, before)
    monkeypatch.undo()
    assert _proved(_through_global)


def _check(f, primals, tangents, rtol=1e-5, atol=1e-6):
    """Run ``f``'s HVP twice (the second directly), check the caller's data is untouched, the
    result equals the general path's to the bit and central differences of the gradient."""
    before = [np.copy(p) for p in primals + tangents]
    for _ in range(2):
        value, grads, hvps = yb.hvp(f, primals, tangents)
    for a, b in zip(primals + tangents, before):
        np.testing.assert_array_equal(a, b)
    general = _general(f, primals, tangents)
    for p, q in zip(grads + hvps, general[1] + general[2]):
        np.testing.assert_array_equal(p, q)
    assert value == general[0]
    h = 1e-6
    nums = tuple(range(len(primals)))
    moved = lambda t: yb.grad(f, argnums=nums)(*(p + t * d for p, d in zip(primals, tangents)))  # noqa: E731
    for hv, plus, minus in zip(hvps, moved(h), moved(-h)):
        np.testing.assert_allclose(hv, (plus - minus) / (2 * h), rtol=rtol, atol=atol)
    return hvps


@pytest.mark.parametrize("f, shapes", [
    (simple_mlp, [(6, 8), (8, 6), (6, 5), (6, 5)]),
    (_methods, [(4, 4), (4, 4)]),
    (_solve, [(5, 5), (5,)]),
])
def test_uncopied_arguments_give_the_general_paths_hvp(f, shapes):
    primals = _arrays(*shapes)
    tangents = _arrays(*shapes, seed=1)
    _check(f, primals, tangents)
    assert not so.copies_needed(so.direct_passes(f, len(primals)), f, primals)


def test_gp_lml_uncopied():
    x = np.linspace(-2.0, 2.0, 12)
    y = np.sin(x)
    _check(gp_lml, (x, y, 0.3), (np.cos(x), np.ones(12), 0.2), rtol=1e-4, atol=1e-5)
    assert not so.copies_needed(so.direct_passes(gp_lml, 3), gp_lml, (x, y, 0.3))


@pytest.mark.parametrize("f", [_iadd, _out, _view_write, _sort, _through_helper])
def test_writing_functions_leave_the_callers_arrays(f):
    x, v = _arrays(6, 6, seed=2)
    _check(f, (x,), (v,))
    assert so.copies_needed(so.direct_passes(f, 1), f, (x,))


def test_a_direction_that_is_its_argument():
    x = _arrays((4, 4))[0]
    hvps = _check(_methods, (x, x.copy()), (x, x))  # the direction shares the argument's memory
    general = _general(_methods, (x, x.copy()), (x.copy(), x.copy()))
    np.testing.assert_array_equal(hvps[0], general[2][0])


def test_fortran_ordered_and_read_only_arguments():
    x, y = (np.asfortranarray(a) for a in _arrays((4, 4), (4, 4)))
    v, w = _arrays((4, 4), (4, 4), seed=5)
    for a in (x, v):
        a.flags.writeable = False
    _check(_methods, (x, y), (v, np.asfortranarray(w)))
    _check(_methods, (x, y), (v, w))  # a direction laid out otherwise than its argument


def test_prepared_hvp_uncopied():
    primals = _arrays((6, 8), (8, 6), (6, 5), (6, 5))
    tangents = _arrays((6, 8), (8, 6), (6, 5), (6, 5), seed=1)
    before = [p.copy() for p in primals + tangents]
    prepared = yb.prepare_hvp(simple_mlp, *primals)
    for _ in range(2):
        out = prepared(primals, tangents)
    for a, b in zip(primals + tangents, before):
        np.testing.assert_array_equal(a, b)
    general = _general(simple_mlp, primals, tangents)
    for p, q in zip(out[2], general[2]):
        np.testing.assert_array_equal(p, q)


def test_small_arguments_are_copied(monkeypatch):
    """Below ``COPY_CHEAPER_BELOW`` elements the copies cost less than checking the proof."""
    monkeypatch.setattr(direct_hvp, "COPY_CHEAPER_BELOW", 100)
    primals = _arrays((4, 4), (4, 4))
    yb.hvp(_methods, primals, primals)
    passes = so.direct_passes(_methods, 2)
    assert so.copies_needed(passes, _methods, primals)
    assert not so.copies_needed(passes, _methods, _arrays((10, 10), (10, 10)))
