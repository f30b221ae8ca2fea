"""Fuzzer seed 50606 (at 4aebbd1's generator), shrunk by statement removal: (1) yb.hvp's value was
248.27 where the plain call gives 16.35, (2) the same body crashed forward mode (UnboundLocalError:
'_f64' in the generated JVP), both already at 380a339. The normal form named its 64th temporary,
a hoisted lambda, ``_f64``: the float blocks' name for ``np.float64`` (ir/generated_names.py
``RESERVED_NAMES``). Checked now against the plain call and differences in every mode."""
import copy
import math

import numpy as np
import pytest

import yuebing as yb

from .modes import check_every_mode


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


def rec0(v, k):
    if k == 0:
        return v
    return rec0(np.sin(v) + 0.1 * v, k - 1)


def f(x, s, p):
    vec1 = Vec0(np.sum(np.add([x[2], s], [s, x[1]])) - s, p['b'])
    vec2 = Vec0(s, float(p['b'] * p['b']))
    _t3 = (vec1 * np.sum(np.exp(0.2 * np.array([s, s]))) + vec2).norm2()
    total4 = 0.0

    def _outer6(v):
        def add5(w):
            nonlocal total4
            total4 += w
        add5(v * 2.0)
        return None
    _outer6(np.prod((np.float64(s), np.var(x))))
    l7 = [s, math.sin(_t3 + math.e), np.linalg.norm(x)]
    grow8 = [x[2], np.sum(np.add([s, l7[0]], [l7[2], s]))]
    for v in grow8:
        if len(grow8) < 4:
            grow8.append(v * 0.5 + rec0(p['b'], 3))
    _m9 = {'w': np.power(-np.array(l7), 2), 'b': np.sqrt(1.0 + (np.pi * s ** 2) ** 2)}
    _m9['b'] = _m9['b'] * -1.039 + np.sum(_m9['w'])
    ys10 = list(np.tanh(np.array(l7) ** 2))
    it11 = map(lambda v: v * v + -1.168 * v, ys10)  # noqa: F841 - unused, yet needed
    return sum(ys10) + s + np.sum(_m9['w']) * _m9['b']


X = np.array([0.65544168, -1.42566042, -1.2553787])
S, P = 0.9292488798562002, {'w': np.array([-0.36692786, -0.25902137, -0.90311296]), 'b': 1.4211198439942783}


def g(x):
    return f(x, S, copy.deepcopy(P))


def test_hvp_value_and_every_mode():
    value = yb.hvp(g, (X.copy(),), (np.ones(3),))[0]
    np.testing.assert_allclose(value, g(X.copy()), rtol=1e-12)
    check_every_mode(g, X)


def returns_zero(x):  # (2): the body of f, its value dropped
    f(x, S, copy.deepcopy(P))
    return 0.0 * x[0]


def test_forward_mode_of_the_same_body():
    check_every_mode(returns_zero, X)
