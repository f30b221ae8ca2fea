"""Fuzzer seed 1007 (tests/test_fuzz.py SLOW_SEEDS, generator at 1bc0cba), unshrunk: forward mode's value was 1.0
where the plain call gives 124.44, and yb.hvp crashed (UnboundLocalError: '_f64'), already at 380a339. Read
as text by tests/test_fuzz.py (FIXED)."""
# ruff: noqa
import functools
import itertools
import math
import numpy as np
import scipy.special

def h0(v):
    w = np.tanh(v)
    return w * w + v

class Model0:
    def __init__(self, w):
        self.w = w

    def __call__(self, v):
        return np.tanh(self.w * v)

    def scale(self, c):
        return c * np.sum(self.w ** 2)

def kw0(v, c=2.0, *, d=0.5):
    return c * v + d * v * v

def va0(*vs):
    total = 0.0
    for v in vs:
        total = total + np.sin(v)
    return total

class Vec0:
    def __init__(self, a, b):
        self.a = a
        self.b = b

    def __add__(self, other):
        return Vec0(self.a + other.a, self.b + other.b)

    def __mul__(self, c):
        return Vec0(self.a * c, self.b * c)

    def norm2(self):
        return self.a * self.a + self.b * self.b

def logged0(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return func(*args, **kwargs)
    return wrapper

class Overflow0(Exception):
    def __init__(self, amount):
        super().__init__("too large")
        self.amount = amount

def rec0(v, k):
    if k == 0:
        return v
    return rec0(np.sin(v) + 0.1 * v, k - 1)

def f(x, s, xs, W):
    _tp3 = (np.mean((s, h0(s))), np.sqrt(1.0 + x ** 2))
    p1, q2 = _tp3[0], np.sum(_tp3[1])
    vec4 = Vec0(np.sum((np.sin(x + np.e) - [-1, 0, -3]) ** 2), s)
    vec5 = Vec0(min(q2, xs[0]), np.float64(xs[1]))
    _t6 = (sum([vec4, vec5], Vec0(0.0, 0.0))).norm2()
    @logged0
    def scaled7(v):
        return v * s + np.sin(v)
    t8 = scaled7(np.sum(np.diff(np.exp(0.3 * np.tanh(x))) ** 2)) + scaled7(np.sum(np.outer(x, [1.0, 2.0])))
    _state9 = (np.float64(s) * x[1])
    def step10(v):
        nonlocal _state9
        _state9 = 0.5 * _state9 + np.tanh(v)
        return _state9 * v
    t11 = sum(step10(v) for v in x) + _state9
    q2 = q2 * 0.475 + s
    _vec12 = Vec0(xs[1], t11)
    vec13 = Vec0(scipy.special.gammaln(1.5 + p1 ** 2), math.pow(1.5 + (np.float64(x[1]) * t11) ** 2, (abs(xs[2]) ** 1.5)))
    t14 = (_vec12 + vec13 * 0.384).norm2()
    _ys15 = list(np.tanh(np.sin(x + np.e)))
    t17 = 0.0
    for key, group in itertools.groupby(_ys15, key=lambda v: v > -0.121):
        t17 = t17 + sum(group) * (2.0 if key else 0.5)
    return _t6 + sum(xs) + s + t11 + q2 + t17
