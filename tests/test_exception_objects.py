"""User objects holding floats, carried by an exception (``rules/exception_data.py``).

What an exception is made from in differentiated code is followed, however deep its floats lie
(``raise ValueError(obj)``), and so is a user object a rule's C code put in the exception it
raised (``KeyError(box)`` of ``d[box]``, ``AttributeError.obj``: recorded with the object the rule
was handed, ``carry_handed``; they were refused). One raised in a callback SciPy calls is refused
by name when read. All of them were read as constants before, a derivative of 0 in every mode. One a Python ``__init__`` computed (``Computing``) is differentiated with the exception's
tangent (``rules/exception_tangents.py``). Each in reverse, forward and second order
(the refusals in third order too, where a caught exception is not followed otherwise).
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize

import yuebing as yb
from yuebing.rules import RuleArgumentError

from .all_modes import check_all_modes


class Box:
    def __init__(self, value):
        self.value = value


class Nest:
    def __init__(self, inner):
        self.inner = inner


class Computing(Exception):
    def __init__(self, v):
        super().__init__("not converged")
        self.box = Box(v * 2.0)  # computed from the argument: not what the exception was made from


def _missing_key(x):
    box = Box(x * 2.0)
    try:
        {}[box]
    except KeyError as e:  # made by the dict's C code
        return e.args[0].value * 3.0


def _missing_attribute(x):
    box = Box(x * 2.0)
    try:
        box.missing
    except AttributeError as e:
        return e.obj.value * 3.0


def _computed_by_init(x):
    try:
        raise Computing(x)
    except Computing as e:
        return e.box.value * 3.0


def _deep_key(x):
    nest = Nest(Nest(Nest(Nest(Box(x * 2.0)))))  # (beyond the four levels looked into before)
    try:
        {}[nest]
    except KeyError as e:
        return e.args[0].inner.inner.inner.inner.value * 3.0


def _raised_in_quad(x):
    box = Box(x * 2.0)

    def integrand(t):
        if t > 0.5:
            raise ValueError(box)
        return t * x

    try:
        scipy.integrate.quad(integrand, 0.0, 1.0)
    except ValueError as e:
        return e.args[0].value * 3.0


def _raised_in_brentq(x):
    box = Box(x * 2.0)

    def residual(t):
        raise ValueError(box)

    try:
        scipy.optimize.brentq(residual, 0.0, 1.0)
    except ValueError as e:
        return e.args[0].value * 3.0


MODES = {
    "grad": lambda f, x: yb.grad(f)(x),
    "jvp": lambda f, x: yb.jvp(f, (x,), (1.0,)),
    "hvp": lambda f, x: yb.hvp(f, (x,), (1.0,)),
    "third order": lambda f, x: yb.hvp(yb.grad(f), (x,), (1.0,)),  # (refused there at the read too)
}
REFUSED = [(_raised_in_quad, "ValueError", "args"), (_raised_in_brentq, "ValueError", "args")]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("f, kind, name", REFUSED, ids=[f.__name__.strip("_") for f, _, _ in REFUSED])
def test_floats_of_a_user_object_the_exception_was_not_made_from_are_refused(f, kind, name, mode):
    h = 1e-6
    assert (f(0.7 + h) - f(0.7 - h)) / (2 * h) != 0.0  # a derivative that a constant read would lose
    with pytest.raises(RuleArgumentError, match=f"the float data the {kind} exception carries in {name!r}"):
        MODES[mode](f, 0.7)


def _deep_argument(x):
    nest = Nest(Nest(Nest(Nest(Box(x * 2.0)))))
    try:
        raise ValueError(nest)
    except ValueError as e:  # what it was made from: followed at any depth
        return np.sin(e.args[0].inner.inner.inner.inner.value) * 3.0


def _as_advised(x):
    box = Box(x * 2.0)
    try:
        {}[box]
    except KeyError:  # the error's advice: read the variable, not the exception
        return np.sin(box.value) * 3.0


def _attribute_error_fields(x):
    box = Box(3)  # (no floats: its reads are not refused)
    try:
        box.missing
    except AttributeError as e:  # name and obj as Python sets them (reverse mode's getattr left obj None)
        return x * len(e.name) * e.obj.value


@pytest.mark.parametrize("f", [_deep_argument, _as_advised, _attribute_error_fields, _computed_by_init,
                               _missing_key, _missing_attribute, _deep_key])
def test_what_the_exception_was_made_from_and_the_advice_differentiate(f):
    check_all_modes(f, 0.7)
