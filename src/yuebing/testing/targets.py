"""Functions that the test utilities *differentiate* (so, unlike the rest of ``testing/``, they
are ordinary user-level code to the source transforms): the scalar test functions of
``check_second_order``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def _project(y: Any, w: Any) -> Any:
    """``<w, y> + 0.1 <y, y>`` for floats, float arrays and lists/tuples of them; 0 otherwise."""
    if isinstance(y, float) or isinstance(y, np.ndarray) and y.dtype.kind == "f":
        return np.sum(y * w) + np.sum(y * y) * 0.1
    if isinstance(y, (list, tuple)):
        total = 0.0
        for k in range(len(y)):
            total = total + _project(y[k], w[k])
        return total
    return 0.0


def weights(rng: np.random.Generator, y: Any) -> Any:
    if isinstance(y, float):
        return float(rng.standard_normal())
    if isinstance(y, np.ndarray) and y.dtype.kind == "f":
        return rng.standard_normal(y.shape)
    if isinstance(y, (list, tuple)):
        return [weights(rng, e) for e in y]
    return 0.0


def _scalar_1(f: Callable, kw: dict, w: Any, u: list, template: list, at: list) -> Callable:
    def s(a0):
        call = list(template)
        call[at[0]] = a0
        return _project(f(*call, **kw), w) + _project(a0, u[0])

    return s


def _scalar_2(f: Callable, kw: dict, w: Any, u: list, template: list, at: list) -> Callable:
    def s(a0, a1):
        call = list(template)
        call[at[0]] = a0
        call[at[1]] = a1
        return _project(f(*call, **kw), w) + _project(a0, u[0]) + _project(a1, u[1])

    return s


def _scalar_3(f: Callable, kw: dict, w: Any, u: list, template: list, at: list) -> Callable:
    def s(a0, a1, a2):
        call = list(template)
        call[at[0]] = a0
        call[at[1]] = a1
        call[at[2]] = a2
        return _project(f(*call, **kw), w) + _project(a0, u[0]) + _project(a1, u[1]) + _project(a2, u[2])

    return s


def _scalar_4(f: Callable, kw: dict, w: Any, u: list, template: list, at: list) -> Callable:
    def s(a0, a1, a2, a3):
        call = list(template)
        call[at[0]] = a0
        call[at[1]] = a1
        call[at[2]] = a2
        call[at[3]] = a3
        total = _project(f(*call, **kw), w) + _project(a0, u[0]) + _project(a1, u[1])
        return total + _project(a2, u[2]) + _project(a3, u[3])

    return s


SCALARS = {1: _scalar_1, 2: _scalar_2, 3: _scalar_3, 4: _scalar_4}
