"""Tangents given to forward mode take their primal's memory layout (``tangents/layout.py``).

A write through a view of a Fortran-ordered argument (``x.T.reshape(-1)[1] = ...``) reached the
primal but not the tangent when the caller's tangent was C-ordered (its reshape was a copy): the
JVP and the HVP were silently wrong. Checked against central differences and reverse mode.
"""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb


def _writes_through_a_view(x):
    y = x.T.reshape(-1)  # a view when x is Fortran-ordered
    y[1] = y[0] ** 2
    return x * 1.0


def _writes_through_reshape(x):
    y = x.reshape(-1)  # a view when x is C-ordered
    y[1] = y[0] ** 2
    return np.sin(x)


def _central_jvp(f, x, t, h=1e-6):
    return (f(x + h * t) - f(x - h * t)) / (2 * h)


LAYOUTS = {"C": np.ascontiguousarray, "F": np.asfortranarray}
FUNCTIONS = [_writes_through_a_view, _writes_through_reshape]


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("x_order", sorted(LAYOUTS))
@pytest.mark.parametrize("t_order", sorted(LAYOUTS))
def test_jvp_follows_writes_through_views_whatever_the_tangent_layout(f, x_order, t_order):
    x = LAYOUTS[x_order](np.arange(1.0, 7.0).reshape(2, 3))
    t = LAYOUTS[t_order](np.linspace(0.5, 1.5, 6).reshape(2, 3))
    expected = _central_jvp(lambda a: f(LAYOUTS[x_order](a)), x.copy(), t.copy())
    _, tangent = yb.jvp(f, (x,), (t,))
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize("f", FUNCTIONS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("t_order", sorted(LAYOUTS))
def test_hvp_follows_writes_through_views_whatever_the_tangent_layout(f, t_order):
    x = np.asfortranarray(np.arange(1.0, 7.0).reshape(2, 3))
    t = LAYOUTS[t_order](np.linspace(0.5, 1.5, 6).reshape(2, 3))
    loss = lambda a: np.sum(f(a) ** 2)  # noqa: E731
    gradient = lambda a: yb.grad(loss)(np.asfortranarray(a))  # noqa: E731
    _, _, (hv,) = yb.hvp(loss, (x,), (t,))
    np.testing.assert_allclose(hv, _central_jvp(gradient, x.copy(), t.copy(), 1e-5), rtol=1e-5, atol=1e-5)


def test_the_callers_tangent_is_left_as_it_was():
    x = np.asfortranarray(np.arange(1.0, 7.0).reshape(2, 3))
    t = np.ones((2, 3))
    yb.jvp(_writes_through_a_view, (x,), (t,))
    assert t.flags.c_contiguous and np.all(t == 1.0)
