"""A global written after a function reading it was compiled (a notebook: a later cell defines a
function writing a global that a function differentiated in an earlier cell reads): the reader is
compiled anew at its next call, reading the global's derivative, in every mode
(``frontend/global_writes.py``: ``RELOWER``; ``transform/global_writes.py``: ``_relower``).

Each test runs its "cells" with ``exec`` in a namespace of its own, as a notebook's cells share
``__main__``: no source file, so the names written are found by disassembling the functions."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from tests.modes import check_every_mode

_READERS = """
import numpy as np
G = 0.5
def reader(v):
    return G * v * v
def caller(v):
    return reader(v) + np.sin(v)
def looped(v):
    total = 0.0
    for k in range(3):
        total = total + reader(v) * (k + 1)
    return total
"""

_WRITERS = """
def writer(x):
    global G
    G = x * x
    return caller(x)
def loop_writer(x):
    global G
    G = np.cos(x)
    return looped(x)
"""


def _cells(name: str) -> dict:
    namespace: dict = {"__name__": name}
    exec(_READERS, namespace)
    for f in ("reader", "caller", "looped"):  # compiled in every mode, G read as a constant
        check_every_mode(namespace[f], 0.7)
    exec(_WRITERS, namespace)
    return namespace


def test_a_reader_compiled_before_the_writer_is_compiled_again_in_every_mode():
    namespace = _cells("notebook_direct")
    check_every_mode(namespace["writer"], 0.7)  # x^4 + sin x
    np.testing.assert_allclose(yb.grad(namespace["writer"])(0.7), 4 * 0.7 ** 3 + np.cos(0.7), rtol=1e-12)
    check_every_mode(namespace["loop_writer"], 0.4)  # 6 cos(x) x^2
    check_every_mode(namespace["reader"], 0.7)  # read alone again: G is whatever the last call left there


def test_the_writer_differentiated_first_in_forward_mode():
    namespace = _cells("notebook_forward")
    value, tangent = yb.jvp(namespace["writer"], (0.7,), (1.0,))
    np.testing.assert_allclose(tangent, 4 * 0.7 ** 3 + np.cos(0.7), rtol=1e-12)
    _, (gradient,), (hv,) = yb.hvp(namespace["loop_writer"], (0.4,), (1.0,))
    x = 0.4
    np.testing.assert_allclose(gradient, 6 * (2 * x * np.cos(x) - x * x * np.sin(x)), rtol=1e-12)
    np.testing.assert_allclose(hv, 6 * (2 * np.cos(x) - 4 * x * np.sin(x) - x * x * np.cos(x)), rtol=1e-10)


def test_the_module_global_holds_what_a_plain_call_leaves():
    namespace = _cells("notebook_left")
    yb.grad(namespace["writer"])(0.7)
    assert namespace["G"] == 0.7 * 0.7


_RUN = {"grad": lambda f, x: yb.grad(f)(x), "jvp": lambda f, x: yb.jvp(f, (x,), (1.0,)),
        "hvp": lambda f, x: yb.hvp(f, (x,), (1.0,))}

_COMPUTED = """
def computed(x):
    name = "LATE" + "_LEVEL"
    globals()[name] = x * 2.0
    return LATE_LEVEL * x
"""


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_a_reader_running_when_the_global_is_found_written_is_refused_once_then_followed(mode):
    """``globals()[k]`` with ``k`` computed: the name is found written while the function that
    reads it after runs its old code. That call is refused, naming the function, and the advice
    (call again) works: the next call compiles it anew."""
    namespace: dict = {"__name__": f"notebook_computed_{mode}"}
    exec(_COMPUTED, namespace)
    with pytest.raises(TypeError, match="global 'LATE_LEVEL'.*computed was running code compiled reading it as a "
                                        "constant.*call again"):
        _RUN[mode](namespace["computed"], 0.7)
    check_every_mode(namespace["computed"], 0.7)  # 2 x^2
    np.testing.assert_allclose(yb.grad(namespace["computed"])(0.7), 4 * 0.7, rtol=1e-12)


_CALLER = """
G = 0.5
def helper(v):
    return v
def outer(x):
    y = helper(x)
    return G * y
"""

_HELPER_REDEFINED = """
def helper(v):
    global G
    G = v * v
    return v
"""


def test_a_callee_redefined_to_write_a_global_its_running_caller_reads_is_refused_once_then_followed():
    """The caller, running when its callee is compiled and found writing ``G``, read ``G`` as a
    constant: refused (a dropped derivative otherwise), then compiled anew at the next call."""
    namespace: dict = {"__name__": "notebook_redefined_callee"}
    exec(_CALLER, namespace)
    check_every_mode(namespace["outer"], 0.7)
    exec(_HELPER_REDEFINED, namespace)
    with pytest.raises(TypeError, match="global 'G'.*outer was running code compiled reading it as a constant"):
        yb.grad(namespace["outer"])(0.7)
    check_every_mode(namespace["outer"], 0.7)  # x^3
    np.testing.assert_allclose(yb.grad(namespace["outer"])(0.7), 3 * 0.7 ** 2, rtol=1e-12)
