"""Forward float loops (``transform/forward_loops.py``): a ``for`` loop reading floats out of
float64 arrays, doing float arithmetic and writing floats into float64 arrays runs in a JVP as
plain Python floats. Each program is checked by the fuzzer's checker (reverse vs forward by the
dot-product identity, both vs central differences, the HVP, values and arguments vs the plain
call); ``yb.show`` confirms which loop ran; values keep the plain call's types."""
import warnings

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import fuzz

HEADER = "import math\nimport numpy as np\n\n\ndef scaled(a, w):\n    return a * w + 0.5\n\n\n"

X = np.linspace(-0.9, 1.2, 7)
M = np.linspace(-1.0, 1.0, 12).reshape(3, 4)

# (name, source defining f, arguments, whether the float loop runs)
PROGRAMS = [
    ("a sum of elements", "def f(x):\n    y = 0.0\n    for i in range(len(x)):\n        y += x[i]\n    return y\n",
     (X,), True),
    ("NumPy and math functions of elements, a Python float weight",
     "def f(x, w):\n    y = 0.0\n    for i in range(len(x)):\n        y += np.sin(x[i]) * w - math.cos(x[i] * w)\n    return y\n",
     (X, 0.7), True),
    ("quotients, powers and negation, a start and a step",
     "def f(x, a):\n    s = 1.0\n    for i in range(1, len(x), 2):\n        s = s - (x[i] ** 3) / (a + x[i] * x[i]) + -x[i] * 0.5\n    return s * a\n",
     (X, 1.3), True),
    ("two carried values, one of them Python floats only",
     "def f(x, w):\n    s = 0.0\n    p = 1.0\n    for i in range(len(x)):\n        s = s + x[i] * p\n        p = p * w\n    return s + p\n",
     (X, 0.9), True),
    ("a value of the last iteration and the index read after the loop",
     "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        t = np.exp(x[i]) * 2.0\n        s = s + t\n    return s * t + i\n",
     (X,), True),
    ("an inlined helper",
     "def f(x, w):\n    s = 0.0\n    for i in range(len(x)):\n        s = s + scaled(x[i], w)\n    return s\n",
     (X, 1.1), True),
    ("elements written into a new array, nested loops",
     "def f(x):\n    y = np.empty_like(x)\n    for i in range(x.shape[0]):\n        for j in range(x.shape[1]):\n"
     "            y[i, j] = np.sin(np.cos(np.exp(x[i, j])))\n    return np.sum(y * y)\n",
     (M,), True),
    ("elements written into an argument",
     "def f(x, y):\n    for i in range(len(x)):\n        y[i] = x[i] * 2.0 - 1.0\n    return np.sum(y * x)\n",
     (X, X * 0.5), True),
    ("writes into an argument read through another view of it: statement by statement",
     "def f(x):\n    y = x[::-1]\n    for i in range(3):\n        y[i] = x[i] * 2.0\n    return np.sum(x * x)\n",
     (X.copy(),), False),
    ("a NumPy float weight feeding a Python float value: statement by statement",
     "def f(x):\n    w = x[0]\n    p = 1.0\n    s = 0.0\n    for i in range(len(x)):\n        s = s + x[i] * p\n        p = p * w\n    return s + p\n",
     (X,), False),
]


@pytest.mark.parametrize("name,source,args,fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_float_loop_is_right_in_every_mode(name, source, args, fast):
    outcome = fuzz.check_program(HEADER + source, args)
    assert outcome.status == "right", f"{name}:\n{outcome}"


@pytest.mark.parametrize("name,source,args,fast", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_which_loop_runs(name, source, args, fast):
    f = fuzz.load_function(HEADER + source)
    shown = yb.show(f, *args, mode="forward")  # only the path these arguments take
    assert ("_loop_cells(" in shown) == fast, shown  # the float loop's guard held
    value, tangent = yb.jvp(f, args, tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args))
    assert type(value) is type(f(*(a.copy() if isinstance(a, np.ndarray) else a for a in args)))
    assert type(tangent) is float


def test_value_types_follow_the_plain_call():
    """A sum over no element stays the Python float it started as; over some, a NumPy float."""
    f = fuzz.load_function(HEADER + "def f(x, n):\n    y = 0.0\n    for i in range(n):\n        y += x[i]\n    return y\n")
    for n in (0, 3):
        value, tangent = yb.jvp(f, (X, n), (np.ones_like(X), yb.NoTangent))
        assert type(value) is type(f(X, n)) and value == f(X, n)
        assert type(tangent) is float and tangent == float(n)


def test_python_floats_raising_run_the_statements():
    """x / 0 raises on Python floats and gives inf on NumPy's: the loop runs statement by
    statement and the JVP's value is the plain call's."""
    f = fuzz.load_function(HEADER + "def f(x):\n    s = 0.0\n    for i in range(len(x)):\n        s = s + x[i] / (x[i] - x[0])\n    return s\n")
    x = np.array([0.5, 1.5, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value, tangent = yb.jvp(f, (x,), (np.ones(3),))
        expected = f(x)
        batched = yb.jacobian(f, mode="fwd")(x) @ np.ones(3)  # batched passes: statement by statement
    assert type(value) is type(expected) and not np.isfinite(expected)
    np.testing.assert_array_equal(value, expected)
    assert type(tangent) is float
    np.testing.assert_array_equal(tangent, batched)

