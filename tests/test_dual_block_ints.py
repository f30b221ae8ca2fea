"""Dual array blocks (``transform/dual_blocks.py``) taking an int input as a constant, as forward
blocks do (``0.5 * n`` with ``n = len(x)``, gp_lml's last line): the block ran statement by
statement before. Each program is checked by the fuzzer's checker (reverse vs forward by the
dot-product identity, both vs central differences, the HVP and the batched Hessian, values and
arguments vs the plain call), and ``yb.show`` confirms that the dual block ran."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import fuzz

HEADER = "import math\nimport numpy as np\n\n"

# (name, source defining f, arguments)
PROGRAMS = [
    ("an int from len() times a float, as gp_lml's normaliser",
     "def f(x, s):\n    n = len(x)\n    d = np.diag(np.outer(x, x) + s)\n"
     "    return -np.sum(np.log(d)) - 0.5 * n * math.log(2 * math.pi) + s * n\n",
     (np.linspace(0.5, 1.5, 5), 0.7)),
    ("an int result of the block handed on and used as a size",
     "def f(x):\n    n = len(x)\n    a = np.exp(x)\n    b = a * 2.0\n    m = n * 2\n    c = b / n\n"
     "    return np.sum(c) + np.sum(np.ones(m) * x[0])\n",
     (np.linspace(-0.5, 0.5, 4),)),
    ("an int in a quotient and a power",
     "def f(x):\n    n = x.shape[0]\n    a = np.sin(x)\n    b = a / n\n    c = b ** 2\n    k = n ** 2\n    return np.sum(c) * k\n",
     (np.linspace(0.1, 0.9, 6),)),
]


@pytest.mark.parametrize("name,source,args", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_dual_block_with_an_int_is_right_in_every_mode(name, source, args):
    outcome = fuzz.check_program(HEADER + source, args)
    assert outcome.status == "right", f"{name}:\n{outcome}"


def test_dual_block_with_an_int_runs():
    f = fuzz.load_function(HEADER + PROGRAMS[0][1])
    shown = yb.show(f, *PROGRAMS[0][2], mode="hvp")
    block = shown[shown.index("dual array block"):]
    assert "_push(_DFASTAB)" in block and "_DSLOWAB" not in shown, shown


def test_hvp_with_an_int_matches_differences_of_the_gradient():
    f = fuzz.load_function(HEADER + PROGRAMS[0][1])
    x, s = PROGRAMS[0][2]
    v, vs = np.linspace(1.0, -1.0, 5), 0.3
    _, grads, hvps = yb.hvp(f, (x, s), (v, vs))
    h = 1e-5
    plus = yb.grad(f, argnums=(0, 1))(x + h * v, s + h * vs)
    minus = yb.grad(f, argnums=(0, 1))(x - h * v, s - h * vs)
    np.testing.assert_allclose(hvps[0], (plus[0] - minus[0]) / (2 * h), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(hvps[1], (plus[1] - minus[1]) / (2 * h), rtol=1e-6, atol=1e-8)
