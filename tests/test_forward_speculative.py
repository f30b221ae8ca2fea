"""Speculative JVPs (``transform/forward_speculative.py``, ``api/forward.py: _speculate``): a plain
function whose forward code only computes runs on the caller's own arrays, with no copies; where
it would do more (a rule call, an element write), or its output shares memory with an argument,
or its tangent holds a NaN, the ordinary path runs. The caller's arguments are never changed,
outputs are never the caller's arrays, random draws and errors are those of the ordinary path;
derivatives against central differences."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.transform.forward_runtime import _SPECULATIVE

X = np.linspace(0.3, 1.7, 6)
V = np.linspace(-1.0, 0.5, 6)


def _central(f, x, v, h=1e-6):
    return (f(x + h * v) - f(x - h * v)) / (2 * h)


def _jvps(f, x, v, times=3):
    """JVPs of ``f`` at copies kept to check they are left alone (the first call derives the
    rule; speculation starts with the second)."""
    x0, v0 = x.copy(), v.copy()
    results = [yb.jvp(f, (x,), (v,)) for _ in range(times)]
    np.testing.assert_array_equal(x, x0)
    np.testing.assert_array_equal(v, v0)
    return results


def _speculates(f):
    entry = _SPECULATIVE.get(f.__code__)
    return entry is not None and entry[1] is not None


def _computes(x):
    y = np.sin(x) * x + 2.0
    return np.sum(y * y)


def test_a_function_that_only_computes_speculates():
    for value, tangent in _jvps(_computes, X, V):
        assert value == _computes(X)
        assert tangent == pytest.approx(_central(_computes, X, V), rel=1e-7)
    assert _speculates(_computes)


def _writes_its_argument(x):
    x[0] = 2.0 * x[1]
    return np.sum(x * x)


def test_a_write_into_an_argument_stops_speculating_and_changes_nothing():
    for value, tangent in _jvps(_writes_its_argument, X.copy(), V.copy()):
        assert value == _writes_its_argument(X.copy())
        assert tangent == pytest.approx(_central(lambda u: _writes_its_argument(u.copy()), X, V), rel=1e-7)
    assert not _speculates(_writes_its_argument)


def _loop_writes(x, y):
    for i in range(len(x)):
        y[i] = x[i] * 3.0
    return np.sum(y)


def test_a_float_loop_writing_an_argument_is_not_speculated():
    x, y = X.copy(), np.zeros(6)
    for _ in range(3):
        value, tangent = yb.jvp(_loop_writes, (x, y), (V, np.ones(6)))
        assert value == pytest.approx(3.0 * np.sum(X)) and tangent == pytest.approx(3.0 * np.sum(V))
    np.testing.assert_array_equal(y, np.zeros(6))
    assert not _speculates(_loop_writes)


def _returns_its_argument(x):
    y = x
    return y


def _returns_a_tangent_unchanged(x):
    return x * 1.0


@pytest.mark.parametrize("f", [_returns_its_argument, _returns_a_tangent_unchanged])
def test_outputs_are_never_the_callers_arrays(f):
    x, v = X.copy(), V.copy()
    for value, tangent in _jvps(f, x, v):
        assert not np.may_share_memory(value, x) and not np.may_share_memory(value, v)
        assert not np.may_share_memory(tangent, x) and not np.may_share_memory(tangent, v)
        np.testing.assert_array_equal(value, f(X.copy()))
        np.testing.assert_allclose(tangent, V)
    assert _speculates(f) == (f is _returns_a_tangent_unchanged)  # the caller's memory: not again


def _pair(x):
    return np.sum(x * x), x * 2.0


def test_other_outputs_take_the_ordinary_path_from_then_on():
    for (s, y), (ds, dy) in _jvps(_pair, X, V):
        assert s == np.sum(X * X) and ds == pytest.approx(2.0 * np.sum(X * V))
        np.testing.assert_array_equal(y, 2.0 * X)
        np.testing.assert_array_equal(dy, 2.0 * V)
    assert not _speculates(_pair)


def _sqrt_sum(x):
    return np.sum(np.sqrt(x))


def test_a_nan_tangent_takes_the_strong_zero_pass():
    x, v = np.array([0.0, 4.0]), np.array([0.0, 1.0])
    for value, tangent in _jvps(_sqrt_sum, x, v):
        assert value == 2.0 and tangent == 0.25
    assert _speculates(_sqrt_sum)


def _draws(x):
    return np.sum(np.sin(x)) * np.random.uniform()


def test_random_draws_are_the_ordinary_paths():
    """A draw is a rule call: speculation stops before it, so each JVP draws once, as the
    function does."""
    for _ in range(3):
        np.random.seed(11)
        value, tangent = yb.jvp(_draws, (X,), (V,))
        after = np.random.uniform()
        np.random.seed(11)
        noise = np.random.uniform()
        assert value == pytest.approx(np.sum(np.sin(X)) * noise, rel=1e-15)
        assert tangent == pytest.approx(np.sum(np.cos(X) * V) * noise, rel=1e-12)
        assert after == np.random.uniform()


def _quotient(a, b):
    c = a * b
    return c / (a - 1.0)


def test_errors_are_raised_by_the_ordinary_path_naming_the_users_line():
    f = _quotient
    assert yb.jvp(f, (0.5, 2.0), (1.0, 0.0))[0] == f(0.5, 2.0)  # derived; speculates from now on
    for _ in range(3):
        with pytest.raises(ZeroDivisionError) as caught:
            yb.jvp(f, (1.0, 2.0), (1.0, 0.0))
        assert "test_forward_speculative.py" in "\n".join(getattr(caught.value, "__notes__", [])), caught.value
    assert _speculates(f) and yb.jvp(f, (3.0, 2.0), (1.0, 0.0)) == (3.0, -0.5)


LOG: list = []


def _logs(x):
    LOG.append(1)
    return np.sum(x * x)


def test_side_effects_happen_once_per_jvp():
    LOG.clear()
    _jvps(_logs, X, V, times=4)
    assert len(LOG) == 4
