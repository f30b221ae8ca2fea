"""``globals()`` used other than through its items (passed on, iterated, measured: an
``ir/globals_view.GlobalsView``) and a module global written as ``sys.modules[__name__].G = x``
(lowered as ``mod.G = x``, also through a variable bound once to ``sys.modules[__name__]``): reads and writes go through ``global_get``/``global_set``, so the
derivative of a value written reaches later reads. Every mode against central differences."""
import sys

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order

from .modes import check_every_mode

VIEW_LEVEL = 1.0
VIEW_ARRAY = np.zeros(2)
MODULE_LEVEL = 0.0
ALIAS_LEVEL = 0.0
LATE_LEVEL = 1.0


def _reads_through(g, v):
    return g["VIEW_LEVEL"] * v + (1.0 if len(g) > 3 and "VIEW_LEVEL" in g else 0.0)


def passes_globals_on(x):
    g = globals()
    g["VIEW_LEVEL"] = x * 3.0
    read = _reads_through(g, x)  # the view passed on: read with the write's derivative
    n = sum(1 for k in g.keys() if k == "VIEW_LEVEL")
    return VIEW_LEVEL * x * n + read + g.get("VIEW_LEVEL", 0.0) * x + len(globals()) * 0.0


def writes_through_sys_modules(x):
    sys.modules[__name__].MODULE_LEVEL = x * x
    sys.modules[__name__].MODULE_LEVEL += np.sin(x)
    return MODULE_LEVEL * x + sys.modules[__name__].MODULE_LEVEL


def writes_through_a_variable_holding_the_module(x):
    module = sys.modules[__name__]
    module.ALIAS_LEVEL = np.cos(x) * x
    module.ALIAS_LEVEL *= x
    return ALIAS_LEVEL + module.ALIAS_LEVEL * x


@pytest.mark.parametrize("f", [passes_globals_on, writes_through_sys_modules, writes_through_a_variable_holding_the_module],
                         ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, 0.7)


def _scales_the_stored_array(g, v):
    g["VIEW_ARRAY"][0] = g["VIEW_ARRAY"][0] * v


def stores_an_argument(a, v):
    """``a`` kept in a global through the view and written by a callee through it: its state
    after the call is checked, and it is restored after the pullback."""
    g = globals()
    g["VIEW_ARRAY"] = a
    _scales_the_stored_array(g, v)
    return np.sum(VIEW_ARRAY ** 2) * v


def _central(f, a, v, h=1e-6):
    da = [(f(a + h * e, v) - f(a - h * e, v)) / (2 * h) for e in np.eye(a.size)]
    return np.array(da), (f(a.copy(), v + h) - f(a.copy(), v - h)) / (2 * h)


def test_an_argument_written_through_the_view_is_restored():
    a, v = np.array([0.5, -1.2]), 0.8
    expected = _central(lambda b, w: stores_an_argument(b.copy(), w), a, v)
    ga, gv = yb.grad(stores_an_argument, argnums=(0, 1))(a, v)
    np.testing.assert_array_equal(a, [0.5, -1.2])  # restored
    np.testing.assert_allclose(ga, expected[0], rtol=1e-6)
    np.testing.assert_allclose(gv, expected[1], rtol=1e-6)
    _, slope = yb.jvp(stores_an_argument, (a.copy(), v), (np.array([1.0, 0.5]), 0.25))
    np.testing.assert_allclose(slope, expected[0] @ [1.0, 0.5] + expected[1] * 0.25, rtol=1e-6)
    check_second_order(stores_an_argument, a, v)


def _writes_late(g, v):
    g["LATE_LEVEL"] = v * 2.0


def reads_a_global_a_callee_writes_through_the_view(x):
    _writes_late(globals(), x)
    return LATE_LEVEL * x  # compiled before the write was known: refused in that call, never a constant


def test_a_read_compiled_before_a_write_through_the_view_is_refused_in_that_call_then_followed():
    from tests.modes import check_every_mode

    try:
        with pytest.raises(TypeError, match="'LATE_LEVEL': reads_a_global_a_callee_writes_through_the_view was "
                                            "running code compiled.*call again"):
            yb.grad(reads_a_global_a_callee_writes_through_the_view)(0.7)
        check_every_mode(reads_a_global_a_callee_writes_through_the_view, 0.7)  # the advice works: 2 x^2
    finally:
        globals().pop("LATE_LEVEL", None)
