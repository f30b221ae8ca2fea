"""``global`` writes in differentiated code (issue 13 item 4): the module's global is written as a
plain call writes it, once per gradient call; a value carrying derivatives is refused."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb

COUNTER = 0
SCALE = 1.0
CHOICE = None


def counted(x):
    global COUNTER, CHOICE
    COUNTER += 1
    CHOICE = np.sin if x > 0.0 else np.cos
    return CHOICE(x) * x * COUNTER


def leaks_a_derivative(x):
    global SCALE
    SCALE = x * 2.0
    return SCALE * x


@pytest.mark.parametrize("mode", ["grad", "jvp", "hessian"])
def test_a_counter_goes_up_once_per_call_and_the_derivative_is_the_plain_one(mode):
    global COUNTER
    COUNTER = 0
    x, h = 0.8, 1e-6
    run = {"grad": lambda: yb.grad(counted)(x), "jvp": lambda: yb.jvp(counted, (x,), (1.0,))[1],
           "hessian": lambda: yb.hessian(counted)(x)}[mode]
    got = run()
    assert COUNTER == 1 and CHOICE is np.sin

    def plain(v, order=1):  # the function with the counter as it was during the call
        return np.sin(v) * v

    first = (plain(x + h) - plain(x - h)) / (2 * h)
    expected = first if mode != "hessian" else (plain(x + h) - 2 * plain(x) + plain(x - h)) / h ** 2
    np.testing.assert_allclose(got, expected, rtol=1e-4)


def test_a_global_given_a_derivative_carrying_value_is_refused_naming_it():
    with pytest.raises(TypeError, match="writing the global 'SCALE'") as error:
        yb.grad(leaks_a_derivative)(0.5)
    assert "test_global_writes.py" in "".join(getattr(error.value, "__notes__", [])) + str(error.value)
