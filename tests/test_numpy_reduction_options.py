"""NumPy reductions with every option: ``out=``, ``where=``, ``initial=``, ``keepdims=``,
``dtype=``, as functions and as ndarray methods, and ufuncs with ``out=``/``where=``/``dtype=``.

Each case runs through ``check_rule`` (finite differences on the output and on the post-call state
of ``out=``, reverse against forward, restoration, aliasing) and, for real float64 inputs,
through ``check_second_order`` (Hessian-vector products against central differences of the
gradient). An ``out=`` array is passed positionally so that it is differentiated: its old
contents get cotangent 0, the reduction's result the cotangent of what it holds afterwards.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.cases import Case
from yuebing.testing.cases import run_case
from yuebing.testing.second_order import check_second_order

RNG = np.random.default_rng(1414)


def randn(*shape, dtype=np.float64):
    return RNG.standard_normal(shape).astype(dtype)


def randpos(*shape):
    return RNG.uniform(0.5, 2.0, shape)


def _ids(cases):
    return [c.name for c in cases]


def _real64(case):
    return not any(isinstance(a, np.ndarray) and a.dtype != np.float64 for a in case.args)


MASK = np.array([[True, False, True, True], [False, True, True, False], [True, True, False, True]])
X = randn(3, 4)

OUT_CASES = [
    # out= after the axis (and dtype) parameters: (a, axis, dtype, out, keepdims, ...)
    Case(np.sum, randn(3, 4), 0, None, randn(4), name="sum(out=)"),
    Case(np.sum, randn(3, 4), None, None, np.zeros(()), name="sum(out=0-d)"),
    Case(np.sum, randn(3, 4), 1, None, randn(3, 1), True, name="sum(out=, keepdims)"),
    Case(np.sum, randn(3, 4), 1, None, randn(3), False, 0.5, MASK, name="sum(out=, initial, where)"),
    Case(np.ndarray.sum, randn(3, 4), 1, None, randn(3), name="ndarray.sum(out=)"),
    Case(np.sum, randn(3, 4), 0, None, randn(4, dtype=np.float32), name="sum(out=float32)",
         rtol=1e-3, atol=1e-4),
    Case(np.mean, randn(3, 4), 0, None, randn(4), name="mean(out=)"),
    Case(np.ndarray.mean, randn(3, 4), 1, None, randn(3, 1), True, name="ndarray.mean(out=, keepdims=True)"),
    Case(np.prod, randpos(3, 4), 1, None, randn(3), name="prod(out=)"),
    Case(np.ndarray.prod, randn(3, 4), 0, None, randn(4), name="ndarray.prod(out=)"),
    Case(np.nansum, randn(3, 4), 0, None, randn(4), name="nansum(out=)"),
    Case(np.nanmean, randn(3, 4), 1, None, randn(3), name="nanmean(out=)"),
    # max/min: (a, axis, out, keepdims, initial, where)
    Case(np.max, randn(3, 4), 0, randn(4), name="max(out=)"),
    Case(np.min, randn(3, 4), 1, randn(3), name="min(out=)"),
    Case(np.amax, randn(3, 4), 1, randn(3, 1), True, name="amax(out=, keepdims)"),
    Case(np.amin, randn(3, 4), None, np.zeros(()), name="amin(out=0-d)"),
    Case(np.ndarray.max, randn(3, 4), 1, randn(3), False, -5.0, MASK, name="ndarray.max(out=, initial, where)"),
    Case(np.ndarray.min, randn(3, 4), 0, randn(4), name="ndarray.min(out=)"),
    Case(np.nanmax, randn(3, 4), 0, randn(4), name="nanmax(out=)"),
    Case(np.nanmin, randn(3, 4), 1, randn(3), name="nanmin(out=)"),
    Case(np.ptp, randn(3, 4), 1, randn(3), name="ptp(out=)"),
    # statistics: (a, axis, dtype, out, ddof, keepdims, where)
    Case(np.std, randn(3, 4), 0, None, randn(4), name="std(out=)"),
    Case(np.var, randn(3, 4), 1, None, randn(3), 1, name="var(out=, ddof=1)"),
    Case(np.ndarray.std, randn(3, 4), 1, None, randn(3), 0, False, kwargs={"where": MASK}, name="ndarray.std(out=, where)"),
    Case(np.ndarray.var, randn(3, 4), 0, None, randn(4), name="ndarray.var(out=)"),
    Case(np.median, randn(3, 5), 1, randn(3), name="median(out=)"),
    # scans: (a, axis, dtype, out)
    Case(np.cumsum, randn(3, 4), 0, None, randn(3, 4), name="cumsum(out=)"),
    Case(np.cumprod, randn(3, 4), 1, None, randn(3, 4), name="cumprod(out=)"),
    Case(np.ndarray.cumsum, randn(3, 4), None, None, randn(12), name="ndarray.cumsum(out=, flat)"),
    Case(np.ndarray.cumprod, randpos(3, 4), 0, None, randn(3, 4), name="ndarray.cumprod(out=)"),
]


OPTION_CASES = [
    # where=, initial=, keepdims=, dtype=, passed as keywords (constants) or, for initial=, positionally
    Case(np.sum, randn(3, 4), kwargs={"where": MASK, "axis": 1, "keepdims": True}, name="sum(where, keepdims)"),
    Case(np.sum, randn(3, 4), kwargs={"where": MASK[0], "initial": 1.5}, name="sum(where broadcast, initial)"),
    Case(np.sum, randn(3, 4), kwargs={"dtype": np.float32, "axis": 0}, name="sum(dtype=float32)", rtol=1e-3, atol=1e-4),
    Case(np.sum, randn(3, 4, dtype=np.float32), kwargs={"dtype": np.float64}, name="sum(float32, dtype=float64)"),
    Case(np.sum, randn(3, 4), 1, None, None, True, randn(), MASK, name="sum(keepdims, initial, where: positional)"),
    Case(np.ndarray.sum, randn(3, 4), kwargs={"where": MASK, "initial": -0.5, "keepdims": True},
         name="ndarray.sum(where, initial, keepdims)"),
    Case(np.prod, randn(3, 4), kwargs={"where": MASK, "axis": 1}, name="prod(where)"),
    Case(np.prod, randn(3, 4), 0, None, None, True, randn(), MASK, name="prod(keepdims, initial, where: positional)"),
    Case(np.ndarray.prod, randn(3, 4), kwargs={"where": MASK, "keepdims": True, "dtype": np.float64},
         name="ndarray.prod(where, keepdims, dtype)"),
    Case(np.mean, randn(3, 4), kwargs={"where": MASK, "axis": 1, "keepdims": True}, name="mean(where, keepdims)"),
    Case(np.mean, randn(3, 4), kwargs={"dtype": np.float32}, name="mean(dtype=float32)", rtol=1e-3, atol=1e-4),
    Case(np.ndarray.mean, randn(3, 4), kwargs={"where": MASK}, name="ndarray.mean(where)"),
    Case(np.max, randn(3, 4), kwargs={"where": MASK, "initial": -4.0, "axis": 0}, name="max(where, initial)"),
    Case(np.min, randn(3, 4), 1, None, True, 4.0, MASK, name="min(keepdims, initial, where: positional)"),
    Case(np.amax, randn(3, 4), kwargs={"axis": 1, "keepdims": True}, name="amax(keepdims)"),
    Case(np.amin, randn(3, 4), kwargs={"where": MASK, "initial": 5.0}, name="amin(where, initial)"),
    Case(np.ndarray.max, randn(3, 4), kwargs={"where": MASK, "initial": -4.0, "keepdims": True},
         name="ndarray.max(where, initial, keepdims)"),
    Case(np.nansum, randn(3, 4), kwargs={"where": MASK, "axis": 0, "keepdims": True}, name="nansum(where, keepdims)"),
    Case(np.nansum, randn(3, 4), kwargs={"initial": 2.0, "dtype": np.float64}, name="nansum(initial, dtype)"),
    Case(np.nanmean, randn(3, 4), kwargs={"where": MASK, "axis": 1}, name="nanmean(where)"),
    Case(np.nanmax, randn(3, 4), kwargs={"axis": 1, "keepdims": True}, name="nanmax(keepdims)"),
    Case(np.nanmin, randn(3, 4), kwargs={"where": MASK, "initial": 5.0, "axis": 0}, name="nanmin(where, initial)"),
    Case(np.std, randn(3, 4), kwargs={"where": MASK, "axis": 1, "keepdims": True}, name="std(where, keepdims)"),
    Case(np.var, randn(3, 4), kwargs={"where": MASK, "ddof": 1}, name="var(where, ddof)"),
    Case(np.var, randn(3, 4), kwargs={"dtype": np.float32, "axis": 0}, name="var(dtype=float32)", rtol=1e-3, atol=1e-4),
    Case(np.ndarray.std, randn(3, 4), kwargs={"where": MASK, "keepdims": True}, name="ndarray.std(where, keepdims)"),
    Case(np.cumsum, randn(3, 4), kwargs={"dtype": np.float32, "axis": 1}, name="cumsum(dtype)", rtol=1e-3, atol=1e-4),
    Case(np.cumprod, randn(3, 4), kwargs={"dtype": np.float64, "axis": 0}, name="cumprod(dtype)"),
    Case(np.ptp, randn(3, 4), kwargs={"axis": 0, "keepdims": True}, name="ptp(keepdims)"),
]


@pytest.mark.parametrize("case", OPTION_CASES, ids=_ids(OPTION_CASES))
def test_options(case):
    run_case(case)


SECOND_ORDER_OPTIONS = [c for c in OPTION_CASES if _real64(c) and not c.name.startswith(("sum(dtype", "mean(dtype", "var(dtype", "cumsum(dtype"))]


@pytest.mark.parametrize("case", SECOND_ORDER_OPTIONS, ids=_ids(SECOND_ORDER_OPTIONS))
def test_options_second_order(case):
    check_second_order(case.f, *case.args, kwargs=case.kwargs)


def _aliased(f, *tail):
    """``f(x, *tail, out=x)``: the result overwrites the input."""
    x = randn(3, 4)
    return Case(f, x, *tail[:-1], x, name=f"{f.__name__}(out=its input)")


ALIAS_CASES = [_aliased(np.cumsum, 0, None, "out"), _aliased(np.cumprod, 1, None, "out")]


def test_out_of_the_wrong_shape_is_refused_as_numpy_does():
    """Assigning would broadcast a (4,) result into a (1, 4) array; NumPy's out= refuses it."""
    for f in (lambda x: np.sum(np.sum(x, axis=0, out=np.zeros((1, 4)))),
              lambda x: np.sum(np.cumsum(x, axis=0, out=np.zeros((1, 3, 4)))),
              lambda x: np.sum(np.std(x, axis=0, out=np.zeros((1, 4))))):
        with pytest.raises(ValueError):
            f(X)
        with pytest.raises(ValueError, match="out="):
            yb.grad(f)(X)
        with pytest.raises(ValueError, match="out="):
            yb.jvp(f, (X,), (X,))
        with pytest.raises(ValueError, match="out="):
            yb.hvp(f, (X,), (X,))


@pytest.mark.parametrize("case", OUT_CASES + ALIAS_CASES, ids=_ids(OUT_CASES + ALIAS_CASES))
def test_out(case):
    run_case(case)


SECOND_ORDER_OUT = [c for c in OUT_CASES + ALIAS_CASES if _real64(c)]


@pytest.mark.parametrize("case", SECOND_ORDER_OUT, ids=_ids(SECOND_ORDER_OUT))
def test_out_second_order(case):
    check_second_order(case.f, *case.args, kwargs=case.kwargs)


def test_out_returns_the_out_array():
    """``np.sum(x, out=o) is o`` inside differentiated code, in every mode; the gradient of a
    program that reads ``o`` afterwards matches finite differences."""
    def f(x):
        o = np.zeros(4)
        r = np.sum(x * x, axis=0, out=o)
        r *= 2.0  # through the returned name: the same array as o
        return np.sum(o * np.arange(1.0, 5.0)) + float(r is o)

    x = randn(3, 4)
    expected = 2 * 2 * x * np.arange(1.0, 5.0)
    np.testing.assert_allclose(yb.grad(f)(x), expected, rtol=1e-12)
    _, t = yb.jvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(t, np.sum(expected), rtol=1e-12)
    _, _, (h,) = yb.hvp(f, (x,), (np.ones_like(x),))
    np.testing.assert_allclose(h, 4 * np.ones_like(x) * np.arange(1.0, 5.0), rtol=1e-12)


# ---------------------------------------------------------------- ufuncs: out=, where=, dtype=

def _in_place(f):
    x = randn(3, 4)
    return Case(f, x, x, kwargs={"where": MASK}, name=f"{f.__name__}(x, out=x, where=)")


UFUNC_CASES = [
    Case(np.sin, randn(3, 4), randn(3, 4), kwargs={"where": MASK}, name="sin(out=, where=)"),
    Case(np.exp, randn(3, 4), randn(3, 4), kwargs={"where": MASK[0]}, name="exp(out=, where= broadcast)"),
    Case(np.multiply, randn(3, 4), randn(4), randn(3, 4), kwargs={"where": MASK}, name="multiply(broadcast, out=, where=)"),
    Case(np.power, randpos(3, 4), randn(3, 4), randn(3, 4), kwargs={"where": MASK}, name="power(out=, where=)"),
    Case(np.log, np.where(MASK, randpos(3, 4), -1.0), randn(3, 4), kwargs={"where": MASK},
         name="log(out=, where= masks the negatives)"),
    Case(np.add, randn(3, 4), randn(3, 4), randn(3, 4), kwargs={"dtype": np.float32}, name="add(out=, dtype=float32)",
         rtol=1e-3, atol=1e-4),
    Case(np.sin, randn(3, 4), kwargs={"dtype": np.float32}, name="sin(dtype=float32)", rtol=1e-3, atol=1e-4),
    Case(np.tanh, randn(3, 4, dtype=np.float32), kwargs={"dtype": np.float64}, name="tanh(float32, dtype=float64)"),
    Case(np.hypot, randn(3, 4), randn(3, 4), kwargs={"dtype": np.float64}, name="hypot(dtype=float64)"),
    Case(np.sqrt, randpos(3, 4), randn(3, 4), kwargs={"where": MASK, "dtype": np.float64}, name="sqrt(out=, where=, dtype=)"),
    _in_place(np.sin),
    _in_place(np.square),
]


@pytest.mark.parametrize("case", UFUNC_CASES, ids=_ids(UFUNC_CASES))
def test_ufunc_options(case):
    run_case(case)


SECOND_ORDER_UFUNCS = [c for c in UFUNC_CASES if _real64(c) and "float32" not in c.name]


@pytest.mark.parametrize("case", SECOND_ORDER_UFUNCS, ids=_ids(SECOND_ORDER_UFUNCS))
def test_ufunc_options_second_order(case):
    check_second_order(case.f, *case.args, kwargs=case.kwargs)


def test_ufunc_where_without_out_is_refused():
    """NumPy leaves the unselected elements uninitialized: there is nothing to differentiate."""
    def f(x):
        return np.sum(np.sin(x, where=MASK))

    for run in (lambda: yb.grad(f)(X), lambda: yb.jvp(f, (X,), (X,)), lambda: yb.hvp(f, (X,), (X,))):
        with pytest.raises(Exception, match="where= without out="):
            run()


def test_ufunc_where_in_a_program():
    """A masked update of a buffer: the unselected elements keep their old values' derivatives."""
    def f(x):
        buf = x * 2.0
        np.exp(x, out=buf, where=x > 0)
        np.multiply(buf, x, out=buf, where=MASK)
        return np.sum(buf * buf)

    x = randn(3, 4)
    g = yb.grad(f)(x)
    eps = 1e-6
    fd = np.array([(f(x + eps * e) - f(x - eps * e)) / (2 * eps) for e in np.eye(12).reshape(12, 3, 4)]).reshape(3, 4)
    np.testing.assert_allclose(g, fd, rtol=1e-6, atol=1e-8)
    direction = randn(3, 4)
    _, t = yb.jvp(f, (x,), (direction,))
    np.testing.assert_allclose(t, np.sum(g * direction), rtol=1e-10)
    _, _, (hv,) = yb.hvp(f, (x,), (direction,))
    fd_hv = (yb.grad(f)(x + eps * direction) - yb.grad(f)(x - eps * direction)) / (2 * eps)
    np.testing.assert_allclose(hv, fd_hv, rtol=1e-5, atol=1e-6)
