"""Helpers written as ordinary NumPy code, which the transforms differentiate like user code
(so they live outside the machinery of ``transform/``, whose functions forward mode refuses to
differentiate): the pairings of third order and ``np.vectorize``'s second order."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..tangents import NoTangent


def vectorized_call(pyfunc: Callable, x: Any) -> np.ndarray:
    """``np.vectorize(pyfunc)(x)`` written with covered functions (what its second order runs)."""
    xs = np.asarray(x)
    return np.array([pyfunc(v) for v in xs.ravel().tolist()]).reshape(xs.shape)


def zeros_for_ints(t: Any) -> Any:
    """A list's tangent with its ints' ``NoTangent`` as 0.0 (differentiated like user code)."""
    if type(t) is list or type(t) is tuple:
        return [zeros_for_ints(e) for e in t]
    if t is NoTangent:
        return 0.0
    return t


def tangent_array(t: Any) -> Any:
    """A list's tangent as an array, its ints' tangents 0."""
    return np.asarray(zeros_for_ints(t))


def paired(cotangents: tuple, k: int, t: Any) -> Any:
    """``<cotangents[k], t>`` (0 where there is no cotangent or no tangent)."""
    if k >= len(cotangents):
        return 0.0
    c = cotangents[k]
    if c is None or t is NoTangent:
        return 0.0
    return np.sum(c * t)
