"""Module-level ``@contextlib.contextmanager`` managers handed float data
(tests/test_generator_managers.py)."""
import contextlib

import numpy as np

LOG = []


@contextlib.contextmanager
def scaled(model, k):
    old = model.w
    model.w = model.w * k
    LOG.append("in")
    try:
        yield model
    finally:
        model.w = old
        LOG.append("out")


class Model:
    def __init__(self, w):
        self.w = w


def f(x):
    m = Model(x[0])
    with scaled(m, x[1]) as mm:
        y = mm.w * x[2] + np.sin(mm.w)
    return y + m.w ** 2


def g(x):
    m = Model(x[0] * 2.0)
    with scaled(m, 3.0):
        v = m.w * m.w
    return v * x[1]


def imported_inside(x):
    from tests.generator_managers import scaled as managed  # bound when the function runs

    m = Model(x[0])
    with managed(m, x[1]) as mm:
        y = mm.w * x[2]
    return y + m.w ** 2


def second_item(x):
    m = Model(x[0])
    with contextlib.nullcontext(), scaled(m, x[1]) as mm:
        y = mm.w * x[2]
    return y + m.w ** 2
