"""Generators meeting other rewritten syntax (issue 13): a ``@contextlib.contextmanager`` function
defined inside the differentiated function and used in a plain ``with``; ``match`` and
``try``/``except*`` around yields in a lazy generator (``frontend/match_statements.py`` and
``try_star.py`` rewrite the generator's own body before ``generators.py`` makes its state
machine); ``import`` statements in the middle of one (the names they bind live on its frame).
Derivatives against finite differences in every mode (``tests/all_modes.py``); the rewritten
generators against CPython in ``test_lazy_generator_semantics.py``."""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

X = 0.7


# ---------------------------------------------------------------- @contextmanager defined inside

def manager_defined_inside(x):
    log = []

    @contextlib.contextmanager
    def noted(tag):
        log.append(("enter", tag, np.pi > 3))  # a global read inside: the user's module's np
        try:
            yield tag
        finally:
            log.append(("exit", tag))
    with noted("square") as tag:
        y = x * x if tag == "square" else x
    with noted("sine"):
        y = y + np.sin(x)
    assert log == [("enter", "square", True), ("exit", "square"), ("enter", "sine", True), ("exit", "sine")]
    return y


def manager_without_target(x):
    @contextlib.contextmanager
    def quiet():
        with np.errstate(all="ignore"):
            yield
    with quiet():
        y = np.log(x) * x
    return y


@pytest.mark.parametrize("f", [manager_defined_inside, manager_without_target], ids=lambda f: f.__name__)
def test_a_contextmanager_defined_inside_works_in_a_plain_with(f):
    check_all_modes(f, X)


def counted(fn):
    counted.calls = getattr(counted, "calls", 0) + 1
    return fn


def test_another_decorator_of_a_nested_function_sees_the_users_globals():
    def f(x):
        @counted
        def h(t):
            return np.sin(t) * x
        return h(x)
    check_all_modes(f, X)


def test_a_nested_manager_capturing_floats_is_differentiated():
    """Its exit changes ``box``: contextlib's methods are differentiated (it was refused,
    tests/test_managers_local_and_global.py)."""
    def f(x):
        box = [x]

        @contextlib.contextmanager
        def tripled():
            yield
            box[0] = box[0] * 3
        with tripled():
            y = x * x
        return y + box[0]
    check_all_modes(f, X)


# ---------------------------------------------------------------- match and except* around yields

def matching(x):
    def g():
        k = 0
        while True:
            match (k % 3, k):
                case (0, _):
                    v = yield x * k
                case (1, n) if n > 3:
                    v = yield x ** n
                case [1, _]:
                    v = yield np.sin(x)
                case _:
                    v = yield 1.0
            match v:
                case None:
                    k += 1
                case float(step):
                    k += int(step)
    it = g()
    return next(it) + next(it) + next(it) + next(it) + it.send(2.0) + next(it)


def star_handled(x):
    def g():
        k = 0
        while True:
            try:
                if k % 2:
                    raise ExceptionGroup("odd", [ValueError(k), KeyError(k)])
                yield x * (k + 1)
            except* ValueError as group:
                yield x ** 3 * len(group.exceptions)
            except* KeyError:
                yield np.cos(x) * k
            k += 1
    it = g()  # (left suspended in the try's body: closed there, CPython raises nothing)
    return next(it) + next(it) + next(it) + next(it) + next(it) + next(it) + next(it)


def stepped_module_generator(x):
    k = 0
    while True:
        try:
            if k == 1:
                raise ExceptionGroup("one", [ValueError(k)])
            yield x * (k + 1)
        except* ValueError:
            yield x ** 3
        match k:
            case 2:
                yield np.exp(x)
        k += 1


def star_in_a_module_generator(x):
    it = stepped_module_generator(x)
    return next(it) + next(it) + next(it) + next(it) + next(it)


def walrus(x):
    def g():
        k = 0
        while (k := k + 1) < 10:
            if (y := x * k) > 1.5:
                yield y ** 2
            yield sum(z for t in range(k) if (z := t * x) > 0.5)
    it = g()
    return next(it) + next(it) + next(it) + next(it)


@pytest.mark.parametrize("f", [matching, star_handled, star_in_a_module_generator, walrus], ids=lambda f: f.__name__)
def test_match_and_except_star_around_yields(f):
    check_all_modes(f, X)


# ---------------------------------------------------------------- imports in the middle

def imports_after_yields(x):
    def g():
        yield x
        import math
        from math import cos as c, sin
        k = 1
        while True:
            yield math.exp(x) * k
            import numpy.linalg
            yield c(x) + sin(x * k) + numpy.linalg.norm([x, 1.0])
            k += 1

    def h():
        def inner(t):
            return math.sin(t)
        yield x
        import math
        yield inner(x)
    it, other = g(), h()
    return next(it) + next(it) + next(it) + next(it) + next(it) + next(other) + next(other)


def test_imports_between_yields():
    check_all_modes(imports_after_yields, X)
