"""Derived-rule corpus: Python language constructs. Each function is registered with example
arguments; tests/test_corpus.py runs every entry through check_rule."""
import math

import numpy as np

from yuebing.testing.cases import randn, randpos
from . import corpus_registry

CORPUS, case = corpus_registry()


# ---------------------------------------------------------------- straight-line and branches

@case(1.3, -0.4)
def arithmetic(x, y):
    return x * y + x / (1.0 + y * y) - y ** 2


@case(0.7)
def unary_and_math(x):
    return -math.sin(x) + abs(x) + math.exp(+x)


@case(0.5)
def if_else(x):
    if x > 0:
        y = x * 2.0
    else:
        y = -x
    return y


@case(-0.5)
def if_else_other_branch(x):
    if x > 0:
        y = x * 2.0
    else:
        y = x * x
    return y


@case(0.3)
def elif_chain(x):
    if x > 1:
        return x
    elif x > 0:
        return x * x
    else:
        return -x


@case(0.4, 2.0)
def and_or_short_circuit(x, y):
    a = x > 0 and y > 1
    b = x < 0 or y > 1
    c = (x > 10) and (1 / 0 > 0)
    return x * a + y * b + c


@case(0.5, 1.5)
def boolean_value_or(x, y):
    return (x or y) * (0.0 or y)


@case(0.5)
def conditional_expression(x):
    return x * 3.0 if x > 0.2 else x - 1.0


@case(0.5, 1.0, 2.0)
def chained_comparison(a, b, c):
    if a < b < c:
        return a * b * c
    return a


# ---------------------------------------------------------------- loops

@case(randn(5))
def for_range_index(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i]
    return s


@case(randn(4))
def for_over_array(x):
    s = 0.0
    for v in x:
        s = s + np.sin(v)
    return s


@case([0.5, 1.5, -0.3])
def for_over_list(xs):
    s = 1.0
    for v in xs:
        s *= v
    return s


@case((0.5, 1.5))
def for_over_tuple(xs):
    s = 0.0
    for v in xs:
        s += v * v
    return s


@case([0.5, 1.5, 2.5])
def for_enumerate(xs):
    s = 0.0
    for i, v in enumerate(xs):
        s += i * v
    return s


@case([0.5, 1.5, 2.5], [1.0, -1.0, 2.0])
def for_zip(xs, ys):
    s = 0.0
    for a, b in zip(xs, ys):
        s += a * b
    return s


@case([0.5, 1.5, 2.5])
def for_reversed(xs):
    s = 0.0
    k = 1.0
    for v in reversed(xs):
        s += k * v
        k = k * 2.0
    return s


@case({"a": 0.5, "b": 1.5})
def for_dict_items(d):
    s = 0.0
    for k, v in d.items():
        s += v * v
    return s


@case({"a": 0.5, "b": 1.5})
def for_dict_values_and_keys(d):
    s = 0.0
    for v in d.values():
        s += v
    for k in d:
        s += d[k] * 2.0
    return s


@case(randn(3, 2))
def for_over_rows(x):
    s = 0.0
    for row in x:
        s += np.sum(row * row)
    return s


@case(1.5)
def while_loop(x):
    y = x
    n = 0
    while n < 4:
        y = y * 0.5 + 1.0
        n += 1
    return y


@case(3.0)
def while_data_dependent(x):
    y = x
    while y > 0.1:
        y = y * 0.5
    return y


@case(randn(6))
def break_in_loop(x):
    s = 0.0
    for i in range(len(x)):
        if i == 3:
            break
        s += x[i]
    return s


@case(randn(6))
def continue_in_loop(x):
    s = 0.0
    for i in range(len(x)):
        if i % 2 == 0:
            continue
        s += x[i] * x[i]
    return s


@case(np.array([0.5, 2.0, 3.0, -1.0]))
def return_inside_loop(x):
    for i in range(len(x)):
        if x[i] > 1.5:
            return x[i] * x[0]
    return x[0]


@case(2.0)
def while_with_break(x):
    y = x
    while True:
        y = y * y * 0.3
        if y < 0.5:
            break
    return y


@case(randn(3, 3))
def nested_loops(a):
    s = 0.0
    for i in range(3):
        for j in range(i + 1):
            s += a[i, j] * a[j, i]
    return s


@case(randn(5))
def nested_loop_break_inner(x):
    s = 0.0
    for i in range(3):
        for j in range(5):
            if j > i:
                break
            s += x[j]
    return s


# ---------------------------------------------------------------- assignment forms

@case((1.5, 2.5))
def tuple_unpacking(t):
    a, b = t
    b, a = a, b
    return a * 3.0 + b


@case([1.0, 2.0, 3.0, 4.0])
def starred_unpacking(xs):
    first, *middle, last = xs
    return first * last + sum(middle)


@case(1.5)
def augmented_float(x):
    y = x
    y += 1.0
    y *= x
    y -= 0.5
    y /= 2.0
    y **= 2
    return y


@case(randn(3))
def augmented_array_in_place(x):
    y = x * 1.0
    z = y
    y += x
    y *= 2.0
    return np.sum(z * z)


@case([1.0, 2.0])
def augmented_list_extends(xs):
    ys = [0.5]
    zs = ys
    ys += xs
    return zs[0] * zs[1] + zs[2]


@case(1.0, 2.0)
def multiple_targets(x, y):
    a = b = x * y
    return a + b


# ---------------------------------------------------------------- comprehensions and displays

@case([0.5, -1.5, 2.5])
def list_comprehension(xs):
    ys = [v * v for v in xs if v > 0]
    return sum(ys)


@case([0.5, 1.5])
def nested_comprehension(xs):
    pairs = [a * b for a in xs for b in xs]
    return sum(pairs)


@case({"a": 0.5, "b": 1.5})
def dict_comprehension(d):
    e = {k: v * 2.0 for k, v in d.items()}
    return e["a"] + e["b"]


@case([0.5, 1.5])
def generator_expression(xs):
    return sum(v * v for v in xs)


@case(0.5, 1.5)
def list_and_dict_displays(x, y):
    lst = [x, y, x * y]
    d = {"x": x, "y": y}
    t = (x, lst)
    return lst[2] + d["x"] * d["y"] + t[1][0]


# ---------------------------------------------------------------- functions

def helper_square(v):
    return v * v


def helper_defaults(v, scale=2.0, *, shift=0.5):
    return v * scale + shift


def helper_varargs(*vs, **kw):
    s = 0.0
    for v in vs:
        s += v
    return s * kw.get("scale", 1.0)


@case(1.5)
def calls_helper(x):
    return helper_square(x) + helper_square(2.0 * x)


@case(1.5)
def calls_with_defaults_and_keywords(x):
    return helper_defaults(x) + helper_defaults(x, 3.0) + helper_defaults(x, shift=x)


@case(1.5, 0.5)
def calls_with_star_args(x, y):
    args = [x, y]
    return helper_varargs(*args) + helper_varargs(x, y, x, scale=y)


@case(1.5)
def nested_function_closure(x):
    w = x * 2.0

    def inner(v):
        return v * w

    return inner(x) + inner(1.0)


@case(1.5)
def lambda_closure(x):
    f = lambda v: v * x  # noqa: E731
    return f(2.0) + f(x)


def factorial_like(x, n):
    if n == 0:
        return 1.0
    return x * factorial_like(x, n - 1)


@case(1.1)
def recursion(x):
    return factorial_like(x, 4)


def is_even_power(x, n):
    return 1.0 if n == 0 else is_odd_power(x, n - 1) * x


def is_odd_power(x, n):
    return 1.0 if n == 0 else is_even_power(x, n - 1) * x


@case(1.2)
def mutual_recursion(x):
    return is_even_power(x, 5)


@case(1.5)
def assert_and_raise_forward_only(x):
    assert x > 0, "positive"
    if x < -100:
        raise ValueError(f"too small: {x}")
    return x * 2.0


@case(1.5)
def pass_and_del(x):
    y = x * 2.0
    z = y
    del y
    pass
    return z


@case(2.0)
def global_reads(x):
    return x * math.pi + np.e


@case(randpos(3))
def fstring_is_nondifferentiable(x):
    label = f"{x[0]:.2f}"
    return np.sum(np.log(x)) + len(label) * 0.0


@case(randpos(3))
def with_context_manager(x):
    with np.errstate(divide="ignore") as state:
        y = np.log(x) * 2.0
    del state
    return np.sum(y)


@case(3.0)
def while_else_runs(x):
    while x > 1.0:
        x = x / 2.0
    else:
        x = x * 3.0
    return x


@case([0.5, 2.5, 1.0])
def for_else_skipped_by_break(xs):
    s = 0.0
    for v in xs:
        if v > 2.0:
            s = s + v
            break
        s = s + v * v
    else:
        s = s * 10.0
    return s


@case([0.5, 1.5, 1.0])
def for_else_runs(xs):
    s = 0.0
    for v in xs:
        if v > 2.0:
            break
        s = s + v * v
    else:
        s = s * 10.0
    return s


@case(0.9)
def nonlocal_accumulator(x):
    total = 0.0

    def add(v):
        nonlocal total
        total += v * x

    for k in range(4):
        add(k + x)
    return total


@case(1.1)
def nonlocal_rebinding_twice(x):
    acc = x

    def bump():
        nonlocal acc
        acc = acc * acc

    bump()
    bump()
    return acc


@case(0.7, 1.3)
def nonlocal_parameter_and_array(x, y):
    w = np.array([x, y])

    def scale():
        nonlocal x, w
        x = x * 2.0 + 1.0
        w = w * x

    scale()
    return x * np.sum(w)
