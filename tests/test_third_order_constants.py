"""Constants given to elementwise primitives in third order (``transform/plain_constants.py``).

``np.power(x, [2.0, 3.0])`` at ``x < 0``: the exponent list built from literals had the tangent
``[0.0, 0.0]``, so third order computed ``np.power``'s exponent partial (``y log x``, NaN at a
negative base) and multiplied it by 0.0: a NaN hvp (fuzz seed 85085). A constant of the function
now has no tangent there. Each program is checked against differences in reverse, forward and
second order (``fuzz.check_program``) and in third order (``F3 = <v, yb.grad(f)>`` under
``yb.hvp``/``yb.hessian``). The second group writes or aliases the would-be constant, whose
derivative third order must keep.
"""
import numpy as np
import pytest

from yuebing.testing import fuzz
from yuebing.testing.fuzz_third import check_third_order_program, gradient_function_source

HEADER = ("import math\nimport numpy as np\n\nE = np.array([2.0, 3.0, 2.0])\nET = (2.0, 3.0, 2.0)\n"
          "TWO = 2.0\n\n")
NEGATIVE = (np.array([-0.575, -1.3, 0.8]), 0.97)
POSITIVE = (np.array([0.575, 1.3, 0.8]), 0.97)

# (name, body of f(x, s)): constant exponents at negative bases
CONSTANT_EXPONENTS = [
    ("np.power, a list of literals", "return np.sum(np.power(x, [2.0, 3.0, 2.0]) ** 2) * s"),
    ("np.power, a tuple of literals", "return np.sum(np.power(x, (2.0, 3.0, 2.0)) ** 2) * s"),
    ("np.power, a list in a variable", "e = [2.0, 3.0, 2.0]\n    return np.sum(np.power(x, e) * s) ** 2"),
    ("** np.array of literals", "return np.sum(x ** np.array([2.0, 3.0, 2.0], dtype=float) * s) ** 2"),
    ("np.power, an array in a variable read twice",
     "e = np.array([2.0, 3.0, 2.0])\n    return np.sum(np.power(x, e) * s + x ** e)"),
    ("np.power, a module array", "return np.sum(np.power(x, E) * s) ** 2"),
    ("np.power, a module tuple", "return np.sum(np.power(x, ET) * s) ** 2"),
    ("np.float_power, a list of literals", "return np.sum(np.float_power(x, [2.0, 3.0, 2.0]) * s) ** 2"),
    ("np.power, float(2)", "return np.sum(np.power(x, float(2)) * s) ** 2"),
    ("np.power, np.float64(2.0)", "return np.sum(np.power(x, np.float64(2.0)) * s) ** 2"),
    ("** a float variable", "a = 2.0\n    return np.sum(x ** a * s) ** 2"),
    ("** a float variable in a loop", "t = 0.0\n    b = 3.0\n    for i in range(3):\n"
                                      "        t = t + x[i] ** b * s\n    return t * t"),
    ("math.pow, a module float", "return math.pow(x[0], TWO) ** 2 * s + math.pow(x[1], 3.0) * s"),
    ("pow, literal floats", "return pow(x[0], 2.0) ** 2 * s + pow(x[1], 3.0) * s"),
    ("np.square", "return np.sum(np.square(x) * s) ** 2"),
]

# (name, body of f(x, s)): a list or array built from literals, then written or aliased (the
# exponent depends on s: its derivative must be kept), at positive bases
WRITTEN_CONSTANTS = [
    ("an item written", "e = np.array([2.0, 3.0, 2.0])\n    e[0] = s\n    return np.sum(np.power(x, e))"),
    ("written through an alias",
     "e = [2.0, 3.0, 2.0]\n    a = e\n    a[1] = s * 2.0\n    return np.sum(np.power(x, e))"),
    ("written in place", "e = np.array([2.0, 3.0, 2.0])\n    e += s\n    return np.sum(x ** e)"),
    ("appended to", "e = [2.0, 3.0]\n    e.append(s)\n    return np.sum(np.power(x, e))"),
    ("written by a nested function",
     "e = np.array([2.0, 3.0, 2.0])\n    def put(v):\n        e[2] = v\n    put(s * s)\n"
     "    return np.sum(np.power(x, e))"),
    ("written after an array is made from it",
     "e = [2.0, 3.0, 2.0]\n    a = np.array(e)\n    e[0] = s\n    return np.sum(x ** a) + np.sum(np.power(x, e))"),
]


def _source(body: str) -> str:
    return HEADER + "def f(x, s):\n    " + body + "\n"


def _check_every_order(source: str, args: tuple) -> None:
    assert fuzz.check_program(source, args).status == "right"  # reverse, forward, second order
    outcome = check_third_order_program(gradient_function_source(source, ["x", "s"], args, 0), args)
    assert outcome.status == "right", str(outcome)


@pytest.mark.parametrize("name,body", CONSTANT_EXPONENTS, ids=[c[0] for c in CONSTANT_EXPONENTS])
def test_constant_exponents_at_negative_bases(name, body):
    _check_every_order(_source(body), NEGATIVE)


@pytest.mark.parametrize("name,body", WRITTEN_CONSTANTS, ids=[c[0] for c in WRITTEN_CONSTANTS])
def test_written_constants_keep_their_derivatives(name, body):
    _check_every_order(_source(body), POSITIVE)
