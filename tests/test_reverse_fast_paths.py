"""Reverse mode's fast paths (issue 16, first-order speed): each is checked to be taken, and its
derivatives against central differences, forward mode and the plain formula it replaces."""
from __future__ import annotations

import math

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.linalg import cholesky_blocks, decompositions

from .all_modes import check_all_modes


def _spd(n, seed=0):
    b = np.random.default_rng(seed).standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


def _weighted_cholesky(a):
    low = np.linalg.cholesky(a)
    return np.sum(np.cos(np.arange(low.size).reshape(low.shape)) * low) + np.sum(np.log(np.diag(low)))


def _weighted_upper_cholesky(a):
    up = np.linalg.cholesky(a, upper=True)
    return np.sum(np.sin(np.arange(up.size).reshape(up.shape)) * up)


@pytest.fixture
def split_calls(monkeypatch):
    """The orders ``_split_cholesky_vjp`` is called at."""
    orders = []
    split = cholesky_blocks._split_cholesky_vjp

    def counted(low, g, dtrsm):
        orders.append(low.shape[0])
        return split(low, g, dtrsm)

    monkeypatch.setattr(cholesky_blocks, "_split_cholesky_vjp", counted)
    return orders


@pytest.mark.parametrize("f", [_weighted_cholesky, _weighted_upper_cholesky])
@pytest.mark.parametrize("n", [65, 131])
def test_cholesky_cotangent_split_in_blocks(f, n, split_calls):
    """Above order 64 the Cholesky cotangent is the block recursion (131: two levels, odd
    halves), equal to the dense formula and to differences in every mode."""
    a = _spd(n)
    check_all_modes(f, a, tol=1e-6, second_order=n < 100)
    assert n in split_calls and any(order <= 64 for order in split_calls)
    low = np.linalg.cholesky(a)
    g = np.tril(np.random.default_rng(1).standard_normal((n, n)))
    np.testing.assert_allclose(cholesky_blocks.real_cholesky_vjp(low, g),
                               decompositions.lower_cholesky_cotangent(low, g), rtol=1e-10, atol=1e-12)


def _two_layer(w):
    """Products of C-ordered, transposed (Fortran-ordered) and strided operands."""
    a = w @ w.T
    b = w[::2, ::2] @ np.asfortranarray(w[1::2, 1:4])
    return np.sum(np.sin(a)) + np.sum(b * b) + np.sum(w.T @ a[:, :4])


@pytest.fixture
def gemm_calls(monkeypatch):
    """How many products' cotangents BLAS accumulated in place (``buffers.add_matmul``)."""
    from yuebing.transform import buffers

    import scipy.linalg  # noqa: F401 - gemm is taken once the program has imported scipy.linalg

    assert buffers._find_gemm()  # (run alone, no earlier test has found it yet)
    calls = []
    gemm = buffers._DGEMM

    def counted(*args, **kwargs):
        calls.append((kwargs["trans_a"], kwargs["trans_b"]))
        return gemm(*args, **kwargs)

    monkeypatch.setattr(buffers, "_DGEMM", counted)
    return calls


def test_matmul_cotangents_accumulate_in_place(gemm_calls):
    """``a @ b``'s reverse adds ``g @ b.T`` and ``a.T @ g`` into the fdata by gemm (beta = 1)
    whatever the operands' memory order, NumPy for strided operands; every mode against
    differences, and the gradient of a function using ``w`` three times (accumulation)."""
    w = np.random.default_rng(2).standard_normal((6, 5)) * 0.5
    check_all_modes(_two_layer, w, tol=1e-6)
    assert {(0, 0), (0, 1)} <= set(gemm_calls)  # C-ordered and transposed operands both


def test_matmul_cotangent_without_blas_layout(gemm_calls):
    """Strided operands (a view every other row) take NumPy's product and addition."""
    from yuebing.transform import buffers

    target = np.zeros((3, 3))
    a = np.arange(36.0).reshape(6, 6)
    b = np.arange(9.0).reshape(3, 3)
    buffers.add_matmul(target, a[::2, ::2], b)
    buffers.add_matmul(target, b.T, b)
    np.testing.assert_array_equal(target, a[::2, ::2] @ b + b.T @ b)
    assert len(gemm_calls) == 1
    overlapping = b.copy()
    buffers.add_matmul(overlapping, overlapping, b)  # target is an operand: NumPy's
    np.testing.assert_array_equal(overlapping, b + b @ b)
    assert len(gemm_calls) == 1


def test_matmul_cotangent_overlap_found_through_views(gemm_calls):
    """The quick overlap test (distinct owners cannot overlap) never hides a real overlap: an
    operand viewing the target (its transpose, a slice), or a target that is itself a view of
    an operand's memory, takes NumPy's product; a view of another array takes gemm."""
    from yuebing.transform import buffers

    b = np.arange(9.0).reshape(3, 3)
    for view in (lambda t: t.T, lambda t: t[:, :], lambda t: t[::-1].T):
        target = np.arange(9.0).reshape(3, 3) + 1.0
        expected = target + view(target) @ b
        buffers.add_matmul(target, view(target), b)
        np.testing.assert_array_equal(target, expected)
    big = np.arange(18.0).reshape(6, 3)
    window = big[:3]  # the target is a contiguous view; the operand overlaps it
    expected = window + big[1:4] @ b
    buffers.add_matmul(window, big[1:4], b)
    np.testing.assert_array_equal(window, expected)
    assert len(gemm_calls) == 0
    other = np.arange(18.0).reshape(6, 3) - 4.0
    target = np.zeros((3, 3))
    buffers.add_matmul(target, other[1:4], b)  # a view of another array, C-ordered
    buffers.add_matmul(target, np.asfortranarray(other[:3]), b.T)  # an owner, Fortran-ordered
    np.testing.assert_array_equal(target, other[1:4] @ b + other[:3] @ b.T)
    assert len(gemm_calls) == 2


def _mixed_int_arithmetic(x):
    n = len(x)
    total = 0.0
    for i in range(n):
        h = i / n  # int / int
        total = total + x[i] * (i * h) - (n - x[i]) * x[i] / n + n / (1.0 + x[i] * x[i])
    return total * (0.5 * n)


def test_int_operands_of_float_arithmetic_are_inline():
    """``0.5 * n``, ``i * h``, ``n - x``, ``x / n``, ``n / x`` with int variables: inline (no
    rule call), the ints without cotangent, the floats' right; every mode against differences."""
    x = np.array([0.3, -1.2, 0.8, 2.0])
    check_all_modes(_mixed_int_arithmetic, x, tol=1e-6)
    shown = yb.show(_mixed_int_arithmetic, x)
    for marker in ("_FASTI0", "_FASTI1", "_FASTI01"):
        assert f"_push({marker})" in shown
    assert "_rrule(_CD(_operator_mul" not in shown and "_rrule(_CD(_operator_truediv" not in shown
    assert "_rrule(_CD(_operator_sub" not in shown


def _views(x):
    pairs = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2)
    y = x.copy()
    head = y[1:]
    head *= x[:-1]  # written through a view: its fdata is the same view of y's
    column = pairs[..., 0]
    return np.sum(pairs * x) + np.sum(y ** 2) + np.sum(np.sin(column))


def test_constant_view_indexes_are_inline():
    """``x[:, None]``, ``x[1:]``, ``x[..., 0]``: the view and the same view of the fdata,
    inline (no rule call), a write through one reaching its base; every mode against differences."""
    x = np.array([0.3, -1.2, 0.8, 2.0, 0.1])
    check_all_modes(_views, x, tol=1e-6)
    shown = yb.show(_views, x)
    assert "_rrule(_CD(_operator_getitem" not in shown and "= x_f[slice(None, None, None), None]" in shown


def _lengths(x):
    items = [x[0], x[1]]
    return x[0] * len(x) + x[1] / len(items) + len((x[0],)) * len({"a": 1, "b": 2}) * x[2]


class _Sized:
    def __init__(self, x):
        self.x = x

    def __len__(self):
        return 7


def _user_length(x):
    return x[0] * len(_Sized(x))


def test_len_is_inline_and_guarded(monkeypatch):
    """``len`` of arrays and builtin containers: inline (no rule call); of a user class, and when
    the module's ``len`` is rebound after the rule was made, the general path."""
    x = np.array([0.3, -1.2, 0.8])
    check_all_modes(_lengths, x, tol=1e-6)
    assert "_rrule(_CD(len" not in yb.show(_lengths, x)
    np.testing.assert_allclose(yb.grad(_user_length)(x), [7.0, 0.0, 0.0])
    yb.grad(_lengths)(x)
    monkeypatch.setitem(globals(), "len", lambda v: 2)  # the module's own len now
    np.testing.assert_allclose(yb.grad(_lengths)(x), [2.0, 0.5, 4.0])


def _filled(x):
    y = np.empty_like(x)
    z = np.zeros(3)
    n = len(x)
    u = np.ones((n,))
    for i in range(n):
        y[i] = np.sin(x[i]) * u[i]
    z[1] = x[1] * x[2]
    u *= x  # in place: its fdata must be a real zero array
    w = np.zeros_like(x)
    w += x ** 2
    k = 2.0 * np.eye(n) + np.identity(3)
    k[0, 1] = x[0]
    return np.sum(y) + np.sum(z) + np.sum(u * x) + np.sum(w * np.ones_like(x)) + np.sum(k @ x)


def test_new_arrays_are_inline():
    """``np.empty_like``/``zeros_like``/``ones_like`` of a float64 array and ``np.zeros``/
    ``ones``/``empty`` of a shape, ``np.eye``/``identity`` of an order: inline, with zero fdata that writes into them fill; every
    mode against differences."""
    x = np.array([0.3, -1.2, 0.8])
    check_all_modes(_filled, x, tol=1e-6)
    shown = yb.show(_filled, x)
    for name in ("empty_like", "zeros", "ones", "zeros_like", "ones_like", "eye", "identity"):
        assert f"_rrule(_CD(np.{name}," not in shown
    assert "= np.empty_like(x); y_f = _zeros_like(y)" in shown


SCALE = 0.75  # module constants: floats, an int and an array (no cotangent; the array not inline)
COUNT = 3
WEIGHTS = np.array([0.5, -1.0, 2.0])


def _with_constants(x):
    total = 2 * math.pi + x[0] * math.pi - np.pi / x[1] + SCALE * x[2] + x[1] / SCALE
    total = total + COUNT * x[0] - x[2] * COUNT
    return total * np.sum(x * WEIGHTS) + np.sum(x * SCALE)


def test_globals_in_float_arithmetic_are_inline():
    """``x * math.pi``, ``2 * math.pi``, a module's float or int constant: inline, constants
    without cotangent; a module array beside an array argument takes the general path; every
    mode against differences."""
    x = np.array([0.3, -1.2, 0.8])
    check_all_modes(_with_constants, x, tol=1e-6)
    calls = [line for line in yb.show(_with_constants, x).splitlines() if "_rrule(" in line]
    assert len(calls) == 1 and "_CD(WEIGHTS, WEIGHTS_f)" in calls[0]


def _transposes(w):
    h = np.tanh(w.T @ w)
    v = w.copy()
    v.T[0] *= 2.0  # written through the transpose: its fdata is the fdata's transpose
    constant = np.arange(6.0).reshape(2, 3)
    return np.sum(h @ w.T @ w) + np.sum(v ** 2) + np.sum(constant.T @ w.T)


def test_transpose_is_inline():
    """``x.T`` of an array with fdata: the view and the fdata's transpose, inline; a write
    through it reaches the base; every mode against differences."""
    w = np.array([[0.3, -1.2], [0.8, 0.5], [-0.4, 1.1]])
    check_all_modes(_transposes, w, tol=1e-6)
    shown = yb.show(_transposes, w)
    assert "_CD(w, w_f), _CD('T', _NF)" not in shown and "= w.T; " in shown


def _dots(w):
    return np.sum(np.sin(np.dot(w, w.T))) + np.sum(np.matmul(w.T, w) ** 2)


def test_dot_and_matmul_of_matrices_are_inline():
    """``np.dot`` and ``np.matmul`` of two float64 matrices take the product's template (the
    primal by the function called); every mode against differences."""
    w = np.array([[0.3, -1.2], [0.8, 0.5], [-0.4, 1.1]])
    check_all_modes(_dots, w, tol=1e-6)
    shown = yb.show(_dots, w)
    assert "_rrule(_CD(np.dot" not in shown and "_rrule(_CD(np.matmul" not in shown and "= np.dot(w, " in shown


def test_cholesky_pullback_keeps_the_factor_not_the_matrix():
    """The Cholesky cotangent reads the factor only, so its pullback does not keep the matrix
    alive (the function frees it after factorising; a gradient held it to the end of the reverse
    pass, one matrix more at its peak): the matrix is freed while the pullback lives, and the
    cotangent it delivers into the matrix's fdata is the dense formula's."""
    import weakref

    from yuebing.rules.core import CoDual, rrule
    from yuebing.rules.linalg.common import _unread_primals
    from yuebing.tangents import NoRData

    assert _unread_primals(decompositions._cholesky_vjp) == {0}  # (g, y, a, upper): a is never read
    assert _unread_primals(lambda g, y, a: (lambda: a)) == set()  # captured by a nested function: read
    a, fdata = _spd(80), np.zeros((80, 80))
    freed = weakref.ref(a)
    yb.config(debug=False)  # (debug mode, on in the suite, keeps every rule's arguments for its checks)
    try:
        out, pullback = rrule(CoDual(np.linalg.cholesky), CoDual(a, fdata))
    finally:
        yb.config(debug=True)
    del a
    assert freed() is None
    g = np.tril(np.random.default_rng(2).standard_normal((80, 80)))
    out.fdata += g  # the factor's cotangent, as the reverse pass gathers it
    pullback(NoRData)
    np.testing.assert_allclose(fdata, decompositions.lower_cholesky_cotangent(out.primal, g), rtol=1e-10, atol=1e-12)
    check_all_modes(_weighted_cholesky, _spd(70), tol=1e-6, second_order=False)
