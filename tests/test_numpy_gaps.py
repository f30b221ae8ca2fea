"""Gaps of the NumPy sweep (issue 14): each form in reverse, forward and second order against
finite differences (``numpy_derived_forms.fd_check_all``), or refused by name.

* ``dtype=`` given as a DType class (``type(np.dtype(float))``, as ``np.linspace``'s source
  passes it to ``np.subtract``): ``np.dtype`` of a DType class is ``object``, and second order
  cast the inputs to object arrays, which carry no derivative: the gradient and the
  Hessian-vector product were silently zero. An explicit ``dtype=object`` is refused."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

from .numpy_derived_forms import X1, fd_check_all

ALL_OK = {"rev": "ok", "fwd": "ok", "hvp": "ok"}
F64_CLASS = type(np.dtype(np.float64))  # numpy.dtypes.Float64DType

DTYPE_CLASS_FORMS = {
    "linspace's source": lambda x: np.sum(np.sin(np.linspace._implementation(x[0], x[1], 4))),
    "subtract of 0-d arrays": lambda x: np.sin(np.subtract(np.asarray(x[1]), np.asarray(x[0]), dtype=F64_CLASS)),
    "subtract of arrays": lambda x: np.sum(np.sin(np.subtract(x[1:], x[0], dtype=F64_CLASS))),
    "sin": lambda x: np.sum(np.sin(np.sin(x, dtype=F64_CLASS))),
    "multiply into out=": lambda x: np.sum(np.sin(np.multiply(x, x, out=np.empty(5), dtype=F64_CLASS))),
    "sum": lambda x: np.sin(np.sum(x * x, dtype=F64_CLASS)),
    "add.reduce": lambda x: np.sin(np.add.reduce(x * x, dtype=F64_CLASS)),
    "astype": lambda x: np.sum(np.sin((x * x).astype(F64_CLASS))),
    "linspace": lambda x: np.sum(np.sin(np.linspace(x[0], x[1], 4, dtype=F64_CLASS))),
}


@pytest.mark.parametrize("name", DTYPE_CLASS_FORMS)
def test_dtype_given_as_a_dtype_class(name):
    assert fd_check_all(DTYPE_CLASS_FORMS[name], X1) == ALL_OK


@pytest.mark.parametrize("mode", ["rev", "fwd", "hvp"])
def test_a_ufunc_into_object_dtype_is_refused(mode):
    def f(x):
        return float(np.sum(np.multiply(x, x, dtype=object)))

    run = {"rev": lambda: yb.grad(f)(X1), "fwd": lambda: yb.jvp(f, (X1,), (X1,)),
           "hvp": lambda: yb.hvp(f, (X1,), (X1,))}[mode]
    with pytest.raises(RuleArgumentError, match="dtype=object"):
        run()


# ------------------------------------------------------------------ out=None and subok= passed on

def _source(name):
    return getattr(np, name)._implementation


PASSED_ON_FORMS = {  # NumPy's own Python passes out=None (positionally too) and subok= on
    "clip's source": lambda x: np.sum(np.sin(_source("clip")(x, 0.8, 1.5))),
    "ndarray.clip(out=None)": lambda x: np.sum(np.sin(x.clip(0.8, 1.5, out=None))),
    "outer's source": lambda x: np.sum(np.sin(_source("outer")(x, x[:3]))),
    "ptp's source": lambda x: np.sin(_source("ptp")(x)),
    "multiply(out=None)": lambda x: np.sum(np.sin(np.multiply(x, x[0], None))),
    "divide(subok=True)": lambda x: np.sum(np.sin(np.divide(x, x[0], subok=True))),
    "divide(subok=False, casting=)": lambda x: np.sum(np.sin(np.divide(x, x[0], casting="unsafe", subok=False))),
}


@pytest.mark.parametrize("name", PASSED_ON_FORMS)
def test_arguments_numpy_passes_on(name):
    assert fd_check_all(PASSED_ON_FORMS[name], X1) == ALL_OK


# ------------------------------------------------------------------ NumPy's own nan-statistics sources
# np._NoValue (a default NumPy passes on) and x.flags are constants: they had object tangents


NAN_SOURCES = ["nanstd", "nanvar", "nanmean", "nansum", "nanprod"]


@pytest.mark.parametrize("name", NAN_SOURCES)
def test_nan_statistics_source_in_every_mode(name):
    assert fd_check_all(lambda x: np.sin(_source(name)(x)), X1) == ALL_OK


@pytest.mark.parametrize("name", ["nanstd", "nanvar"])
def test_nan_statistics_source_with_options(name):
    def f(x):
        y = np.where(x > 1.7, np.nan, x).reshape(1, 5) * x[:, None]  # two NaN columns
        return np.sum(np.sin(_source(name)(y, axis=1, ddof=1, keepdims=True)))

    assert fd_check_all(f, X1) == ALL_OK


@pytest.mark.parametrize("name", ["insert", "delete"])
def test_sources_reading_flags(name):
    call = {"insert": lambda f, x: f(x, 1, x[0] * 2), "delete": lambda f, x: f(x, [1, 3])}[name]
    assert fd_check_all(lambda x: np.sum(np.sin(call(_source(name), x))), X1) == ALL_OK


# ------------------------------------------------------------------ &=, |=, ^= on bool and int arrays


def test_setdiff1d_in_every_mode():
    assert fd_check_all(lambda x: np.sum(np.sin(np.setdiff1d(x, x[1:3]))), X1) == ALL_OK


def _masked_by_in_place_operators(x, mask):
    mask &= x < 1.7
    mask |= x < 1.1
    mask ^= x > 1.5
    flags = np.ones(5, dtype=np.int64)
    flags &= mask
    return np.sum(np.where(mask, x * x, np.sin(x)) * flags + x)


def test_in_place_bitwise_operators_on_masks_in_every_mode():
    mask = np.array([True, False, True, True, False])
    assert fd_check_all(lambda x: _masked_by_in_place_operators(x, mask.copy()), X1) == ALL_OK


@pytest.mark.parametrize("mode", ["rev", "hvp"])
def test_in_place_bitwise_operators_restore_the_mask(mode):
    """The argument mask is mutated by the call, and restored after the gradient call; a mask the
    function captures (hvp of a lambda) keeps what the call wrote, as after a plain call."""
    mask = np.array([True, False, True, True, False])
    before = mask.copy()
    if mode == "rev":
        yb.grad(_masked_by_in_place_operators)(X1, mask)
    else:
        _masked_by_in_place_operators(X1, before)  # what a plain call leaves in the captured mask
        yb.hvp(lambda x: _masked_by_in_place_operators(x, mask), (X1,), (X1,))
    assert np.array_equal(mask, before)  # an argument restored (DESIGN §2); captured state as a plain call leaves it


def test_in_place_bitwise_operator_on_floats_is_refused():
    def f(x):
        m = x * 2
        m &= x
        return np.sum(m)

    with pytest.raises((RuleArgumentError, TypeError)):
        yb.grad(f)(X1)


# ------------------------------------------------------------------ jax.numpy as an oracle


def _jax():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    return jax


_R = np.random.default_rng(41)
A35, W5 = _R.standard_normal((3, 5)), _R.uniform(0.5, 2.0, 5)
ORACLE_FORMS = {  # name -> (loss of (numpy module, x, w), x, w)
    "cov": lambda np_, x, w: np_.sum(np_.sin(np_.cov(x))),
    "cov aweights": lambda np_, x, w: np_.sum(np_.sin(np_.cov(x, aweights=w))),
    "cov fweights and aweights, ddof": lambda np_, x, w: np_.sum(np_.sin(np_.cov(x, ddof=0, fweights=np.array([1, 2, 1, 3, 1]), aweights=w))),
    "cov rowvar=False with y": lambda np_, x, w: np_.sum(np_.sin(np_.cov(x.T, (x[:1] * w).T, rowvar=False))),
    "corrcoef": lambda np_, x, w: np_.sum(np_.sin(np_.corrcoef(x * w))),
}


@pytest.mark.parametrize("name", ORACLE_FORMS)
def test_against_jax(name):
    jax = _jax()
    loss = ORACLE_FORMS[name]
    ours = yb.grad(lambda x, w: loss(np, x, w), argnums=(0, 1))(A35, W5)
    theirs = jax.grad(lambda x, w: loss(jax.numpy, x, w), argnums=(0, 1))(A35, W5)
    for a, b in zip(ours, theirs):
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["cov", "corrcoef"])
def test_covariance_in_every_mode(name):
    assert fd_check_all(lambda x: np.sum(np.sin(getattr(np, name)(x.reshape(3, 4)))), np.linspace(0.3, 2.0, 12) ** 1.5) == ALL_OK


# ------------------------------------------------------------------ np.bincount and what calls it

_BINS = np.array([0, 1, 1, 3, 0])
COUNTING_FORMS = {
    "bincount weights": lambda x: np.sum(np.sin(np.bincount(_BINS, weights=x))),
    "bincount minlength": lambda x: np.sum(np.sin(np.bincount(_BINS, x * x, minlength=7))),
    "histogram's source": lambda x: np.sum(np.sin(_source("histogram")(x, bins=3, weights=x * x)[0])),
    "histogram2d": lambda x: np.sum(np.sin(np.histogram2d(x, x[::-1], bins=2, weights=x * x)[0])),
    "histogramdd": lambda x: np.sum(np.sin(np.histogramdd(np.stack([x, x[::-1]], axis=1), bins=2, weights=x * x)[0])),
    "histogramdd density": lambda x: np.sum(np.sin(np.histogramdd(x[:, None], bins=2, weights=x, density=True)[0])),
    "kron's source": lambda x: np.sum(np.sin(_source("kron")(x[:2], x[2:]))),
    "reshape by an array": lambda x: np.sum(np.sin(x[:4].reshape(np.array([2, 2])) @ x[1:3])),
}


@pytest.mark.parametrize("name", COUNTING_FORMS)
def test_counting_in_every_mode(name):
    assert fd_check_all(COUNTING_FORMS[name], X1) == ALL_OK


def test_bincount_against_jax():
    jax = _jax()
    ours = yb.grad(lambda w: np.sum(np.sin(np.bincount(_BINS, w, minlength=6)) * np.arange(6.0)))(X1)
    theirs = jax.grad(lambda w: jax.numpy.sum(jax.numpy.sin(jax.numpy.bincount(_BINS, w, length=6)) * np.arange(6.0)))(X1)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-12)


# ------------------------------------------------------------------ C functions written as NumPy

from numpy._core import _multiarray_umath as _umath  # noqa: E402

C_CORE_FORMS = {
    "modf": lambda x: np.sum(np.sin(np.modf(x * 3)[0]) + np.modf(x * 3)[1]),
    "frexp": lambda x: np.sum(np.sin(np.frexp(x * 3)[0])),
    "divmod": lambda x: np.sum(np.sin(np.divmod(x[1:] * 3, x[0])[1] + np.divmod(x[1:] * 3, x[0])[0])),
    "nextafter": lambda x: np.sum(np.sin(np.nextafter(x, x[0]))),
    "c_einsum (einsum's source)": lambda x: np.sum(np.sin(_source("einsum")("i,j->ij", x, x[:3]))),
    "interp's C core (interp's source)": lambda x: np.sum(np.sin(_source("interp")(x * 0.9, np.sort(x), x * x))),
    "correlate2 (correlate's source)": lambda x: np.sum(np.sin(_source("correlate")(x, x[:3], "same"))),
    "old correlate (convolve's source)": lambda x: np.sum(np.sin(_source("convolve")(x, x[:3]))),
}
if hasattr(np, "matvec"):
    C_CORE_FORMS["matvec"] = lambda x: np.sum(np.sin(np.matvec(x[:4].reshape(2, 2), x[1:3])))
    C_CORE_FORMS["vecmat"] = lambda x: np.sum(np.sin(np.vecmat(x[1:3], x[:4].reshape(2, 2))))


@pytest.mark.parametrize("name", C_CORE_FORMS)
def test_c_functions_in_every_mode(name):
    assert fd_check_all(C_CORE_FORMS[name], X1) == ALL_OK


def test_c_function_keywords_are_refused():
    with pytest.raises(RuleArgumentError, match="modf"):
        yb.grad(lambda x: np.sum(np.modf(x, out=(np.empty(5), np.empty(5)))[0]))(X1)
