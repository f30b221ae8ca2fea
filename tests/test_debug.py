"""Debug mode (rules/debug.py): a rule that drops a derivative or breaks the tangent model is
caught at the call, naming the rule and the argument. The suite runs with it on (conftest.py)."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import CoDual, Dual, register_frule, register_rrule
from yuebing.tangents import NoRData
from yuebing.rules.util import output


def scale(x, a):
    return x * a


def drop_a_rrule(x, a):
    y = output(scale(x.primal, a.primal))

    def pullback(dy):
        x.fdata += np.asarray(y.fdata) * a.primal
        return NoRData, NoRData, NoRData  # a's derivative dropped

    return y, pullback


def drop_a_frule(x, a):
    return Dual(scale(x.primal, a.primal), yb.NoTangent)


def wrong_fdata_rrule(x, a):
    return CoDual(scale(x.primal, a.primal), np.zeros(1)), lambda dy: (NoRData, NoRData, 0.0)


def loss_of(fn):
    def loss(x, a):
        return np.sum(fn(x, a))
    return loss


def test_on_in_the_suite():
    assert yb.config()["debug"]


def test_dropped_reverse_derivative_is_caught():
    fn = lambda x, a: scale(x, a)  # noqa: E731 - a fresh function object per test
    register_rrule(fn, drop_a_rrule)
    with pytest.raises(yb.RuleDebugError, match="dropped the derivative of its argument 1"):
        yb.grad(loss_of(fn), argnums=1)(np.ones(3), 2.0)


def test_dropped_forward_derivative_is_caught():
    fn = lambda x, a: scale(x, a)  # noqa: E731
    register_frule(fn, drop_a_frule)
    with pytest.raises(yb.RuleDebugError, match="returned NoTangent"):
        yb.jvp(loss_of(fn), (np.ones(3), 2.0), (np.zeros(3), 1.0))


def test_wrong_fdata_type_is_caught():
    fn = lambda x, a: scale(x, a)  # noqa: E731
    register_rrule(fn, wrong_fdata_rrule)
    with pytest.raises(yb.RuleDebugError, match="fdata"):
        yb.grad(loss_of(fn))(np.ones(3), 2.0)


def test_off_lets_the_rule_run():
    fn = lambda x, a: scale(x, a)  # noqa: E731
    register_rrule(fn, drop_a_rrule)
    yb.config(debug=False)
    try:
        assert yb.grad(loss_of(fn), argnums=1)(np.ones(3), 2.0) == 0.0  # the broken rule's answer
    finally:
        yb.config(debug=True)
