"""numpy.ma masked arrays reaching ``np.where``, NumPy's joins, ``np.diff`` and ``np.sort``
(``rules/numpy_masked_joins.py``), in reverse, forward and second order against central
differences; the values (data and mask) are NumPy's own. NumPy reads the data under a mask in
``np.where`` and the joins, so those entries move the result and have a derivative; where the
result is masked, nothing may reach it."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .all_modes import check_all_modes

MASK = np.array([False, True, False, False, True, False])
X = np.array([1.3, -0.4, 0.7, -2.0, 2.1, 0.5])
Z = np.array([0.3, 1.2, -0.8, 0.5, 2.0, -0.7])
MASK2 = np.array([[False, True, False], [False, False, False], [True, False, False]])
X2 = np.array([[0.5, 1.5, -0.3], [2.0, -1.0, 0.8], [1.1, 0.9, 1.7]])


def _m(x, mask=MASK):
    return np.ma.array(x, mask=mask)


def _read(result):
    """A masked result as numbers: the data where it is not masked, 0 where it is."""
    return np.ma.filled(result, 0.0) if isinstance(result, np.ma.MaskedArray) else np.asarray(result)


def _weighted(f, shape):
    weights = np.cos(np.arange(np.prod(shape)) + 0.5).reshape(shape)
    return lambda x: np.sum(weights * _read(f(x)) ** 2)


FORMS = {
    "where(m > 0, m, z)": (lambda x: np.where(_m(x) > 0, _m(x), Z ** 2 * x), (6,)),
    "where(m > 0, x, z)": (lambda x: np.where(_m(x) > 0.6, np.sin(x), Z), (6,)),
    "concatenate([m, x])": (lambda x: np.concatenate([_m(x), x * Z]), (12,)),
    "stack((m, m * m))": (lambda x: np.stack((_m(x), _m(x) * _m(x)), axis=1), (6, 2)),
    "vstack / hstack": (lambda x: np.hstack([np.vstack([_m(x), Z]).ravel(), _m(x)]), (18,)),
    "append(m, x)": (lambda x: np.append(_m(x), x[:2]), (8,)),
    "diff(m)": (lambda x: np.diff(_m(x)), (5,)),
    "diff(m, n=2, prepend=)": (lambda x: np.diff(_m(x) * _m(x), n=2, prepend=x[0]), (5,)),
    "diff(m2, axis=0)": (lambda x: np.diff(_m(x.reshape(3, 3), MASK2), axis=0), (2, 3)),
    "sort(m)": (lambda x: np.sort(_m(x) * 2.0), (6,)),
    "sort(m2, axis=0)": (lambda x: np.sort(_m(x.reshape(3, 3), MASK2), axis=0), (3, 3)),
    "sort(m2, axis=None)": (lambda x: np.sort(_m(x.reshape(3, 3), MASK2), axis=None), (9,)),
    "ma.sort(m, endwith=False)": (lambda x: np.ma.sort(_m(x), endwith=False), (6,)),
    "ma.where(m > 0, m, x)": (lambda x: np.ma.where(_m(x) > 0, _m(x), np.exp(x)), (6,)),
    "ma.concatenate([m, m])": (lambda x: np.ma.concatenate([_m(x), _m(x[::-1])]), (12,)),
    "ma.diff(m)": (lambda x: np.ma.diff(_m(x) ** 2), (5,)),
}
INPUTS = {name: (X2.ravel() if "m2" in name else X) for name in FORMS}


@pytest.mark.parametrize("name", list(FORMS))
def test_every_mode_against_differences(name):
    form, shape = FORMS[name]
    check_all_modes(_weighted(form, shape), INPUTS[name].copy())


@pytest.mark.parametrize("name", list(FORMS))
def test_values_data_and_mask_are_numpys(name):
    form, _ = FORMS[name]
    x = INPUTS[name]
    value, _ = yb.jvp(form, (x.copy(),), (np.ones_like(x),))
    expected = form(x.copy())
    assert type(value) is type(expected)
    np.testing.assert_array_equal(np.ma.getdata(value), np.ma.getdata(expected))
    np.testing.assert_array_equal(np.ma.getmaskarray(value), np.ma.getmaskarray(expected))


def test_what_the_mask_hides_gets_no_derivative():
    """``np.diff(m)`` and ``np.sort(m)``: a masked entry reaches no unmasked result."""
    for f in (lambda x: np.sum(np.diff(_m(x)) ** 2), lambda x: np.sum(np.sort(_m(x))[:4] ** 3)):
        gradient = yb.grad(f)(X.copy())
        assert np.all(gradient[MASK] == 0.0) and np.any(gradient != 0.0), gradient


def test_sorting_in_place_is_refused_with_advice_that_works():
    def in_place(x):
        m = _m(x)
        m.sort()
        return np.sum(m[:4] ** 2)

    for call in (lambda: yb.grad(in_place)(X.copy()), lambda: yb.jvp(in_place, (X.copy(),), (Z,)),
                 lambda: yb.hvp(in_place, (X.copy(),), (Z,))):
        with pytest.raises(RuleArgumentError, match=r"MaskedArray.sort.*m = np.sort\(m\)"):
            call()

    def advised(x):
        m = _m(x)
        m = np.sort(m)
        return np.sum(m[:4] ** 2)

    assert advised(X.copy()) == in_place(X.copy())
    check_all_modes(advised, X.copy())


def test_arguments_are_restored():
    x = X.copy()
    yb.hvp(_weighted(*FORMS["sort(m)"]), (x,), (Z,))
    yb.grad(_weighted(*FORMS["concatenate([m, x])"]))(x)
    np.testing.assert_array_equal(x, X)


def test_third_order():
    from yuebing.testing.third_order import check_third_order

    for name in ("where(m > 0, m, z)", "concatenate([m, x])", "diff(m)", "sort(m)", "ma.where(m > 0, m, x)"):
        form, _ = FORMS[name]
        check_third_order(lambda x: np.sum(_read(form(x)) ** 3), X.copy())


@pytest.mark.parametrize("name", ["where(m > 0, m, z)", "concatenate([m, x])", "diff(m2, axis=0)", "sort(m2, axis=0)"])
def test_batched_forward_mode_matches_reverse(name):
    form, shape = FORMS[name]
    f = _weighted(form, shape)
    x = INPUTS[name]
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd", chunk_size=4)(x.copy()), yb.grad(f)(x.copy()), rtol=1e-10,
                               atol=1e-13)
