"""``functools.cache``/``lru_cache`` functions under differentiation (``rules/cached_calls.py``).

A call no derivative can reach (label arguments, nothing captured, no float data the pass left
outside) is answered by the cache as a plain call is: the cached function runs once per miss,
across gradient calls too. A call a derivative can reach (a float argument, a captured float, a
global or module-level list the pass wrote floats to) is differentiated through the wrapped
function. Each in reverse, forward, second and third order, against central differences.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from .all_modes import check_all_modes

CALLS: list = []


@functools.cache
def _nodes(degree):
    CALLS.append(degree)  # a side effect: once per miss in a plain call
    return np.polynomial.legendre.leggauss(degree)


def _quadrature(x):
    nodes, weights = _nodes(5)
    return np.sum(weights * np.sin(x * nodes)) * _nodes(3)[1].sum()


MODES = {
    "grad": lambda f, x: yb.grad(f)(x),
    "jvp": lambda f, x: yb.jvp(f, (x,), (1.0,)),
    "hvp": lambda f, x: yb.hvp(f, (x,), (1.0,)),
    "hessian": lambda f, x: yb.hessian(f)(x),
    "third order": lambda f, x: yb.hvp(yb.grad(f), (x,), (1.0,)),
}


def _cache_record(run) -> tuple:
    """The cached function's calls and its cache's hits and misses over ``run()``, from empty."""
    _nodes.cache_clear()
    CALLS.clear()
    run()
    info = _nodes.cache_info()
    return list(CALLS), info.hits, info.misses


@pytest.mark.parametrize("mode", MODES)
def test_a_constant_call_is_answered_by_the_cache_as_in_a_plain_call(mode):
    plain = _cache_record(lambda: [_quadrature(0.3), _quadrature(0.4)])
    differentiated = _cache_record(lambda: [MODES[mode](_quadrature, 0.3), MODES[mode](_quadrature, 0.4)])
    assert differentiated[0] == plain[0]  # the side effect once per degree, not once per gradient
    assert differentiated[2] == plain[2]  # misses
    if mode != "third order":  # (which runs the function's program more than once per call)
        assert differentiated[1] == plain[1]  # hits


def test_a_constant_call_differentiates_in_every_mode():
    check_all_modes(_quadrature, 0.7)
    check_third_order(_quadrature, 0.7)


@functools.lru_cache(maxsize=8)
def _power(x, n):
    return x ** n


def _through_power(x):
    return _power(x, 3) + _power(x * 2.0, 2) * _power(2.0, 1)


def test_float_arguments_are_differentiated_through_the_wrapped_function():
    check_all_modes(_through_power, 0.7)
    check_third_order(_through_power, 0.7)


def _closure(x):
    @functools.cache
    def scaled(n):
        return x * n

    return scaled(2) * scaled(3)


def _scaled(x, n):  # the advice: at module level, x passed in
    return x * n


_scaled_cached = functools.cache(_scaled)


def _closure_as_advised(x):
    return _scaled_cached(x, 2) * _scaled_cached(x, 3)


def test_a_cached_function_capturing_a_differentiated_variable_is_differentiated():
    # its wrapper, made as Python makes it, carries no derivative of x (0 was once returned
    # silently, then it was refused): under differentiation the function stands for its wrapper
    check_all_modes(_closure, 0.7)
    check_third_order(_closure, 0.7)
    check_all_modes(_closure_as_advised, 0.7)
    check_third_order(_closure_as_advised, 0.7)


G = 1.0
LOG: list = []


@functools.cache
def _from_global(n):
    return G * n


@functools.cache
def _logged(n):
    return LOG[n - 1]


def _writes_global(x):
    global G
    G = x * 1.5
    return np.sin(_from_global(2))


def _appends(x):
    LOG.append(x * 2.0)
    return _logged(len(LOG)) ** 2  # a new key each call: a plain call reads the float just appended


def _central(f, x, h=1e-6):
    return (f(x + h) - f(x - h)) / (2 * h)


def _check_from_an_empty_cache(f, cached, x):
    """``f``'s value, gradient, tangent and Hessian-vector product at ``x`` against central
    differences, each call from an empty cache: what the first call of a plain run computes (the
    differences must not read a value cached at another point)."""
    def fresh(run):
        def call(b):
            cached.cache_clear()
            return run(b)
        return call

    plain, gradient = fresh(f), fresh(yb.grad(f))
    slope = _central(plain, x)
    value, grad = fresh(yb.value_and_grad(f))(x)
    np.testing.assert_allclose([value, grad], [plain(x), slope], rtol=1e-6, atol=1e-8)
    value, tangent = fresh(lambda b: yb.jvp(f, (b,), (1.0,)))(x)
    np.testing.assert_allclose([value, tangent], [plain(x), slope], rtol=1e-6, atol=1e-8)
    value, (grad,), (hv,) = fresh(lambda b: yb.hvp(f, (b,), (1.0,)))(x)
    np.testing.assert_allclose([value, grad, hv], [plain(x), slope, _central(gradient, x, 1e-5)], rtol=1e-5, atol=1e-7)
    assert slope != 0.0  # (the derivative a constant call would have dropped)


@pytest.mark.parametrize("f, cached", [(_writes_global, _from_global), (_appends, _logged)], ids=["global", "list"])
def test_float_data_the_pass_left_outside_is_followed_into_the_cached_function(f, cached):
    # the label arguments alone would let the cache answer, and the derivative would be lost
    _check_from_an_empty_cache(f, cached, 0.7)


def _through_a_cached_list(x):
    rows = _rows(2)
    total = 0.0
    for row in _rows(2):  # the same list (outside state, one tangent for the pass), or a new one
        total = total + row * x
    return total * np.cos(x) + len(rows)


@functools.cache
def _rows(n):
    return [float(i) + 0.5 for i in range(n)]


def test_a_list_the_cache_returns_is_read_in_every_mode():
    check_all_modes(_through_a_cached_list, 0.7)
    check_third_order(_through_a_cached_list, 0.7)


def _vector(x):
    nodes, weights = _nodes(4)
    return np.sum(weights * np.sin(np.outer(x, nodes))) + sum(r * v for r, v in zip(_rows(3), x)) ** 2


def test_a_constant_call_in_a_batched_hessian():
    x = np.array([0.3, 0.7, 1.1])
    gradient, h = yb.grad(_vector), 1e-5
    by_differences = np.array([(gradient(x + h * e) - gradient(x - h * e)) / (2 * h) for e in np.eye(3)])
    np.testing.assert_allclose(yb.hessian(_vector)(x), by_differences, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(yb.jacobian(gradient, mode="fwd")(x), by_differences, rtol=1e-6, atol=1e-7)
