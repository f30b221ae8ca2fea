"""Forward mode's inline templates for new arrays, constant view indexes, ``np.diag`` of a matrix
and arithmetic with ints or module constants (``forward_templates.new_arrays_and_views``,
``_int_binaries``), each a generic rule call before: derivatives against central differences in
every mode, no rule call left (the speculative program, which raises at any rule call, keeps
running), and writes through views of new arrays reaching their base's tangent."""
from __future__ import annotations

import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.tangents import NoTangent
from yuebing.transform.forward_runtime import _SPECULATIVE

from .all_modes import check_all_modes


def _central(f, x, v, h=1e-6):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def _speculates(f):
    entry = _SPECULATIVE.get(f.__code__)
    return entry is not None and entry[1] is not None


def _inline_pieces(x):
    n = len(x)
    d = x[:, None] - x[None, :]
    k = np.exp(-0.5 * d ** 2) + 0.3 * np.eye(n)
    scale = 0.5 * n * math.log(2 * math.pi)
    return np.sum(np.log(np.diag(k) + x * x)) + scale * np.sum(k * k) / n + x[1] / n - n * x[0]


def test_views_eye_diag_and_int_arithmetic_run_inline():
    x = np.linspace(-0.7, 1.2, 6)
    check_all_modes(_inline_pieces, x)
    v = np.cos(3 * x)
    for _ in range(3):  # derived, then the speculative program: it raises at any rule call
        value, tangent = yb.jvp(_inline_pieces, (x,), (v,))
        assert value == _inline_pieces(x)
        assert tangent == pytest.approx(_central(_inline_pieces, x, v), rel=1e-7)
    assert _speculates(_inline_pieces)
    source = yb.show(_inline_pieces, mode="forward")
    for text in ("np.eye(n) (inline)", "np.diag(k) (inline)", "operator.mul(0.5, n) (inline)",
                 "operator.mul(2, math.pi) (inline)", "(slice(None, None, None), None)) (inline)"):
        assert text in source


def _writes_through_views(x):
    n = len(x)
    z = np.zeros(n)
    w = z[1:]  # a view of a new array: a write into it reaches z and z's tangent
    w[0] = x[0] * x[1]
    e = np.eye(n)
    e[0, 1] = x[2]
    t = np.ones(n)
    t[2] = x[3] ** 2
    u = np.empty_like(x)
    u[:] = 2.0 * x
    return np.sum(z * x) + np.sum(e @ x) + np.sum(t * x) + np.sum(u * u)


def test_writes_into_new_arrays_and_their_views_in_every_mode():
    x = np.linspace(0.3, 1.4, 5)
    check_all_modes(_writes_through_views, x)
    v = np.sin(x) + 0.2
    value, tangent = yb.jvp(_writes_through_views, (x,), (v,))
    assert value == _writes_through_views(x)
    assert tangent == pytest.approx(_central(_writes_through_views, x, v), rel=1e-7)


def _int_and_float(x, k):
    return (x * k + k / x - x / k) * (k - x) + 2 * k


@pytest.mark.parametrize("k", [3, 0.5])
def test_an_int_or_a_float_beside_a_float(k):
    """``x * k`` with ``k`` an int takes the int variant (no tangent for ``k``), with ``k`` a float
    the float one; the tangent along ``x`` (and ``k`` where it is a float) is the derivative."""
    dk = 0.0 if type(k) is int else 0.7
    value, tangent = yb.jvp(_int_and_float, (1.3, k), (1.0, NoTangent if type(k) is int else dk))
    assert value == _int_and_float(1.3, k)
    expected = (_int_and_float(1.3 + 1e-6, k + 1e-6 * dk) - _int_and_float(1.3 - 1e-6, k - 1e-6 * dk)) / 2e-6
    assert tangent == pytest.approx(expected, rel=1e-7)
    assert type(tangent) is float


def _block_with_ints(x):
    n = len(x)
    y = np.sin(x) * n + 0.5 * n
    m = n * 2 - 1  # an int the block hands on: no tangent
    z = np.exp(y / m) - n
    return np.sum(z) * m + n


def test_array_blocks_take_int_inputs():
    """An array block reading an int (``np.sin(x) * n``) runs as a block (its guard took floats
    and arrays only: statement by statement before), the ints without tangents."""
    x = np.linspace(-0.4, 0.9, 7)
    check_all_modes(_block_with_ints, x)
    assert "_array_tangents(x, x_t, n, n_t)" in yb.show(_block_with_ints, mode="forward")
    for _ in range(3):  # the speculative program keeps running: the block ran, no rule call
        value, tangent = yb.jvp(_block_with_ints, (x,), (np.cos(x),))
        assert tangent == pytest.approx(_central(_block_with_ints, x, np.cos(x)), rel=1e-7)
    assert _speculates(_block_with_ints)
