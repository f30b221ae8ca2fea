"""``yb.hessian(f, holomorphic=True)``: the complex Hessian ``f''(z)`` of a holomorphic scalar
function of complex arguments, as JAX's ``jax.hessian(f, holomorphic=True)``.

A holomorphic ``f`` has the same derivatives along the real axes as its complex ones, so
``f''(z) = H(Re f) + i H(Im f)``, both real Hessians taken in the real parts of the arguments
(their imaginary parts held): two ordinary Hessians of real scalar functions. Right only for a
function that is holomorphic (the caller's promise, as in JAX).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..rules._complex_parts import part_at
from .complex_jacobian import is_complex_leaf

#: ``real_hessian(g, args, nums, single)``: the Hessian of real scalar ``g`` (``api/second_order``)
RealHessian = Callable[[Callable, tuple, tuple, bool], Any]


def refuse_complex_arguments(args: tuple, nums: tuple) -> None:
    """Without ``holomorphic=True``, a complex argument has no complex Hessian to give."""
    for a in nums:
        if is_complex_leaf(args[a]):
            raise TypeError(f"hessian: argument {a} is complex ({_name(args[a])}); for a holomorphic function pass "
                            "holomorphic=True (the complex Hessian f''(z)), otherwise split it into real and "
                            "imaginary parts (the Hessian of lambda x, y: f(x + 1j * y).real in real x and y)")


def holomorphic_hessian(real_hessian: RealHessian, f: Callable, args: tuple, nums: tuple, single: bool) -> Any:
    """``f''(z)`` of holomorphic scalar ``f`` at ``args`` in the complex arguments ``nums``."""
    for a in nums:
        if not is_complex_leaf(args[a]):
            raise TypeError(f"hessian(holomorphic=True) takes complex arguments, but argument {a} is real "
                            f"({_name(args[a])}); pass it as complex (x + 0j), or leave out holomorphic=True")
    value = f(*T.structural_copy(args))
    if not (is_complex_leaf(value) and np.ndim(value) == 0):
        raise TypeError(f"hessian(holomorphic=True) needs a complex scalar output, got {_name(value)}; a real "
                        "function of complex arguments is not holomorphic: split them into real and imaginary parts")
    imaginary = {a: _part(args[a], np.imag) for a in nums}
    reals = tuple(_part(x, np.real) if a in imaginary else x for a, x in enumerate(args))

    h_re = real_hessian(part_at(f, imaginary, False), reals, nums, single)
    h_im = real_hessian(part_at(f, imaginary, True), T.structural_copy(reals), nums, single)
    if single:
        return h_re + 1j * h_im
    return tuple(tuple(r + 1j * i for r, i in zip(row_re, row_im)) for row_re, row_im in zip(h_re, h_im))


def _part(x: Any, take: Callable) -> Any:
    """The real or imaginary part of a complex number (a float) or array (a new float array)."""
    return np.array(take(x)) if isinstance(x, np.ndarray) else float(take(x))


def _name(v: Any) -> str:
    return type(v).__qualname__ + (f" of {v.dtype}" if isinstance(v, np.ndarray) else "")


__all__ = ["holomorphic_hessian", "refuse_complex_arguments"]
