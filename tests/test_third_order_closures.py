"""Third derivatives (``yb.hessian``/``yb.hvp`` of a function calling ``yb.grad``) when the function
under ``yb.grad`` defines closures over its own variables: plain closures, late-bound lambdas kept
in cells, ``nonlocal`` writes, defaults computed from its variables (issue 13).

Every Hessian is checked against central differences of the gradient (``yb.grad`` of the outer
function is reverse over reverse, which needs only second derivatives of the inner one) and for
symmetry; the Hessian-vector products against the same Hessian times the direction.
"""
import functools

import numpy as np
import pytest
import scipy.integrate

import yuebing as yb
from yuebing.tangents import NoTangent
from yuebing.transform.plain_forward import plain_forward

from tests.all_modes import check_all_modes
from tests.test_second_order import _fd_hessian
from tests.test_third_order import (captures_a_variable, check_hessian, default_from_a_variable, late_binding,
                                    nonlocal_accumulator)


def apply_twice(f, v):
    return f(v) + f(2.0 * v)


def passed_to_a_function(y):
    s = np.sum(y ** 2)
    return np.sum(apply_twice(lambda t: np.sin(s * t), y))


def nested_twice(y):
    s = y[0] * y[1]

    def outer(v):
        w = v * s
        inner = lambda u: u * w + s  # noqa: E731
        return inner(v) ** 2

    return np.sum(outer(y))


def recursive_nested(y):
    s = y[2]

    def power(v, n):
        return 1.0 if n == 0 else v * s * power(v, n - 1)

    return power(y[0], 3) + power(y[1], 2)


def keyword_and_default(y):
    s = np.exp(y[0])

    def scaled(v, k=2.0, *, shift=0.5):
        return k * s * v + shift * s

    return np.sum(scaled(y, shift=y[1]) ** 2) + scaled(y[2], 3.0)


def returns_a_closure(y):
    def make(c):
        return lambda t: c * t ** 2

    f = make(y[0])
    g = make(y[1] * y[2])
    return f(y[1]) + g(y[0]) * f(y[2])


def nonlocal_in_a_loop_with_break(y):
    total = 0.0
    k = 0

    def add(v):
        nonlocal total
        total += v * total + v

    while True:
        if k >= 3:
            break
        add(y[k] ** 2)
        k += 1
    return total


def late_binding_with_break(y):
    fs = []
    for a in y:
        if a > 5.0:
            break
        fs.append(lambda t: a * t)
    return fs[0](1.5) * np.sum(y ** 2)


def closures_in_a_list(y):
    fs = []
    k = 0
    while k < 3:
        a = y[k]
        b = a * a
        fs.append(lambda t: a * t)

        def h(t):
            return b * t

        fs.append(h)
        k += 1
    return (fs[0](1.5) + fs[1](1.5)) * np.sum(y ** 2)


CLOSURES = [captures_a_variable, nonlocal_accumulator, late_binding, default_from_a_variable, passed_to_a_function,
            nested_twice, recursive_nested, keyword_and_default, returns_a_closure, nonlocal_in_a_loop_with_break,
            late_binding_with_break, closures_in_a_list]

X = np.array([0.3, -0.7, 1.1])


@pytest.mark.parametrize("g", CLOSURES, ids=lambda g: g.__name__)
def test_hessian_through_grad_of_closures(g):
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), X, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("g", CLOSURES, ids=lambda g: g.__name__)
def test_hvp_through_grad_of_closures(g):
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    value, gradient, product = yb.hvp(F, (X,), (v,))
    np.testing.assert_allclose(value, F(X), rtol=1e-12)
    np.testing.assert_allclose(gradient[0], yb.grad(F)(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(product[0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("g", [late_binding_with_break, nonlocal_in_a_loop_with_break, closures_in_a_list],
                         ids=lambda g: g.__name__)
def test_late_binding_in_a_loop_with_break_every_mode(g):
    """A variable captured by a closure and rebound in a loop that breaks (the loop's body a run
    of statements not flattened yet when captures were counted) was not kept in a cell: every
    closure read its own value, not the last one (a wrong gradient, silently)."""
    check_all_modes(g, X)


def integrates_a_closure(y):
    s = y[0]
    return scipy.integrate.quad(lambda t: t * s, 0.0, 1.0)[0] * y[1]


def test_closure_passed_to_a_primitive_is_refused_by_name():
    F = lambda y: np.sum(yb.grad(integrates_a_closure)(y) ** 2)  # noqa: E731
    with pytest.raises(yb.NestedDifferentiationError, match=r"nested functions capturing variables \(<lambda>\) "
                                                            r"passed to .*quad.*call it directly"
                                                            r"(.|\n)*test_third_order_closures.py\", line \d+"):
        yb.hessian(F)(X)


def maps_a_closure(y):  # map's definition calls the closure: its plain program is followed
    s = np.sum(y)
    return sum(map(lambda t: t * s, [y[0], y[1]])) * y[2]


def test_closure_called_by_map():
    check_hessian(lambda y: np.sum(yb.grad(maps_a_closure)(y) ** 2), X, rtol=1e-5, atol=1e-5)


def type_then_loop(y):
    kind = type(y)
    total = 0.0
    for v in y:
        total = total + v ** 3 * np.sum(y)
    return total * (1.0 if kind is np.ndarray else 2.0) + sum([y[0], y[1]]) ** 2


def test_builtin_names_read_before_a_loop():
    """``type(y)`` then a ``for`` loop: the plain program's local ``type`` (a global read) was
    what second order's program of it used for its own type checks, before it was bound (an
    UnboundLocalError); builtins read as globals now have locals of their own names."""
    check_hessian(lambda y: np.sum(yb.grad(type_then_loop)(y) ** 2), X, rtol=1e-5, atol=1e-5)


# -------------------------------------------------------------------- *args and **kwargs calls

def keywords_helper(a, b, c=1.0):
    return a * b * c


def varargs_helper(*vs):
    return sum(v ** 3 for v in vs)


def star_to_a_primitive(y):
    parts = (y[0], y[1])
    return np.hypot(*parts) ** 3 + y[2] * np.arctan2(*y[1:])


def star_and_keywords_to_python(y):
    args = [y[0] * y[1], y[2]]
    keywords = {"c": y[2]}
    return keywords_helper(*args, c=y[0]) ** 2 + keywords_helper(y[0], y[1], **keywords) ** 2


def star_to_varargs(y):
    return varargs_helper(*[y[0], y[1]], y[2]) * y[0]


def kwargs_helper(a, **options):
    return a * options["scale"] ** 2 + options["shift"] * options["scale"]


def to_a_kwargs_parameter(y):
    s = y[2] ** 2

    def closure(v, **options):
        return v * s + options["w"] ** 3

    return kwargs_helper(y[0], scale=y[1], shift=y[2]) ** 2 + closure(y[1], w=y[0] * y[2])


STARRED = [star_to_a_primitive, star_and_keywords_to_python, star_to_varargs, to_a_kwargs_parameter]


@pytest.mark.parametrize("g", STARRED, ids=lambda g: g.__name__)
def test_hessian_through_grad_of_star_calls(g):
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), X, rtol=1e-5, atol=1e-5)
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    np.testing.assert_allclose(yb.hvp(F, (X,), (v,))[2][0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)


# Closures met by a generator fold (frontend/generator_folds.py: ``sum(f(1.5) for f in fs)`` runs
# as a copy of the generator, a Python function handed the list of closures) or by a helper taking
# them in a list: in the plain program each closure's tangent is its own plain program, so the
# function they are handed to runs through its plain program too (as third order does), where
# forward mode would take the programs for data and drop the derivatives through their cells.

def max_of_closures(y):
    fs = [lambda t: a * t + t ** 2 for a in y]
    return max(f(y[1]) for f in fs) * np.sum(y ** 2)


def apply_all(fs, v):
    return sum(f(v) * f(2.0 * v) for f in fs)


def closures_in_a_list_to_a_helper(y):
    s = np.sum(y ** 2)
    return apply_all([lambda t: s * t, lambda t: np.sin(y[0] * t)], y[2])


def closures_in_a_dict_folded(y):
    scales = {"a": y[0] * y[1], "b": y[2]}
    fs = {k: (lambda t, k=k: scales[k] * t ** 2) for k in scales}
    return sum(fs[k](y[1] + 1.0) for k in fs) ** 2


def nonlocal_counter_read_in_a_fold(y):
    total = y[0]

    def bump(v):
        nonlocal total
        total = total * v
        return total

    return sum(bump(v) for v in y[1:]) + total ** 2


FOLDED = [late_binding, max_of_closures, closures_in_a_list_to_a_helper, closures_in_a_dict_folded,
          nonlocal_counter_read_in_a_fold]


@pytest.mark.parametrize("g", STARRED + FOLDED + [captures_a_variable, nonlocal_accumulator], ids=lambda g: g.__name__)
def test_plain_forward_program_runs_as_forward_mode(g):
    """The plain program run as it is (``jvp_call`` as forward mode of each call) is ``yb.jvp``."""
    v = np.array([1.0, -2.0, 0.5])
    value, tangent = plain_forward(g)(g, NoTangent, X, v)
    expected = yb.jvp(g, (X,), (v,))
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    np.testing.assert_allclose(tangent, expected[1], rtol=1e-12)


@pytest.mark.parametrize("g", FOLDED, ids=lambda g: g.__name__)
def test_closures_through_folds_in_every_order(g):
    check_all_modes(g, X)
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), X, rtol=1e-5, atol=1e-5)
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    np.testing.assert_allclose(yb.hvp(F, (X,), (v,))[2][0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)


# -------------------------------------------------------------------- builtin sorted of numbers

def sorts_numbers(y):
    s = sorted((y[0] * y[1], y[2], 0.5), reverse=True)
    return s[0] ** 3 + s[1] * s[2] + sorted(np.sin(y))[1] ** 2 + sorted([y[2], y[0]])[0] ** 4


@pytest.mark.parametrize("x", [X, np.array([0.9, 0.2, -0.4])], ids=["one order", "another order"])
def test_hessian_through_grad_of_sorted_numbers(x):
    check_hessian(lambda y: np.sum(yb.grad(sorts_numbers)(y) ** 2), x, rtol=1e-5, atol=1e-5)


# -------------------------------------------------------------------- a key= (sorted, max, min, list.sort)

def sorted_by_a_closure(y):
    s = y[0]
    return sorted([y[1], y[2]], key=lambda t: t * s)[0] ** 3 + sorted(y, key=abs, reverse=True)[0] * s


def keys_of_pairs(y):
    pairs = sorted([(y[0], 2), (y[1] * y[2], 1), (y[2], 0)], key=lambda p: p[1], reverse=True)
    return pairs[0][0] ** 3 + pairs[1][0] * pairs[2][0] + max(y, key=abs) ** 2 * min(y[0], y[1] ** 2, key=lambda v: -v)


def sorts_in_place(y):
    calls = []

    def distance(v):
        calls.append(v)  # a key with a side effect: it runs as the user's code runs it
        return (v - 0.5) ** 2

    items = [y[0] * 2, y[1], y[2] ** 2]
    items.sort(key=distance)
    other = list(y)
    other.sort(reverse=True)
    return items[0] * items[1] ** 2 + other[0] * other[2] ** 3 + sum(calls) * y[1]


KEYED = [sorted_by_a_closure, keys_of_pairs, sorts_in_place]


@pytest.mark.parametrize("g", KEYED, ids=lambda g: g.__name__)
@pytest.mark.parametrize("x", [X, np.array([0.9, 0.2, -0.4])], ids=["one order", "another order"])
def test_hessian_through_grad_of_a_key(g, x):
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), x, rtol=1e-5, atol=1e-5)
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    np.testing.assert_allclose(yb.hvp(F, (x,), (v,))[2][0], _fd_hessian(F, x) @ v, rtol=1e-5, atol=1e-5)
    check_all_modes(g, x)


# -------------------------------------------------------------------- functools.partial, np.vectorize

def partial_of_a_global(y):
    p = functools.partial(keywords_helper, y[0], c=y[2])
    return p(y[1]) ** 2


def partials_of_closures(y):
    s = y[0] * y[1]

    def h(a, b, scale=1.0):
        return a * b * s * scale

    p = functools.partial(h, scale=y[2])
    q = functools.partial(p, y[2])
    m = functools.partial(np.multiply, y[1])
    return q(y[0]) ** 2 + p(y[1], y[0], scale=2.0) + np.sum(m(y) ** 3) \
        + sum(map(functools.partial(keywords_helper, b=y[0]), y))


def vectorizes_a_closure(y):
    s = y[0]
    square = np.vectorize(lambda t: (t * s) ** 2 if t > 0 else t * s)
    return np.sum(square(y) * y) + square(y[1]) * y[2]


def vectorizes_two_arguments(y):
    """Several arguments (made inside, a closure; and made outside), excluded= and a signature:
    the covered-code definitions every mode runs (they were refused in third order)."""
    s = y[2]
    scaled = np.vectorize(lambda a, b: a * b * a * s)
    with_table = np.vectorize(lambda a, table: a * table[0] + table[1] * a * a, excluded={1})
    rows = np.vectorize(lambda r: np.sum(r ** 3) * s, signature="(n)->()")
    return np.sum(scaled(y, y[::-1])) + np.sum(_OUTSIDE(y, y[0])) + np.sum(with_table(y, [y[1], 2.0])) \
        + np.sum(rows(np.stack([y, y * y])))


_OUTSIDE = np.vectorize(lambda a, b: np.sin(a) * b ** 2)


@pytest.mark.parametrize("g", [partial_of_a_global, partials_of_closures, vectorizes_a_closure,
                               pytest.param(vectorizes_two_arguments, marks=pytest.mark.slow)],  # (14 s)
                         ids=lambda g: g.__name__)
def test_hessian_through_grad_of_partials_and_vectorized_closures(g):
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), X, rtol=1e-5, atol=1e-5)
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    np.testing.assert_allclose(yb.hvp(F, (X,), (v,))[2][0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)
    check_all_modes(g, X)


# -------------------------------------------------------------------- still refused, by name
# (objects of user classes: tests/test_third_order_objects.py)

def defines_a_class(y):
    s = y[0]

    class Scale:
        def apply(self, v):
            return v * s

    return np.sum(Scale().apply(y) ** 2)


@pytest.mark.parametrize("g, message", [
    (defines_a_class, "classes defined inside it.*module level"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_local_classes_are_refused_by_name(g, message):
    F = lambda y: np.sum(yb.grad(g)(y) ** 2)  # noqa: E731
    for second_order in (yb.hessian(F), lambda x: yb.hvp(F, (x,), (x,))):
        with pytest.raises(yb.NestedDifferentiationError, match=message):
            second_order(X)
