"""Array blocks (transform/array_blocks.py): straight-line elementwise array code runs as one unit
with value cotangents when its inputs are float64 arrays of one shape and floats, and statement by
statement otherwise; both give the derivatives of the same function."""
import importlib.util
import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform import array_blocks

from .block_guards import counting_guard, directional_fd

OBSERVED = np.linspace(0.5, 2.0, 7)
SCALE = 0.75


def _counting_guard(monkeypatch) -> list:
    return counting_guard(monkeypatch, "_array_shapes", array_blocks.array_shapes)


def _check(f, args, ran=None, rel=1e-6):
    argnums = tuple(range(len(args)))
    grads = yb.grad(f, argnums=argnums)(*args)
    rng = np.random.default_rng(3)
    for _ in range(2):
        direction = [rng.standard_normal(np.shape(a)) if isinstance(a, np.ndarray) else float(rng.standard_normal())
                     for a in args]
        projected = sum(float(np.sum(g * d)) for g, d in zip(grads, direction))
        assert projected == pytest.approx(directional_fd(f, args, direction), rel=rel, abs=1e-8)
    if ran is not None:
        assert ran, "the array block did not run"


# ------------------------------------------------------------------- generated random programs

_UNARY = ["np.sin", "np.cos", "np.tanh", "np.exp"]


def _random_program(seed: int, shapes: tuple = ((5,), (5,))) -> tuple[str, list]:
    """A function of two arrays and a float: a random run of elementwise statements."""
    rng = np.random.default_rng(seed)
    names = ["x", "y", "c", "v"]
    lines = ["    v = x * c + y"]
    for k in range(int(rng.integers(3, 9))):
        a, b = rng.choice(names, 2)
        choice = rng.integers(0, 7)
        if choice == 0:
            expr = f"{a} {rng.choice(['+', '-', '*'])} {b}"
        elif choice == 1:
            expr = f"{rng.choice(_UNARY)}({a} * 0.5)"
        elif choice == 2:
            expr = f"{a} / ({b} * {b} + 1.0)"
        elif choice == 3:
            expr = f"{a} ** {rng.choice(['2', '3'])}"
        elif choice == 4:
            expr = f"-{a} + {float(rng.standard_normal()):.3f}"
        elif choice == 5:
            expr = f"np.log({a} * {a} + 1.0)"
        else:
            expr = f"np.sum({a}) * {b}"
        name = f"v{k}"
        lines.append(f"    {name} = {expr}")
        names.append(name)
    lines.append(f"    return np.sum({names[-1]} * {names[-2]}) + np.sum({names[-1]})")
    source = "import numpy as np\n\n\ndef program(x, y, c):\n" + "\n".join(lines) + "\n"
    x = np.linspace(-0.8, 0.9, int(np.prod(shapes[0]))).reshape(shapes[0])
    y = np.linspace(0.3, -0.6, int(np.prod(shapes[1]))).reshape(shapes[1])
    return source, [x, y, 0.7]


BROADCASTING = [((5,), (5,)), ((4, 1), (1, 3)), ((3,), (2, 3)), ((2, 1, 3), (4, 1))]


@pytest.mark.parametrize("seed", range(40))
def test_random_programs_match_finite_differences(seed, tmp_path, monkeypatch):
    ran = _counting_guard(monkeypatch)
    source, args = _random_program(seed, BROADCASTING[seed % len(BROADCASTING)])
    path = tmp_path / f"program_{seed}.py"
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(f"array_block_program_{seed}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert "array block" in yb.show(module.program), source
    _check(module.program, args, ran, rel=1e-5)


# ------------------------------------------------------------------- particular shapes of code


def float_spread_over_array(x, y):
    b = y + x  # y's cotangent is the sum over every element of b's
    s = np.sum(b)
    return s * y + np.sum(b * b)


def constants_and_inactive_inputs(x, mu):
    z = (np.log(OBSERVED) - mu) / SCALE  # OBSERVED, SCALE: module globals, no derivative
    w = -0.5 * z ** 2 - np.log(OBSERVED) * x
    return np.sum(w) + math.log(2.0 * math.pi)


def views_and_aliases(x):
    v = x[1:]
    w = np.sin(v) * v + v * v  # the same array twice; its fdata is a view of x's
    return np.sum(w) + np.sum(x * x)


def value_used_and_written_after(x):
    y = np.exp(x) * 2.0
    z = y * x
    y[0] = 5.0  # the block's output, mutated after it ran
    return np.sum(y * z)


def carried_through_a_loop(x, a):
    s = x
    for _ in range(3):
        s = np.sin(s) * a + x
        s = s / (s * s + 1.0)
    return np.sum(s)


@pytest.mark.parametrize("f, args", [
    (float_spread_over_array, (np.linspace(-1.0, 1.0, 6), 0.4)),
    (constants_and_inactive_inputs, (np.linspace(0.2, 0.8, 7), 1.3)),
    (views_and_aliases, (np.linspace(-1.0, 1.0, 6),)),
    (value_used_and_written_after, (np.linspace(-1.0, 1.0, 4),)),
    (carried_through_a_loop, (np.linspace(-1.0, 1.0, 5), 0.8)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_array_block_shapes_of_code(f, args, monkeypatch):
    ran = _counting_guard(monkeypatch)
    _check(f, args, ran)


def outer_difference(x, s):
    d = x[:, None] - x[None, :]  # shapes (n, 1) and (1, n): they broadcast
    k = np.exp(-0.5 * d ** 2) * s + np.sin(x[:, None])  # the sine keeps its own shape
    return np.sum(k * k) + np.sum(np.sin(x[:, None]))


def test_broadcasting_arrays_run_in_the_block(monkeypatch):
    ran = _counting_guard(monkeypatch)
    _check(outer_difference, (np.linspace(-1.0, 1.0, 4), 0.6), ran)
    assert any(not same for _, same in ran)


def not_broadcastable(x, y):
    return np.sum(np.sin(x) * y + x)


def scalar_only(a, b):
    t = np.sin(a) * b
    u = t * t + a
    return u * b


@pytest.mark.parametrize("f, args", [
    (scalar_only, (0.3, 1.7)),
    (scalar_only, (np.array(0.3), 1.7)),  # a 0-d array
])
def test_the_fallback_runs_when_the_guard_fails(f, args, monkeypatch):
    ran = _counting_guard(monkeypatch)
    assert not ran
    if isinstance(args[0], np.ndarray) and args[0].ndim == 0:
        grads = yb.grad(f, argnums=(0, 1))(*args)
        expected = yb.grad(f, argnums=(0, 1))(float(args[0]), args[1])
        np.testing.assert_allclose([float(g) for g in grads], expected, rtol=1e-12)
    else:
        _check(f, args)


def test_shapes_that_do_not_broadcast_raise_numpys_error():
    with pytest.raises(ValueError, match="broadcast"):
        yb.grad(not_broadcastable)(np.ones(3), np.ones(4))


def test_integer_arrays_take_the_fallback():
    x = np.arange(4)
    assert yb.grad(lambda a, s: np.sum(np.sin(x * s) * s), argnums=1)(None, 0.5) == pytest.approx(
        np.sum(np.cos(x * 0.5) * x * 0.5 + np.sin(x * 0.5)))


def wrong_function_inside(x):
    y = np.sin(x) * 2.0
    return math.exp(y)  # math.exp of an array: the primal raises too


def test_errors_inside_a_block_leave_arguments_alone():
    x = np.linspace(0.0, 1.0, 3)
    before = x.copy()
    with pytest.raises(TypeError):
        yb.grad(wrong_function_inside)(x)
    np.testing.assert_array_equal(x, before)


def test_prepared_gradients_repeat():
    x = np.linspace(-1.0, 1.0, len(OBSERVED))
    prepared = yb.prepare_gradient(constants_and_inactive_inputs, x, 1.3, argnums=(0, 1))
    first = [np.copy(g) for g in prepared(x, 1.3)[1]]
    for _ in range(3):
        again = prepared(x, 1.3)[1]
        for a, b in zip(first, again):
            np.testing.assert_array_equal(a, b)


def test_show_marks_the_block_and_its_undo():
    source = yb.show(float_spread_over_array)
    assert "# array block: lines" in source and "# undo the array block at lines" in source
    compile(source, "<test>", "exec")


def element_loop_with_shape(x, w):
    """A 2-D element loop bounded by ``x.shape`` (inline: an ndarray's shape, ndim and size and
    an int read from a tuple record nothing), scaled by them."""
    y = np.empty_like(x)
    for i in range(x.shape[0]):
        for j in range(x.shape[1]):
            y[i, j] = np.sin(w * x[i, j])
    return np.sum(y) * x.ndim / x.size + x.shape[-1] * w


def test_shape_reads_are_inline_and_differentiate():
    x = np.random.default_rng(5).standard_normal((3, 4))
    _check(element_loop_with_shape, (x, 0.7))
    source = yb.show(element_loop_with_shape, x, 0.7)
    assert "_t1 = x.shape; _t1_f = _NF" in source and "_rrule(_CD(_getattr" not in source
    assert "_rrule(_CD(_operator_getitem, _NF), _CD(_t1" not in source
