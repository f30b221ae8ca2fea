"""An exception raised in a callable SciPy calls (an objective, an equation, an integrand, a
right-hand side) and caught in the differentiated function (``api/callback_writes.py``, issue 13).

SciPy runs the callable plainly, so what it writes on the way has no derivative. When it raised
after writing float state, the state reached the handler without one: reverse mode failed with
an internal ``IndexError``, forward mode gave ``(0.0, 0.0)`` for a function whose value is 0.7 and
slope 1.7 (its own refusal, a ``ValueError``, was taken by the user's ``except ValueError``). It
is refused by name in every mode, with an error no user handler takes. A callable that raises
without writing anything is differentiated as it is.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.integrate
import scipy.optimize

import yuebing as yb
from yuebing.rules import RuleArgumentError

from .modes import check_every_mode

X = 0.7


def _call(kind, callable_):
    if kind == "brentq":
        return scipy.optimize.brentq(callable_, 0.0, 1.0)
    if kind == "quad":
        return scipy.integrate.quad(callable_, 0.0, 1.0)
    if kind == "minimize":
        return scipy.optimize.minimize(lambda v: callable_(v[0]), np.array([0.5]))
    if kind == "fsolve":
        return scipy.optimize.fsolve(lambda v: v - callable_(v[0]), np.array([0.5]))
    return scipy.integrate.solve_ivp(lambda t, y: -callable_(y[0]) * y, (0.0, 1.0), np.array([1.0]))


KINDS = ["brentq", "quad", "minimize", "fsolve", "solve_ivp"]


def _writes_then_raises(kind):
    def f(x):
        kept = []

        def callable_(t):
            kept.append(t * x)  # float state written while SciPy calls it
            if len(kept) > 2:
                raise ValueError("stop")
            return t * x - 0.3

        try:
            _call(kind, callable_)
        except ValueError:
            return sum(kept) * x
        return 0.0

    return f


MODES = {
    "grad": lambda f: yb.grad(f)(X),
    "jvp": lambda f: yb.jvp(f, (X,), (1.0,)),
    "hvp": lambda f: yb.hvp(f, (X,), (1.0,)),
}


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("kind", KINDS)
def test_a_raise_after_writing_state_is_refused_by_name_past_the_users_handler(kind, mode):
    f = _writes_then_raises(kind)
    h = 1e-6
    assert (f(X + h) - f(X - h)) / (2 * h) != 0.0  # a derivative the state would lose
    with pytest.raises(RuleArgumentError, match=r"writes float state.*an exception it raised left "
                                                r"SciPy's call.*test for the failing case"):
        MODES[mode](f)


def _raises_without_writing(kind):
    def f(x):
        def callable_(t):
            raise ValueError("no root here")

        try:
            _call(kind, callable_)
        except ValueError:
            return np.sin(x) * x
        return 0.0

    return f


@pytest.mark.parametrize("kind", ["brentq", "quad", "minimize"])
def test_a_raise_without_writes_is_differentiated_in_every_mode(kind):
    check_every_mode(_raises_without_writing(kind), X)
