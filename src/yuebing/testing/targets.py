"""Functions that the test utilities *differentiate* (so, unlike the rest of ``testing/``, they
are ordinary user-level code to the source transforms): the scalar test functions of
``check_second_order``."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def _project(y: Any, w: Any) -> Any:
    """``<w, y> + 0.1 <y, y>`` for floats, float arrays and lists/tuples of them; 0 otherwise."""
    if isinstance(y, np.ma.MaskedArray):  # its tangent is its data's (docs/semantics.md, "Masked arrays")
        y = np.ma.getdata(y)
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


def scalar_function(f: Callable, kw: dict, w: Any, u: list, template: list, at: list) -> Callable:
    """``s(*xs)``: ``f`` called with ``xs`` at positions ``at`` of ``template``, projected on
    ``w``, plus each ``x`` after the call projected on its ``u`` (which sees mutations)."""
    # the other arrays afresh at each call: a rule may write into one (a SciPy kernel sorting its
    # int index array in place), and what a call leaves in captured state stays after it
    fresh = [i for i, v in enumerate(template) if type(v) is np.ndarray and i not in at]

    def s(*xs):
        call = list(template)
        for i in fresh:
            call[i] = template[i].copy()
        for k in range(len(at)):
            call[at[k]] = xs[k]
        total = _project(f(*call, **kw), w)
        for k in range(len(at)):
            total = total + _project(xs[k], u[k])
        return total

    return s


def packed(s: Callable) -> Callable:
    """``s`` as a function of one tuple of its arguments. Arguments may share arrays (a rule's
    aliasing case, ``a += a``): within one argument they share one tangent, while separate
    arguments are differentiated slot by slot, which a function writing into the shared array
    does not allow (docs/conventions.md, "Arguments")."""
    def all_arguments(arguments):
        return s(*arguments)

    return all_arguments
