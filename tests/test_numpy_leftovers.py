"""Issue 14's NumPy leftovers in reverse, forward and second order, against central differences:
``np.astype``, ``np.poly1d`` (derived from NumPy's source; division written out), the methods
``x.choose``/``x.compress``/``x.to_device``, ``np.average(..., returned=True)``, and rounding
functions writing into ``out=`` (the array's earlier derivative is overwritten). What stays
refused (``np.asarray(poly1d)``, ``np.matrix``, third order of ``out=`` rounding) raises by name.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

_RNG = np.random.default_rng(14)
_X = np.array([0.31, -1.27, 0.74, 1.9])
_C = np.array([0.7, -1.3, 0.4])


def _directions(args):
    return tuple(_RNG.standard_normal(np.shape(a)) for a in args)


def _shifted(args, directions, eps):
    return tuple(a + eps * v for a, v in zip(args, directions))


def check_all_modes(f, *args, rtol=1e-5, atol=1e-7, eps=1e-6):
    """``yb.grad`` (dotted with a direction), ``yb.jvp`` and ``yb.hvp`` of scalar ``f`` against
    central differences of ``f`` and of its gradient; the arguments are left as they were."""
    originals = [np.copy(a) for a in args]
    argnums = tuple(range(len(args)))
    directions = _directions(args)
    expected = (f(*_shifted(args, directions, eps)) - f(*_shifted(args, directions, -eps))) / (2 * eps)
    gradient = yb.grad(f, argnums=argnums)
    ours = sum(float(np.sum(g * v)) for g, v in zip(gradient(*args), directions))
    for a, original in zip(args, originals):
        np.testing.assert_array_equal(a, original, err_msg="yb.grad changed an argument")
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=atol, err_msg="reverse mode")
    np.testing.assert_allclose(yb.jvp(f, args, directions)[1], expected, rtol=rtol, atol=atol, err_msg="forward mode")
    h = max(eps, 1e-5)
    plus, minus = gradient(*_shifted(args, directions, h)), gradient(*_shifted(args, directions, -h))
    for k, hv in enumerate(yb.hvp(f, args, directions)[2]):
        np.testing.assert_allclose(hv, (plus[k] - minus[k]) / (2 * h), rtol=max(1e-4, rtol), atol=max(1e-6, atol),
                                   err_msg=f"second order, argument {k}")


# --------------------------------------------------------------------------------------------
# np.astype
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex128])
def test_astype_keeps_the_derivative_of_inexact_dtypes(dtype):
    def f(x):
        return np.sum(np.abs(np.astype(x * x, dtype) * (1.0 + 0.5j)) ** 2 * x)

    if dtype is np.float32:  # float32 rounding (ulp 2e-6 of values near 30) over steps of 1e-3: about 2e-3
        check_all_modes(f, _X, rtol=5e-3, atol=5e-3, eps=1e-3)
    else:
        check_all_modes(f, _X)


def test_astype_float32_tangents_stay_float32():
    y, t = yb.jvp(lambda x: np.astype(x, np.float32), (_X,), (np.ones(4),))
    assert y.dtype == t.dtype == np.float32
    x32 = _X.astype(np.float32)
    assert yb.grad(lambda x: np.sum(np.astype(x, np.float64) ** 2))(x32).dtype == np.float32


@pytest.mark.parametrize("dtype", [np.int64, np.bool_])
def test_astype_to_integers_gives_zero(dtype):
    def f(x):
        return np.sum(np.astype(x * 3.0, dtype) * x)  # only the outer factor x moves

    check_all_modes(f, _X)
    np.testing.assert_array_equal(yb.grad(f)(_X), np.astype(_X * 3.0, dtype).astype(float))


def test_astype_without_copy_is_the_array_itself():
    def f(x):
        y = x * 1.0
        z = np.astype(y, np.float64, copy=False)  # y itself: a write through z is a write to y
        z[0] = z[1] * z[2]
        return np.sum(y * y)

    check_all_modes(f, _X)


# --------------------------------------------------------------------------------------------
# np.poly1d
# --------------------------------------------------------------------------------------------

POLY1D = {
    "p(x)": lambda c, x: np.sum(np.poly1d(c)(x) ** 2),
    "p(scalar)": lambda c, x: np.poly1d(c)(x[0]) ** 3,
    "p.c, p.coeffs": lambda c, x: np.sum(np.poly1d(c).c * x[:3]) + np.sum(np.poly1d(c).coeffs ** 3),
    "p + q, p - q": lambda c, x: np.sum((np.poly1d(c) + np.poly1d(x))(x)) + np.sum((np.poly1d(c) - 2.0 * np.poly1d(x)).c ** 2),
    "p * q": lambda c, x: np.sum((np.poly1d(c) * np.poly1d(x[:2]))(x) ** 2),
    "p ** 2": lambda c, x: np.sum((np.poly1d(c) ** 2)(x)),
    "deriv": lambda c, x: np.sum(np.poly1d(c).deriv()(x) ** 2),
    "integ": lambda c, x: np.sum(np.poly1d(c).integ(k=x[0])(x) ** 2),
    "polyval(p, x)": lambda c, x: np.sum(np.polyval(np.poly1d(c), x) ** 2),
    "polyval(c, poly1d)": lambda c, x: np.sum(np.polyval(c, np.poly1d(x[:2])).c ** 2),
    "p / q": lambda c, x: np.sum((np.poly1d(x) / np.poly1d(c))[0].c ** 3) + np.sum((np.poly1d(x) / np.poly1d(c))[1].c ** 2),
    "p / s, s / p": lambda c, x: np.sum((np.poly1d(c) / x[1]).c ** 2) + np.sum((2.0 / np.poly1d(c[:2])).c ** 2),
    "[...] / p": lambda c, x: np.sum(([1.0, 3.0, x[0], 2.0] / np.poly1d(c))[0].c ** 2),
    "roots": lambda c, x: np.sum(np.real(np.poly1d(c + np.array([0.0, 0.0, 3.0])).r) ** 3),
}


@pytest.mark.parametrize("name", sorted(POLY1D))
def test_poly1d(name):
    check_all_modes(POLY1D[name], _C, _X)


def test_a_tuple_of_poly1d_keeps_its_tangents_in_second_order():
    """A poly1d is callable and NumPy's: second order took it for a function (a zero HVP)."""
    def split(c):
        return np.poly1d(c * 2.0), np.poly1d(c * 3.0)

    check_all_modes(lambda c: np.sum(split(c)[1].c ** 3), _C)


@pytest.mark.parametrize("call", [np.asarray, np.atleast_1d, np.sum, lambda p: np.polyder(p).c,
                                  lambda p: np.polyadd(p, p).c])
def test_numpy_functions_given_a_poly1d_refuse_it_by_name(call):
    """NumPy reads a poly1d through __array__, which yuebing does not follow back: refused in
    every mode (np.atleast_1d and np.polyadd gave zero gradients before)."""
    def f(c):
        return np.sum(call(np.poly1d(c)) ** 2)

    for run in (lambda: yb.grad(f)(_C), lambda: yb.jvp(f, (_C,), (_C,)), lambda: yb.hvp(f, (_C,), (_C,))):
        with pytest.raises(Exception, match="__array__"):
            run()


def test_third_order_refuses_poly1d():
    with pytest.raises(yb.NestedDifferentiationError, match="poly1d"):
        check_third_order(lambda c: np.sum(np.poly1d(c)(c) ** 3), _C)


# --------------------------------------------------------------------------------------------
# ndarray methods
# --------------------------------------------------------------------------------------------


def test_choose_method():
    selectors = np.array([0, 2, 1, 2])

    def f(x, y):
        return np.sum(selectors.choose([x, y * y, x * y]) ** 2)

    check_all_modes(f, _X, _X[::-1] + 0.5)


def test_choose_method_modes():
    def f(x):
        return np.sum(np.array([3, -1, 1, 0]).choose([x, x * x], mode="wrap") ** 3)

    check_all_modes(f, _X)


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_method(axis):
    condition = [True, False, True] if axis in (0, None) else [False, True, True, False]

    def f(x):
        m = np.reshape(x * x, (3, 4))
        return np.sum(np.sin(m.compress(condition, axis=axis)))

    check_all_modes(f, np.linspace(-1.0, 1.0, 12))


def test_to_device_is_the_array_itself():
    def f(x):
        y = x * 2.0
        z = y.to_device("cpu")
        z[1] = z[0] * z[2]  # a write through z changes y
        return np.sum(y ** 3)

    check_all_modes(f, _X)
    with pytest.raises(ValueError):
        yb.grad(lambda x: np.sum(x.to_device("gpu")))(_X)


# --------------------------------------------------------------------------------------------
# np.average(..., returned=True)
# --------------------------------------------------------------------------------------------

AVERAGE = {
    "1-D weights along axis 1": lambda x, w: np.average(np.reshape(x, (2, 4)), axis=1, weights=w[:4], returned=True),
    "weights like a": lambda x, w: np.average(np.reshape(x, (2, 4)), weights=np.reshape(w, (2, 4)), returned=True),
    "weights like a, axis 0, keepdims": lambda x, w: np.average(
        np.reshape(x, (2, 4)), axis=0, weights=np.reshape(w, (2, 4)), returned=True, keepdims=True),
    "no weights": lambda x, w: np.average(np.reshape(x * w, (2, 4)), axis=0, returned=True),
}


@pytest.mark.parametrize("name", sorted(AVERAGE))
def test_average_returned_differentiates_both_outputs(name):
    call = AVERAGE[name]
    x, w = np.linspace(-1.0, 1.3, 8), np.linspace(0.5, 2.0, 8)
    mean, total = call(x, w)
    reference = np.average(np.reshape(x * (w if name == "no weights" else 1.0), (2, 4)), axis=0, returned=True)
    assert name != "no weights" or np.allclose(total, reference[1])

    def f(x, w):
        m, s = call(x, w)
        return np.sum(np.sin(m) * s ** 2)

    check_all_modes(f, x, w)


def test_average_returned_gives_numpy_values_and_types():
    x, w = np.linspace(-1.0, 1.3, 8).reshape(2, 4), np.linspace(0.5, 2.0, 4)
    for kwargs in ({}, {"axis": 1, "weights": w}, {"axis": 0, "keepdims": True}):
        ours = yb.jvp(lambda x: np.average(x, returned=True, **kwargs), (x,), (np.ones_like(x),))[0]
        for a, b in zip(ours, np.average(x, returned=True, **kwargs)):
            assert type(a) is type(b) and np.shape(a) == np.shape(b) and np.allclose(a, b)


# --------------------------------------------------------------------------------------------
# Rounding into out=: the array's earlier derivative is overwritten
# --------------------------------------------------------------------------------------------

ROUNDING = {
    "round(x, 2, out=y)": lambda x, y: np.round(x, 2, out=y),
    "round(x, 1, y)": lambda x, y: np.round(x, 1, y),
    "around(x, 1, out=y)": lambda x, y: np.around(x, 1, out=y),
    "rint(x, out=y)": lambda x, y: np.rint(x, out=y),
    "rint(x, y)": lambda x, y: np.rint(x, y),
    "rint(x, out=(y,))": lambda x, y: np.rint(x, out=(y,)),
    "floor": lambda x, y: np.floor(x, out=y),
    "ceil": lambda x, y: np.ceil(x, out=y),
    "trunc": lambda x, y: np.trunc(x, out=y),
    "fix": lambda x, y: np.fix(x, out=y),
    "x.round(1, out=y)": lambda x, y: x.round(1, out=y),
    "floor(where=)": lambda x, y: np.floor(x, out=y, where=np.array([True, False, True, False])),
    "floor(y, out=y)": lambda x, y: np.floor(y, out=y),
}


def _rounding_into(call):
    def f(x):
        y = x * x  # y carries a derivative before the call
        before = y * 1.0
        returned = call(x * 3.0, y)
        return np.sum(y * before * x) + np.sum(returned ** 2)

    return f


@pytest.mark.parametrize("name", sorted(ROUNDING))
def test_rounding_into_out_overwrites_its_derivative(name):
    check_all_modes(_rounding_into(ROUNDING[name]), _X)


def test_rounding_into_out_drops_the_old_derivative():
    """Without the overwrite, y's old derivative 2x would reach the gradient."""
    def f(x):
        y = x * x
        np.rint(x * 3.0, out=y)
        return np.sum(y * x)

    np.testing.assert_array_equal(yb.grad(f)(_X), np.rint(_X * 3.0))
    np.testing.assert_array_equal(yb.jvp(f, (_X,), (np.ones(4),))[1], np.sum(np.rint(_X * 3.0)))


def test_third_order_refuses_rounding_into_out():
    with pytest.raises(yb.NestedDifferentiationError, match="rint with out="):
        check_third_order(_rounding_into(ROUNDING["rint(x, out=y)"]), _X)


# --------------------------------------------------------------------------------------------
# np.matrix stays refused
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("make", [np.matrix, np.asmatrix, lambda a: np.bmat([[a, a]])])
def test_matrix_is_refused_by_name(make):
    def f(x):
        return np.sum(np.asarray(make(np.reshape(x, (2, 2))) * 2.0))

    for run in (lambda: yb.grad(f)(_X), lambda: yb.jvp(f, (_X,), (_X,)), lambda: yb.hvp(f, (_X,), (_X,))):
        with pytest.raises(Exception, match="matrix"):
            run()
