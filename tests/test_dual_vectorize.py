"""np.vectorize in second order, element by element (transform/dual_vectorize.py): against
central differences of the gradient, with captured variables and outputs that are not floats."""
import math

import numpy as np
import pytest

from yuebing.testing.second_order import check_second_order

rng = np.random.default_rng(5)
X, W = rng.normal(size=(3, 4)), rng.normal(size=3)


def plain(x):
    return np.sum(np.vectorize(lambda v: np.sin(np.cos(np.exp(v))))(x))


def capturing(x, w):
    """The element function reads a differentiable array and float of the caller."""
    scale = w[1] * 2.0
    return np.sum(np.vectorize(lambda v: math.tanh(v * scale) + w[0] * v * v)(x) ** 2)


def integer_valued(x):
    """An element function returning ints: no derivative through it (the general rule)."""
    return np.sum(np.vectorize(lambda v: 1 if v > 0 else 0)(x) * x * x)


def test_plain_element_function():
    check_second_order(plain, X)


def test_captured_variables():
    check_second_order(capturing, X, W)


def test_integer_outputs_take_the_general_rule():
    check_second_order(integer_valued, X)


# ------------------------------------------------------------------ on the whole array

import pytest  # noqa: E402

import yuebing as yb  # noqa: E402
from yuebing.transform import dual_vectorize  # noqa: E402


def chained(x):
    """Elementwise in its parameter alone: its dual rule runs once on the array."""
    return np.sum(np.vectorize(lambda v: np.tanh(-v * 0.5 + 1.0) * np.log(v * v + 2.0) / 3.0)(x) * x)


def divides_by_the_element(x):
    return np.sum(np.vectorize(lambda v: 1.0 / v + np.sin(v))(x))


def test_elementwise_functions_run_on_the_array():
    assert dual_vectorize.whole_array(lambda v: np.sin(np.cos(np.exp(v))))
    assert not dual_vectorize.whole_array(lambda v: 1.0 / v)  # a Python float raises at 0
    assert not dual_vectorize.whole_array(lambda v: v ** 2)  # a Python float power may overflow
    assert not dual_vectorize.whole_array(lambda v: math.sin(v) + v)  # math functions take floats
    assert not dual_vectorize.whole_array(lambda v: v * X[0, 0] + np.sum(v))  # np.sum is no elementwise op
    check_second_order(chained, X)
    check_second_order(plain, X)


def test_on_the_array_as_element_by_element(monkeypatch):
    direction = (rng.normal(size=X.shape),)
    whole = yb.hvp(chained, (X,), direction)
    with monkeypatch.context() as m:
        m.setattr(dual_vectorize, "whole_array", lambda fn: False)
        one_by_one = yb.hvp(chained, (X,), direction)
    assert whole[0] == pytest.approx(one_by_one[0], rel=1e-12)
    for a, b in zip(whole[1] + whole[2], one_by_one[1] + one_by_one[2]):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_division_by_the_element_raises_as_the_plain_call():
    x = np.array([1.0, 0.0, 2.0])
    with pytest.raises(ZeroDivisionError):
        divides_by_the_element(x)
    with pytest.raises(ZeroDivisionError):
        yb.hvp(divides_by_the_element, (x,), (np.ones(3),))
    check_second_order(divides_by_the_element, X + 3.0)


def _pick(a, b):
    return a * b if a > 0 else b


def _scaled(a, b, power=2.0):
    return (a - b) ** power


def _several_arguments(x):
    return np.sum(np.vectorize(_pick)(x, x[::-1]))


def _broadcast_scalar_and_keyword(x):
    return np.sum(np.vectorize(_scaled)(x.reshape(2, 2), x[:2] * 0.5, power=3.0)) \
        + np.sum(np.vectorize(_pick)(x, 1.5)) + float(np.vectorize(_pick)(x[0], x[1]))


def _excluded_and_otypes(x):
    vec = np.vectorize(lambda a, table: a * table[0] + table[1], excluded={1}, otypes=[float])
    excluded_keyword = np.vectorize(_scaled, excluded={"power"})
    return np.sum(vec(x, [x[0], 2.0]) ** 2) + np.sum(excluded_keyword(x, b=x[1], power=2.0))


@pytest.mark.parametrize("f", [_several_arguments, _broadcast_scalar_and_keyword, _excluded_and_otypes],
                         ids=lambda f: f.__name__)
def test_vectorize_of_several_arguments_in_every_mode(f):
    """It was refused ("one array argument and no signature"): now the definition
    rules.differentiated.vectorized_call_of, in reverse, forward and second order."""
    from tests.all_modes import check_all_modes

    check_all_modes(f, np.array([0.4, -1.3, 0.7, 2.0]))


_ROWS = rng.normal(size=(4, 3))
_DIRECTION = np.array([0.5, -1.0, 2.0])


def _row_norms(x):
    return np.sum(np.vectorize(lambda r: np.sum(r ** 2) * r[0], signature="(n)->()")(x.reshape(4, 3)))


def _two_arguments_broadcast(x):
    return np.sum(np.vectorize(lambda r, s: np.dot(r, s) ** 2, signature="(n),(n)->()")(x.reshape(4, 3), _DIRECTION))


def _vector_output(x):
    return np.sum(np.sin(np.vectorize(lambda r: r * np.sum(r), signature="(n)->(n)")(x.reshape(2, 2, 3))))


def _two_outputs_and_a_new_dimension(x):
    total, outer = np.vectorize(lambda r: (np.sum(r), np.outer(r, r)[:2]), signature="(n)->(),(m,n)")(x.reshape(4, 3))
    return np.sum(total ** 3) + np.sum(outer ** 2)


def _keyword_excluded_and_otypes(x):
    vec = np.vectorize(lambda r, scale, table: np.sum(r * scale) * table[0], signature="(n),()->()",
                       excluded={"table"}, otypes=[float])
    return np.sum(vec(x.reshape(4, 3), scale=x[:4].reshape(4), table=[x[0], 2.0]) ** 2)


def _captured_variable(x):
    rows = x.reshape(4, 3)
    return np.sum(np.vectorize(lambda r: np.sum(rows[0] * r) ** 2, signature="(n)->()")(_ROWS))


@pytest.mark.parametrize("f", [_row_norms, _two_arguments_broadcast, _vector_output, _two_outputs_and_a_new_dimension,
                               _keyword_excluded_and_otypes, _captured_variable], ids=lambda f: f.__name__)
def test_vectorize_with_a_signature_in_every_mode(f):
    """It was refused ("without a signature"): now rules.numpy_vectorize.signature_call_of, in
    reverse, forward (also batched: jacobian(mode="fwd")) and second order."""
    from tests.modes import check_every_mode

    check_every_mode(f, _ROWS.ravel())


def test_vectorize_with_a_signature_gives_numpys_values_and_errors():
    from yuebing.rules.numpy_vectorize import signature_call_of

    def same(pyfunc, signature, *args, otypes=None, **kwargs):
        expected = np.vectorize(pyfunc, signature=signature, otypes=otypes)(*args, **kwargs)
        got = signature_call_of(pyfunc, signature, frozenset(), otypes, *args, **kwargs)
        for e, g in zip(expected if isinstance(expected, tuple) else (expected,), got if isinstance(got, tuple) else (got,)):
            assert e.dtype == g.dtype and e.shape == g.shape
            np.testing.assert_array_equal(e, g)

    same(lambda r: np.sum(r), "(n)->()", _ROWS)
    same(lambda r, s: r * s, "(n),()->(n)", _ROWS, np.arange(4.0)[:, None])
    same(lambda r: (r.max(), np.cumsum(r)), "(n)->(),(n)", _ROWS)
    same(lambda r: np.sum(r), "(n)->()", np.zeros((0, 3)), otypes=[float])
    same(lambda r: 1 if r[0] > 0 else 0, "(n)->()", _ROWS)
    for args, error in [((_ROWS, _ROWS[:, :2]), ValueError), ((np.zeros((0, 3)),), ValueError), ((_ROWS, _ROWS, _ROWS), TypeError)]:
        with pytest.raises(error):
            np.vectorize(lambda *r: 0.0, signature="(n),(n)->()" if len(args) != 1 else "(n)->()")(*args)
        with pytest.raises(error):
            signature_call_of(lambda *r: 0.0, "(n),(n)->()" if len(args) != 1 else "(n)->()", frozenset(), None, *args)
