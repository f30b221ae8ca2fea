"""``yb.hvp``'s direct path (``api/direct_hvp.py``): a plain function on float64 arrays and floats
runs its dual passes without dispatch once dispatch has run them. Each test compares the direct
call with the general path (the direct path switched off) to the bit, and with central
differences of the gradient, and checks that what dispatch would do differently still happens."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.api import second_order as so
from yuebing.transform import buffers

from tests.modes import central


def _general(f, primals, tangents):
    """``yb.hvp`` with the direct path off."""
    saved = so.direct_passes
    so.direct_passes = lambda f, n: None
    try:
        return yb.hvp(f, primals, tangents)
    finally:
        so.direct_passes = saved


def _mixed(x, s):
    return np.sum(np.sin(x) * s) + s ** 3 * np.sum(x ** 2)


def _same(a, b):
    assert type(a) is type(b)
    if isinstance(a, tuple):
        assert len(a) == len(b)
        for p, q in zip(a, b):
            _same(p, q)
    else:
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("calls", [1, 3])
def test_direct_equals_general_and_differences(calls):
    x, s = np.linspace(-1.0, 2.0, 7), 0.7
    v, w = np.linspace(0.3, 1.1, 7), -0.4
    for _ in range(calls):  # the first call dispatches, later ones run directly
        direct = yb.hvp(_mixed, (x, s), (v, w))
    assert so.direct_passes(_mixed, 2) is not None  # (the call above ran directly)
    _same(direct, _general(_mixed, (x, s), (v, w)))
    h = 1e-6
    grad_x = lambda t: yb.grad(_mixed, argnums=(0, 1))(x + t * v, s + t * w)
    fd = [(p - m) / (2 * h) for p, m in zip(grad_x(h), grad_x(-h))]
    np.testing.assert_allclose(direct[2][0], fd[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(direct[2][1], fd[1], rtol=1e-5, atol=1e-6)
    assert type(direct[1][1]) is float or isinstance(direct[1][1], np.floating)


def test_hessian_columns_by_direct_hvps():
    x = np.array([0.3, -1.2, 0.8])
    f = lambda x: np.sum(np.exp(x) * x[0])  # noqa: E731
    yb.hvp(f, (x,), (np.ones(3),))
    H = yb.hessian(f)(x)
    np.testing.assert_allclose(H, central(yb.grad(f), x, 1e-6), rtol=1e-5, atol=1e-6)


def test_rule_declared_after_the_first_call_is_used():
    def g(x):
        return np.sum(x ** 3)

    x, v = np.array([1.0, 2.0]), np.array([1.0, 0.5])
    before = yb.hvp(g, (x,), (v,))  # dispatched, then noted for direct calls
    np.testing.assert_allclose(before[2][0], 6 * x * v)
    yb.nondifferentiable(g)  # from now on dispatch runs the declared (zero) rule
    _, gradient, product = yb.hvp(g, (x,), (v,))
    _same((gradient, product), _general(g, (x,), (v,))[1:])
    np.testing.assert_array_equal(product[0], np.zeros(2))


def test_new_code_is_not_run_by_the_old_rule():
    def h(x):
        return np.sum(x ** 2)

    x, v = np.array([1.0, 3.0]), np.array([1.0, 1.0])
    first = yb.hvp(h, (x,), (v,))
    h.__code__ = (lambda x: np.sum(x ** 3)).__code__
    second = yb.hvp(h, (x,), (v,))
    np.testing.assert_allclose(first[2][0], 2 * v)
    np.testing.assert_allclose(second[2][0], 6 * x * v)


def test_error_points_at_the_user_line():
    def bad(x):
        y = np.sum(x)
        return y + {}[y]

    x = np.ones(2)
    notes = []
    for _ in range(2):  # general path, then direct
        with pytest.raises(KeyError) as info:
            yb.hvp(bad, (x,), (x,))
        notes.append("".join(getattr(info.value, "__notes__", [])))
    assert "return y + {}[y]" in notes[0]
    assert notes[1] == notes[0]


def test_arguments_are_not_modified_and_large_buffers_recycled():
    x = np.linspace(0.0, 1.0, 40_000)
    v = np.ones_like(x)
    kept = x.copy()
    f = lambda x: np.sum(np.kron(x[:200].reshape(10, 20), x[:200].reshape(20, 10)) ** 2)  # noqa: E731
    yb.hvp(f, (x,), (v,))
    _, g, hv = yb.hvp(f, (x,), (v,))
    np.testing.assert_array_equal(x, kept)
    # the call's large temporaries swept back to the pool: the kron (its buffer in kron's
    # interleaved layout), the fdata of (200, 200) where the statements run one by one
    assert buffers.pooled((10, 20, 20, 10)) + buffers.pooled((200, 200)) > 0
    step = 1e-6
    fd = (yb.grad(f)(x + step * v) - yb.grad(f)(x - step * v)) / (2 * step)
    np.testing.assert_allclose(hv[0], fd, rtol=1e-5, atol=1e-4)


def test_prepared_hvp_runs_directly_with_fresh_results():
    x, s = np.linspace(-1.0, 2.0, 7), np.array([0.7])
    f = lambda x, s: np.sum(np.sin(x) * s[0]) + np.sum(x ** 2) * s[0] ** 3  # noqa: E731
    v, w = np.linspace(0.3, 1.1, 7), np.array([-0.4])
    prepared = yb.prepare_hvp(f, x, s)
    first = prepared((x, s), (v, w))
    second = prepared((x, s), (v, w))  # directly: dispatch ran it once
    assert so.direct_passes(f, 2) is not None
    assert all(a is not b for a, b in zip(first[1] + first[2], second[1] + second[2]))  # fresh arrays
    _same(second, _general(f, (x, s), (v, w)))
    _same(first, second)


def test_plain_duals_directions_are_copies_in_the_arguments_layout():
    from yuebing.api.plain_arguments import plain_duals

    for x in (np.arange(6.0).reshape(2, 3), np.asfortranarray(np.arange(6.0).reshape(2, 3))):
        for v in (np.ones((2, 3)), np.asfortranarray(np.linspace(0, 1, 6).reshape(2, 3))):
            (copy, fdata, direction, fdata_d), = plain_duals((x,), (v,))
            assert direction is not v and np.array_equal(direction, v)
            assert direction.strides == copy.strides == x.strides
            assert fdata.strides == fdata_d.strides == x.strides and not fdata.any() and not fdata_d.any()


_TEMPLATE = "def scaled_sines(x):\n    return np.sum(np.sin(c * x) * x)\n"


def _from_template(c):
    """A function made by exec-ing one source text in its own namespace: its code object equals
    every other such function's (Python compares code by value), its globals differ."""
    namespace = {"np": np, "c": c}
    exec(compile(_TEMPLATE, "<template>", "exec"), namespace)
    return namespace["scaled_sines"]


def _closure(c):
    def scaled_sines(x):
        return np.sum(np.sin(c * x) * x)
    return scaled_sines


@pytest.mark.parametrize("make", [_from_template, _closure])
def test_functions_sharing_one_code_object_each_run_directly(make):
    """Equal code objects with different globals (or one code object with different cells) each
    get their own passes: both correct, and both on the direct path from their second call."""
    fs = [make(1.5), make(-2.5)]
    assert fs[0].__code__ == fs[1].__code__
    x, v = np.linspace(-1.0, 1.5, 5), np.linspace(0.2, -0.7, 5)
    for f in fs + fs:
        result = yb.hvp(f, (x,), (v,))
        assert so.direct_passes(f, 1) is not None
        _same(result, _general(f, (x,), (v,)))
        np.testing.assert_allclose(result[2][0], central(lambda t: yb.grad(f)(x + t * v), 0.0, 1e-6),
                                   rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(result[1][0], central(f, x, 1e-6), rtol=1e-6, atol=1e-8)
