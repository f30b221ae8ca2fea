"""Everyday Python constructs, one function per construct (issue 13's construct suite): each takes
a float and returns a float. ``tests/test_constructs.py`` differentiates every one in reverse,
forward and second order against central differences, or checks the clear error of the ones
still refused (``REFUSED`` there)."""
# ruff: noqa
import collections
import copy
import dataclasses
import functools
import itertools
import logging
import math
import random
import time
import typing
import warnings

import numpy as np

def c_try(x):
    try:
        y = x * 2.0
    except ValueError:
        y = 0.0
    return y * x
def c_try_raise(x):
    try:
        raise ValueError("no")
    except ValueError:
        y = x ** 2
    return y
def c_finally(x):
    try:
        y = x * 3.0
    finally:
        z = 1.0
    return y + z
def _gen(x):
    for i in range(3):
        yield x * i
def c_gen(x):
    return sum(_gen(x))
def c_yield_from(x):
    def g():
        yield from _gen(x)
    return sum(g())
def c_iter_next(x):
    it = iter([x, 2 * x])
    return next(it) + next(it)
def c_accumulate(x):
    return sum(itertools.accumulate([x, x, x]))
def c_reduce(x):
    return functools.reduce(lambda a, b: a * b, [x, x, 2.0])
def c_walrus(x):
    if (y := x * 2) > 0:
        return y * y
    return y
def c_match(x):
    match 2:
        case 1: return x
        case 2: return x * x
def c_del(x):
    y = x * 2
    z = y
    del y
    return z * x
G = 0.0
def c_global(x):
    global G
    G = x * 2
    return G * x
def deco(f):
    @functools.wraps(f)
    def w(*a, **k):
        return f(*a, **k)
    return w
@deco
def _inner(x): return x * x
def c_wraps(x): return _inner(x)
@functools.lru_cache(maxsize=None)
def _cached(k): return k * 2
def c_lru(x): return x * _cached(3)
def c_statistics(x):
    import statistics
    xs = [x, x * x, 0.5]
    return statistics.mean(xs) * statistics.stdev(xs) + statistics.fmean(xs)
def c_lru_local(x):
    @functools.lru_cache(maxsize=None)
    def scaled(k): return k * x
    return scaled(2.0) * scaled(3.0) + scaled(2.0)
def c_print(x):
    print(end="")
    return x * x
def c_format(x):
    s = "%.2f" % x
    return x * x
def c_time(x):
    t = time.perf_counter()
    return x * x
def c_logging(x):
    logging.debug("x=%s", x)
    return x * x
def c_warn(x):
    warnings.warn("careful") if False else None
    return x * x
def c_random(x):
    r = random.random()
    return x * x + 0 * r
def c_namedtuple(x):
    P = collections.namedtuple("P", "a b")
    p = P(x, 2.0)
    return p.a * p.b
def c_partial(x):
    f = functools.partial(pow, x)
    return f(2)
def c_sum_set(x):
    return sum({1.0, 2.0}) * x
def c_dict_values(x):
    d = {"a": x, "b": 2 * x}
    return sum(d.values())
def c_enum_gen(x):
    return sum(i * v for i, v in enumerate(v * x for v in [1.0, 2.0]))
def c_map_lambda(x):
    return sum(map(lambda v: v * x, [1.0, 2.0]))
def c_filter(x):
    return sum(filter(lambda v: v > 0, [x, -1.0]))
def c_star_call(x):
    def f(a, b): return a * b
    return f(*[x, x])
def c_kwonly(x):
    def f(a, *, b): return a * b
    return f(x, b=x)
def c_product(x):
    return sum(a * b for a, b in itertools.product([x, 1.0], [x, 2.0]))
def c_chain(x):
    return sum(itertools.chain([x], [x * 2]))
def c_zip_longest(x):
    return sum(a * (b or 1.0) for a, b in itertools.zip_longest([x, x], [x]))
def c_pairwise(x):
    return sum(a * b for a, b in itertools.pairwise([x, 2.0, x]))
def c_starmap(x):
    return sum(itertools.starmap(lambda a, b: a * b, [(x, 2.0), (x, x)]))
def c_islice(x):
    return sum(itertools.islice([x, 2 * x, 3 * x], 2))
def c_combinations(x):
    return sum(a * b for a, b in itertools.combinations([x, 2.0, x], 2))
class Slotted:
    __slots__ = ("a",)
    def __init__(self, a): self.a = a
def c_slots(x):
    return Slotted(x).a * x
def c_class_inside(x):
    class P:
        def __init__(self, v): self.v = v
    return P(x).v * x
def c_recursion(x, n=50):
    return x if n == 0 else c_recursion(x, n - 1) * 1.0
def c_staticmethod(x):
    return _S.f(x)
class _S:
    @staticmethod
    def f(v): return v * v
def c_classmethod(x):
    return _S2.f(x)
class _S2:
    k = 3.0
    @classmethod
    def f(cls, v): return v * cls.k
def c_property(x):
    class P:
        def __init__(self, v): self._v = v
        @property
        def v(self): return self._v * 2
    return P(x).v
def c_with(x):
    with np.errstate(all="ignore"):
        return x * x
def c_assert(x):
    assert x > 0, "positive"
    return x * x
def c_fstring(x):
    s = f"{x:.3f}"
    return x * x
def c_lambda_default(x):
    f = lambda v, k=2: v * k
    return f(x)
def c_nested_comp(x):
    return sum(sum(a * b for b in [x, 1.0]) for a in [x, 2.0])
def c_dict_comp(x):
    d = {k: k * x for k in [1.0, 2.0]}
    return d[1.0] + d[2.0]
def c_set_add(x):
    s = set(); s.add(1)
    return x * len(s)
def c_while_else(x):
    i = 0
    while i < 3:
        i += 1
    else:
        x = x * 2
    return x
def c_for_else(x):
    for i in range(2):
        x = x * 1.5
    else:
        x = x + 1
    return x
def c_tuple_unpack_star(x):
    a, *b = [x, 2.0, 3.0]
    return a * sum(b)
def c_chained_cmp(x):
    return x * x if 0 < x < 10 else x
def c_ternary(x):
    return x * 2 if x > 0 else -x
def c_augmented_list(x):
    l = [x]; l += [x]
    return sum(l)
def c_math(x):
    return math.fsum([x, x]) + math.prod([x, 2.0])
def c_complex(x):
    z = complex(x, 1.0)
    return abs(z)
def c_sorted_key(x):
    return sorted([x, 2 * x], key=lambda v: -v)[0]
def c_max_key(x):
    return max([x, 2 * x], key=abs)
def c_generator_send(x):
    def g():
        v = yield x
        yield v * 2
    it = g(); a = next(it); b = it.send(x)
    return a + b
def c_exception_escapes(x):
    return x


def _evens_until(x, limit):
    k = 0
    while True:
        if k > limit:
            return
        if k % 2 == 0:
            yield x * k
        k += 1


def c_gen_early_return(x):
    return sum(_evens_until(x, 5))


def c_gen_for_loop(x):
    total = 0.0
    for v in _gen(x):
        total = total + v * v
    return total


def c_gen_list_zip(x):
    return sum(a * b for a, b in zip(_gen(x), list(_gen(2.0 * x))))


def c_gen_enumerate(x):
    return sum(i * v for i, v in enumerate(_gen(x)))


def c_gen_nested_def(x):
    def squares(n):
        for i in range(n):
            yield (x + i) ** 2
    return sum(squares(3))


def c_walrus_while(x):
    n = 0
    while (y := x * n) < 2.0:
        n += 1
    return y * x


def c_walrus_comprehension(x):
    values = [w for v in [1.0, 2.0] if (w := v * x) > 0.5]
    return sum(values)


_Pair = collections.namedtuple("_Pair", "a b", defaults=(1.5,))


class _Point(typing.NamedTuple):
    x: float
    y: float = 2.0


def c_namedtuple_module_level(x):
    p = _Pair(x)
    q = _Point(y=x * x, x=3.0)
    return p.a * p.b + q.x * q.y + p[0] * q[1]


def c_itertools_more(x):
    perms = sum(a * b for a, b in itertools.permutations([x, 2.0, 0.5], 2))
    sliced = sum(itertools.islice(itertools.chain([x], [2 * x, 3 * x]), 1, None))
    return perms + sliced + sum(itertools.repeat(x, 3))


def c_next_default(x):
    it = iter([x * 2.0])
    first = next(it)
    return first * next(it, x)


def c_dict_views_consumed(x):
    d = {"a": x, "b": 2.0 * x, "c": np.array([x, 1.0])}
    values = list(d.values())
    return values[0] * values[1] + float(np.sum(values[2])) + sum(v * 2.0 for k, v in list(d.items())[:2])


def c_max_of_dict_values(x):
    return max({"a": x, "b": x * x}.values())


class _Shape:
    __match_args__ = ("w", "h")

    def __init__(self, w, h):
        self.w, self.h = w, h


def c_match_patterns(x):
    total = 0.0
    for item in [1, (x, 2.0), {"k": x}, _Shape(x, 3.0), None, [x, x, x], "other"]:
        match item:
            case 1 | 2:
                total = total + x
            case (a, b) if a < b:
                total = total + a * b
            case {"k": v}:
                total = total + v * v
            case _Shape(w, h=height):
                total = total + w * height
            case None:
                total = total + 0.5 * x
            case [p, q, r]:
                total = total + p * q * r
            case _:
                total = total - x
    return total


# ---------------------------------------------------------------- more everyday idioms


def c_augassign_ops(x):
    y = x
    y += 1.0
    y *= x
    y -= 0.5
    y /= 2.0
    y **= 2
    return y


def c_list_methods(x):
    values = [x, 2.0]
    values.append(x * x)
    values.insert(0, 3.0 * x)
    values.extend([x, x])
    last = values.pop()
    values.reverse()
    return sum(values) * last + values.index(2.0)


def c_list_sort_key(x):
    values = [x * 3.0, x, 2.0]
    values.sort(key=lambda v: -v)
    return values[0] - values[-1]


def c_slicing(x):
    values = [x, 2 * x, 3 * x, 4 * x]
    return sum(values[1:3]) + sum(values[::-1][:2]) + values[-1]


def c_dict_methods(x):
    d = {"a": x}
    d["b"] = x * x
    d.update({"c": 2.0 * x})
    d.setdefault("d", 1.0)
    return d.get("b", 0.0) + d.pop("c") + sum(d[k] for k in sorted(d))


def c_string_keys(x):
    params = {f"w{i}": x * i for i in range(3)}
    return sum(params[key] for key in params if key.startswith("w"))


def c_tuple_return(x):
    def split(v):
        return v * 2.0, v * v
    a, b = split(x)
    return a + b


def c_keyword_args(x):
    def scaled(v, *, factor=2.0, offset=0.0):
        return v * factor + offset
    return scaled(x, factor=x) + scaled(x, offset=1.0)


def c_default_args(x):
    def power(v, n=3):
        return v ** n
    return power(x) + power(x, 2)


def c_star_kwargs(x):
    def combine(*values, **weights):
        return sum(values) * weights.get("w", 1.0)
    return combine(x, x * 2.0, w=3.0)


def c_recursion_fib(x):
    def f(n, v):
        return v if n <= 1 else f(n - 1, v) + f(n - 2, v) * 0.5
    return f(5, x)


def c_closure_counter(x):
    count = 0.0

    def add(v):
        nonlocal count
        count += v
    add(x)
    add(x * x)
    return count


def c_class_with_methods(x):
    class Model:
        def __init__(self, w):
            self.w = w
            self.history = []

        def step(self, v):
            self.history.append(v)
            self.w = self.w * v
            return self.w
    m = Model(x)
    m.step(2.0)
    m.step(x)
    return m.w + sum(m.history)


def c_inheritance_super(x):
    class Base:
        def value(self, v):
            return v * 2.0

    class Child(Base):
        def value(self, v):
            return super().value(v) + v * v
    return Child().value(x)


def c_dataclass(x):
    @dataclasses.dataclass
    class Params:
        a: float
        b: float = 1.0
    p = Params(x)
    p.b = x * 3.0
    return p.a * p.b


def c_dunder_operators(x):
    class Vec:
        def __init__(self, a, b):
            self.a, self.b = a, b

        def __add__(self, other):
            return Vec(self.a + other.a, self.b + other.b)

        def __mul__(self, k):
            return Vec(self.a * k, self.b * k)

        def norm2(self):
            return self.a * self.a + self.b * self.b
    v = Vec(x, 1.0) + Vec(2.0, x) * x
    return v.norm2()


def c_callable_object(x):
    class Scale:
        def __init__(self, k):
            self.k = k

        def __call__(self, v):
            return v * self.k
    return sum(map(Scale(x), [1.0, 2.0]))


def c_numpy_inplace(x):
    a = np.zeros(3)
    a[0] = x
    a[1:] += x * 2.0
    a *= x
    return float(a.sum())


def c_numpy_list_in_out(x):
    return float(np.sum(np.sin([x, 2 * x])) + np.dot([x, 1.0], [2.0, x]))


def c_numpy_where_mask(x):
    v = np.array([x - 1.0, x, x + 1.0])
    return float(np.sum(np.where(v > 0, np.sqrt(np.abs(v)), 0.0)))


def c_numpy_scalar_types(x):
    y = np.float64(x) * 2.0
    z = float(np.float32(0.5)) * x
    return float(y + z + np.array(x).item())


def c_loop_break_continue(x):
    total = 0.0
    for i in range(10):
        if i % 2 == 0:
            continue
        if i > 6:
            break
        total = total + x * i
    return total


def c_while_convergence(x):
    v, steps = x, 0
    while abs(v) > 1e-3 and steps < 50:
        v = v * 0.5
        steps += 1
    return v * x


def c_nested_loops_matrix(x):
    m = [[x * i + j for j in range(3)] for i in range(3)]
    return sum(m[i][j] * m[j][i] for i in range(3) for j in range(3))


def c_enumerate_zip_reversed(x):
    a = [x, 2.0, 3.0]
    b = [1.0, x, x * x]
    return sum(i * u * v for i, (u, v) in enumerate(zip(a, reversed(b))))


def c_any_all_min_max(x):
    values = [x, x * x, 0.5]
    bonus = 1.0 if any(v > 0.6 for v in values) and all(v > 0 for v in values) else 0.0
    return max(values) + min(values) + bonus * x


def c_math_functions(x):
    return math.sin(x) * math.exp(x) + math.log1p(x) + math.hypot(x, 2.0) + math.atan2(x, 1.0)


def c_abs_round(x):
    return abs(x - 1.0) * x + round(x, 1)


def c_conditional_assignment_chain(x):
    y = x
    if y > 1.0:
        y = y * 2.0
    elif y > 0.5:
        y = y * 3.0
    else:
        y = -y
    return y * x


def c_early_return_in_loop(x):
    for i in range(5):
        if x * i > 1.5:
            return x * i
    return x


def c_list_of_arrays(x):
    arrays = [np.ones(2) * x, np.arange(2.0) + x]
    stacked = np.stack(arrays)
    return float(np.sum(stacked ** 2))


def c_object_array_attr(x):
    class Layer:
        def __init__(self, w):
            self.w = np.array([w, 2.0 * w])

        def __call__(self, v):
            return np.tanh(self.w * v)
    layer = Layer(x)
    return float(np.sum(layer(np.array([1.0, 0.5]))))


def c_lambda_in_dict(x):
    ops = {"sq": lambda v: v * v, "dbl": lambda v: 2.0 * v}
    return ops["sq"](x) + ops["dbl"](x)


def c_sorted_with_key_tuple(x):
    pairs = [(x, 1.0), (0.1, 2.0), (x * x, 3.0)]
    return sum(a * b for a, b in sorted(pairs))


def c_string_formatting(x):
    label = "value: {:.3f}".format(x) + f" ({x:.1f})" + str(round(x, 2))
    return x * len(label)


# ---------------------------------------------------------------- exceptions (issue 13 item 2)

def c_try_key_error_default(x):
    table = {"a": x}
    try:
        v = table["b"]
    except KeyError:
        v = x * x
    return v * 3.0


def c_try_else_finally(x):
    y = x * 2.0
    try:
        z = y * y
        w = 1.0 / (z - z) if z > 0.0 else z
    except ZeroDivisionError as error:
        w = np.sin(y) + len(str(error)) * 0.0
    else:
        w = w + 1.0
    finally:
        y = y + x
    return w * y


def c_try_in_loop_continue(x):
    total = 0.0
    for i in range(4):
        try:
            if i == 2:
                raise ValueError("skip")
            total += x ** i
        except ValueError:
            continue
    return total


def c_try_return_inside(x):
    try:
        if x > 0.5:
            return x * 3.0
        y = x * 2.0
    finally:
        x = x + 1.0
    return y


def c_try_linalg_fallback(x):
    a = np.array([[x, 1.0], [1.0, -x]])
    try:
        low = np.linalg.cholesky(a)
        value = low[0, 0]
    except np.linalg.LinAlgError:
        value = np.linalg.det(a) * x
    return value


def c_try_nested(x):
    try:
        try:
            raise KeyError("inner")
        except KeyError:
            raise ValueError("outer")
    except ValueError:
        y = x ** 3
    return y


def c_try_handler_raises_after_work(x):
    try:
        try:
            raise KeyError("inner")
        except KeyError:
            y = x * 5.0
            raise ValueError("outer")
    except ValueError:
        y = x ** 3
    return y


def c_try_mutation_before_raise(x):
    values = [x]
    try:
        values.append(x * x)
        values.append(values[5])
    except IndexError:
        values.append(np.exp(x))
    return sum(values)


def c_try_exception_tuple(x):
    out = x
    for k in (0.0, 1.0):
        try:
            out = out / k
        except (ZeroDivisionError, FloatingPointError):
            out = out * 2.0
    return out


def _checked_sqrt(v):
    if v < 0.0:
        raise ValueError("negative")
    return v ** 0.5


def c_try_raised_in_callee(x):
    try:
        r = _checked_sqrt(-x)
    except ValueError:
        r = _checked_sqrt(x)
    return r * x


def c_try_bare_except(x):
    try:
        y = [x][3]
    except:  # noqa: E722 - the construct under test
        y = x * 4.0
    return y


def c_try_reraise_caught_outside(x):
    def inner(v):
        try:
            raise RuntimeError("again")
        except RuntimeError:
            raise
    try:
        inner(x)
        y = 0.0
    except RuntimeError:
        y = np.cos(x)
    return y * x


def c_try_attribute_error_fallback(x):
    point = {"x": x}
    try:
        value = point.x
    except AttributeError:
        value = point["x"] * 2.0
    return value * x


# ---------------------------------------------------------------- global writes (issue 13 item 4)

CALL_COUNT = 0
LAST_MODE = "none"


def c_global_counter(x):
    global CALL_COUNT, LAST_MODE
    CALL_COUNT += 1
    LAST_MODE = "fast" if x > 0.5 else "slow"
    scale = 2.0 if LAST_MODE == "fast" else 3.0
    return x * x * scale


# ---------------------------------------------------------------- sets of labels (issue 13 item 3)

def c_set_of_ints(x):
    seen = set()
    for k in (3, 1, 3, 2):
        seen.add(k)
    seen |= {7}
    seen.discard(1)
    return x * sum(seen) + x ** 2 * len(frozenset([1, 1, 2])) + (x if 7 in seen else 0.0)


# ---------------------------------------------------------------- iteration protocols and calls

class _Countdown:
    def __init__(self, start, step):
        self.value, self.step = start, step

    def __iter__(self):
        return self

    def __next__(self):
        if self.value <= 0.0:
            raise StopIteration
        current = self.value
        self.value = self.value - self.step
        return current


def c_iterator_class(x):
    return sum(v * v for v in _Countdown(x + 1.0, 0.75))


class _Bag:
    def __init__(self, items):
        self.items = items

    def __iter__(self):
        return iter(self.items)


def c_iterable_class(x):
    total = 0.0
    for v in _Bag([x, 2.0 * x, x ** 2]):
        total += v
    return total


class _Pairs:
    def __init__(self, values):
        self.values = values

    def __iter__(self):
        for i in range(len(self.values) - 1):
            yield self.values[i], self.values[i + 1]


def c_generator_iter_method(x):
    return sum(a * b for a, b in _Pairs([x, 2.0, x * x]))


def _three(a, b, c):
    return a * b + c


def c_star_generator(x):
    return _three(*(x * k for k in range(1, 4)))


def c_star_mapping_call(x):
    return _three(**{"a": x, "b": 3.0, "c": x * x})


def _keyword_only(a, *, scale=2.0, shift):
    return a * scale + shift


def _positional_only(a, b, /):
    return a * b


def c_keyword_and_positional_only(x):
    return _keyword_only(x, shift=x * x) + _positional_only(x, 3.0)


def _weighted(v, weights=np.array([1.0, 2.0])):
    return float(np.dot(weights, [v, v * v]))


def c_array_default(x):
    return _weighted(x)


def c_enumerate_start_zip_strict(x):
    values = [x, 2.0 * x, 3.0]
    total = 0.0
    for i, (a, b) in enumerate(zip(values, reversed(values)), start=1):
        total += i * a * b
    return total


def c_dict_comprehension_items(x):
    weights = {name: x ** k for k, name in enumerate("abc")}
    return sum(v for k, v in sorted(weights.items()) if k != "b")


def c_nested_list_comprehension(x):
    grid = [[x * i + j for j in range(3)] for i in range(2)]
    return sum(sum(row) for row in grid) * x


def c_any_all_filters(x):
    values = [x, x * x, 0.5]
    big = [v for v in values if v > 0.4]
    return sum(big) if any(v > 0.6 for v in values) and all(v > 0 for v in values) else -x


def c_while_with_break_else(x):
    y, n = x, 0
    while n < 10:
        y = y * 1.1
        n += 1
        if y > 2.0:
            break
    else:
        y = -y
    return y


def c_tuple_swap_and_star_unpack(x):
    a, b = x, 2.0 * x
    a, b = b, a
    first, *rest = [a, b, x * x]
    return first * 3.0 + sum(rest)


def c_string_keys_and_get(x):
    params = {"w": x, "b": 0.5}
    return params.get("w", 0.0) * params.get("missing", 2.0) + params["b"]


def c_dict_update_and_pop(x):
    state = {"a": x}
    state.update(b=2.0 * x)
    value = state.pop("a")
    return value * state["b"]


def c_list_insert_extend_reverse(x):
    values = [x, 3.0]
    values.insert(0, x * x)
    values.extend([1.0, x])
    values.reverse()
    last = values.pop()
    return sum(values) * last


def c_numpy_in_place_slices(x):
    a = np.zeros(4)
    a[1:3] = x
    a[::2] += x * x
    a *= 2.0
    return float(a @ np.arange(4.0))


def c_numpy_boolean_mask(x):
    a = np.array([x, -x, 2.0 * x, 0.5])
    mask = a > 0.0
    a[mask] = a[mask] ** 2
    return float(a.sum())


def c_lambda_sorted_key(x):
    points = [(x, 3.0), (0.2, x * x), (1.5, 1.0)]
    best = min(points, key=lambda p: p[0] * p[1])
    return best[0] + best[1]


def c_nested_function_default_int(x):
    def scale(v, k=3):
        return v * k
    return scale(x) + scale(x, k=2)


def c_conditional_import_math(x):
    import math as m
    return m.sqrt(x) * m.pi


def c_class_attribute_counter(x):
    class Acc:
        total = 0.0

        def add(self, v):
            self.total = self.total + v
            return self

    acc = Acc()
    acc.add(x).add(x * x)
    return acc.total


def c_property_setter(x):
    class Temp:
        def __init__(self):
            self._c = 0.0

        @property
        def f(self):
            return self._c * 9.0 / 5.0 + 32.0

        @f.setter
        def f(self, value):
            self._c = (value - 32.0) * 5.0 / 9.0

    t = Temp()
    t.f = x * 100.0
    return t._c


def c_frozen_dataclass_fields(x):
    @dataclasses.dataclass(frozen=True)
    class Point:
        a: float
        b: float = 1.0

    p = Point(x, b=x * x)
    q = dataclasses.replace(p, a=2.0 * x)
    return p.a * q.b + q.a


def c_reduce_with_lambda_and_initial(x):
    return functools.reduce(lambda acc, v: acc * v + 1.0, [x, 2.0, x * x], 0.5)


def c_itertools_product_chain(x):
    pairs = itertools.product([x, 1.0], [2.0, x])
    return sum(a * b for a, b in pairs) + sum(itertools.chain([x], (x * x,)))


def c_chained_comparison_clip(x):
    low, high = 0.2, 1.5
    y = x * 3.0
    return y if low < y < high else (low if y <= low else high) * x


class _Money:
    def __init__(self, amount):
        self.amount = amount

    def __add__(self, other):
        return _Money(self.amount + (other.amount if isinstance(other, _Money) else other))

    def __radd__(self, other):
        return self.__add__(other)


def c_sum_of_user_objects(x):
    return sum([_Money(x), _Money(x * x), _Money(2.0)]).amount


def _labelled(*tags):
    def wrap(f, **options):
        def inner(a):
            return f(a, **options) * len(tags)
        inner.__qualname__ = f"{f.__name__}({list(tags)}, {len(options):d})"
        return inner
    return wrap


def c_decorator_sets_qualname_fstring_of_captured(x):
    return _labelled("a", "b")(np.sin)(x)


@dataclasses.dataclass
class _Scaled:
    a: float
    b: float = 1.0

    def __post_init__(self):
        self.b = self.a * self.a + self.b


def c_dataclass_post_init(x):
    p = _Scaled(x, 2.0)
    return p.a * p.b


@dataclasses.dataclass(frozen=True)
class _FrozenScaled:
    a: float
    b: float = 0.0

    def __post_init__(self):
        object.__setattr__(self, "b", self.a * 3.0 + self.b)


def c_frozen_dataclass_post_init(x):
    p = _FrozenScaled(x, np.sin(x))
    return p.a * p.b


class _Namespace:
    def __init__(self, **values):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._values[name] = value


def c_getattr_setattr_override(x):
    ns = _Namespace(a=x)
    ns.b = ns.a * x
    return ns.b * ns.a + getattr(ns, "missing", 1.0)


def c_getattribute_override(x):
    class Doubling:
        def __init__(self, v):
            self.v = v

        def __getattribute__(self, name):
            value = object.__getattribute__(self, name)
            return value * 2.0 if name == "v" else value

    return Doubling(x * x).v * x


def _triple(a, b, c):
    return a * b + np.sin(c)


def c_star_array(x):
    return _triple(*np.array([x, 2.0 * x, x * x]))


class _SlotBase:
    __slots__ = ("a",)

    def __init__(self, a):
        self.a = a

    def value(self, v):
        return self.a * v


class _SlotMid(_SlotBase):
    __slots__ = ("b",)

    def __init__(self, a):
        super().__init__(a * 2.0)
        self.b = a

    def value(self, v):
        return super().value(v) + self.b * v


class _SlotLeaf(_SlotMid):
    __slots__ = ()

    def value(self, v):
        return super().value(v) * v


def c_slots_super_chain(x):
    return _SlotLeaf(x).value(x)


def c_match_star_rest(x):
    total = 0.0
    match [x, 2.0 * x, x * x, 3.0]:
        case [first, *middle, last]:
            total += first * sum(middle) * last
    match {"a": x, "b": np.sin(x), "c": 2.0}:
        case {"a": a, **others}:
            total += a * others["b"] + len(others)
    return total


def c_except_star(x):
    y = x * x
    try:
        raise ExceptionGroup("two", [ValueError(1), KeyError("k")])
    except* ValueError as group:
        y = y * np.sin(x) + len(group.exceptions)
    except* KeyError:
        y = y + 2.0 * x
    return y


import asyncio  # (here, to keep the async construct in one place)


async def _async_scaled(v):
    await asyncio.sleep(0)
    return np.exp(v) * v


def c_async_gather(x):
    async def main(v):
        a, b = await asyncio.gather(_async_scaled(v), _async_scaled(2.0 * v))
        return a * b + await _async_scaled(v * v)

    return asyncio.run(main(x))


def c_local_class_reading_the_function(x):
    a = 2.0 * x

    class Model:
        scale = a * 3

        def __init__(self, w):
            self.w = w

        def __call__(self, t):
            return self.w * t * a + self.scale

        @property
        def twice(self):
            return 2 * a * self.w
    m = Model(x)
    return m(x) + m.twice


def c_local_class_per_loop_iteration(x):
    made = []
    a = x
    for k in range(3):
        a = a * x + k

        class Level:
            level = a

            def read(self):
                return a * self.level
        made.append(Level())
    return sum(m.read() for m in made)


def c_local_dataclass_defaults(x):
    a = np.sin(x)

    @dataclasses.dataclass
    class Params:
        w: float = a
        v: float = dataclasses.field(default=a * x)

        def total(self):
            return self.w * self.v
    return Params().total() + Params(w=x).total()


def c_local_class_nonlocal_method(x):
    total = x

    class Accumulator:
        def add(self, v):
            nonlocal total
            total = total * v + a

    a = x * x  # late binding: the method reads a when called
    acc = Accumulator()
    acc.add(x)
    acc.add(2.0)
    return total


# ---------------------------------------------------------------- collections and copies (issue 13)
def c_defaultdict_float(x):
    d = collections.defaultdict(float)
    for key, v in (("a", x), ("b", x * x), ("a", 2.0)):
        d[key] += v
    return d["a"] * d["b"] + d["missing"]


def c_defaultdict_list(x):
    groups = collections.defaultdict(list)
    for k in range(4):
        groups[k % 2].append(x * k + 1.0)
    return sum(groups[0]) * sum(groups[1])


def c_defaultdict_array(x):
    d = collections.defaultdict(lambda: np.zeros(3))
    d["a"] += x * np.arange(3.0)
    d["b"][0] = x * x
    return float(np.sum(d["a"] ** 2) + np.sum(d["b"]))


def c_ordered_dict(x):
    d = collections.OrderedDict(a=x, b=x * x, c=2.0)
    d.move_to_end("a")
    _, last = d.popitem()
    _, first = d.popitem(last=False)
    return last * first + sum(d.values())


def c_counter_of_floats(x):
    c = collections.Counter()
    c["a"] += x
    c["b"] += x * x
    (_, top), = c.most_common(1)
    return top * c["a"] + c["none"]


def c_chain_map(x):
    m = collections.ChainMap({"a": x}, {"a": 2.0, "b": x * x})
    return m["a"] * m["b"]


def c_deque_window(x):
    window = collections.deque(maxlen=3)
    total = 0.0
    for k in range(6):
        window.append(x * k + 1.0)
        total += np.mean(window)
    window.rotate(1)
    return total * window.popleft() + window[0]


class _Particle:
    def __init__(self, position, velocity):
        self.position, self.velocity = position, velocity


def c_copy_of_object(x):
    p = _Particle(x, np.array([x, 1.0]))
    q = copy.copy(p)
    q.position = x * x
    r = copy.deepcopy(p)
    r.velocity *= x
    return p.position * q.position + float(np.sum(r.velocity * p.velocity))


def c_flat_writes(x):
    a = np.ones((2, 3)) * x
    a.T.flat[1] = x * x  # a transpose: written through its own index
    a.flat[:4] = [np.sin(x), 2.0]  # fewer values than places: NumPy repeats them
    return float(np.sum(a ** 2))


CONSTRUCT_LEVEL = 1.0


def c_globals_item(x):
    globals()["CONSTRUCT_LEVEL"] = x * 3.0
    return CONSTRUCT_LEVEL * x + globals()["CONSTRUCT_LEVEL"]


def c_exception_float_data(x):
    try:
        raise ValueError(x * 2.0, "carried")
    except ValueError as error:
        return error.args[0] * x


class _CarriedAmount(Exception):
    def __init__(self, amount):
        super().__init__("amount")
        self.amount = amount


def c_exception_attribute_from(x):
    try:
        try:
            raise KeyError(x)
        except KeyError as inner:
            raise _CarriedAmount(np.sin(inner.args[0])) from inner
    except _CarriedAmount as error:
        return error.amount * x


def c_stop_value_not_held(x):
    def g():
        yield x
        return x * x

    made = [g()]
    try:
        next(made[0])
        next(made[0])
    except StopIteration as stop:
        return stop.args[0] + stop.value * x
    return 0.0


CONSTRUCT_ALIAS_LEVEL = 1.0


def c_globals_alias_and_update(x):
    g = globals()
    g["CONSTRUCT_ALIAS_LEVEL"] = x * 2.0
    globals().update(CONSTRUCT_ALIAS_LEVEL=g["CONSTRUCT_ALIAS_LEVEL"] * x)
    return CONSTRUCT_ALIAS_LEVEL * x


def c_def_binding_a_global(x):
    global CONSTRUCT_SQUARE

    def CONSTRUCT_SQUARE(v):
        return v * v * x

    return CONSTRUCT_SQUARE(x)


def c_reversed_reads_late(x):
    xs = [x, 2.0 * x, 3.0]
    r = reversed(xs)
    xs[0] = x * x  # CPython's reversed reads it when it gets there
    return sum(v * k for k, v in enumerate(r, 1))


def c_deque_reversed(x):
    d = collections.deque([x, x * x], maxlen=3)
    d.appendleft(2.0)
    return sum(v * k for k, v in enumerate(reversed(d), 1)) + next(iter(d))


def c_set_of_pairs(x):
    s = {(x, "a"), (x * x, "b")}
    s.add((3.0 * x, "c"))
    return sum(v for v, _ in s) * max(s)[0]


def c_defaultdict_capturing(x):
    d = collections.defaultdict(lambda: x * x)
    for k in "aba":
        d[k] += x
    return d["a"] * d["b"]


# ---- iterators kept and consumed later (CPython's lazy iterators: frontend/kept_iterators.py)

def c_map_kept_list_changed(x):
    xs = [x, 2.0 * x, 1.0]
    m = map(math.sin, xs)
    xs[0] = x * x
    return sum(m)


def c_zip_kept_list_grown(x):
    xs, ys = [x, 1.0], [2.0, x * x]
    z = zip(xs, ys)
    xs.append(3.0 * x)
    ys.append(x)
    return sum(a * b for a, b in z)


def c_for_over_map_body_writes(x):
    xs = [x, x * x, 1.0]
    total = 0.0
    for v in map(math.exp, xs):
        total += v
        xs[-1] = v * 0.5
    return total


def c_itertools_chain_kept(x):
    xs, ys = [x, 1.0], [x * x]
    c = itertools.chain(xs, ys)
    ys[0] = math.cos(x)
    return sum(v * v for v in c)


def c_groupby_groups_taken_late(x):
    values = [x, x, 2.0 * x, 2.0 * x, 3.0]
    groups = list(itertools.groupby(values))
    return sum(k * (1 + len(list(g))) for k, g in groups)


def c_groupby_group_partly_taken(x):
    pairs = [(1, x), (1, x * x), (2, math.sin(x))]
    return sum(k * next(g)[1] for k, g in itertools.groupby(pairs, key=lambda p: p[0]))


def c_tuple_attribute_read_then_cleared(x):
    class Slot:
        def __init__(self):
            self.held = None

    s = Slot()
    s.held = (x, x * x)
    item = s.held
    s.held = None
    return item[0] * item[1] * x


class _BackwardsSquares:
    """A class whose ``__reversed__`` is Python code computing new values."""

    def __init__(self, xs):
        self.xs = xs

    def __reversed__(self):
        for v in self.xs[::-1]:
            yield v * v


def c_own_reversed_in_the_for_statement(x):
    total = 0.0
    for v in reversed(_BackwardsSquares([x, 2.0, math.sin(x)])):
        total = total * x + v
    return total


def c_flat_of_a_transpose_held(x):
    a = np.array([[x, 2.0, 3.0], [x * x, 5.0, 6.0]]).T  # not C-contiguous: no view in C order
    elements = a.flat
    a[1, 0] = math.sin(x)  # read live by elements[2]
    elements[4] = x * 3.0  # written into a
    return elements[2] * elements[1] + np.sum(a * a)


CONSTRUCT_VIEW_LEVEL = 1.0


def _construct_view_reader(g, v):
    return g["CONSTRUCT_VIEW_LEVEL"] * v * (1.0 if "CONSTRUCT_VIEW_LEVEL" in g.keys() else 0.0)


def c_globals_passed_on_and_measured(x):
    g = globals()
    g["CONSTRUCT_VIEW_LEVEL"] = x * x
    return _construct_view_reader(g, x) + CONSTRUCT_VIEW_LEVEL * (len(g) > 0)


def c_manager_of_another_module_suppressing(x):
    from tests.managers_elsewhere import Holding  # a class of another module, Python methods

    y = x
    with Holding(x * x) as h:
        y = y * h
        if h > 0.0:  # (a body that always raises has bytecode the bytecode front end does not recover)
            raise ValueError("suppressed by Holding.__exit__")
    return y + x
