"""NumPy functions without a rule, derived from NumPy's own Python (``transform/protocols.
python_implementation``: the ``_implementation`` behind each C dispatcher; ``rules/numpy_internals``
and ``rules/ufunc_methods`` for the C helpers that source calls): reverse mode, forward mode and
Hessian-vector products against finite differences (``numpy_derived_forms.fd_check_all``), the
generic mechanisms (``out=...``, ``casting=``, a C implementation taking its dispatcher's rule,
``__array_function__`` overrides left alone) and ``np.piecewise``'s own source in every mode.

The fast sweep runs a few cheap functions; the whole sweep (every public NumPy function without a
rule that derives, and every dispatcher's ``_implementation`` that derives) is marked slow."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import MissingRuleError, RuleArgumentError
from yuebing.transform.protocols import python_implementation

from .numpy_derived_forms import FORMS, X1, X2, XS, fd_check_all, fd_gradient, fd_hvp, objective_for

#: public functions without a rule that derive in every mode (the sweep's "all three ok")
FAST = ["ediff1d", "vander", "polyadd", "polyder", "polyint", "polymul", "unstack", "nancumsum",
        "percentile", "broadcast_arrays", "block", "resize", "geomspace"]
SLOW = ["apply_over_axes", "asarray_chkfinite", "astype", "i0", "kaiser", "nancumprod", "nanmedian",
        "nanpercentile", "nanquantile", "poly", "polydiv", "polysub", "quantile", "require",
        "row_stack", "unwrap", "intersect1d", "union1d", "setxor1d", "sort_complex"]
#: dispatchers with rules whose own ``_implementation`` derives too (the rule is not needed)
IMPLEMENTATIONS = ["append", "atleast_2d", "average", "column_stack", "cumulative_sum", "delete", "diagonal",
                   "dstack", "flip", "hstack", "insert", "kron", "mean", "moveaxis", "piecewise", "roll",
                   "rot90", "select", "split", "squeeze", "stack", "swapaxes", "tile", "trapezoid", "tril",
                   "var", "vstack"]


def _check(function, name):
    call, x = (FORMS.get(name) or [(lambda f, v: f(v), X1)])[0]
    objective = objective_for(lambda y: call(function, y), call(function, x.copy()))
    assert objective is not None
    verdict = fd_check_all(objective, x)
    assert verdict == {"rev": "ok", "fwd": "ok", "hvp": "ok"}, verdict


@pytest.mark.parametrize("name", FAST)
def test_derived_from_numpy_source(name):
    _check(getattr(np, name), name)


@pytest.mark.slow
@pytest.mark.parametrize("name", SLOW)
def test_derived_from_numpy_source_sweep(name):
    _check(getattr(np, name), name)


@pytest.mark.slow
@pytest.mark.parametrize("name", IMPLEMENTATIONS)
def test_implementation_of_a_ruled_function_derives(name):
    _check(getattr(np, name)._implementation, name)


# ------------------------------------------------------------------ np.piecewise's own source

_piecewise = np.piecewise._implementation
PIECEWISE = {
    "two conditions": lambda x: np.sum(np.sin(_piecewise(x, [x < 1.2, x >= 1.2], [lambda t: t * t, lambda t: 3 * t]))),
    "otherwise": lambda x: np.sum(np.sin(_piecewise(x, [x < 1.2], [lambda t: t * t, lambda t: 3 * t]))),
    "a constant piece": lambda x: np.sum(np.sin(_piecewise(x, [x < 1.2, x >= 1.2], [lambda t: t * t, 2.0]))),
    "one bool array": lambda x: np.sum(np.sin(_piecewise(x, x < 1.2, [lambda t: t * t, lambda t: 3 * t]))),
    "a scalar": lambda x: np.sin(_piecewise(x[0], [x[0] < 1.2], [lambda t: t * t, lambda t: 3 * t])),
}


@pytest.mark.parametrize("name", PIECEWISE)
def test_piecewise_source_in_every_mode(name):
    assert fd_check_all(PIECEWISE[name], X1) == {"rev": "ok", "fwd": "ok", "hvp": "ok"}


# ------------------------------------------------------------------ the generic mechanisms


def test_out_ellipsis_gives_an_array_and_its_derivative():
    def f(x):
        y = np.multiply(x[0], x[1], out=...)
        if not isinstance(y, np.ndarray) or y.ndim != 0:  # (no assert: pytest rewrites those)
            raise TypeError("out=... must give a 0-d array")
        return np.sin(y) * x[2]

    assert fd_check_all(f, X1) == {"rev": "ok", "fwd": "ok", "hvp": "ok"}


def test_casting_into_out_of_the_same_dtype():
    def f(x):
        out = np.zeros(5)
        np.subtract(x, x[0] * x, out=out, casting="unsafe", where=x > 1.0)
        return np.sum(np.sin(out) * x)

    assert fd_check_all(f, X1) == {"rev": "ok", "fwd": "ok", "hvp": "ok"}


def test_casting_that_changes_the_dtype_is_refused():
    def f(x):
        out = np.zeros(5, dtype=np.float32)
        np.multiply(x, x, out=out, casting="unsafe")
        return np.sum(out)

    with pytest.raises(RuleArgumentError, match="casting"):
        yb.grad(f)(X1)


def test_a_c_implementation_takes_its_dispatchers_rule():
    """np.block calls numpy's C concatenate directly, not np.concatenate: the same rule."""
    from numpy._core import _multiarray_umath

    def f(x):
        return np.sum(np.sin(_multiarray_umath.concatenate([x, x[:2] * x[3]])))

    assert fd_check_all(f, X1) == {"rev": "ok", "fwd": "ok", "hvp": "ok"}


class _Overrides:
    """An argument NumPy hands the call to (its __array_function__), not to its implementation."""

    def __array_function__(self, func, types, args, kwargs):
        return "overridden"


def test_array_function_overrides_are_not_bypassed():
    assert python_implementation(np.ediff1d, (X1,), {}) is np.ediff1d._implementation
    assert python_implementation(np.ediff1d, (_Overrides(),), {}) is None
    assert python_implementation(np.ediff1d, ([X1, _Overrides()],), {}) is None
    assert python_implementation(np.concatenate, (X1,), {}) is None  # a C implementation


def test_a_c_helper_without_a_rule_still_refuses_by_name():
    from numpy._core import _multiarray_umath  # (np.bincount, the example before, has a rule now)

    with pytest.raises(MissingRuleError, match="dragon4_positional"):
        yb.grad(lambda x: np.sum(x) * float(_multiarray_umath.dragon4_positional(x[0], precision=3)))(X1)


def test_ufunc_reduce_and_accumulate_in_every_mode():
    def f(x):
        rows = np.hypot.reduce(x, axis=1) + np.multiply.reduce(x, axis=1)
        return np.sum(np.sin(np.maximum.accumulate(x, axis=0))) + np.sum(rows * np.subtract.outer(x[:, 0], x[0, :3])[0])

    assert fd_check_all(f, X2) == {"rev": "ok", "fwd": "ok", "hvp": "ok"}


def test_polymul_refuses_poly1d_rather_than_drop_its_derivative():
    with pytest.raises(RuleArgumentError, match="poly1d"):
        yb.grad(lambda p: np.sum(np.polymul(np.poly1d(p), p)))(X1)


def test_helpers_agree_with_finite_differences():
    """The checks themselves: a known gradient and Hessian-vector product of a quadratic."""
    v = np.ones(5)
    assert np.allclose(fd_gradient(lambda x: np.sum(x ** 2), X1), 2 * X1, atol=1e-6)
    assert np.allclose(fd_hvp(lambda x: np.sum(x ** 2), X1, v), 2 * v, atol=1e-5)
    assert XS.shape == (3, 3)
