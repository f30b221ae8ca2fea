"""Forward blocks (``transform/forward_blocks.py``): runs of float or elementwise array arithmetic
generated as one unit in forward mode. Each program is checked by the fuzzer's checker (reverse vs
forward by the dot-product identity, both vs central differences, the HVP, values and arguments vs
the plain call), and ``yb.show`` confirms that the block, not the fallback, ran."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing import fuzz

HEADER = "import math\nimport numpy as np\n\nC = np.linspace(0.5, 2.0, 5)\n\n"

# (name, source defining f, arguments, the block that must run: "float", "array" or None)
PROGRAMS = [
    ("float arithmetic on Python floats",
     "def f(a, b):\n    c = a * b\n    d = c - a / b\n    e = -d + 2.0 * c\n    g = e ** 3\n    return g / (a + 3.0)\n",
     (0.7, 1.3), "float"),
    ("float arithmetic on NumPy floats read from an array",
     "def f(x):\n    a = x[0]\n    b = x[1]\n    c = a * b\n    d = c + a\n    e = d * d\n    return e - b\n",
     (np.array([0.4, -1.2]),), "float"),
    ("functions of floats in a float block",
     "def f(a, b):\n    c = math.sin(a)\n    d = np.exp(c * b)\n    e = np.log(d + 2.0)\n    return math.cos(e) * a\n",
     (0.3, 0.9), "float"),
    ("a float block whose Python floats raise (division by a NumPy zero gives inf, the statements run)",
     "def f(x):\n    a = x[0]\n    b = x[1]\n    c = a - a\n    d = b / c\n    e = b * 2.0\n    g = e + a\n    return g\n",
     (np.array([0.5, 1.5]),), None),
    ("a float block inside a loop carrying its values",
     "def f(a, b):\n    s = 0.0\n    for i in range(4):\n        t = s * b\n        u = t + a\n        s = u * 0.5\n    return s\n",
     (0.8, 1.1), "float"),
    ("reads of array elements and += in a float block",
     "def f(x, w):\n    s = 0.0\n    for i in range(3):\n        a = x[i]\n        b = np.sin(a)\n        s += b * w\n    return s\n",
     (np.array([0.3, -0.5, 1.1]), 0.7), "float"),
    ("a read that is no element (a row) leaves the float block for the statements",
     "def f(x):\n    s = 0.0\n    for i in range(2):\n        r = x[i]\n        t = r * 2.0\n        u = t + 1.0\n        s = s + np.sum(u * u)\n    return s\n",
     (np.array([[0.3, -0.5], [1.1, 0.2]]),), None),
    ("an array block of elementwise functions",
     "def f(x):\n    return np.sum(np.sin(np.cos(np.exp(x))))\n", (np.linspace(-1.0, 1.0, 6),), "array"),
    ("a float block then np.sum of floats (the array block's fallback)",
     "def f(a):\n    b = np.exp(a)\n    c = np.cos(b)\n    d = np.sin(c)\n    return np.sum(d) * a\n", (0.4,), "float"),
    ("an array block ending in np.sum", "def f(x):\n    return np.sum(np.sin(x) * x)\n",
     (np.linspace(-1.0, 1.0, 6),), "array"),
    ("an array block with a float and a global array (no tangent) broadcast together",
     "def f(x, mu, s):\n    z = (np.log(C) - mu) / s\n    w = -0.5 * z ** 2 - np.log(s) + x * z\n    return np.sum(w)\n",
     (np.linspace(0.1, 0.9, 5), 0.4, 1.3), "array"),
    ("an array block whose results are read later, one of them an input's tangent unchanged",
     "def f(x, y):\n    a = x + 0.0\n    b = a * y\n    c = b - y\n    a[0] = 5.0\n    return np.sum(a * c) + np.sum(b)\n",
     (np.linspace(0.1, 0.9, 4), np.linspace(1.0, 2.0, 4)), "array"),
    ("an array block broadcasting a row against a column",
     "def f(x, y):\n    a = x[:, None] - y[None, :]\n    b = a * a\n    c = np.exp(-b)\n    return np.sum(c * 0.5)\n",
     (np.linspace(0.1, 0.9, 3), np.linspace(-1.0, 1.0, 4)), "array"),
    ("an array block of constants only (zero tangent handed on)",
     "def f(x):\n    a = C * 2.0\n    b = np.sin(a)\n    b[0] = x[0]\n    return np.sum(b * x)\n",
     (np.linspace(0.1, 0.9, 5),), "array"),
    ("an array block on mismatched shapes raises as the statements do",
     "def f(x):\n    try:\n        a = np.sin(x)\n        b = a + x[:2]\n    except ValueError:\n        a = x * 2.0\n    return np.sum(a)\n",
     (np.linspace(0.1, 0.9, 5),), None),
]


@pytest.mark.parametrize("name,source,args,block", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_forward_block_is_right_in_every_mode(name, source, args, block):
    outcome = fuzz.check_program(HEADER + source, args)
    assert outcome.status == "right", f"{name}:\n{outcome}"


@pytest.mark.parametrize("name,source,args,block", [p for p in PROGRAMS if p[3]], ids=[p[0] for p in PROGRAMS if p[3]])
def test_forward_block_runs(name, source, args, block):
    f = fuzz.load_function(HEADER + source)
    shown = yb.show(f, *args, mode="forward")  # only the path these arguments take
    assert "_fb = True" in shown, shown  # a block ran to its end
    assert ("_array_tangents(" in shown) == (block == "array"), shown  # the array block's guard


@pytest.mark.slow  # 40 more fuzzer programs (test_fuzz runs its own seeds by default): ~18 s
def test_random_programs_forward_against_reverse():
    """The fuzzer's random programs (straight-line arithmetic among their features): reverse and
    forward agree by the dot-product identity and with central differences."""
    for seed in range(200, 240):
        _, _, outcome = fuzz.run_seed(seed)
        assert outcome.status in ("right", "refused", "unsmooth"), f"seed {seed}:\n{outcome}"


def test_global_array_tangent_is_a_read_only_zero():
    """A global float array's tangent costs nothing and is never written (the array is read-only)."""
    f = fuzz.load_function(HEADER + "def f(x):\n    C[0] = x\n    return x\n")
    with pytest.raises(ValueError, match="read-only"):
        yb.jvp(f, (0.5,), (1.0,))
    g = fuzz.load_function(HEADER + "def f(x):\n    return C * x\n")
    value, tangent = yb.jvp(g, (0.5,), (1.0,))
    np.testing.assert_allclose(tangent, np.linspace(0.5, 2.0, 5))
    tangent[0] = 3.0  # a fresh, writable tangent


def test_forward_block_keeps_numpy_float_results():
    """A float block's results depending on NumPy floats are NumPy floats, as the function's are."""
    f = fuzz.load_function(HEADER + "def f(x, b):\n    a = x[0]\n    c = a * b\n    d = c + b\n    e = d * d\n    return e\n")
    x = np.array([0.3])
    value, tangent = yb.jvp(f, (x, 1.5), (np.ones(1), 0.5))
    assert type(value) is np.float64 and value == f(x, 1.5)
    g = fuzz.load_function(HEADER + "def f(a, b):\n    c = a * b\n    d = c + b\n    e = d * d\n    return e\n")
    value, tangent = yb.jvp(g, (0.3, 1.5), (1.0, 0.5))
    assert type(value) is float and type(tangent) is float and value == g(0.3, 1.5)


def test_forward_block_keeps_python_floats_of_math_functions():
    """``math.sin`` of a NumPy float is a Python float: so is the block's result."""
    f = fuzz.load_function(HEADER + "def f(x, b):\n    a = x[0]\n    c = math.sin(a)\n    d = c * b\n    e = math.exp(d)\n    return e\n")
    x = np.array([0.3])
    value, tangent = yb.jvp(f, (x, 1.5), (np.ones(1), 0.5))
    assert type(value) is type(f(x, 1.5)) and value == f(x, 1.5)
    assert type(tangent) is float


def test_np_sum_after_elementwise_functions_joins_their_array_block():
    f = fuzz.load_function(HEADER + "def f(x):\n    return np.sum(np.sin(np.cos(np.exp(x))))\n")
    shown = yb.show(f, np.linspace(-1.0, 1.0, 6), mode="forward")
    assert "_tangent_sum(" in shown and "float block" not in shown and "inline" not in shown, shown


@pytest.mark.parametrize("name,source,args,block", PROGRAMS, ids=[p[0] for p in PROGRAMS])
def test_generated_code_names_only_what_its_namespace_has(name, source, args, block):
    """A name the forward code reads that its namespace lacks would make a block raise
    NameError and fall back to the statements, silently: every global the generated code (and
    the speculative program, forward_speculative.py) loads is defined."""
    import builtins
    import dis

    from yuebing.transform.forward_runtime import _DERIVED, speculative_pass

    f = fuzz.load_function(HEADER + source)
    yb.jvp(f, args, tuple(np.ones_like(a) if isinstance(a, np.ndarray) else 1.0 for a in args))
    for program in (_DERIVED.get(f).forward, speculative_pass(f)):
        if program is None:
            continue
        loaded = {i.argval for i in dis.get_instructions(program) if i.opname == "LOAD_GLOBAL"}
        missing = {n for n in loaded if n not in program.__globals__ and not hasattr(builtins, n)}
        assert not missing, f"{name}: {sorted(missing)}"
