"""Everyday Python constructs, one function per construct (issue 13's construct suite): each takes
a float and returns a float. ``tests/test_constructs.py`` differentiates every one in reverse,
forward and second order against central differences, or checks the clear error of the ones
still refused (``REFUSED`` there)."""
# ruff: noqa
import collections
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
