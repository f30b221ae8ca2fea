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

from all_modes import check_all_modes

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


def test_a_nested_manager_capturing_floats_is_refused_naming_it():
    """Its exit would change ``box`` without derivatives: refused, not silently wrong."""
    def f(x):
        box = [x]

        @contextlib.contextmanager
        def tripled():
            yield
            box[0] = box[0] * 3
        with tripled():
            y = x * x
        return y + box[0]
    for run in (lambda: yb.grad(f)(X), lambda: yb.jvp(f, (X,), (1.0,)), lambda: yb.hvp(f, (X,), (1.0,))):
        with pytest.raises(TypeError, match=r"(?s)the function tripled, which captures float data.*What to do.*"
                                            r"test_lazy_generator_syntax.py.*with tripled"):
            run()
