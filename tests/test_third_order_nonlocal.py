"""Third derivatives (``yb.hessian``/``yb.hvp`` of a function calling ``yb.grad``) where the function
under ``yb.grad`` keeps state in cells: its own variables written (``nonlocal``) by a function it
defines, while it captures variables of the differentiated code (its program is *opened*,
``api/implicit_stationary._open_body``); a selection (``set``) giving only constants; and
``scipy.stats.linregress``, whose wrapper does both and is then refused naming what is not followed.

Hessians are checked against central differences of the gradient and for symmetry
(``check_hessian``), Hessian-vector products against that Hessian times the direction.
"""
import numpy as np
import pytest
import scipy.stats

import yuebing as yb

from tests.test_second_order import _fd_hessian
from tests.test_third_order import check_hessian

X = np.array([0.6, 0.3, 0.8])
W = np.array([1.0, 0.5, -0.3])


def own_cells_written_by_a_nested_function(x):
    """``g`` captures ``s`` (carrying derivatives) and its own ``total`` is written by ``add``:
    refused as a nonlocal write of a captured variable before, though ``g`` writes none."""
    s = x[0] * x[2]

    def g(y):
        total = 0.0

        def add(v):
            nonlocal total
            total = total + v * total + v

        add(s * y[0] ** 2)
        add(np.sin(y[1]) * s)
        return total * y[2]

    return np.sum(yb.grad(g)(x) * W)


def selection_of_constants(x):
    """``set`` of a dict carrying derivatives gives its keys (strings): a constant."""
    s = x[1] * x[2]

    def g(y):
        d = {"a": y[0] * s, "b": y[1] ** 2, "c": y[2]}
        chosen = set(d) & {"a", "c"}
        return sum(np.sin(d[k]) * d["b"] for k in sorted(chosen))

    return np.sum(yb.grad(g)(x) ** 2)


@pytest.mark.parametrize("F", [own_cells_written_by_a_nested_function, selection_of_constants],
                         ids=lambda F: F.__name__)
def test_hessian(F):
    check_hessian(F, X, rtol=1e-5, atol=1e-5)


def test_a_set_of_numbers_is_still_refused_by_name():
    def g(y):
        return sum(v ** 3 for v in sorted(set([y[0], y[1] * 2.0])))

    with pytest.raises(yb.NestedDifferentiationError, match=r"set \(a 'selection' rule\)"):
        yb.hessian(lambda x: np.sum(yb.grad(g)(x)))(X)


def linregress_slope(x):
    return scipy.stats.linregress(x, x ** 2).slope * x[0]


def test_linregress_is_refused_naming_what_is_not_followed():
    """It was refused as "writes a variable it captures (nonlocal)", which it does not: its
    wrapper's own cells are written by functions it defines. Its p-value's t distribution, a
    SciPy class, is what third order does not follow; lower orders work."""
    x = np.array([1.0, 2.0, 3.5])
    np.testing.assert_allclose(yb.hessian(linregress_slope)(x), _fd_hessian(linregress_slope, x),
                               rtol=1e-5, atol=1e-5)
    with pytest.raises(yb.NestedDifferentiationError) as refused:
        yb.hessian(lambda x: yb.grad(linregress_slope)(x)[0] * x[1])(x)
    message = str(refused.value)
    assert "objects of a library's classes (scipy.stats._stats_py._SimpleStudentT)" in message
    assert "nonlocal" not in message
    notes = "\n".join(getattr(refused.value, "__notes__", []))
    assert "scipy.stats.linregress(x, x ** 2)" in notes  # the user's line


# ------------------------------------------------ writes into captured variables, kept after yb.grad


def counts_its_calls(x):
    """``g`` writes an int (a call counter) into a variable it captures; ``F`` reads it after."""
    s = x[0] * x[2]
    calls = 0

    def g(y):
        nonlocal calls
        calls = calls + 1
        return np.sum(np.sin(y * s))

    r = yb.grad(g)(x)
    return np.sum(r * W) * (calls + 1)


def counts_its_calls_capturing_nothing_else(x):
    calls = 0

    def g(y):
        nonlocal calls
        calls = calls + 1
        return np.sum(np.sin(y) * y[0])

    r = yb.grad(g)(x)
    return np.sum(r * W) * (calls + 1)


def writes_a_float(x):
    s = x[0] * x[2]

    def g(y):
        nonlocal s
        s = s * y[1]
        return np.sum(np.sin(y * s))

    r = yb.grad(g)(x)
    return np.sum(r * W) + s ** 2


def returns_it_as_aux(x):
    """``writes_a_float`` as the refusal advises: ``s`` passed in, its new value returned as aux."""
    s = x[0] * x[2]

    def g(y, s):
        s = s * y[1]
        return np.sum(np.sin(y * s)), s

    r, s = yb.grad(g, has_aux=True)(x, s)
    return np.sum(r * W) + s ** 2


def _directional_difference(F, x, v, h=1e-6):
    return (F(x + h * v) - F(x - h * v)) / (2 * h)


@pytest.mark.parametrize("F", [counts_its_calls, counts_its_calls_capturing_nothing_else, returns_it_as_aux],
                         ids=lambda F: F.__name__)
def test_forward_over_grad_keeps_what_the_function_wrote(F):
    """The inner reverse pass undid ``calls = calls + 1``: forward over yb.grad read 0 after it (a
    wrong value and tangent, silently: half of them for ``counts_its_calls_capturing_nothing_else``)."""
    v = np.array([0.2, -1.0, 0.4])
    value, tangent = yb.jvp(F, (X,), (v,))
    np.testing.assert_allclose(value, F(X), rtol=1e-12)
    np.testing.assert_allclose(tangent, _directional_difference(F, X, v), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(tangent, yb.grad(F)(X) @ v, rtol=1e-10)


def test_a_float_written_into_a_captured_variable_is_refused_by_name():
    """Reverse over yb.grad ran ``g`` plainly and lost ``s``'s new derivative (0.397 against
    differences' -0.283 along ``v``, silently); every order refuses it now, naming ``s``."""
    v = np.array([0.2, -1.0, 0.4])
    for run in (lambda: yb.grad(writes_a_float)(X), lambda: yb.jvp(writes_a_float, (X,), (v,)),
                lambda: yb.hvp(writes_a_float, (X,), (v,))):
        with pytest.raises(yb.NestedDifferentiationError) as refused:
            run()
        message = str(refused.value)
        assert "g" in message and "writes (nonlocal) s, a variable it captures, a value carrying derivatives" \
            in message
        assert "return its new value as aux (yb.grad(..., has_aux=True))" in message
        notes = "\n".join(getattr(refused.value, "__notes__", []))
        assert "r = yb.grad(g)(x)" in notes  # the user's line


@pytest.mark.parametrize("F", [counts_its_calls, returns_it_as_aux], ids=lambda F: F.__name__)
def test_reverse_over_grad(F):
    v = np.array([0.2, -1.0, 0.4])
    np.testing.assert_allclose(yb.grad(F)(X) @ v, _directional_difference(F, X, v), rtol=1e-6, atol=1e-8)


def test_a_counter_written_by_a_function_capturing_derivatives_is_refused_by_name_in_third_order():
    """Its program is opened (its captured variables as parameters), read when the outer pass goes
    back: after the write. Refused naming the variable; forward over yb.grad follows it."""
    with pytest.raises(yb.SecondOrderError) as refused:
        yb.hvp(counts_its_calls, (X,), (np.ones(3),))
    message = str(refused.value)
    assert "writes (nonlocal) calls, a variable it captures" in message
    assert "pass calls to it as an argument and return its new value (yb.grad(..., has_aux=True))" in message
    assert "of g (made in counts_its_calls, " in message and "test_third_order_nonlocal.py:" in message


@pytest.mark.parametrize("F", [own_cells_written_by_a_nested_function, selection_of_constants,
                               counts_its_calls_capturing_nothing_else, returns_it_as_aux], ids=lambda F: F.__name__)
def test_hvp(F):
    v = np.array([0.2, -1.0, 0.4])
    value, gradient, product = yb.hvp(F, (X,), (v,))
    np.testing.assert_allclose(value, F(X), rtol=1e-12)
    np.testing.assert_allclose(gradient[0], yb.grad(F)(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(product[0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)
