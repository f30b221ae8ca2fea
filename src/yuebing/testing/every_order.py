"""``check_every_order``: a function of one float array against central differences in reverse
mode, forward mode, second order and third order (``check_third_order``: ``yb.hvp`` of a
function taking ``yb.grad`` of it, against differences of reverse over reverse)."""
from __future__ import annotations

from typing import Callable

import numpy as np

from .second_order import check_second_order
from .third_order import check_third_order


def check_every_order(g: Callable, x: np.ndarray, v: np.ndarray, rtol: float = 1e-6) -> None:
    """Raise AssertionError unless ``g``'s derivatives at ``x`` match differences in every order:
    the gradient and the JVP along ``v``, second and third derivatives. Each call gets its own
    copy of ``x`` (``g`` may write into it)."""
    from .. import api

    h = 1e-6
    difference = (g(x + h * v) - g(x - h * v)) / (2 * h)
    np.testing.assert_allclose(np.dot(api.grad(g)(x.copy()), v), difference, rtol=rtol)
    np.testing.assert_allclose(api.jvp(g, (x.copy(),), (v,))[1], difference, rtol=rtol)
    check_second_order(g, x.copy())
    check_third_order(g, x.copy())


__all__ = ["check_every_order"]
