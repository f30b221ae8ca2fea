"""numpy.ma masked arrays (rules/numpy_masked.py): each function and method in reverse mode,
forward mode and second order, against central differences that move only the entries the
result may depend on; masked entries get exactly zero, and NaN or inf under a mask never
reaches a derivative. What is not covered raises the named refusal."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

NAN = np.nan
#: data with a NaN, an inf and a negative number where the functions below mask them
X = np.array([1.3, NAN, 0.7, -2.0, 2.1, np.inf, 0.4, 1.9])
X2 = np.array([[0.5, 1.5, NAN], [2.0, -1.0, 0.8], [1.1, 0.9, 1.7]])
W = np.array([0.3, 1.2, 0.8, 0.5, 2.0, 0.7, 1.1, 0.6])


def _live(x):
    """The entries a perturbation may move: the finite, positive ones (the others are masked)."""
    return np.isfinite(x) & (x > 0)


def _finite(x):
    """The live entries of a function masking only what is not finite."""
    return np.isfinite(x)


def _central(f, x, direction, h=1e-6):
    return (f(x + h * direction) - f(x - h * direction)) / (2 * h)


def check_masked(f, x, live=_live, *, rtol=1e-6, atol=1e-8, second_order=True):
    """``f`` of float array ``x`` in every mode against central differences along directions
    that move only the ``live(x)`` entries; the gradient at the other entries must be exactly 0."""
    live = live(x)
    value, gradient = yb.value_and_grad(f)(x)
    assert np.all(np.isfinite(gradient)), gradient
    assert np.all(gradient[~live] == 0.0), gradient
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    for k in np.flatnonzero(live):
        e = np.zeros(x.size)
        e[k] = 1.0
        e = e.reshape(x.shape)
        np.testing.assert_allclose(gradient.flat[k], _central(f, x, e), rtol=1e-5, atol=1e-7)
    v = np.where(live, np.random.default_rng(0).standard_normal(x.shape), 0.0)
    primal_out, tangent = yb.jvp(f, (x,), (v,))
    assert np.isfinite(tangent)
    np.testing.assert_allclose(tangent, np.sum(gradient * v), rtol=rtol, atol=atol)  # forward = reverse
    np.testing.assert_allclose(tangent, _central(f, x, v), rtol=1e-5, atol=1e-7)
    batched = yb.jacobian(f, mode="fwd", chunk_size=3)(x)  # three directions a pass
    np.testing.assert_allclose(batched, gradient, rtol=rtol, atol=atol)
    if not second_order:
        return
    _, (hvp_gradient,), (product,) = yb.hvp(f, (x,), (v,))
    np.testing.assert_allclose(hvp_gradient, gradient, rtol=rtol, atol=atol)
    assert np.all(np.isfinite(product)), product
    assert np.all(product[~live] == 0.0), product
    grad = yb.grad(f)
    expected = (grad(x + 1e-5 * v) - grad(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(product, expected, rtol=1e-4, atol=1e-6)
    hessian = yb.hessian(f)(x)
    np.testing.assert_allclose(hessian.reshape(x.size, x.size) @ v.ravel(), product.ravel(), rtol=1e-8, atol=1e-10)


def _invalid_sum(x):
    return np.ma.masked_invalid(x).sum()


def _where_mean(x):
    return np.ma.masked_where(~(x > 0) | np.isinf(x), x).mean()


def _sqrt_log(x):
    m = np.ma.masked_invalid(x)
    return (np.ma.sqrt(m) * np.ma.log(m)).sum()  # masked where x <= 0 (the domains) or not finite


def _exp_weighted(x):
    m = np.ma.masked_invalid(x)
    return np.ma.average(np.ma.exp(-m) * m, weights=np.ma.sqrt(m) + W)


def _arithmetic(x):
    m = np.ma.masked_where(~(x > 0) | ~np.isfinite(x), x)
    y = (2.0 * m - x * m) / (1.0 + m) + m / 3.0 - 1.0
    return (y * y).sum()


def _filled(x):
    m = np.ma.masked_invalid(x)
    m = np.ma.masked_less(m, 0.0)
    return np.sum(m.filled(0.5) ** 2) + np.sum(np.ma.filled(m * m, 0.0))


def _compressed(x):
    m = np.ma.masked_array(np.where(np.isfinite(x), x, 0.0), mask=~_live(x))
    c = m.compressed()
    return np.sum(np.sin(c) * c) + np.ma.compressed(m * 2.0).sum()


def _array_with_mask(x):
    data = np.where(np.isfinite(x), x, 0.0)
    m = np.ma.array(data, mask=~_live(x))
    return (m ** 1 if False else m * m).mean() + m[m > 1.0].sum() + m[2:].sum()


def _data_and_mask(x):
    m = np.ma.masked_where(~_live(x), x)
    kept = np.where(m.mask, 0.0, m.data)  # m.data under the mask holds x itself: selected away
    return np.sum(kept ** 3) + float(m.count())


def _axis_reductions(x):
    m = np.ma.masked_invalid(x.reshape(x.shape[0] // 2, 2) if x.ndim == 1 else x)
    m = np.ma.masked_less_equal(m, 0.0)
    return np.sum(m.sum(axis=0).filled(0.0) ** 2) + np.sum(m.mean(axis=1).filled(0.0) * 3.0)


def _items(x):
    m = np.ma.masked_invalid(x)
    m = np.ma.masked_less(m, 0.0)
    total = m[0] * m[2]
    for k in (4, 6, 7):
        total = total + np.ma.exp(m[k])
    return total


def _more_functions(x):
    m = np.ma.asarray(np.ma.masked_invalid(x))
    m = np.ma.masked_less_equal(m, 0.0)
    y = np.ma.sin(m) + np.ma.cos(m) * np.ma.tanh(m) - np.ma.arctan(m) + np.ma.log2(m) + np.ma.log10(m)
    z = np.ma.hypot(m, 1.5) + np.ma.arctan2(m, 2.0) + np.ma.divide(1.0, m) + np.ma.absolute(m - 1.0)
    return np.ma.subtract(np.ma.add(y, z), np.ma.multiply(m, 0.5)).sum() + np.ma.negative(m).mean()


def _spread(x):
    m = np.ma.masked_invalid(x)
    m = np.ma.masked_less(m, 0.0)
    return m.std() + m.var(ddof=1) * 2.0 + np.sum((m ** 2).filled(0.0)) + (1.5 ** m).sum() + np.ma.power(m, m).mean()


def _axis_spread(x):
    m = np.ma.masked_less_equal(np.ma.masked_invalid(x), 0.0)
    return np.sum(m.std(axis=0).filled(0.0)) + np.sum(m.var(axis=1, ddof=1).filled(0.0) ** 2)


def _normalised(x):
    m = np.ma.masked_less(np.ma.masked_invalid(x), 0.0)
    scaled = (m - m.min()) / (m.max() - m.min())
    rows = np.ma.masked_invalid(X2 * x[:3])
    return np.sum(scaled.filled(0.0) ** 2) + np.sum(rows.max(axis=0).filled(0.0)) - rows.min(axis=1).sum()


def _function_forms(x):
    m = np.ma.masked_less(np.ma.masked_invalid(x), 0.0)
    plain = np.where(_live(x), x, 0.0) * 0.5
    return (np.ma.sum(m) + np.ma.mean(m * m) + np.ma.var(m) + np.ma.std(m, ddof=1) + np.ma.max(m) - np.ma.min(m)
            + np.ma.sum(plain) + np.ma.max(plain) + np.ma.average(m) + np.ma.median(m) * 3.0
            + np.ma.median(m[:-1]))  # an odd and an even number of unmasked entries


def _both(x):
    """Masked where not finite or negative."""
    return np.ma.masked_less(np.ma.masked_invalid(x), 0.0)


def _numpy_functions(x):
    """NumPy's own reductions call the masked array's method (np.sum(m) is m.sum())."""
    m = _both(x)
    return (np.sum(m) + np.mean(m * 2.0) + np.max(m) - np.min(m) + np.var(m) + np.std(m, ddof=1)
            + np.sum(np.prod(m.reshape(4, 2), axis=1)) + np.amax(m) * np.amin(m))


def _numpy_functions_along_axes(x):
    """Their axis=, keepdims= and positional options are passed on to the method, as NumPy passes them."""
    m = _both(x).reshape(2, 4)
    return (np.sum(np.sum(m, axis=1, keepdims=True) * m) + np.max(m, axis=0).sum() + np.mean(m, 1).sum()
            + np.var(m, axis=1, ddof=1).sum() + np.cumsum(m, axis=1).sum() + np.sum(np.sqrt(m), 0).sum())


def _numpy_ufuncs(x):
    """np.sin(m): the ufunc on the data, masked (and filled) where an operand is masked or outside its domain."""
    m = _both(x)
    return (np.sin(m).sum() + np.sqrt(m).sum() + np.log(m - 0.5).sum() + np.add(m, x).sum()
            + np.multiply(x, m).mean() + np.arctan2(m, 2.0).sum() + np.divide(1.0, m - 0.5).sum())


def _products_and_cumulative(x):
    m = _both(x)
    return (m.prod() + np.prod(m) + np.ma.prod(m) + (m.cumsum() ** 2).sum() + np.cumsum(m).sum()
            + m.cumprod().sum() + np.ma.cumsum(m * m).mean())


def _shapes(x):
    m = _both(x)
    weights = np.arange(8.0).reshape(4, 2)
    return ((m.reshape(2, 4).T * weights).sum() + m.reshape(4, 2).transpose().sum(axis=1).sum()
            + np.transpose(m.reshape(2, 4)).max(axis=1).sum() + (np.ravel(m.reshape(2, 4)) * x).sum())


def _medians_along_axes(x):
    m = _both(x)
    return (np.ma.median(m.reshape(2, 4), axis=0).sum() + np.ma.median(m.reshape(4, 2), axis=1).sum() * 2.0
            + np.ma.median(m.reshape(2, 4), axis=-1).sum())


def _anomalies(x):
    m = _both(x)
    return (np.ma.anom(m) ** 2).sum() + (m.reshape(2, 4).anom(axis=1) ** 2).sum() + np.ma.anomalies(m).max()


def _loops(x):
    total = 0.0
    for v in _both(x):
        total = total + (v * v if v is not np.ma.masked else 0.0)
    rows = sum(w.sum() for w in _both(x).reshape(4, 2))  # rows of a 2-D masked array: masked arrays
    items = sum(_both(x)[[0, 2, 6]])  # Python's sum of the items
    return total + rows + items


def _max_data_along_axis(x):
    """A slice all masked: its maximum's data is NumPy's fill value, a constant (no derivative)."""
    m = np.ma.masked_invalid(np.stack([x[:4], np.full(4, np.nan)], axis=1))
    return np.sum(m.max(axis=0).data[:1] * 2.0) + np.sum(np.where(m.max(axis=1).mask, 0.0, m.max(axis=1).data))


def _writes(x):
    """``m[i] = v`` where ``m[i]`` is not masked: the data written (the mask stays)."""
    m = _both(x)
    m[0] = x[2] * x[7]
    m[6:] = np.sin(x[6:])
    m[np.array([False, False, True, False, False, False, False, False])] = m[4] * 2.0
    return (m * m).sum() + np.ma.sqrt(m).mean()


def _updates_in_place(x):
    """``m += n``, ``m -= n``, ``m *= n`` (``n`` masking no more than ``m``): the data updated where unmasked."""
    m = _both(x)
    m += np.where(_live(x), x, 0.0) ** 2
    m *= 0.5 * np.where(_live(x), x, 1.0)
    m -= _both(x[::-1])[::-1] * 0.5
    return (m * m).sum() + m.mean()


def _write_through_a_view(x):
    y = np.where(_live(x), x, 0.0)
    m = np.ma.array(y, mask=~_live(x))  # m views y: a write into m is one into y
    m[2] = y[0] ** 2
    m += y
    return (m * m).sum() + np.sum(y ** 2)


CASES = {
    "masked_invalid sum": (_invalid_sum, X, _finite),
    "masked_where mean": (_where_mean, X),
    "sqrt and log mask their domains": (_sqrt_log, X),
    "average with weights": (_exp_weighted, X),
    "arithmetic with arrays and scalars": (_arithmetic, X),
    "filled": (_filled, X),
    "compressed": (_compressed, X),
    "array with mask, boolean and slice items": (_array_with_mask, X),
    "data and mask": (_data_and_mask, X),
    "axis reductions": (_axis_reductions, X2),
    "scalar items": (_items, X),
    "more numpy.ma functions": (_more_functions, X),
    "std, var and powers": (_spread, X),
    "std and var along axes": (_axis_spread, X2),
    "max and min": (_normalised, X),
    "function forms": (_function_forms, X),
    "NumPy's reductions": (_numpy_functions, X),
    "NumPy's reductions along axes": (_numpy_functions_along_axes, X),
    "NumPy's ufuncs": (_numpy_ufuncs, X),
    "prod, cumsum, cumprod": (_products_and_cumulative, X),
    "T, transpose, reshape, ravel": (_shapes, X),
    "median along an axis": (_medians_along_axes, X),
    "anom": (_anomalies, X),
    "loops and sum": (_loops, X),
    "writes m[i] = v": (_writes, X),
    "m += n, m -= n, m *= n": (_updates_in_place, X),
    "writes through a view of an array": (_write_through_a_view, X),
    "max's data along an axis": (_max_data_along_axis, X, lambda x: np.r_[_finite(x[:4]), np.zeros(4, bool)]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_every_mode(name):
    f, x, *live = CASES[name]
    check_masked(f, x.copy(), *live)


def _all_masked(x):
    """Every numpy.ma result that can be ``np.ma.masked`` (a constant, with no derivative), each
    replaced by 0.0 as user code does, beside a live term."""
    m = np.ma.masked_where(np.ones(x.shape, bool), x)
    values = (m.sum(), m.mean(), m.var(), m.std(ddof=1), m.max(), m.min(), np.ma.median(m), m[1],
              np.ma.sum(m), np.ma.average(m), np.ma.average(m, weights=W), np.ma.power(m[0], 2.0),
              np.ma.sqrt(m[2]), m[0] * x[1], 2.0 ** m[3])
    total = np.sum(np.sin(x) * x)
    for value in values:
        total = total + (0.0 if value is np.ma.masked else value)
    return total


def test_masked_constant_results_carry_no_derivative():
    """A result that is ``np.ma.masked`` (all entries masked) is a constant: no derivative, in
    debug mode too (the suite's: a rule returning it drops nothing, seeds 1, 8 of the fuzzer)."""
    check_masked(_all_masked, W.copy(), lambda x: np.ones(x.shape, bool))
    check_masked_third_order(_all_masked, W.copy(), lambda x: np.ones(x.shape, bool))


def test_masked_entries_data_is_followed():
    """``m.data`` reads the data under the mask too: its derivative reaches the masked entries."""
    x = np.array([1.0, 2.0, -3.0, 4.0])

    def f(x):
        m = np.ma.masked_less(x, 0.0)
        return np.sum(m.data ** 2) + m.sum()

    g = yb.grad(f)(x)
    np.testing.assert_allclose(g, 2 * x + (x >= 0))
    _, t = yb.jvp(f, (x,), (np.ones(4),))
    np.testing.assert_allclose(t, np.sum(g))


def test_masked_array_output_tangent_is_the_data_tangent():
    x = np.array([1.0, -2.0, 4.0])
    out, t = yb.jvp(lambda x: np.ma.sqrt(np.ma.masked_less(x, 0.0)), (x,), (np.ones(3),))
    assert isinstance(out, np.ma.MaskedArray) and list(out.mask) == [False, True, False]
    assert type(t) is np.ndarray
    np.testing.assert_allclose(t[[0, 2]], 0.5 / np.sqrt(x[[0, 2]]))
    assert t[1] == 1.0  # NumPy keeps the input's data under the mask: so does its tangent


def test_masked_array_argument():
    """A masked array passed in: its gradient is a plain array over its data, 0 where masked."""
    m = np.ma.array([1.0, 2.0, 3.0], mask=[False, True, False])

    def f(m):
        return (m * m).sum()

    g = yb.grad(f)(m)
    assert type(g) is np.ndarray
    np.testing.assert_allclose(g, np.where(m.mask, 0.0, 2 * m.data))
    v = np.array([0.3, -1.0, 0.7])
    _, t = yb.jvp(f, (m,), (v,))
    np.testing.assert_allclose(t, np.sum(g * v))
    _, (g2,), (hv,) = yb.hvp(f, (m,), (v,))
    np.testing.assert_allclose(g2, g)
    grad = yb.grad(f)
    np.testing.assert_allclose(hv, (grad(m + 1e-5 * v) - grad(m - 1e-5 * v)) / 2e-5, rtol=1e-6)


def _unmasked_by_a_write(x):
    m = np.ma.masked_invalid(x)
    m[1] = 5.0  # NumPy unmasks m[1], in place
    return m.sum()


def _masked_by_a_write(x):
    m = np.ma.masked_invalid(x)
    m[0] = np.ma.masked
    return m.sum()


def _sorted_in_place(m):
    m.sort()
    return m.sum()


def _masked_by_an_update(x):
    m = np.ma.masked_invalid(x)
    m += np.ma.masked_less(x, 1.5)  # masks m[0] too
    return m.sum()


REFUSED = {
    "np.sum with a float initial=": lambda x: np.sum(np.ma.masked_invalid(x), initial=x[0]),
    "np.cumsum with out=": lambda x: np.cumsum(np.ma.masked_invalid(x), out=np.zeros(3)).sum(),
    "np.sin with out=": lambda x: np.sin(np.ma.masked_invalid(x), out=np.zeros(3)).sum(),
    "m.sort() in place": lambda x: _sorted_in_place(np.ma.masked_invalid(x)),  # (np.where, np.concatenate,
    # np.diff, np.sort: tests/test_numpy_masked_joins.py)
    "a write unmasking an entry": _unmasked_by_a_write,
    "a write of np.ma.masked": _masked_by_a_write,
    "an in-place add masking more": _masked_by_an_update,
}


@pytest.mark.parametrize("name", list(REFUSED))
def test_uncovered_forms_refuse(name):
    """Anything else reaching a masked array is refused by name, in every mode, never wrong."""
    f, x = REFUSED[name], np.array([1.0, NAN, 2.0])
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.grad(f)(x)
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.jvp(f, (x,), (np.ones(3),))
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.hvp(f, (x,), (np.ones(3),))
    with pytest.raises(RuleArgumentError, match="masked"):
        yb.hvp(lambda x: np.sum(yb.grad(f)(x)), (x,), (np.ones(3),))


def test_the_refusal_advice_works_as_printed():
    """The advice for np.sum(m): np.sum(m.filled(0.0)), in every mode."""
    check_masked(lambda x: np.sum(np.ma.masked_invalid(x).filled(0.0) ** 2), X, _finite)


def test_composed_transforms_agree_with_hvp():
    """yb.jvp of yb.grad and yb.grad of yb.jvp give what yb.hvp gives."""
    x, v = X.copy(), np.where(_live(X), np.linspace(0.5, 1.5, X.size), 0.0)
    _, _, (expected,) = yb.hvp(_sqrt_log, (x,), (v,))
    np.testing.assert_allclose(yb.jvp(yb.grad(_sqrt_log), (x,), (v,))[1], expected, rtol=1e-10)
    np.testing.assert_allclose(yb.grad(lambda x: yb.jvp(_sqrt_log, (x,), (v,))[1])(x), expected, rtol=1e-10)


def check_masked_third_order(f, x, live=_live, masked_zero=True):
    """Third derivatives: yb.hvp of ``F(x) = <u, grad f(x)>`` against central differences of
    ``F``'s gradient (reverse over reverse), along directions moving only the live entries."""
    live = live(x)
    rng = np.random.default_rng(1)
    u, v = (np.where(live, rng.standard_normal(x.shape), 0.0) for _ in range(2))

    def F(x):
        return np.sum(yb.grad(f)(x) * u)

    value, (gradient,), (product,) = yb.hvp(F, (x,), (v,))
    reverse_over_reverse = yb.grad(F)
    np.testing.assert_allclose(value, F(x), rtol=1e-12)
    np.testing.assert_allclose(gradient, reverse_over_reverse(x), rtol=1e-8, atol=1e-10)
    expected = (reverse_over_reverse(x + 1e-5 * v) - reverse_over_reverse(x - 1e-5 * v)) / 2e-5
    np.testing.assert_allclose(product, expected, rtol=1e-4, atol=1e-6)
    assert np.all(np.isfinite(product)), product
    if masked_zero:
        assert np.all(product[~live] == 0.0), product


@pytest.mark.parametrize("name", list(CASES))
def test_third_order(name):
    f, x, *live = CASES[name]
    check_masked_third_order(f, x.copy(), *live)


def test_third_order_follows_data_under_the_mask():
    """``m.data`` reads the masked entries: their third derivatives are followed too."""
    def f(x):
        m = np.ma.masked_less(x, 0.0)
        return np.sum(np.sin(m.data) * m.data ** 2) + (m * m * m).sum()

    check_masked_third_order(f, np.array([1.0, 2.0, -3.0, 0.5]), lambda x: np.ones(x.shape, bool), masked_zero=False)


def test_third_order_of_a_masked_argument():
    """A masked array passed to the function under yb.grad (its tangent a plain array)."""
    m = np.ma.array([1.0, 2.0, 3.0, 0.5], mask=[False, True, False, False])

    def f(x):
        return np.ma.sqrt(np.ma.masked_array(x, mask=m.mask) * m).sum() + (m * x).max()

    check_masked_third_order(f, np.array([0.7, 1.3, 2.2, 0.4]), lambda x: ~m.mask)


def test_masked_output_jacobians_follow_the_data():
    """A masked array returned: its cotangent and tangent are over its data, masked entries too
    (NumPy keeps the input's data there): reverse and forward Jacobians against differences of ``out.data``."""
    x = np.array([1.0, -2.0, 4.0, 0.5])

    def f(x):
        return np.ma.sqrt(np.ma.masked_less(x, 0.0)) * x - 1.0

    reverse, forward = yb.jacobian(f)(x), yb.jacobian(f, mode="fwd")(x)
    np.testing.assert_allclose(reverse, forward, rtol=1e-12)
    columns = [(f(x + h).data - f(x - h).data) / 2e-6 for h in np.eye(4) * 1e-6]
    np.testing.assert_allclose(reverse, np.stack(columns, axis=1), rtol=1e-6, atol=1e-8)
    out, pullback = yb.vjp(f, x)
    assert isinstance(out, np.ma.MaskedArray)
    np.testing.assert_allclose(pullback(np.ones(4))[0], reverse.sum(axis=0), rtol=1e-12)


def _written_through_a_view(x):
    y = x * 1.0
    m = np.ma.array(y, mask=[False, True, False, False])  # copy=False: m views y's memory
    y[0] = y[2] ** 2  # seen through m
    return (m * m).sum()


def test_masked_array_viewing_an_array_sees_its_writes():
    check_masked(_written_through_a_view, np.array([0.7, 1.3, -0.4, 2.0]), lambda x: np.array([False, False, True, True]))
