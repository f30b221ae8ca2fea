"""Errors that help (issue 13, item 10): a value passed where a function is meant, a bad
``argnums``, and a missing rule whose printed advice works as printed."""
from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import yuebing as yb


def loss(x):
    return np.sum(x ** 2)


X = np.array([1.0, 2.0])


@pytest.mark.parametrize("make", [
    lambda v: yb.grad(v), lambda v: yb.value_and_grad(v), lambda v: yb.jacobian(v), lambda v: yb.hessian(v),
    lambda v: yb.jvp(v, (X,), (X,)), lambda v: yb.vjp(v, X), lambda v: yb.hvp(v, (X,), (X,)),
])
def test_a_value_where_a_function_is_meant(make):
    with pytest.raises(TypeError, match="not callable: pass the function itself"):
        make(loss(X))


@pytest.mark.parametrize("argnums", ["y", 1.5, (), (0, "x"), True])
def test_argnums_must_be_ints(argnums):
    with pytest.raises(TypeError, match="argnums must be an int or a tuple of ints"):
        yb.grad(loss, argnums=argnums)


def test_public_names_of_the_advice_are_functions():
    assert callable(yb.nondifferentiable) and callable(yb.register_rrule) and callable(yb.register_frule)


def test_missing_rule_advice_works_as_printed(tmp_path):
    """Run in a fresh interpreter: the advice registers a rule for the whole process."""
    script = tmp_path / "advice.py"
    script.write_text(textwrap.dedent('''
        import re, numpy, yuebing
        def f(x):  # float.hex: a C function without a rule, handed float data (its text: no derivative)
            return numpy.sum(numpy.array([1.0, 2.0])) * x * len(float.hex(x))
        try:
            yuebing.grad(f)(1.5)
        except yuebing.rules.MissingRuleError as error:
            advice = re.search(r"declare it with (yuebing\\.nondifferentiable\\([\\w.]+\\))", str(error)).group(1)
        exec(advice)
        print(yuebing.grad(f)(1.5))
    '''))
    out = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert float(out.stdout.strip()) == 3.0 * len(float.hex(1.5))


_OPAQUE = np.frompyfunc(lambda a: a, 1, 1)  # a ufunc of a Python function: refused in every mode


def _nested_calls_an_unruled_function(x):
    def inner(v):
        w = v * 2.0
        for _ in range(2):
            w = w + 1.0
        return _OPAQUE(w)
    return inner(x) + 1.0


_ERROR_LINE = _nested_calls_an_unruled_function.__code__.co_firstlineno + 5


@pytest.mark.parametrize("run", [lambda f: yb.grad(f)(0.7), lambda f: yb.jvp(f, (0.7,), (1.0,)),
                                 lambda f: yb.hvp(f, (0.7,), (1.0,))], ids=["grad", "jvp", "hvp"])
def test_an_error_inside_a_nested_function_names_the_users_line(run):
    """The nested function is defined by the generated code of its enclosing one; its error note
    must still name the user's file and the failing line of the nested body, not generated code
    and not the ``def`` line."""
    with pytest.raises(Exception) as error:
        run(_nested_calls_an_unruled_function)
    notes = "\n".join(getattr(error.value, "__notes__", []))
    assert f'{__file__}", line {_ERROR_LINE}' in notes, notes
    assert "_nested_calls_an_unruled_function.<locals>.inner" in notes and "<yuebing" not in notes
