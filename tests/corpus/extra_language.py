"""Derived-rule corpus, extended: Python language constructs as a scientist would write them
(loop forms, branches, unpacking, comprehensions, lambdas, closures, recursion, argument passing)."""
import math

import numpy as np

from yuebing.testing.cases import randn, randpos, randu
from . import corpus_registry

CORPUS, case = corpus_registry()


# ---------------------------------------------------------------- loop forms

@case(randn(10))
def range_start_stop_step(x):
    s = 0.0
    for i in range(1, len(x) - 1, 3):
        s += x[i] * x[i + 1]
    return s


@case(randn(8))
def range_negative_step(x):
    # backward recurrence, as in back-substitution
    acc = 0.0
    for i in range(len(x) - 1, -1, -2):
        acc = 0.5 * acc + x[i]
    return acc * acc


@case([0.3, -1.2, 0.8, 2.1])
def enumerate_with_start(xs):
    s = 0.0
    for k, v in enumerate(xs, start=1):
        s += v ** 2 / k
    return s


@case(randn(5), randn(5), randpos(5))
def zip_of_three(mu, x, sigma):
    nll = 0.0
    for m, v, sd in zip(mu, x, sigma):
        z = (v - m) / sd
        nll += 0.5 * z * z + math.log(sd)
    return nll


@case(np.array([[0.5, 1.2, -0.3, 2.5], [0.1, -0.7, 1.4, 0.9], [3.1, 0.2, 0.4, 0.6]]))
def nested_break_continue_both_levels(a):
    # skip row 1 entirely, stop each row at the first entry above 2, stop everything at a row starting above 3
    s = 0.0
    for i in range(a.shape[0]):
        if i == 1:
            continue
        if a[i, 0] > 3.0:
            break
        for j in range(a.shape[1]):
            if a[i, j] < 0.0:
                continue
            if a[i, j] > 2.0:
                break
            s += a[i, j] * a[i, j]
    return s


@case(np.array([[0.5, 1.2, -0.3], [0.1, 2.7, 1.4], [3.1, 0.2, 0.4]]))
def return_from_nested_loops(a):
    for i in range(3):
        for j in range(3):
            if a[i, j] > 2.0:
                return a[i, j] * a[j, i] + i
    return 0.0


@case(2.0, 0.3)
def while_complex_condition(x, tol):
    # damped fixed-point iteration with an iteration cap and a tolerance test
    y = x
    it = 0
    err = 1.0
    while it < 30 and (err > 1e-3 or it < 3) and not (y != y):
        y_new = 0.5 * (y + math.cos(y)) + 0.1 * tol
        err = abs(y_new - y)
        y = y_new
        it += 1
    return y * x


@case(randn(6))
def while_over_index_with_else(x):
    i = 0
    s = 0.0
    while i < len(x):
        s += math.tanh(x[i])
        i += 1
    else:
        s = s * 2.0
    for v in x:
        if v > 100.0:
            break
    else:
        s += x[0]
    return s


@case(randn(3, 4))
def loop_over_transposed_rows(a):
    s = 0.0
    for col in a.T:
        s += np.dot(col, col) * col[0]
    return s


# ---------------------------------------------------------------- expressions

@case(0.7, -0.4)
def nested_conditional_expressions(x, y):
    a = x * y if x > 0 else (x + y if y > 0 else x - y)
    b = (y * y if y < -1.0 else y * 3.0) if x < 1.0 else x
    return a + b * (x if a < b else y)


@case(0.6, 1.7, None)
def and_or_return_values(x, y, scale):
    # `or`/`and` return one of their operands; falsy operands here are None and [] (never a float
    # 0.0, which finite differences would perturb into a truthy value)
    a = scale or y            # None -> y
    b = x and y               # x truthy -> y
    c = (scale and x) or x    # None -> or -> x
    d = x if (x and y > 1) else y
    e = [] or [x, y]
    return a * b + c * d + e[1] * e[0]


@case([0.3, 1.1, -0.5], None)
def or_default_for_none(xs, weights):
    w = weights or [1.0] * len(xs)
    return sum(a * b for a, b in zip(xs, w))


@case(0.2, 0.5, 0.9, 1.4)
def chained_comparisons_in_loop(a, b, c, d):
    vals = [a, b, c, d]
    s = 0.0
    for i in range(1, len(vals) - 1):
        if vals[i - 1] < vals[i] <= vals[i + 1] < 2.0:
            s += vals[i] * vals[i + 1]
        elif 0.0 < vals[i] < 0.3:
            s -= vals[i]
    return s


# ---------------------------------------------------------------- unpacking

def _polar(x, y):
    return math.hypot(x, y), math.atan2(y, x)


def _stats(v):
    return np.mean(v), (np.min(v), np.max(v))


@case(1.2, 0.7)
def unpack_function_return(x, y):
    r, theta = _polar(x, y)
    return r * math.cos(2.0 * theta)


@case(randn(6))
def nested_unpacking(v):
    m, (lo, hi) = _stats(v)
    (a, (b, c)) = (m, (lo * 2.0, hi))
    return a * (c - b)


@case([0.5, 1.5, -0.7, 2.0, 0.1])
def starred_in_loop_and_call(xs):
    head, *tail = xs
    *init, last = tail
    s = head * last
    for first, *rest in [(xs[0], xs[1], xs[2]), (xs[3], xs[4])]:
        s += first * sum(rest)
    return s + max(*init)


@case(randn(3), randn(3))
def swap_and_rotate(a, b):
    x, y, z = a[0], a[1], a[2]
    for _ in range(3):
        x, y, z = y, z, x + 0.1 * b[0]
    return x * y - z * np.sum(b)


# ---------------------------------------------------------------- augmented assignment targets

class _Box:
    def __init__(self, a):
        self.a = a


@case(randn(4), 0.8)
def augmented_subscript_array(x, v):
    y = x.copy()
    for i in range(4):
        y[i] += v * i
        y[i] *= x[i]
    y[1:3] -= v
    return np.sum(y * y)


@case(1.3, 0.4)
def augmented_attribute(x, y):
    box = _Box(x)
    box.a *= 2.0
    box.a += y
    box.a **= 2
    return box.a


@case({"k": 0.5, "m": 1.2}, 0.9)
def augmented_dict_entry(d, x):
    d["k"] += 1.0
    d["k"] *= x
    d["m"] -= d["k"] * x
    return d["k"] + d["m"]


@case([0.5, randn(3)], 1.3)
def augmented_list_entry(lst, x):
    lst[0] -= x
    lst[1] += x          # in place on the array inside the list
    lst[0] *= lst[0]
    return lst[0] + np.sum(lst[1] ** 2)


# ---------------------------------------------------------------- comprehensions

@case(randn(3, 4))
def nested_comprehension_with_condition(a):
    vals = [a[i, j] * a[i, j] for i in range(a.shape[0]) for j in range(a.shape[1]) if (i + j) % 2 == 0]
    grid = [[a[i, j] + a[j - 1, i] for j in range(1, 3)] for i in range(3)]
    return sum(vals) + sum(sum(r) for r in grid)


@case({"a": 0.5, "b": -1.5, "c": 2.0})
def dict_and_set_comprehension(d):
    sq = {k: v * v for k, v in d.items() if k != "b"}
    keys = {k.upper() for k in d}
    s = 0.0
    for k in sorted(keys):
        s += sq.get(k.lower(), 0.0)
    return s + d["b"] * len(keys)


@case([0.3, 1.5, -0.8, 2.2])
def generators_in_reductions(xs):
    hi = max(v * v for v in xs)
    lo = min(abs(v - 1.0) for v in xs)
    tot = sum(math.exp(-v) for v in xs if v > 0)
    return hi + lo * tot


@case(randu(4, low=-1.0, high=1.0))
def comprehension_over_enumerate_zip(x):
    w = [0.5, 1.0, 1.5, 2.0]
    terms = [(k + 1) * a * b for k, (a, b) in enumerate(zip(x, w))]
    return sum(terms)


# ---------------------------------------------------------------- lambdas and closures

@case([1.45, -0.2, 0.7, 2.4])
def sorted_with_lambda_key(xs):
    order = sorted(xs, key=lambda v: (v - 1.0) ** 2)
    w = 1.0
    s = 0.0
    for v in order:
        s += w * v
        w *= 0.5
    return s


@case([0.3, 1.1, -0.6])
def map_with_lambda(xs):
    ys = list(map(lambda v: v * math.sin(v), xs))
    zs = list(map(lambda a, b: a * b, xs, ys))
    return sum(zs) + sum(filter(lambda v: v > 0, ys))


def _integrate(f, a, b, n=8):
    h = (b - a) / n
    s = 0.5 * (f(a) + f(b))
    for i in range(1, n):
        s += f(a + i * h)
    return s * h


@case(0.8, 1.6)
def lambda_passed_as_argument(k, b):
    return _integrate(lambda t: math.exp(-k * t * t), 0.0, b)


@case(1.1)
def closures_three_deep(x):
    a = x * 2.0

    def outer(u):
        b = u + a

        def middle(v):
            c = v * b

            def inner(w):
                return w * c + a

            return inner(v + x)

        return middle(u * x)

    return outer(x)


def _make_affine(w, b):
    def apply(v):
        return w * v + b
    return apply


def _compose(f, g):
    return lambda v: f(g(v))


@case(0.7, -0.3)
def returned_closures_called_later(w, b):
    f = _make_affine(w, b)
    g = _make_affine(b, w)
    h = _compose(f, g)
    fs = [f, g, h]
    return sum(fn(1.5) for fn in fs) * f(w)


@case(randn(5))
def closure_over_array(x):
    c = x * 0.5

    def objective(s):
        return np.sum((c - s) ** 2)

    return objective(1.0) + objective(x[0])



# ---------------------------------------------------------------- recursion

def _tree_sum(node, depth=1):
    if isinstance(node, list):
        return sum(_tree_sum(child, depth + 1) for child in node)
    return node * node / depth


@case([0.5, [1.2, [-0.3, 0.8]], [[2.0], 0.1]])
def tree_recursion_nested_lists(tree):
    return _tree_sum(tree)


def _tree_scale(node, k):
    for i in range(len(node)):
        if isinstance(node[i], list):
            _tree_scale(node[i], k * 0.5)
        else:
            node[i] = node[i] * k


@case([0.5, [1.2, [-0.3, 0.8]], 0.4], 1.5)
def tree_recursion_mutates(tree, k):
    _tree_scale(tree, k)
    return _tree_sum(tree)


def _even_part(xs, i):
    if i >= len(xs):
        return 0.0
    return xs[i] * xs[i] + _odd_part(xs, i + 1)


def _odd_part(xs, i):
    if i >= len(xs):
        return 0.0
    return math.sin(xs[i]) + _even_part(xs, i + 1)


@case(randn(7))
def mutual_recursion_over_array(x):
    return _even_part(x, 0)


def _binary_split_sum(x, lo, hi):
    if hi - lo == 1:
        return x[lo] ** 3
    mid = (lo + hi) // 2
    return _binary_split_sum(x, lo, mid) * 0.9 + _binary_split_sum(x, mid, hi)


@case(randn(7))
def divide_and_conquer(x):
    return _binary_split_sum(x, 0, len(x))


# ---------------------------------------------------------------- argument passing

def _layer3(x, *args, scale=1.0, **kw):
    s = x * scale
    for a in args:
        s = s + a
    return s * kw.get("gain", 1.0) + kw.get("bias", 0.0)


def _layer2(*args, **kwargs):
    return _layer3(*args, **kwargs)


def _layer1(x, *rest, **opts):
    opts["scale"] = opts.get("scale", 1.0) * 2.0
    return _layer2(x, *rest, **opts)


@case(0.7, 1.3, -0.4)
def args_kwargs_forwarded(x, y, z):
    a = _layer1(x, y, z, gain=y, bias=z)
    b = _layer1(x, **{"gain": x})
    args = (y, z)
    kw = {"scale": z, "gain": 2.0}
    return a * b + _layer1(x, *args, **kw)


_DEFAULT_W = np.array([0.5, -1.0, 2.0])


def _weighted(x, w=_DEFAULT_W, offset=np.zeros(3)):
    return np.sum((x - offset) * w)


@case(randn(3))
def default_array_arguments(x):
    a = _weighted(x)
    b = _weighted(x, offset=x * 0.5)
    c = _weighted(x * x, np.ones(3))
    return a * b + c


def _robust_loss(r, *, delta, reduce=True):
    out = [delta * delta * (math.sqrt(1.0 + (v / delta) ** 2) - 1.0) for v in r]
    return sum(out) if reduce else out


@case([0.3, -1.2, 2.5], 0.8)
def keyword_only_arguments(r, delta):
    total = _robust_loss(r, delta=delta)
    parts = _robust_loss(r, reduce=False, delta=1.0)
    return total + parts[1] * parts[2]


@case(0.6, 1.4)
def builtin_min_max_abs_round(x, y):
    a = max(x, y, 0.9)
    b = min(x * y, 0.1 + x)
    c = abs(x - y) + round(3.7) * x
    return a * b + c + pow(x, 3) + divmod(7, 2)[0] * y


@case(1.5, 0.7)
def builtins_called_by_keyword(x, y):
    # keywords bound to a rule's parameters, in any order, around a required one
    return pow(x, exp=y) + pow(exp=2.0, base=y) + np.sum(np.sort([x * 2.0, 1.0, x * y]) * np.array([1.0, 2.0, 3.0]))


@case(randn(3))
def closure_capturing_an_int(x):
    n = 3
    f = lambda y: np.sum(y ** n)  # noqa: E731 - an int captured by a function made here
    return f(x) + n * np.sum(x)
