"""Fuzzer seed 32012: the same ``c * np.eye(n) + m`` written twice (m an argument), one solve inside
the other, crashed reverse mode's pullback (TypeError: '_Marker' object is not callable).

The mechanism: reverse mode looked for its blocks twice per body, once for the forward pass and
once for the reverse pass, and moved new constant arrays (``np.eye``, ``np.identity``,
``np.zeros``, ``np.ones``: ``constant_arrays.py``) to the front of their run *between* finding the
float blocks and the array blocks. The first search saw two runs of three operations split by
the second ``np.eye`` (no float block: six make one) and the second search saw them joined (a
float block), so the forward pass pushed an array block's tape and the reverse pass undid it
statement by statement. Any new constant array joining float-arithmetic runs into six or more
did the same, whatever its constructor. Now the arrays move first (``hoist_for_blocks``) and
both passes find the same blocks.

Each variant is checked in every mode against central differences: gradient in both arguments,
forward tangent, Hessian-vector product (against differences of the gradient) and third order.
"""
import contextlib

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from .all_modes import check_all_modes
from .modes import central

W = np.random.default_rng(0).standard_normal((4, 4))
M = 0.3 * np.random.default_rng(1).standard_normal((4, 4))
V = np.linspace(0.2, 1.1, 4)


def nested_solves(w, m):  # the fuzzer's program (m an argument: with a global matrix it worked)
    a = np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, w))
    return np.sum(a * np.sin(w))


def named_once(w, m):  # the workaround the strict xfail pointed to
    a = 3.0 * np.eye(4) + 0.2 * m
    return np.sum(np.linalg.solve(a, np.linalg.solve(a, w)) * np.sin(w))


def identity_twice(w, m):
    a = np.linalg.solve(2.5 * np.identity(4) - 0.3 * m, np.linalg.solve(2.5 * np.identity(4) - 0.3 * m, w))
    return np.sum(a * a)


def ones_twice(w, m):  # vectors: eight operations of float arithmetic with the second np.ones between
    return np.sum((2.0 * np.ones(4) + 0.5 * w) * (2.0 * np.ones(4) + 0.5 * w * w)) + np.sum(np.sin(m) @ w)


def zeros_twice(w, m):
    return np.sum((1.5 * np.zeros(4) + 0.5 * w) / (1.5 * np.zeros(4) - 0.5 * w - 3.0)) * np.sum(m @ w)


def full_and_diag(w, m):  # constructors that are not moved: they must work as they did
    b = 3.0 * np.full((4, 4), 0.1) + 0.2 * m
    c = 3.0 * np.diag(np.ones(4)) + 0.2 * m
    return np.sum(np.linalg.solve(b + c, np.linalg.solve(c, w)) * w)


def _shifted(m):
    return 3.0 * np.eye(4) + 0.2 * m


def in_a_helper_called_twice(w, m):  # the same expression in a function of its own
    return np.sum(np.linalg.solve(_shifted(m), np.linalg.solve(_shifted(m), w)) * np.sin(w))


def in_a_loop(w, m):  # the body of a loop looks for its blocks on its own
    a = w
    for _ in range(2):
        a = np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, a))
    return np.sum(a * np.sin(w))


def in_a_branch(w, m):
    if np.sum(w) > 0.0:
        a = np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, w))
    else:
        a = w
    return np.sum(a * np.cos(w))


def in_try_finally(w, m):  # (with an except clause a try region has no blocks)
    try:
        a = np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, w))
    finally:
        b = 1.5
    return np.sum(a * np.sin(w)) * b


def in_a_with_block(w, m):
    with contextlib.nullcontext():
        a = np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, w))
    return np.sum(a * np.sin(w))


def in_a_while_loop(w, m):
    a, k = w, 0
    while k < 2:
        a = np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, a))
        k += 1
    return np.sum(a * np.sin(w))


def in_a_comprehension(w, m):
    xs = [np.linalg.solve(3.0 * np.eye(4) + 0.2 * c * m, np.linalg.solve(3.0 * np.eye(4) + 0.2 * m, w))
          for c in (1.0, 2.0)]
    return np.sum(xs[0] * xs[1])


def float_factors_of_zeros_and_ones(w, m):  # float arithmetic on both sides of np.zeros
    s, t = w[0], w[1]
    e = (s * t + s - t * 2.0) * np.zeros(4) + (s * t - t + s * 3.0) * np.ones(4) + m @ w
    return np.sum(e * np.sin(e))


def a_product_of_the_two(w, m):  # the runs joined by a matrix product (reverse blocks take those)
    a = (3.0 * np.eye(4) + 0.2 * m) @ (3.0 * np.eye(4) - 0.2 * m)
    return np.sum(a * a) + np.sum(w * np.sin(w))


def scalar_scale(s, m):  # a float argument: the float blocks' guard fails and the arrays' runs
    return np.sum(np.linalg.inv(s * np.eye(4) + 0.2 * m) @ (s * np.eye(4) - 0.2 * m))


VARIANTS = [nested_solves, named_once, identity_twice, ones_twice, zeros_twice, full_and_diag, in_a_helper_called_twice,
            in_a_loop, in_a_branch, in_try_finally, in_a_with_block, in_a_while_loop, in_a_comprehension,
            float_factors_of_zeros_and_ones, a_product_of_the_two]


def _packed(f, like=V):
    """``f`` as a function of one flat array holding its two arguments (for ``check_all_modes``)."""
    size = np.size(like)
    return lambda z: f(z[:size] if np.ndim(like) else z[0], z[size:].reshape(4, 4))


def _flat(w, m):
    return np.concatenate([np.atleast_1d(w), np.ravel(m)])


@pytest.mark.parametrize("f", VARIANTS, ids=lambda f: f.__name__)
def test_gradient_in_both_arguments(f):
    gw, gm = yb.grad(f, argnums=(0, 1))(V.copy(), W.copy())
    expected = central(_packed(f), _flat(V, W), 1e-6)
    np.testing.assert_allclose(np.concatenate([gw, gm.ravel()]), expected, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", VARIANTS, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_all_modes(_packed(f), _flat(V, W))


def test_a_float_argument_in_every_mode():
    check_all_modes(_packed(scalar_scale, 2.0), _flat(2.0, M))


@pytest.mark.parametrize("f", [nested_solves, ones_twice, in_a_loop, float_factors_of_zeros_and_ones], ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, V.copy(), W.copy())


def test_gradient_in_one_argument_as_the_fuzzer_asked():  # (the strict xfail this file held)
    np.testing.assert_allclose(yb.grad(nested_solves)(V.copy(), W), central(lambda v: nested_solves(v, W), V, 1e-6),
                               rtol=1e-6, atol=1e-8)
