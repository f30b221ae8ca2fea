"""Second order (``yb.hvp``/``yb.hessian``) of constructs that reverse and forward mode had and
second order refused or got wrong: complex intermediates of real functions, ``functools.partial``,
selection over dict views, ``sum`` of user objects, ``**kwargs``. Each is checked against nested
central differences: the Hessian-vector product against differences of yuebing's reverse-mode
gradient, ``v.H.v`` against second differences of the function itself, and the gradient from the
forward-over-reverse pass against differences of the function."""
from __future__ import annotations

import cmath
import functools
import math

import numpy as np
import pytest

import yuebing as yb

H = 1e-5


def _as_array(x):
    return np.asarray(x, dtype=float)


def _shifted(x, v, t):
    return float(x + t * v) if isinstance(x, float) else _as_array(x) + t * _as_array(v)


def check_hvp(f, x, v, rtol=1e-5, atol=1e-6):
    """``yb.hvp(f, (x,), (v,))`` against central differences (see the module docstring)."""
    value, (gradient,), (hvp,) = yb.hvp(f, (x,), (v,))
    np.testing.assert_allclose(value, f(x), rtol=1e-12, atol=1e-12)
    along = (f(_shifted(x, v, H)) - f(_shifted(x, v, -H))) / (2 * H)
    np.testing.assert_allclose(np.sum(_as_array(gradient) * _as_array(v)), along, rtol=rtol, atol=atol)
    grad = yb.grad(f)
    expected = (_as_array(grad(_shifted(x, v, H))) - _as_array(grad(_shifted(x, v, -H)))) / (2 * H)
    np.testing.assert_allclose(_as_array(hvp), expected, rtol=rtol, atol=atol)
    h2 = 1e-4  # second differences of the function: v.H.v
    curvature = (f(_shifted(x, v, h2)) - 2 * f(x) + f(_shifted(x, v, -h2))) / h2 ** 2
    np.testing.assert_allclose(np.sum(_as_array(hvp) * _as_array(v)), curvature, rtol=1e-3, atol=1e-4)
    return hvp


# ---------------------------------------------------------------- selection over dict views


def _max_of_values(x):
    return max({"a": x, "b": x * x, "c": math.sin(x)}.values()) ** 2


def _min_of_values(x):
    return min({"a": x * x, "b": 3.0 * x}.values()) * x


def _sorted_items(x):
    weights = {name: x ** k for k, name in enumerate("abc")}
    return sum(v * v for k, v in sorted(weights.items()) if k != "b")


def _sum_of_values_squared(x):
    return sum({"a": x * x, "b": 1.0}.values()) ** 2  # the sum's tangent is needed by the square


def _list_of_values(x):
    return sum(list({"a": x * x, "b": x}.values())) ** 2  # list() of a view: not counted twice


def _max_of_items_by_value(x):
    d = {"a": x * x, "b": math.cos(x)}
    key, value = max(d.items(), key=lambda kv: kv[1])
    return value * x


@pytest.mark.parametrize("f", [_max_of_values, _min_of_values, _sorted_items, _sum_of_values_squared,
                               _list_of_values, _max_of_items_by_value])
@pytest.mark.parametrize("x", [0.7, 1.6])
def test_selection_over_dict_views(f, x):
    check_hvp(f, x, 1.0)


def _dict_of_arrays(x):
    d = {"a": np.sin(x), "b": x * x}
    return float(np.sum(max(d.values(), key=lambda a: a.sum()) ** 2))


def test_selection_over_dict_views_of_arrays():
    check_hvp(_dict_of_arrays, np.array([0.3, 1.2, -0.4]), np.array([1.0, -0.5, 2.0]))


# ---------------------------------------------------------------- functools.partial


def _weighted(v, w=1.0, p=2.0):
    return w * v ** p


def _partial_positional(x):
    return functools.partial(pow, x)(3.0) + functools.partial(max, 0.5)(x * x)


def _partial_keywords(x):
    f = functools.partial(_weighted, w=x * x)  # a stored keyword carrying a derivative
    g = functools.partial(_weighted, p=3.0)
    return f(math.sin(x)) + g(x, w=x) + f(x, p=1.5)  # a call's keyword beside a stored one


def _partial_of_closure(x):
    scale = math.exp(x)

    def term(a, b):
        return scale * a * b

    f = functools.partial(term, x)
    return f(x * x) + functools.partial(functools.partial(term, 2.0), x)()  # a partial of a partial


def _partial_of_array_function(x):
    norm = functools.partial(np.linalg.norm, ord=3)
    return float(norm(x) ** 2 + np.sum(functools.partial(np.multiply, x)(x) ** 2))


@pytest.mark.parametrize("f", [_partial_positional, _partial_keywords, _partial_of_closure])
@pytest.mark.parametrize("x", [0.7, 1.3])
def test_partial_in_second_order(f, x):
    check_hvp(f, x, 1.0)


def test_partial_of_array_functions():
    check_hvp(_partial_of_array_function, np.array([0.5, -1.2, 2.0]), np.array([0.3, 1.0, -0.7]))


_MODEL = functools.partial(_weighted, w=1.5, p=3.0)  # a partial made outside: a constant


def _nested_partials(x):
    inner = functools.partial(_weighted, x, w=x * x, p=3.0)
    outer = functools.partial(inner, p=x)  # Python flattens it: partial(_weighted, x, w=x * x, p=x)
    again = functools.partial(functools.partial(np.multiply, x), math.cos(x))
    return outer() + inner() + float(again()) + _MODEL(x) + _MODEL(math.sin(x), w=x)


@pytest.mark.parametrize("x", [0.7, 1.3])
def test_partial_of_partial_and_partial_from_outside(x):
    check_hvp(_nested_partials, x, 1.0)
    value, gradient = yb.value_and_grad(_nested_partials)(x)
    np.testing.assert_allclose(gradient, (_nested_partials(x + H) - _nested_partials(x - H)) / (2 * H), rtol=1e-6)


# ---------------------------------------------------------------- sum of user objects


class _Money:
    def __init__(self, amount):
        self.amount = amount

    def __add__(self, other):
        return _Money(self.amount + (other.amount if isinstance(other, _Money) else other))

    def __radd__(self, other):  # sum starts from 0
        return _Money(other + self.amount)


class _Vector:
    """An immutable pair with a nonlinear __add__ (a soft sum)."""

    __slots__ = ("u", "w")

    def __init__(self, u, w):
        self.u, self.w = u, w

    def __add__(self, other):
        return _Vector(self.u + other.u, math.log(math.exp(self.w) + math.exp(other.w)))


def _sum_of_money(x):
    total = sum([_Money(x), _Money(x * x), _Money(2.0)])
    return total.amount ** 2


def _sum_of_money_tuple_with_start(x):
    return sum((_Money(math.sin(x)), _Money(x ** 3)), start=_Money(x)).amount * x


def _sum_of_vectors(x):
    parts = [_Vector(x * k, x * x / k) for k in (1.0, 2.0, 3.0)]
    total = sum(parts[1:], parts[0])
    return total.u * total.w


def _sum_of_array_money(x):
    total = sum([_Money(np.sin(x)), _Money(x * x)])
    return float(np.sum(total.amount ** 2))


@pytest.mark.parametrize("f", [_sum_of_money, _sum_of_money_tuple_with_start, _sum_of_vectors])
@pytest.mark.parametrize("x", [0.7, 1.4])
def test_sum_of_user_objects(f, x):
    check_hvp(f, x, 1.0)


def test_sum_of_user_objects_holding_arrays():
    check_hvp(_sum_of_array_money, np.array([0.2, -0.9, 1.5]), np.array([1.0, 0.5, -2.0]))


# ---------------------------------------------------------------- **kwargs


def _options(a, w=1.0, b=1.0):
    return a * w ** 2 + b * a * a


def _receives(a, **options):
    return a * options["w"] ** 2 + options.get("b", 1.0) * math.sin(a * options["w"])


def _passes_on(**kw):
    return _options(**kw) * kw["a"]


class _Shape:
    def __init__(self, s, t=1.0):
        self.s, self.t = s, t


def _kwargs_everywhere(x):
    opts = {"w": x * x, "b": math.cos(x)}
    total = _receives(x, **opts) + _receives(x, w=x)  # a **kwargs parameter
    total += _passes_on(a=x, w=math.exp(-x))  # received, then passed on with **
    more = dict(a=x, w=2.0 * x)
    more["b"] = x ** 3
    total += _passes_on(**more) + _Shape(**{"s": x, "t": x * x}).t * x  # ** at a call site, a class
    return total + functools.partial(_options, **{"w": x})(x, **{"b": x * x})


def _kwargs_to_numpy(x):
    return float(np.linalg.norm(**{"x": x * x}) + np.dot(**{"a": x, "b": np.sin(x)})
                 + np.sum(np.clip(x * x, a_min=0.1, **{"a_max": 2.0})))


@pytest.mark.parametrize("x", [0.7, 1.2])
def test_kwargs_in_second_order(x):
    check_hvp(_kwargs_everywhere, x, 1.0)


def test_kwargs_to_numpy_in_second_order():
    check_hvp(_kwargs_to_numpy, np.array([0.7, 1.3, -0.4]), np.array([1.0, -0.5, 0.3]))


# ---------------------------------------------------------------- complex intermediates


def _complex_scalars(x):
    z = complex(x, 1.0)
    w = cmath.exp(1j * x) * z + z * z / (2.0 - 1j)
    return abs(z) + w.real * w.imag + abs(w) ** 2 + (complex(z.real, -z.imag) * w).real


def _complex_math(x):
    z = cmath.sqrt(x + 2j) * cmath.log(1.0 + x * 1j)
    return abs(cmath.sin(z)) + cmath.phase(z) + abs(z - x) ** 3


def _complex_arrays(x):
    z = np.exp(1j * x) * (x + 0.5j)
    w = z * z / (1.0 + np.abs(z)) + np.conj(z) * x
    return float(np.sum(np.real(w) ** 2 + np.imag(w) * np.abs(z)) + np.sum(np.abs(np.sin(w))))


def _complex_in_place(x):
    z = x * (1.0 + 0.5j)
    z *= np.exp(-1j * x)  # a nonlinear in-place operator on a complex array
    z /= 2.0 + x * 1j
    z **= 2
    return float(np.sum(np.abs(z) ** 2 + z.real))


@pytest.mark.parametrize("f", [_complex_scalars, _complex_math])
@pytest.mark.parametrize("x", [0.7, -1.3])
def test_complex_scalars_in_second_order(f, x):
    check_hvp(f, x, 1.0)


@pytest.mark.parametrize("f", [_complex_arrays, _complex_in_place])
def test_complex_arrays_in_second_order(f):
    check_hvp(f, np.array([0.3, -1.1, 2.0]), np.array([1.0, 0.4, -0.8]))


def test_complex_hessian_against_nested_differences():
    x = np.array([0.3, -1.1])
    hessian = yb.hessian(_complex_arrays)(x)
    step = 1e-4
    expected = np.empty((2, 2))
    for i in range(2):
        for j in range(2):
            ei, ej = np.eye(2)[i] * step, np.eye(2)[j] * step
            expected[i, j] = (_complex_arrays(x + ei + ej) - _complex_arrays(x + ei - ej)
                              - _complex_arrays(x - ei + ej) + _complex_arrays(x - ei - ej)) / (4 * step ** 2)
    np.testing.assert_allclose(hessian, expected, rtol=1e-4, atol=1e-5)
