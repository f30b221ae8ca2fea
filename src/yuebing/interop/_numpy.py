"""What both bridges hand to yuebing: the user's NumPy function as a function of its variables
only (the other arguments held fixed), and the scalar ``<ybar, f(x)>`` whose gradient is the
pullback of ``ybar`` and whose Hessian-vector products are the pullback's derivative in ``x``.
These functions are differentiated by yuebing like user code (their source is read)."""
from __future__ import annotations

from typing import Any, Callable

import numpy as np


def bound(f: Callable, template: list, places: tuple, kwargs: dict) -> Callable:
    """``g(*xs)``: ``f`` called with ``template``, ``xs`` put at ``places`` (yuebing
    differentiates every positional argument of ``yb.vjp``/``yb.jvp``/``yb.hvp``, so the other
    arguments are captured constants here). ``f`` itself when nothing is fixed: differentiating
    the closure's argument shuffling costs yuebing about half a millisecond a call."""
    if not kwargs and places == tuple(range(len(template))):
        return f

    def g(*xs):
        args = list(template)
        for place, x in zip(places, xs):
            args[place] = x
        return f(*args, **kwargs)

    return g


def contracted(g: Callable, cotangents: tuple, multi: bool) -> Callable:
    """``h(*xs) = <cotangents, g(*xs)>``, a real scalar (``g`` returns a tuple when ``multi``)."""
    def h(*xs):
        out = g(*xs)
        if not multi:
            out = (out,)
        total = 0.0
        for c, o in zip(cotangents, out):
            total = total + np.sum(c * o)
        return total

    return h


def like(value: Any, array: Any) -> Any:
    """``array`` as the cotangent or tangent yuebing takes for ``value``: a Python float for a
    scalar (NumPy or Python float), an array of ``value``'s dtype and shape for an array."""
    if isinstance(value, np.ndarray):
        return np.asarray(array, dtype=value.dtype).reshape(value.shape)
    return float(np.asarray(array))


def check_output(value: Any, name: str, where: str) -> tuple[bool, tuple]:
    """``(multi, parts)`` of ``f``'s value; refuses anything but float scalars and float arrays
    (a tuple of them for several outputs), naming ``f``."""
    multi = isinstance(value, tuple)
    parts = value if multi else (value,)
    for part in parts:
        if not isinstance(part, (np.ndarray, float, np.floating)) or np.asarray(part).dtype.kind != "f":
            what = f"dtype {part.dtype}" if isinstance(part, (np.ndarray, np.generic)) else f"a {type(part).__name__}"
            raise TypeError(f"{where}({name}): f returned {what}; each output must be a real float scalar or "
                            "array (return a tuple of arrays for several outputs)")
    return multi, parts
