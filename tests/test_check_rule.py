"""check_rule itself: it passes correct rules and catches each kind of wrong one."""
import numpy as np
import pytest

import yuebing

from yuebing.rules import CoDual, Dual, register_frule, register_rrule
from yuebing.rules.util import accumulate, out_cotangent, output
from yuebing.tangents import NoFData, NoRData, NoTangent
from yuebing.testing import RuleCheckError, check_rule


def make_square():
    def square(x):
        return x * x

    return square


def register_square(derivative, overwrite=False):
    square = make_square()

    def rrule(x):
        out = output(square(x.primal))

        def pullback(dy):
            g = out_cotangent(out, dy) * derivative(x.primal)
            if overwrite and isinstance(x.primal, np.ndarray):
                x.fdata[...] = g  # wrong: must increment
                return NoRData, NoRData
            return NoRData, accumulate(x, g)

        return out, pullback

    def frule(x):
        return Dual(square(x.primal), derivative(x.primal) * x.tangent)

    register_rrule(square, rrule)
    register_frule(square, frule)
    return square


def test_correct_rule_passes():
    square = register_square(lambda x: 2 * x)
    check_rule(square, np.random.default_rng(0).standard_normal(4))
    check_rule(square, 0.7)


def test_wrong_derivative_is_caught_in_both_modes():
    square = register_square(lambda x: 3 * x)
    with pytest.raises(RuleCheckError, match="forward mode disagrees with finite differences"):
        check_rule(square, np.ones(3), mode=("fwd",))
    with pytest.raises(RuleCheckError, match="reverse mode disagrees with finite differences"):
        check_rule(square, np.ones(3), mode=("rev",))


def test_overwriting_pullback_is_caught():
    square = register_square(lambda x: 2 * x, overwrite=True)
    with pytest.raises(RuleCheckError, match="overwrites"):
        check_rule(square, np.random.default_rng(1).standard_normal(3), mode=("rev",))


def scale_in_place(a, s):
    a *= s
    return None


def register_scale(restore=True, share_fdata=True):
    def rrule(a, s):
        old = a.primal.copy()
        a.primal *= s.primal

        def pullback(dy):
            g = a.fdata.copy()  # cotangent of the post-call state
            if restore:
                a.primal[...] = old
            a.fdata[...] = g * s.primal
            return NoRData, NoRData, float(np.sum(g * old))

        return output(None), pullback

    def frule(a, s):
        old = a.primal.copy()
        a.primal *= s.primal
        a.tangent[...] = a.tangent * s.primal + old * s.tangent
        return Dual(None, NoTangent)

    register_rrule(scale_in_place, rrule)
    register_frule(scale_in_place, frule)


def test_mutating_rule_passes_with_post_state_checked():
    register_scale()
    check_rule(scale_in_place, np.random.default_rng(2).standard_normal(3), 1.7)


def test_unrestored_mutation_is_caught():
    register_scale(restore=False)
    with pytest.raises(RuleCheckError, match="did not restore the arguments"):
        check_rule(scale_in_place, np.ones(3), 2.0, mode=("rev",))


def identity_view(a):
    return a[1:]


def register_view(alias_fdata):
    def rrule(a):
        y = a.primal[1:]
        fd = a.fdata[1:] if alias_fdata else np.zeros_like(y)
        return CoDual(y, fd), lambda dy: (NoRData, NoRData)

    def frule(a):
        return Dual(a.primal[1:], a.tangent[1:])

    register_rrule(identity_view, rrule)
    register_frule(identity_view, frule)


def test_view_rule_with_aliased_fdata_passes():
    register_view(alias_fdata=True)
    check_rule(identity_view, np.arange(4.0))


def test_broken_alias_is_caught():
    register_view(alias_fdata=False)
    with pytest.raises(RuleCheckError, match="mirror"):
        check_rule(identity_view, np.arange(4.0), mode=("rev",))


def test_wrong_primal_output_is_caught():
    def f(x):
        return x + 1.0

    register_rrule(f, lambda x: (output(x.primal + 2.0), lambda dy: (NoRData, accumulate(x, dy))))
    with pytest.raises(RuleCheckError, match="primal output differs"):
        check_rule(f, 1.0, mode=("rev",))


def test_wrong_pullback_arity_is_caught():
    def f(x):
        return 2.0 * x

    register_rrule(f, lambda x: (output(2.0 * x.primal), lambda dy: (accumulate(x, 2.0 * dy),)))
    with pytest.raises(yuebing.RuleDebugError, match="pullback returned 1 rdata for 1 arguments"):
        check_rule(f, 1.0, mode=("rev",))  # debug mode (on in the suite) catches it at the call
    yuebing.config(debug=False)
    try:
        with pytest.raises(RuleCheckError, match="must return a tuple of 2 rdata"):
            check_rule(f, 1.0, mode=("rev",))  # and check_rule without it
    finally:
        yuebing.config(debug=True)


def test_ufunc_out_argument_is_checked_as_mutation():
    rng = np.random.default_rng(3)
    check_rule(np.sin, rng.standard_normal(3), rng.standard_normal(3))
    x = rng.standard_normal(3)
    check_rule(lambda v: np.sin(v, out=v), x, mode=())  # plain function: primal only


def test_check_rule_never_touches_caller_arguments():
    square = register_square(lambda x: 2 * x)
    x = np.arange(3.0)
    check_rule(square, x)
    assert np.array_equal(x, np.arange(3.0))
    assert NoFData is not None
