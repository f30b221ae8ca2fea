"""``yb.show(f, *example_args)``: the derivative program specialised to the example arguments
(api/show.py). Without examples, or with ``guards=True``, it is the whole generated program."""
import ast
import copy
import re
import importlib
import pathlib

import numpy as np
import pytest

import yuebing as yb
from yuebing.ir.nodes import format_function
from yuebing.transform.forward_runtime import derived_frule
from yuebing.transform.runtime import derived_rule

show_module = importlib.import_module("yuebing.api.show")  # `yuebing.api.show` is the function


def loss(params, x, y):
    h = np.tanh(params["W"] @ x + params["b"][:, None])
    return np.mean((h - y) ** 2)


def readme_arguments():
    rng = np.random.default_rng(0)
    params = {"W": rng.standard_normal((3, 2)), "b": np.zeros(3)}
    return params, rng.standard_normal((2, 5)), rng.standard_normal((3, 5))


def scalar_formula(x, y):
    z = x * y + np.sin(x)
    w = z * z / y
    return w - x


def array_energy(x, w):
    h = np.tanh(w @ x)
    return np.sum(h * h) + np.dot(x, x)


def loops_and_branches(x, n):
    s = 0.0
    for i in range(n):
        if x > 1.0:
            s = s + x * x
        else:
            s += np.sin(x)
    while s > 10.0:
        s = s / 2.0
    return s


def mutates(xs, table, a):
    xs[0] = xs[0] * a
    table["k"] *= 2.0
    a *= 3.0
    return np.sum(a * xs[1]) + table["k"][0]


def guard_tests(source: str) -> list[str]:
    """The tests of the ifs and conditional expressions that check a type: the guards."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            calls = [c for c in ast.walk(node.test) if isinstance(c, ast.Call)]
            if any(isinstance(c.func, ast.Name) and c.func.id == "type" for c in calls):
                found.append(ast.unparse(node.test))
    return found


def pass_lengths(source: str) -> dict[str, int]:
    return {f.name: f.end_lineno - f.lineno + 1 for f in ast.parse(source).body if isinstance(f, ast.FunctionDef)}


def test_the_readme_example_prints_its_fast_path_in_about_three_lines_per_operation():
    """The bound: "about the length of the function times three", for each pass, with the
    function as the derivative sees it: its normal form (``stage="ir"``, one primitive per line,
    11 lines for ``loss``'s 3). Each pass may take 3 lines per line of it, plus 4 for the
    ``def``, the docstring and two preamble lines. Both passes of the whole program take 306
    lines; the specialised ones 35 each."""
    args = readme_arguments()
    specialised = yb.show(loss, *args)
    compile(specialised, "<specialised>", "exec")
    assert guard_tests(specialised) == []
    ir_lines = len(yb.show(loss, stage="ir").splitlines())
    lengths = pass_lengths(specialised)
    assert set(lengths) == {"loss_forward", "loss_reverse"}
    for name, length in lengths.items():
        assert length <= 3 * ir_lines + 4, (name, length, specialised)
    assert len(specialised.splitlines()) <= len(yb.show(loss).splitlines()) / 4
    assert "# array block: lines" in specialised  # the generated comments tie lines to loss's
    assert f"# undo line {loss.__code__.co_firstlineno + 2}: _t8 = np.mean(_t7)" in specialised
    readme = (pathlib.Path(__file__).parents[1] / "README.md").read_text()
    assert "print(yb.show(loss, params, x, y))" in readme  # the README shows this program


def test_a_float_function_shows_only_its_float_path():
    specialised = yb.show(scalar_formula, 0.7, 1.3)
    compile(specialised, "<specialised>", "exec")
    assert "type(" not in specialised and "_rrule(" not in specialised, specialised
    assert "_ND" not in specialised  # nothing of the array paths
    whole = yb.show(scalar_formula)
    assert len(specialised.splitlines()) < len(whole.splitlines()) / 4


def test_an_array_function_shows_only_its_array_path():
    rng = np.random.default_rng(1)
    specialised = yb.show(array_energy, rng.standard_normal(4), rng.standard_normal((4, 4)))
    compile(specialised, "<specialised>", "exec")
    assert guard_tests(specialised) == []
    assert "_FT" not in specialised  # the float fast paths are gone
    assert len(specialised.splitlines()) < len(yb.show(array_energy).splitlines()) / 3


def test_guards_true_and_no_examples_give_the_whole_program():
    from yuebing.api import show_forward
    from yuebing.api import show

    assert show is yb.show and show_forward is yb.show_forward  # where they were, as before
    args = readme_arguments()
    whole = derived_rule(loss).generated.source
    assert yb.show(loss) == whole
    assert yb.show(loss, *args, guards=True) == whole
    assert yb.show(loss, mode="forward") == yb.show_forward(loss) == derived_frule(loss).generated.source
    assert yb.show_forward(loss, *args, guards=True) == derived_frule(loss).generated.source


def test_stage_ir_is_the_normal_form():
    expected = format_function(derived_rule(loss).ir)
    assert yb.show(loss, stage="ir") == expected
    assert yb.show(loss, *readme_arguments(), stage="ir") == expected
    assert yb.show_forward(loss, stage="ir") == format_function(derived_frule(loss).ir)
    with pytest.raises(ValueError, match="stage"):
        yb.show(loss, stage="source")
    with pytest.raises(ValueError, match="mode"):
        yb.show(loss, mode="sideways")


def test_the_callers_arguments_are_untouched():
    xs, table, a = [np.ones(3), np.arange(3.0)], {"k": np.array([1.0, 2.0])}, np.array([0.5, 1.5, 2.5])
    before = copy.deepcopy((xs, table, a))
    ids = [id(xs[0]), id(xs[1]), id(table["k"])]
    for mode in ("reverse", "forward"):
        text = yb.show(mutates, xs, table, a, mode=mode)
        compile(text, "<specialised>", "exec")
        np.testing.assert_array_equal(xs[0], before[0][0])
        np.testing.assert_array_equal(xs[1], before[0][1])
        np.testing.assert_array_equal(table["k"], before[1]["k"])
        np.testing.assert_array_equal(a, before[2])
        assert [id(xs[0]), id(xs[1]), id(table["k"])] == ids and len(xs) == 2 and list(table) == ["k"]
    params, x, y = readme_arguments()
    kept = copy.deepcopy((params, x, y))
    yb.show(loss, params, x, y)
    for got, want in zip((params["W"], params["b"], x, y), (kept[0]["W"], kept[0]["b"], kept[1], kept[2])):
        np.testing.assert_array_equal(got, want)


def test_the_users_branches_and_loops_stay():
    specialised = yb.show(loops_and_branches, 4.0, 3)  # x > 1: the else branch never runs
    compile(specialised, "<specialised>", "exec")
    assert guard_tests(specialised) == []
    assert "for _k1 in _range1:" in specialised and "while True:" in specialised
    assert re.search(r"_\w+ = s > 10\.0\n\s+if not _\w+:", specialised)  # the while loop's own test, inline
    assert "if _pop():  # undo the branch at line" in specialised
    assert specialised.count("pass  # not reached with the example arguments") == 2  # forward and reverse
    both = yb.show(loops_and_branches, 0.5, 3)  # x < 1: now the other branch is the one shown
    assert "np.sin(x)" in both and "x * x" not in both
    forward = yb.show_forward(loops_and_branches, 4.0, 3)
    compile(forward, "<specialised>", "exec")
    assert guard_tests(forward) == [] and re.search(r"if _\w+:  # line", forward) and "while True:  # line" in forward


@pytest.mark.parametrize("mode", ["forward", "hvp"])
def test_forward_and_hvp_code_is_specialised_too(mode):
    args = readme_arguments()
    specialised = yb.show(loss, *args, mode=mode)
    compile(specialised, "<specialised>", "exec")
    assert guard_tests(specialised) == []
    assert len(specialised.splitlines()) < len(yb.show(loss, mode=mode).splitlines())
    if mode == "forward":
        assert specialised == yb.show_forward(loss, *args)
        line = loss.__code__.co_firstlineno + 1
        # the path it took: tanh and the squared error as one forward array block
        assert f"# array block: lines {line}-{line + 1}" in specialised and "np.tanh(" in specialised


@pytest.mark.parametrize("f, args", [
    (loss, readme_arguments()),
    (scalar_formula, (0.7, 1.3)),
    (loops_and_branches, (4.0, 3)),
    (loops_and_branches, (0.5, 4)),
])
def test_the_specialised_program_computes_the_same_gradient(f, args):
    """Run in place of the generated code on arguments of the example's types, the specialised
    program gives the same value and gradient: it is the fast path, not a sketch of it."""
    rule = derived_rule(f)
    expected = yb.value_and_grad(f, argnums=0)(*args)
    namespace = dict(rule.forward.__globals__)  # the names the generated code was compiled with
    exec(compile(yb.show(f, *args), "<specialised>", "exec"), namespace)  # noqa: S102
    original = rule.forward, rule.reverse
    rule.forward, rule.reverse = namespace[rule.generated.forward_name], namespace[rule.generated.reverse_name]
    try:
        got = yb.value_and_grad(f, argnums=0)(*args)
    finally:
        rule.forward, rule.reverse = original
    assert got[0] == pytest.approx(expected[0])
    if isinstance(expected[1], dict):
        for key in expected[1]:
            np.testing.assert_allclose(got[1][key], expected[1][key])
    else:
        np.testing.assert_allclose(got[1], expected[1])


GENERATED = '''\
def step(a, b):
    if type(a) is float and (_v := a + 1.0) > 0:  # fast path
        r = _v
    else:
        r = 0.0
    if type(b) is float and (_w := b * 2.0) != _w:  # a NaN: never, here
        r = -1.0
    t = _w if b else 0.0
    return r + (1.0 if r > 0 else 2.0) + t
'''


def test_a_walrus_read_later_keeps_the_if_that_set_it():
    """Directly on a small generated-like module: the first if went its first way, so its
    walrus becomes an assignment; the second never took its body, but its walrus ``_w`` is read
    afterwards, so it stays whole."""
    filename = "<test_show step>"
    namespace = {}
    exec(compile(GENERATED, filename, "exec"), namespace)  # noqa: S102
    step = namespace["step"]
    counts = show_module._count_instructions(filename, lambda: step(2.0, 3.0))
    executed = show_module._Executed([step.__code__], counts)
    user = show_module._UserControl(set(), set(), {})
    text = show_module.specialise_source(GENERATED, executed, user)
    compile(text, "<specialised>", "exec")
    lines = text.splitlines()
    assert lines[1] == "    # fast path"
    assert lines[2] == "    _v = a + 1.0"
    assert "    r = _v" in lines and "r = 0.0" not in text
    kept = lines.index("    if type(b) is float and (_w := b * 2.0) != _w:  # a NaN: never, here")
    assert lines[kept + 1] == "        pass  # not reached with the example arguments"
    assert "    t = _w" in lines  # the conditional expressions went one way
    assert "    return r + 1.0 + t" in lines
