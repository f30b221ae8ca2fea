"""Third order of handlers and of closures over captured cells, which were refused naming
yuebing's own functions (``_log_jvp``, ``caught``, ``share_cells``) or crashed.

* ``try: math.log(x)`` caught by ``except ValueError`` (fuzz seeds 85079, 85158): the definition
  of ``math.log``'s tangent raised inside second order, which carried its (empty) work to the
  handler and refused it naming ``_log_jvp``; then the plain program's handler check (``caught``)
  was refused as yuebing's machinery. A handler that runs is followed, and one that does not run
  (np.histogram2d's wrong Hessian, which had the handler refused, came from an int array kept in
  a tuple and written: ``tests/test_third_order_structure_writes.py``).
* A function made outside the differentiated code whose nested function reads a variable it
  captures: the plain program shared the cell through an ``if False`` local that second order
  never bound (UnboundLocalError). Writing it (``nonlocal``) is refused naming the function.

Each program is checked against differences in reverse, forward and second order
(``fuzz.check_program``) and in third order (``F3 = <v, yb.grad(f)>`` under ``yb.hvp``).
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import fuzz
from yuebing.testing.fuzz_third import check_third_order_program, gradient_function_source

HEADER = "import math\nimport numpy as np\n\n"
INSIDE = (np.array([0.6, 0.3, 0.8]), 0.7)
OUTSIDE = (np.array([-0.6, 0.3, 0.8]), 0.7)

CAUGHT = ("def f(x, s):\n    try:\n        y = math.log(x[0]) * s\n    except ValueError:\n"
          "        y = x[0] ** 3 * s\n    return y * x[1] + np.sum(np.sin(x) ** 2)\n")
CAUGHT_IN_A_HELPER = ("def safe_log(v):\n    try:\n        return math.log(v)\n    except ValueError:\n"
                      "        return v * v\n\n"
                      "def f(x, s):\n    return safe_log(x[0]) * s * x[1] + np.sum(np.cos(x * s))\n")
CAPTURED_OUTSIDE = ("def make(a):\n    def g(x, s):\n        h = lambda t: np.sin(t * a * s)\n"
                    "        return np.sum(h(x) * x)\n    return g\n\nf = make(1.3)\n")
CAPTURED_BY_A_GENERATOR = ("def make(a):\n    def g(x, s):\n        return sum(np.sin(x[i] * a) * s for i in range(3))\n"
                           "    return g\n\nf = make(1.3)\n")

TESTED_BEFORE = ("def f(x, s):\n    if x[0] > 0:\n        y = math.log(x[0]) * s\n    else:\n"
                 "        y = x[0] ** 3 * s\n    return y * x[1] + np.sum(np.sin(x) ** 2)\n")

CARRYING = ("class Overflow(Exception):\n    pass\n\n"
            "def f(x, s):\n    try:\n        raise Overflow(np.sum(x * x) * s)\n"
            "    except Overflow as err:\n        return err.args[0] * x[0]\n")

PROGRAMS = [
    ("a ValueError of math.log caught, the log taken", CAUGHT, INSIDE),
    ("the advice: the condition tested before the call", TESTED_BEFORE, OUTSIDE),
    ("a variable captured from outside read by a lambda", CAPTURED_OUTSIDE, INSIDE),
    ("a variable captured from outside read by a generator expression", CAPTURED_BY_A_GENERATOR, INSIDE),
]


@pytest.mark.parametrize("name,source,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_right_in_every_order(name, source, args):
    source = HEADER + source
    assert fuzz.check_program(source, args).status == "right"
    outcome = check_third_order_program(gradient_function_source(source, ["x", "s"], args, 0), args)
    assert outcome.status == "right", str(outcome)


@pytest.mark.parametrize("source", [CAUGHT, CAUGHT_IN_A_HELPER], ids=["in f", "in a helper"])
def test_a_handler_that_runs(source):
    args = OUTSIDE
    assert fuzz.check_program(HEADER + source, args).status == "right"  # reverse, forward, second order
    outcome = check_third_order_program(gradient_function_source(HEADER + source, ["x", "s"], args, 0), args)
    assert outcome.status == "right", str(outcome)


def test_an_exception_carrying_derivatives_is_refused_naming_it():
    """(fuzz seed 85075: refused naming yuebing.ir.primitives.made_exception)"""
    assert fuzz.check_program(HEADER + CARRYING, INSIDE).status == "right"  # reverse, forward, second order
    outcome = check_third_order_program(gradient_function_source(HEADER + CARRYING, ["x", "s"], INSIDE, 0), INSIDE)
    assert outcome.status == "refused", str(outcome)
    assert "an exception made of values carrying derivatives (Overflow(...))" in str(outcome)
    assert "made_exception" not in str(outcome)


def _make_writer(a):
    def g(x):
        def h(t):
            nonlocal a
            a = a * 1.0
            return np.sin(t * a)
        return np.sum(h(x) * x)
    return g


def test_a_nested_function_writing_a_variable_captured_from_outside_is_refused_by_name():
    g = _make_writer(1.3)

    def F(x):
        return np.sum(yb.grad(g)(x) * np.array([1.0, 0.5, -0.3]))

    with pytest.raises(yb.NestedDifferentiationError) as refused:
        yb.hvp(F, (np.array([0.6, 0.3, 0.8]),), (np.ones(3),))
    message = str(refused.value)
    assert "a nested function (h) writing (nonlocal) a" in message
    assert "pass the variable to the function under yb.grad as an argument" in message
    notes = "\n".join(getattr(refused.value, "__notes__", []))
    assert "share_cells" not in message and "def h(t):" in notes  # the user's line
    assert "in _make_writer.<locals>.g" in notes and "_plain_jvp" not in notes  # the user's function
