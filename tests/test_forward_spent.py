"""Forward array blocks computing into the memory of values they are done with
(``transform/forward_spent.py``): on arrays large enough for it (``MIN_SPENT_SIZE`` elements),
each program is checked by the fuzzer's checker (reverse vs forward by the dot-product identity,
both vs central differences, the HVP, values and arguments vs the plain call) on small arrays with
the size threshold lowered (the checker's differences on arrays of the real threshold take
minutes), the generated code is confirmed to take the path on large ones, and a chain of steps is
shown to keep fewer arrays alive."""
import tracemalloc

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import fuzz
from yuebing.transform import forward_blocks
from yuebing.transform.forward_spent import MIN_SPENT_SIZE

SMALL = 40  # elements of the checked programs' arrays, with the threshold lowered below it
HEADER = "import math\nimport numpy as np\n\nC = np.linspace(0.5, 2.0, %d)\n\n" % SMALL
N = MIN_SPENT_SIZE + 5  # elements of the arrays of the code and memory tests


def _vector(lo: float, hi: float, n: int = N) -> np.ndarray:
    return np.linspace(lo, hi, n)


# (name, source defining f, arguments)
PROGRAMS = [
    ("a value and its tangent computed into the operand on the left",
     "def f(x, mu):\n    a = np.sin(x)\n    b = a - mu\n    c = b / mu\n    return np.sum(c * c)\n",
     (_vector(0.1, 1.2, SMALL), 1.7)),
    ("into the operand on the right, a negation and a function of one argument",
     "def f(x, s):\n    a = x * s\n    b = -0.5 * a\n    c = -b\n    d = np.exp(c)\n    return np.sum(d * x)\n",
     (_vector(-0.5, 0.5, SMALL), 1.3)),
    ("a constant global array: zero tangents and a float tangent broadcast",
     "def f(x, mu, s):\n    z = (np.log(C) - mu) / s\n    w = -0.5 * z ** 2 - np.log(s) + x * z\n    return np.sum(w)\n",
     (_vector(0.1, 0.9, SMALL), 0.4, 1.3)),
    ("a value read after the block and by a later step keeps its memory",
     "def f(x, y):\n    a = x * y\n    b = a + 1.0\n    c = b * a\n    a[0] = 5.0\n    return np.sum(c) + np.sum(a * b)\n",
     (_vector(0.1, 0.9, SMALL), _vector(1.0, 2.0, SMALL))),
    ("an operand that is an argument, or one value used twice, is never written",
     "def f(x, y):\n    a = x - y\n    b = a * a\n    c = x + b\n    d = y * c\n    return np.sum(d) + np.sum(x)\n",
     (_vector(0.1, 0.9, SMALL), _vector(1.0, 2.0, SMALL))),
    ("a row against a column (results of a new shape)",
     "def f(x, y):\n    a = x[:, None] - y[None, :]\n    b = a * a\n    c = np.exp(-b)\n    return np.sum(c * 0.5)\n",
     (np.linspace(0.1, 0.9, 6), np.linspace(-1.0, 1.0, 7))),
    ("a returned intermediate and its tangent are the caller's",
     "def f(x):\n    a = np.cos(x)\n    b = a * 3.0\n    c = b - x\n    return np.sum(c * b)\n",
     (_vector(-1.0, 1.0, SMALL),)),
]


@pytest.mark.parametrize("name,source,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_spent_block_is_right_in_every_mode(name, source, args, monkeypatch):
    monkeypatch.setitem(forward_blocks.NAMESPACE, "_MIN_SPENT", 8)  # read when f's code is compiled
    outcome = fuzz.check_program(HEADER + source, args)
    assert outcome.status == "right", f"{name}:\n{outcome}"


def test_generated_block_computes_into_spent_operands():
    f = fuzz.load_function(HEADER + PROGRAMS[1][1])
    shown = yb.show(f, _vector(-0.5, 0.5), 1.3, mode="forward")
    assert "_spent_first(" in shown and "_spent_second(" in shown and "_spent_unary(" in shown, shown


def test_jvp_keeps_the_outputs_it_hands_on_apart():
    """A block's value handed on and the caller's tangent are never the memory of a step."""
    f = fuzz.load_function(HEADER + "def f(x, t):\n    a = x * t\n    b = a + 1.0\n    c = b * 2.0\n    return c\n")
    x, dx = _vector(0.1, 0.9), _vector(1.0, 2.0)
    x0, dx0 = x.copy(), dx.copy()
    value, tangent = yb.jvp(f, (x, 0.5), (dx, 0.25))
    np.testing.assert_array_equal(value, f(x0, 0.5))
    np.testing.assert_allclose(tangent, 2.0 * (dx0 * 0.5 + x0 * 0.25))
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(dx, dx0)
    assert not np.shares_memory(value, tangent)


def _peak_bytes(run) -> int:
    for _ in range(3):  # compiled (the plain and the speculative program), caches filled
        run()
    tracemalloc.start()
    try:
        run()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_chain_of_steps_reuses_its_memory():
    """Seven steps on a large array: a JVP taking a fresh array for each value and tangent held
    four arrays at its peak (an operand and its result side by side), computing into spent
    operands holds three."""
    source = ("def f(x, s):\n    a = np.sin(x)\n    b = a + s\n    c = b - 1.0\n    d = c * 2.0\n    e = d - s\n"
              "    g = -e\n    h = np.exp(g)\n    return np.sum(h)\n")
    f = fuzz.load_function(HEADER + source)
    x, dx = _vector(0.1, 0.9), _vector(1.0, 2.0)
    peak = _peak_bytes(lambda: yb.jvp(f, (x, 1.5), (dx, 0.5)))
    assert peak <= 3.5 * x.nbytes, peak / x.nbytes
