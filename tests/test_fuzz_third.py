"""The differential fuzzer in third order (``yuebing.testing.fuzz_third``).

A program ``f`` of the fuzzer gets ``F3(args) = sum_k <v_k, yb.grad(f)(args)_k>`` written beside
it; the fuzzer's checks of ``F3`` (reverse over reverse, forward over reverse, ``yb.hvp`` and
``hessian(chunk_size=)`` of it, i.e. third derivatives of ``f``, against differences) must pass.
``FIXED`` holds programs that came out wrong in third order, each now right in every mode.
"""
import numpy as np
import pytest

from yuebing.testing import fuzz
from yuebing.testing.fuzz_third import check_third_order_program, gradient_function_source, gradient_weights
from yuebing.testing.fuzz_third import run_third_order_seed

HEADER = "import math\nimport numpy as np\n\n"
TABLE = ('T = np.array([(0.5, 1.2, 2), (-0.3, 0.8, 1), (1.1, -0.4, 3)], '
         'dtype=[("a", float), ("b", float), ("k", int)])\n\n')
X2 = (np.array([0.28474589, 1.22663822, -0.37775265]), 0.5464798831661888)

# (name, source defining f(x, s), arguments): wrong in third order before, right now
FIXED = [
    ("a structured table's field item (fuzz seed 84003: the linear read's tangent call ran on the table, "
     "whose numbers were taken for the tangent: hvp's gradient of F3 1.29 where 2.4)",
     "def f(x, s):\n    return x[0] * T['b'][0] * x[0] + s\n", X2),
    ("a record's item, T[0][1]", "def f(x, s):\n    return x[0] * T[0][1] * x[1] * s\n", X2),
    ("a record read by field name", "def f(x, s):\n    r = T[1]\n    return np.sum(x * r['b'] * x) * s\n", X2),
    ("a field summed, T['b'].sum()", "def f(x, s):\n    return np.sin(x[0]) * T['b'].sum() + s * s\n", X2),
    ("a field through np.asarray", "def f(x, s):\n    return np.sum(np.asarray(T['a']) * x ** 3) + s\n", X2),
    ("table rows walked in a loop (the fuzzer's struct_tables form)",
     "def f(x, s):\n    t = 0.0\n    for row in T[:3]:\n"
     "        t = t + row['a'] * np.sin(np.dot(x, x) * row[1]) + row[2] * 0.1\n    return s + t\n", X2),
    ("math.pow(x, 2.0) squared at x < 0 (fuzz seed 84004: hvp NaN, the literal exponent had a 0.0 tangent in "
     "the plain forward program, so its partial, NaN for a negative base, was computed and multiplied by 0.0)",
     "def f(x, s):\n    return math.pow(x[0], 2.0) ** 2 + s\n", (np.array([-0.575, 0.3, 0.8]), 0.97)),
    ("a literal float exponent of ** at a negative base", "def f(x, s):\n    return (x[0] * s) ** 2.0 * x[1]\n",
     (np.array([-0.575, 0.3, 0.8]), 0.97)),
    ("np.power with a list of literal exponents at negative bases (fuzz seed 85085: hvp NaN, the list had the "
     "tangent [0.0, 0.0, 0.0], so np.power's exponent partial, NaN for a negative base, was computed and multiplied "
     "by it; constants of the function now have no tangent: transform/plain_constants.py)",
     "def f(x, s):\n    return np.sum(np.power(x, [2.0, 3.0, 2.0]) ** 2) * s\n", (np.array([-0.575, -1.3, 0.8]), 0.97)),
    ("max of a generator expression with a key, then a for loop (fuzz seed 85093: UnboundLocalError for "
     "'isinstance': the generator's function, written in second order's program, captured that program's local "
     "isinstance, which the plain program shared as a cell its second order never bound)",
     "def f(x, s):\n    y = max((np.sin(x * k) for k in (1.0, 2.0, 3.0)), key=lambda v: v[0])\n"
     "    for key in (1, 2):\n        y = y * s\n    return np.sum(y ** 3)\n", X2),
    ("max of a generator expression with a key (fuzz seeds 85021, 85045: refused naming yuebing's share_cells: "
     "the generator's function captured np as a cell, shared with its resume function)",
     "def f(x, s):\n    y = max((np.sin(x * k) for k in (1.0, 2.0, 3.0)), key=lambda v: v[0])\n"
     "    return np.sum(y * y) * s\n", X2),
]


def _third(source: str, args: tuple, params=("x", "s")):
    return check_third_order_program(gradient_function_source(source, list(params), args, 0), args)


@pytest.mark.parametrize("name,source,args", FIXED, ids=[k[0][:60] for k in FIXED])
def test_fixed_third_order_stays_right(name, source, args):
    source = HEADER + TABLE + source
    assert fuzz.check_program(source, args).status == "right", name  # second order and lower
    outcome = _third(source, args)
    assert outcome.status == "right", f"{name}:\n{outcome}"


def test_the_gradient_function_is_the_weighted_gradient():
    """F3(x, s) = <v, grad f(x, s)>: against central differences of f along the weights v."""
    source = HEADER + "def f(x, s):\n    return np.sum(np.sin(x) * s) + s ** 3\n"
    args = (np.array([0.3, -0.7, 1.1]), 0.8)
    F3 = fuzz.load_function(gradient_function_source(source, ["x", "s"], args, 5), "F3")
    f = fuzz.load_function(source)
    (vx, vs), h = gradient_weights(args, 5), 1e-5
    difference = (f(args[0] + h * vx, args[1] + h * vs) - f(args[0] - h * vx, args[1] - h * vs)) / (2 * h)
    assert abs(F3(*args) - difference) < 1e-8 * (1 + abs(difference))


def test_arguments_other_than_floats_and_float_arrays_are_left_out():
    assert gradient_function_source(HEADER + "def f(x, p):\n    return 0.0\n", ["x", "p"],
                                    (np.ones(3), {"w": np.ones(3)}), 0) is None


# (name, source defining f(x, s), arguments, mechanism): still wrong in third order, kept visible
KNOWN_WRONG: list = []


@pytest.mark.parametrize("name,source,args,mechanism", KNOWN_WRONG, ids=[k[0][:50] for k in KNOWN_WRONG])
def test_known_wrong_in_third_order_still_fails(name, source, args, mechanism):
    outcome = _third(HEADER + source, args)
    assert outcome.status == "wrong", f"{name!r} is no longer wrong: move it to FIXED\n{outcome}"


THIRD_SEEDS = range(85000, 85040)  # the first two whose arguments are all floats and float arrays


def test_random_programs_in_third_order():
    checked = 0
    for seed in THIRD_SEEDS:
        outcome = run_third_order_seed(seed)
        if outcome is None:
            continue
        assert outcome.status in ("right", "refused", "unsmooth"), f"seed {seed}:\n{outcome}"
        checked += 1
        if checked == 2:
            return
    raise AssertionError(f"fewer than two of seeds {THIRD_SEEDS} take floats and float arrays only")
