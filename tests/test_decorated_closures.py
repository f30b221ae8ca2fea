"""Decorated nested functions capturing the differentiated function's variables (issue 13).

A decorator returning something other than the function itself (a ``functools.wraps`` wrapper,
an ``np.vectorize`` object, a ``functools.partial``, an instance of a decorator class) once gave
a derivative of 0 in every mode: the tangent of the decorated object was built from its own free
variables, not the function's. Decorators are now calls every mode follows
(``frontend/closures.py: _decorators_as_calls``). Each case is checked against central
differences in reverse, forward and second order (``check_every_mode``) and in third order.
"""
from __future__ import annotations

import asyncio
import functools

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode
from yuebing.rules.core import RuleArgumentError
from yuebing.testing.third_order import check_third_order

def timed(func):
    """A logging decorator written with functools.wraps."""
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper


def retry(times):
    """A decorator with arguments."""
    def decorate(func):
        def attempt(*args):
            for _ in range(times):
                try:
                    return func(*args)
                except ValueError:
                    pass
            raise ValueError("gave up")
        return attempt
    return decorate


class Counted:
    """A class-based decorator: the function kept in an attribute."""

    def __init__(self, func):
        self.func = func
        self.calls = 0

    def __call__(self, *args):
        self.calls += 1
        return self.func(*args)


def first_argument_two(func):
    """A decorator returning a functools.partial."""
    return functools.partial(func, 2.0)


def wrapped(x):
    @timed
    def g(v):
        return v * x * x
    return g(2.0)


def vectorized(x):
    @np.vectorize
    def g(v):
        return v * np.sin(x)
    return g(np.array([2.0, 3.0])).sum()


def stacked(x):
    @timed
    @retry(2)
    def g(v):
        return v * x ** 3
    return g(2.0)


def with_arguments(x):
    @retry(3)
    def g(v):
        return v * np.exp(x)
    return g(2.0)


def class_decorated(x):
    @Counted
    def g(v):
        return v * x * x
    return g(2.0) + g.func(1.0) * g.calls


def partial_returned(x):
    @first_argument_two
    def g(v):
        return v * x * x
    return g()


def lambda_wrapped(x):
    g = timed(lambda v: v * x * x)
    return g(2.0)


def _make_wrapped(x):
    @timed
    def g(v):
        return v * np.cos(x)
    return g


def returned_and_called_outside(x):
    return _make_wrapped(x)(3.0) * x


def nonlocal_written(x):
    acc = 1.0

    @timed
    def g(v):
        nonlocal acc
        acc = acc * v * x
    g(2.0)
    g(x)
    return acc


def recursive(x):
    @timed
    def power(n):
        return x if n == 0 else x * power(n - 1)
    return power(2)


def decorator_capturing(x):
    def scale(func):
        def scaled(v):
            return x * func(v)
        return scaled

    @scale
    def g(v):
        return v * x
    return g(2.0)


def decorator_made_in_a_loop(x):
    def times(k):
        def decorate(func):
            return lambda v: k * func(v)
        return decorate
    total = 0.0
    for k in (1.0, 2.0):
        @times(k)
        def g(v):
            return v * x
        total = total + g(x)
    return total


def local_import(x):
    import functools as ft

    def logged(func):
        @ft.wraps(func)
        def wrapper(*args):
            return func(*args)
        return wrapper

    @logged
    def g(v):
        return v * x * x
    return g(2.0)


def async_decorated(x):
    def awaited(func):
        async def wrapper(v):
            return await func(v)
        return wrapper

    @awaited
    async def g(v):
        return v * x * x
    return asyncio.run(g(2.0))


def cached_capturing_an_int(x):
    k = 3

    @functools.lru_cache(maxsize=None)
    def g(n):
        return n * k
    return g(3) * x + g(3)


def pyfunc_read_back(x):
    @np.vectorize
    def g(v):
        return v * x * x
    h = np.vectorize(lambda v: v * np.sin(x))
    return g.pyfunc(2.0) + h.pyfunc(1.0)


def _wrapped_generator(x):
    @timed
    def g(v):
        return v * x * x
    yield g(2.0)
    yield g(x)


def in_a_generator(x):
    return sum(_wrapped_generator(x))


def in_a_nested_function(x):
    def outer(y):
        @timed
        def g(v, k=y * 2.0):
            return v * x * k
        return g(2.0)
    return outer(x)


def capturing_an_array(x):
    a = np.array([x, 2.0 * x])

    @timed
    def g(v):
        return np.sum(v * a * a)
    return g(np.array([1.0, 3.0]))


def local_class_methods(x):
    class Box:
        def __init__(self, v):
            self.v = v

        @staticmethod
        def triple(v):
            return 3.0 * v

        @property
        def square(self):
            return self.v * self.v
    return Box.triple(x) + Box(x).square


EVERY_MODE = [wrapped, vectorized, stacked, with_arguments, class_decorated, partial_returned, lambda_wrapped,
              returned_and_called_outside, nonlocal_written, recursive, decorator_capturing,
              decorator_made_in_a_loop, local_import, async_decorated, cached_capturing_an_int, local_class_methods,
              pyfunc_read_back, in_a_generator, in_a_nested_function, capturing_an_array]


@pytest.mark.parametrize("f", EVERY_MODE, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, 0.7)


THIRD_ORDER = [wrapped, vectorized, stacked, class_decorated, partial_returned, returned_and_called_outside,
               nonlocal_written, recursive, decorator_capturing, decorator_made_in_a_loop, cached_capturing_an_int,
               in_a_generator, in_a_nested_function, capturing_an_array]


@pytest.mark.parametrize("f", THIRD_ORDER, ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, 0.7)


def test_the_wrapper_carries_the_name():
    """functools.wraps copies the name onto the wrapper under differentiation too."""
    def f(x):
        @timed
        def g(v):
            return v * x
        assert g.__name__ == "g" and g.__doc__ is None
        return g(2.0)
    check_every_mode(f, 0.7)


def global_scale_written(x):
    global SCALE
    SCALE = x

    def scaled(func):
        return lambda v: SCALE * func(v)

    @scaled
    def g(v):
        return v * x
    return g(2.0)


def test_decorator_reading_a_written_global():
    check_every_mode(global_scale_written, 0.7)


def cached_capturing_a_float(x):
    @functools.lru_cache(maxsize=4)
    def g(n):
        return n * x
    return g(3) + g(3) * x


def cached_capturing_later(x):
    """The variable is bound after the decorator ran: the cache is bypassed all the same."""
    @functools.cache
    def g(v):
        return v * k
    k = x * x
    return g(2.0) + g(x) + g(2.0)


def cached_keeping_its_methods(x):
    """cache_info, cache_clear and cache_parameters answer as a cache that never answers."""
    @functools.lru_cache(maxsize=8, typed=True)
    def g(n):
        return np.sin(n * x)
    total = g(1) + g(2) + g(1)
    g.cache_clear()
    assert g.cache_parameters() == {"maxsize": 8, "typed": True}
    return total + g.cache_info().misses


def cached_capturing_an_array(x):
    w = np.array([x, 2.0 * x, x ** 2])

    @functools.cache
    def weighted(i):
        return w[i] * w.sum()
    return weighted(0) + weighted(2) * weighted(0)


CACHED_CAPTURING = [cached_capturing_a_float, cached_capturing_later, cached_capturing_an_array]


@pytest.mark.parametrize("f", CACHED_CAPTURING, ids=lambda f: f.__name__)
def test_a_cached_function_capturing_floats_is_differentiated(f):
    """Its cache is bypassed under differentiation (the function stands for its wrapper), in every
    mode and in third order; it was refused."""
    check_every_mode(f, 0.7)
    check_third_order(f, 0.7)


def test_a_bypassed_cache_keeps_its_methods():
    """In reverse, forward and second order (third order reads no attribute of the function)."""
    check_every_mode(cached_keeping_its_methods, 0.7)


CALLS: list = []


def test_a_cached_function_capturing_labels_keeps_its_cache():
    def f(x):
        n = 3

        @functools.cache
        def g(i):
            CALLS.append(i)
            return i * n
        return g(1) * x + g(1) * x

    CALLS.clear()
    yb.grad(f)(0.7)
    assert CALLS == [1]  # one miss, then the cache answers, as without yuebing


def read_back_wrapped(x):
    @timed
    def g(v):
        return v * x * x
    return g.__wrapped__(2.0) + g(x)


def scaled(factor):
    """A decorator with arguments, written with functools.wraps."""
    def decorate(func):
        @functools.wraps(func)
        def wrapper(v):
            return func(v) * factor
        return wrapper
    return decorate


def read_back_through_two_decorators(x):
    @timed
    @scaled(1.0)
    def g(v):
        return v * x
    return g.__wrapped__.__wrapped__(3.0) * x + g.__wrapped__(x) + g(1.5)


def read_back_and_called_later(x):
    @timed
    def g(v):
        return v * v * x
    plain = g.__wrapped__
    x = x * 2.0  # (the cell is read when the function runs)
    return plain(x) + g(0.5)


@pytest.mark.parametrize("f", [read_back_wrapped, read_back_through_two_decorators, read_back_and_called_later],
                         ids=lambda f: f.__name__)
def test_the_function_read_back_from_its_wrapper(f):
    """``g.__wrapped__``: the wrapper's closure holds the function, and the wrapper's tangent the
    derivative data of that cell, which the read hands on (it was refused), in every mode."""
    check_every_mode(f, 0.7)


_REGISTRY: dict = {}


def registered(func):
    """Keeps the function in a table, not in the wrapper's closure."""
    _REGISTRY[func.__name__] = func

    def wrapper(v):
        return _REGISTRY[wrapper.__name__](v)
    functools.update_wrapper(wrapper, func)
    return wrapper


def read_back_from_a_table(x):
    @registered
    def g(v):
        return v * x * x
    return g.__wrapped__(2.0)


@pytest.mark.parametrize("f, message", [
    (read_back_from_a_table, "nested function g read back from g.__wrapped__"),
])
def test_refused_by_name(f, message):
    """What cannot carry the derivative is refused, naming it, in every mode."""
    for run in (lambda: yb.grad(f)(0.7), lambda: yb.jvp(f, (0.7,), (1.0,)), lambda: yb.hvp(f, (0.7,), (1.0,))):
        with pytest.raises(RuleArgumentError, match=message):
            run()


def test_pyfunc_read_back_in_third_order():
    """pyfunc read off a vectorize object, a closure over x or not (tests/test_third_order_vectorize.py)."""
    check_third_order(pyfunc_read_back, 0.7)


def test_the_advice_works():
    """The refusal's advice, followed: keep the undecorated function in a variable and call it."""
    def f(x):
        def g_plain(v):
            return v * x * x
        g = timed(g_plain)
        return g(1.0) + g_plain(2.0)
    check_every_mode(f, 0.7)
    check_third_order(f, 0.7)
