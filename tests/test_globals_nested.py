"""A global written a value carrying derivatives inside a differentiation nested in another
(``yb.grad`` inside a differentiated function): followed in the nested pass, whose reads take the
derivative its write gave (``transform/global_writes.py``). The passes around it may read the
global before the nested differentiation, not the value it wrote (refused, naming the global: its
derivative is the nested pass's); the advice, an auxiliary value, works. Against central
differences of the outer function in reverse and forward mode (its second order is third order,
refused by name as before)."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode

LAST = 0.0
TRACE: list = []


def inner(v):
    global LAST
    LAST = v * v
    return LAST * v + np.sin(LAST)  # read in the nested pass: its derivative is followed


def outer(x):
    return yb.grad(inner)(x) * x  # (3 v^2 + 2 v cos v^2) x


def inner_array(w):
    global LAST
    LAST = w * 2.0
    return np.sum(LAST * w)


def outer_array(x):
    before = LAST  # read before the nested pass wrote it: the value it held (a constant, an earlier call's)
    return np.sum(yb.grad(inner_array)(x * x)) + 0.0 * np.sum(before)


def outer_reads_after(x):
    g = yb.grad(inner)(x)
    return g * LAST


def inner_with_aux(v):
    global LAST
    LAST = v * v
    return LAST * v, LAST


def outer_with_aux(x):
    g, last = yb.grad(inner_with_aux, has_aux=True)(x)
    return g * last


@pytest.fixture(autouse=True)
def _fresh():
    global LAST
    LAST = 0.0
    yield
    LAST = 0.0


@pytest.mark.parametrize("f, x", [(outer, 0.7), (outer_array, np.array([0.4, 0.9]))], ids=["scalar", "array"])
def test_a_global_written_in_a_nested_differentiation_is_followed_there(f, x):
    check_every_mode(f, x, second_order=False)
    np.testing.assert_allclose(yb.grad(outer)(0.7), 9 * 0.7 ** 2 + 4 * 0.7 * np.cos(0.49) - 4 * 0.7 ** 3 * np.sin(0.49),
                               rtol=1e-10)


def test_the_module_holds_what_a_plain_call_leaves():
    yb.grad(outer)(0.7)
    assert LAST == 0.7 * 0.7


@pytest.mark.parametrize("mode", ["grad", "jvp"])
def test_the_outer_pass_reading_what_the_nested_one_wrote_is_refused_and_the_advice_works(mode):
    with pytest.raises(TypeError, match="global 'LAST'.*a differentiation nested in this one.*has_aux=True"):
        yb.grad(outer_reads_after)(0.7) if mode == "grad" else yb.jvp(outer_reads_after, (0.7,), (1.0,))
    check_every_mode(outer_with_aux, 0.7, second_order=False)  # 3 x^4


def test_third_order_still_refuses_it_by_name():
    with pytest.raises(TypeError, match="the global 'LAST'"):
        yb.hvp(outer, (0.7,), (1.0,))
