"""Every construct the fence rejects gets an error naming it, the user's file and line, and a fix."""
import inspect

import numpy as np
import scipy.special
import pytest

import yuebing as yb
from yuebing.frontend.fence import UnsupportedSyntaxError


def yields_in_a_default(x):
    def inner(a=(yield x)):  # (evaluated in the enclosing generator: refused)
        return a
    yield inner()


def writes_enclosing_variable(x):
    y = x

    def inner(v):
        return v * y

    return inner(x)


CASES = [
    # (the generator calls a helper, so it runs lazily and the state machine's rewrite refuses it)
    (yields_in_a_default, "a yield inside a FunctionDef statement of a generator", "def inner(a=(yield x)):"),
]


@pytest.mark.parametrize("fn, what, code", CASES, ids=[c[0].__name__ for c in CASES])
def test_fence_names_construct_file_and_line(fn, what, code):
    with pytest.raises(UnsupportedSyntaxError) as info:
        yb.grad(fn)(1.0)
    message = str(info.value)
    assert what in message
    assert __file__ in message
    assert "What to do:" in message
    lines, start = inspect.getsourcelines(fn)
    line_numbers = range(start, start + len(lines))
    assert info.value.lineno in line_numbers
    if code is not None:
        assert code in message


def calls_missing_primitive(x):
    return scipy.special.hyperu(1.0, 2.0, x) * 2.0


def test_missing_rule_error_names_function_and_fix():
    with pytest.raises(TypeError, match=r"hyperu.*register_rrule.*nondifferentiable"):
        yb.grad(calls_missing_primitive)(1.5)


def iterates_generator(x):
    s = 0.0
    for v in (t for t in [x, x]):
        s += v
    return s


def iterates_map_object(xs):
    s = 0.0
    for v in iter(xs):
        s += v
    return s


def test_iterating_a_generator_expression_materialises_it():
    assert yb.grad(iterates_generator)(1.5) == pytest.approx(2.0)


def test_iterating_iter_of_a_list_follows_the_list():
    """``iter(x)`` walks ``x`` under differentiation (rules/iteration.py)."""
    assert yb.grad(iterates_map_object)([1.0, 2.0]) == [1.0, 1.0]


def closure_over_reassigned(x):
    w = x
    f = lambda v: v * w  # noqa: E731
    w = 2.0 * x
    return f(1.0)


def closure_in_loop(x):
    fs = []
    for i in range(3):
        fs.append(lambda v: v * i)
    return fs[0](x)


def test_closure_over_reassigned_variable_sees_the_current_value():
    """Late binding, as in Python (tests/test_late_binding.py checks every mode)."""
    for f in (closure_over_reassigned, closure_in_loop):  # closure_in_loop: every lambda sees the last i
        assert yb.grad(f)(1.0) == pytest.approx((f(1.0 + 1e-6) - f(1.0 - 1e-6)) / 2e-6, rel=1e-6)


def helper_with_missing_rule(x):
    y = x * 2.0
    return scipy.special.hyperu(1.0, 2.0, y)


def outer_calling_helper(x):
    return helper_with_missing_rule(x) + 1.0


def test_errors_inside_generated_code_name_the_user_line():
    with pytest.raises(TypeError) as info:
        yb.grad(outer_calling_helper)(1.5)
    notes = "\n".join(getattr(info.value, "__notes__", []))
    lines, start = inspect.getsourcelines(helper_with_missing_rule)
    assert f'line {start + 2}' in notes and "scipy.special.hyperu(1.0, 2.0, y)" in notes
    assert "outer_calling_helper" in notes and __file__ in notes
