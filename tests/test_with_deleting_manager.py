"""A ``with`` statement's manager that deletes (or sets again) an attribute the block wrote.

Managers run without derivatives (``frontend/with_statements.py``), so what their ``__exit__``
does to an object is not recorded: the reverse pass's undo of the block's ``setattr`` found the
attribute gone (scikit-learn's ``callback_management_context`` deletes
``estimator._skl_callbacks_to_teardown``; the pullback raised AttributeError). The undo now
restores the state before the write whatever happened since: absent before, absent after; present
before, its old value. Each case is checked in every mode against central differences, and the
object passed in is checked to be as it was after each derivative call.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

X = np.array([0.5, -1.0, 0.3])


class Holder:
    pass


@contextlib.contextmanager
def tidied(holder):
    """Deletes ``holder.scratch`` when the block ends (set there)."""
    try:
        yield
    finally:
        del holder.scratch


class Tidy:
    """The same as a class: ``__exit__`` deletes the attribute it is named."""

    def __init__(self, holder, name):
        self.holder, self.name = holder, name

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        delattr(self.holder, self.name)
        return False


class Retag:
    """``__exit__`` sets ``holder.tag`` (the block deleted it)."""

    def __init__(self, holder):
        self.holder = holder

    def __enter__(self):
        return self

    def __exit__(self, kind, error, traceback):
        self.holder.tag = "managed"
        return False


def generator_manager_made_inside(x):
    holder = Holder()
    with tidied(holder):
        holder.scratch = x * 2.0
        y = np.sum(np.sin(holder.scratch) * x)
    return y


def class_manager_on_argument(x, holder):
    with Tidy(holder, "scratch"):
        holder.scratch = x ** 2
        y = np.sum(np.cos(holder.scratch))
    return y


def set_again_after_the_block(x, holder):
    with tidied(holder):
        holder.scratch = x * 2.0
        y = np.sum(holder.scratch * x)
    holder.scratch = np.exp(x)
    return y + np.sum(holder.scratch * x)


def deleted_in_block_set_by_manager(x, holder):
    with Retag(holder):
        label = holder.tag
        del holder.tag
        y = np.sum(x ** 3) * len(label)
    return y


def made_holder(existed):
    holder = Holder()
    if existed:
        holder.scratch = "old"
    holder.other = "kept"
    return holder


def _state(holder):
    return dict(vars(holder))


def _run_every_call(f, make):
    """Every derivative call of ``f(x, holder)`` on a holder from ``make()``: the reverse passes
    given the holder as an argument (grad, vjp) leave it as it was before; reached from outside (a
    closure's cell: hvp and jvp of a lambda) it is left as the plain call leaves it
    (``rules/outside_redo.py``)."""
    plain_holder = make()
    f(X.copy(), plain_holder)
    reverse = (lambda h: yb.grad(f)(X.copy(), h),
               lambda h: yb.vjp(f, X.copy(), h)[1](1.0))
    for call in reverse:
        holder = make()
        before = _state(holder)
        call(holder)
        assert _state(holder).keys() == before.keys()  # (an attribute the manager deleted comes back last)
        assert all(_state(holder)[name] is value for name, value in before.items())
    for outside in (lambda h: yb.jvp(lambda v: f(v, h), (X.copy(),), (np.ones(3),)),
                    lambda h: yb.hvp(lambda v: f(v, h), (X.copy(),), (np.ones(3),))):
        holder = make()
        outside(holder)
        assert list(_state(holder)) == list(_state(plain_holder))


def test_generator_manager_deleting_an_attribute_set_in_the_block():
    check_every_mode(generator_manager_made_inside, X)


@pytest.mark.parametrize("f", [class_manager_on_argument, set_again_after_the_block])
@pytest.mark.parametrize("existed", [False, True], ids=["absent-before", "present-before"])
def test_argument_restored_and_derivatives(f, existed):
    _run_every_call(f, lambda: made_holder(existed))
    check_every_mode(lambda v: f(v, made_holder(existed)), X)  # (a plain call changes the holder)


def tagged():
    holder = Holder()
    holder.first, holder.tag, holder.last = "a", "old", "z"
    return holder


def test_attribute_deleted_in_the_block_and_set_by_the_manager():
    _run_every_call(deleted_in_block_set_by_manager, tagged)
    holder = tagged()
    yb.grad(deleted_in_block_set_by_manager)(X.copy(), holder)
    assert list(vars(holder)) == ["first", "tag", "last"]  # undoing del keeps the place in the order
    check_every_mode(lambda v: deleted_in_block_set_by_manager(v, tagged()), X)
