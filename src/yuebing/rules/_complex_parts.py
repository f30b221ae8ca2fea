"""The real and imaginary parts of a complex function of real arguments, as ordinary Python that
every mode differentiates like user code (outside the machinery the transforms refuse to follow,
``transform/protocols._MACHINERY``): ``yb.hessian(f, holomorphic=True)`` takes the Hessians of
these (``api/complex_hessian.py``)."""
from __future__ import annotations

from typing import Any, Callable


def part_at(f: Callable, imaginary: dict, take_imaginary: bool) -> Callable:
    """``xs -> Re f(z)`` (or ``Im f(z)``) where ``z[a] = xs[a] + 1j * imaginary[a]`` for each ``a``
    in ``imaginary`` and ``z[a] = xs[a]`` otherwise."""

    def part(*xs: Any) -> Any:
        full = list(xs)
        for a in imaginary:
            full[a] = xs[a] + 1j * imaginary[a]
        value = f(*full)
        return value.imag if take_imaginary else value.real

    return part
