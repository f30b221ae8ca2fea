"""The strong-zero rule (docs/conventions.md; issue 12, item 5): an exactly-zero cotangent or
tangent contributes exactly zero in derivative propagation, even where the local partial is inf
or NaN, so a masked branch (``np.where(x > 0, np.sqrt(x), 0.0)``) has derivative 0 where it is
masked, as finite differences say, instead of NaN. Primal values are never changed.

Each case runs in every mode (``check_every_mode``: grad, jvp, jacobian(mode="fwd"), hvp,
hessian against central differences) and on each path that computes it: inline templates,
array blocks (two or more elementwise statements), float blocks (six or more float statements),
float loops, and the generic rules (a function called through a local name has no template).
"""
from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.declare import strong_product, strong_quotient

from .modes import check_every_mode

MIXED = np.array([-1.0, 4.0, -2.5, 9.0])


@pytest.fixture(autouse=True)
def _quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # the masked branches compute nan/inf
        yield


# ---------------------------------------------------------------- arrays


def masked_sqrt(x):  # array templates
    return np.sum(np.where(x > 0, np.sqrt(x), 0.0))


def masked_sqrt_block(x):  # an array block before the mask: sqrt, mul, add
    y = np.sqrt(x)
    z = y * y * 2.0 + y
    return np.sum(np.where(x > 0, z, 0.0))


def masked_log_block(x):
    y = np.log(x)
    z = y * 3.0 - x
    return np.sum(np.where(x > 0, z, 0.0) ** 2)


def masked_sqrt_generic(x):
    root = np.sqrt  # through a local name: the generic rule
    times = np.multiply
    return np.sum(np.where(x > 0, times(root(x), x), 0.0))


def masked_in_place(x):  # the in-place operator's rule
    y = np.sqrt(x)
    y *= x
    return np.sum(np.where(x > 0, y, 0.0))


def masked_quotient(x):
    return np.sum(np.where(x != 0, np.sin(x) / x, 1.0))


def masked_arcsin(x):
    return np.sum(np.where(np.abs(x) < 1, np.arcsin(x), 0.0))


def masked_power(x):
    return np.sum(np.where(x > 0, x ** 0.5, 0.0) + np.where(x > 0, np.power(x, 1.5), 0.0))


@pytest.mark.parametrize("f", [masked_sqrt, masked_sqrt_block, masked_log_block, masked_sqrt_generic,
                               masked_arcsin, masked_power, masked_in_place])
def test_masked_array_branches(f):
    check_every_mode(f, MIXED if f is not masked_arcsin else np.array([-1.5, 0.3, 2.0, -0.2]))


def test_masked_quotient_at_zero():
    # first order only: at 0 the constant branch is taken, whose second derivative is 0, not the quotient's
    check_every_mode(masked_quotient, np.array([0.0, 1.3, -0.4]), second_order=False)
    _, (g,), (hv,) = yb.hvp(masked_quotient, (np.array([0.0, 1.3]),), (np.ones(2),))
    assert g[0] == 0.0 and hv[0] == 0.0


def test_the_paths_are_taken():
    assert "array block" in yb.show(masked_sqrt_block)
    assert "array block" in yb.show(masked_log_block)


def test_the_issue_example():
    g = yb.grad(lambda x: np.sum(np.where(x > 0, np.sqrt(x), 0.0)))(np.array([-1.0, 4.0]))
    np.testing.assert_array_equal(g, [0.0, 0.25])


def test_masked_values_at_the_singular_point_are_zero():
    """At ``x = 0`` the masked branch's partial is infinite (``sqrt'(0)``, ``log'(0)``): central
    differences straddle the mask there, so this is the rule's written expectation."""
    x = np.array([0.0, 4.0])
    for f in (masked_sqrt, masked_sqrt_block, masked_log_block, masked_sqrt_generic):
        g = yb.grad(f)(x.copy())
        assert g[0] == 0.0, f.__name__
        assert yb.jvp(f, (x.copy(),), (np.array([1.0, 0.0]),))[1] == 0.0, f.__name__
        _, (g2,), (hv,) = yb.hvp(f, (x.copy(),), (np.array([1.0, 0.0]),))
        assert g2[0] == 0.0 and hv[0] == 0.0, f.__name__


# ---------------------------------------------------------------- floats


def masked_float_sqrt(x):  # float templates (np.sqrt of a negative float is nan)
    return np.where(x > 0, np.sqrt(x), 0.0) + x


def masked_float_generic(x):
    root = np.sqrt
    return np.where(x > 0, root(x) * x, 0.0) + x


def overflowing_float_block(x):
    """Six float statements: ``c`` is inf with tangent exactly 0, ``c * c``'s partials are inf,
    and ``1 / c**2`` is 0 with cotangent -0.0: both modes meet ``0 * inf``."""
    a = x - x
    b = a + 1e300
    c = b * 1e300
    d = c * c
    e = 1.0 / d
    return e * 2.0 + x


def overflowing_float_loop(x):
    y = 0.0
    for i in range(len(x)):
        c = (x[i] - x[i] + 1e300) * 1e300
        y += 1.0 / (c * c) + x[i]
    return y


@pytest.mark.parametrize("f", [masked_float_sqrt, masked_float_generic, overflowing_float_block])
@pytest.mark.parametrize("x", [-1.5, 2.0])
def test_masked_float_branches(f, x):
    check_every_mode(f, x)


def test_float_block_and_loop_paths():
    assert "float block" in yb.show(overflowing_float_block)
    assert "float loop" in yb.show(overflowing_float_loop)
    check_every_mode(overflowing_float_loop, np.array([1.0, 2.0, -3.0]), second_order=False)
    _, (g,), (hv,) = yb.hvp(overflowing_float_loop, (np.array([1.0, 2.0]),), (np.ones(2),))
    np.testing.assert_array_equal(g, [1.0, 1.0])
    np.testing.assert_array_equal(hv, [0.0, 0.0])


# ---------------------------------------------------------------- primal values and legit NaN


def test_primal_values_keep_their_nan():
    value, g = yb.value_and_grad(lambda x: np.sum(np.sqrt(x) * 0.0))(np.array([-1.0, 4.0]))
    assert math.isnan(value)  # 0 * nan stays nan in the value
    assert not np.isnan(g).any()  # the cotangent 0 * 0.0 of sqrt(x) is exactly zero


def test_a_nonzero_cotangent_still_propagates_nan():
    g = yb.grad(lambda x: np.sum(np.sqrt(x)))(np.array([-1.0, 4.0]))
    assert math.isnan(g[0]) and g[1] == 0.25


def test_strong_product_and_quotient():
    d = np.array([0.0, 1.0, 0.0, 2.0])
    p = np.array([np.inf, np.inf, np.nan, 3.0])
    np.testing.assert_array_equal(strong_product(d, p), [0.0, np.inf, 0.0, 6.0])
    np.testing.assert_array_equal(strong_product(0.0, p), np.zeros(4))
    np.testing.assert_array_equal(strong_product(d[:, None], np.array([np.inf, 1.0])),
                                  [[0, 0], [np.inf, 1], [0, 0], [np.inf, 2]])
    np.testing.assert_array_equal(strong_quotient(d, np.zeros(4)), [0.0, np.inf, 0.0, np.inf])
    assert strong_product(0.0, math.inf) == 0.0 and math.isnan(strong_product(math.nan, 0.0))
    assert strong_product(np.array([np.inf, -np.inf]), np.ones(2)).tolist() == [np.inf, -np.inf]


# ---------------------------------------------------------------- array blocks that skip the check


def gaussian_block(x):  # exp of a computed value: the block checks its adjoint
    return np.sum(np.exp(-x * x))


def bounded_block(x):  # sin, cos, exp of an input, products: finite outputs prove finite partials
    return np.sum(np.sin(np.cos(np.exp(x))) * x)


def test_array_blocks_check_unless_finite_outputs_prove_finite_partials():
    assert "_fin" not in yb.show(gaussian_block) and "_fin" in yb.show(bounded_block)
    g = yb.grad(gaussian_block)(np.array([np.inf, 1.0]))  # exp(-inf) = 0 hides inf * 0
    np.testing.assert_allclose(g, [0.0, -2 * math.exp(-1.0)])
    check_every_mode(bounded_block, np.array([-0.5, 0.3, 1.2]))


def test_forward_mode_checks_the_strong_zero_once_per_output():
    """The first pass multiplies plainly: sqrt'(0) * 0 makes a NaN that reaches the output, so the
    strong pass runs (giving the strong-zero result), drawing the same random numbers."""
    def noisy_root(x):
        return np.sum(np.sqrt(x) * np.random.normal(size=x.shape))

    np.random.seed(5)
    value, tangent = yb.jvp(noisy_root, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),))
    np.random.seed(5)
    noise = np.random.normal(size=2)
    np.testing.assert_allclose(value, 2.0 * noise[1])
    np.testing.assert_allclose(tangent, noise[1] * 0.5 / 2.0)


_SEEN: list = []


def _root_with_a_log(x):
    _SEEN.append(1.0)
    return np.sum(np.sqrt(x)) * len(_SEEN)


def test_forward_mode_refuses_a_second_run_that_changes_the_value():
    """A NaN first pass needs a second run; a function whose outside state makes the second run's
    value differ (a global list it appends to) is refused, clearly."""
    _SEEN.clear()
    with pytest.raises(ValueError, match="the second run gave another value"):
        yb.jvp(_root_with_a_log, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),))
    _SEEN.clear()
    value, tangent = yb.jvp(_root_with_a_log, (np.array([1.0, 4.0]),), (np.array([0.0, 1.0]),))
    assert value == 3.0 and tangent == 0.25 and len(_SEEN) == 1
