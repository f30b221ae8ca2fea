"""Third-order refusals that name what the user wrote (``transform/third_order_refusals.py``).

* A global written a value carrying derivatives in the function under ``yb.grad`` (``global G``,
  ``setattr(sys.modules[__name__], "H", v)``, ``globals()["K"] = v``): was a plain ``TypeError``
  saying "a global statement" whatever the user wrote; now a ``yb.NestedDifferentiationError``
  (still a ``TypeError``) naming the global, at the user's line.
* A class keyword reading the function's variables (``class Sub(Base, k=s * 3.0)``): was
  ``UnsupportedSyntaxError: ... a starred expression here (in f_plain_jvp)``, naming generated
  code (normalising the plain forward program hoisted the ``*bases`` the first normalisation left,
  ``frontend/local_classes._deferred_bases``); now refused by name at the user's class statement.

Each advice is followed and checked against central differences (``check_third_order``).
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

X0 = np.array([0.3, -0.2, 0.5])


def _write_with_global_statement(v):
    global G
    G = v


def _write_through_the_module(v):
    setattr(sys.modules[__name__], "H", v)


def _write_through_globals(v):
    globals()["K"] = v


def with_global_statement(x):
    _write_with_global_statement(x * 2.0)
    return np.sum(G * G)


def through_the_module(x):
    _write_through_the_module(x * 2.0)
    return np.sum(H * H)


def through_globals(x):
    _write_through_globals(x * 2.0)
    return np.sum(K * K)


G = H = K = 0.0
WRITERS = [(with_global_statement, "G", "G = v"),
           (through_the_module, "H", 'setattr(sys.modules[__name__], "H", v)'),
           (through_globals, "K", 'globals()["K"] = v')]


def _third_order(f):
    F = lambda x: np.sum(yb.grad(f)(x) * np.array([0.3, -0.2, 0.5]))  # noqa: E731
    return yb.hvp(F, (X0.copy(),), (np.ones(3),))


@pytest.mark.parametrize("f, name, line", WRITERS, ids=lambda v: getattr(v, "__name__", None))
def test_a_global_written_in_third_order_is_refused_by_name(f, name, line):
    if f is not with_global_statement:  # found written when it runs: the readers compiled before are redone
        with pytest.raises(TypeError, match="running code compiled reading it as a constant.*call again"):
            _third_order(f)
    with pytest.raises(yb.NestedDifferentiationError, match=f"third derivatives.*the global '{name}' written") as error:
        _third_order(f)
    assert isinstance(error.value, TypeError)  # (as the other orders' refusals of globals)
    notes = "".join(getattr(error.value, "__notes__", []))
    assert "test_third_order_named_refusals.py" in notes and line in notes


def returns_the_value(x):
    v = x * 2.0  # the advice: the value returned (here: used) instead of written to a global
    return np.sum(v * v)


def test_the_global_advice_works():
    check_third_order(returns_the_value, X0.copy())


class _Base:
    def __init_subclass__(cls, k=1.0, **kw):
        super().__init_subclass__(**kw)
        cls.k = k


def class_keyword(x, s):
    class Sub(_Base, k=s * 3.0):
        pass
    return Sub.k * np.sum(np.tanh(x))


class _Scaled:
    def __init__(self, k):
        self.k = k


def class_argument(x, s):
    return _Scaled(s * 3.0).k * np.sum(np.tanh(x))


def test_a_class_keyword_reading_variables_is_refused_at_the_users_line():
    with pytest.raises(yb.NestedDifferentiationError, match=r"class keywords read them: class Sub\(Base, k=\.\.\.\)") \
            as error:
        check_third_order(class_keyword, X0.copy(), 0.7)
    notes = "".join(getattr(error.value, "__notes__", []))
    assert "test_third_order_named_refusals.py" in notes and "class Sub(_Base, k=s * 3.0):" in notes
    assert "plain_jvp" not in str(error.value) + notes


def test_the_class_keyword_advice_works():
    check_third_order(class_argument, X0.copy(), 0.7)
