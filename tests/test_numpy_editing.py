"""NumPy's editing functions and array utilities in every mode (rules/numpy_editing.py,
rules/numpy_array_tools.py): append, insert, delete, pad in every mode (values equal to NumPy's,
gradients against finite differences and jax), diagonal, fill_diagonal, rollaxis, trim_zeros,
real_if_close, cumulative_sum/prod, apply_along_axis; gradients, JVPs and Hessian-vector products
of functions calling them; the refusals. The rule cases (check_rule) are in the rule modules."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

rng = np.random.default_rng(14)
PAD_MODES = ("constant", "edge", "linear_ramp", "maximum", "mean", "median", "minimum", "reflect", "symmetric",
             "wrap")


def fd_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def check_all_modes(f, x, rtol=1e-5, atol=1e-6):
    """Reverse against central differences, forward against reverse, the Hessian-vector product
    against differences of the gradient."""
    g = yb.grad(f)(x)
    np.testing.assert_allclose(g, fd_gradient(f, x), rtol=rtol, atol=atol)
    v = rng.standard_normal(x.shape)
    assert yb.jvp(f, (x,), (v,))[1] == pytest.approx(np.sum(g * v), rel=1e-8, abs=1e-9)
    hv = yb.hvp(f, (x,), (v,))[2][0]
    h = 1e-5
    np.testing.assert_allclose(hv, (yb.grad(f)(x + h * v) - yb.grad(f)(x - h * v)) / (2 * h), rtol=rtol, atol=atol)


def weighted(y, seed=0):
    """A nonlinear scalar of an array, so second derivatives are not zero."""
    w = np.random.default_rng(seed).standard_normal(np.shape(y))
    return np.sum(np.sin(y) * w)


# ------------------------------------------------------------------ append, insert, delete

EDITS = {
    "append": lambda x: weighted(np.append(x[:4], x[4:] ** 2)),
    "append axis": lambda x: weighted(np.append(x.reshape(2, 3), x[None, :3] * 2, axis=0)),
    "insert broadcast": lambda x: weighted(np.insert(x.reshape(2, 3), [0, 2, 2], x[0] ** 2, axis=1)),
    "insert rows": lambda x: weighted(np.insert(x.reshape(3, 2), 1, x[:2] * x[2:4], axis=0)),
    "delete mask": lambda x: weighted(np.delete(x, x > 0.3)),
    "delete axis": lambda x: weighted(np.delete(x.reshape(2, 3), [0, -1], axis=1)),
}


@pytest.mark.parametrize("name", EDITS)
def test_edits_in_every_mode(name):
    check_all_modes(EDITS[name], rng.standard_normal(6))


def test_insert_into_integer_array_has_no_derivative():
    def f(x):
        return np.sum(np.insert(np.arange(4), 1, x[0]) * 1.0) + x[1]
    np.testing.assert_allclose(yb.grad(f)(np.array([2.7, 1.0])), [0.0, 1.0])  # the value is cast to int


# ------------------------------------------------------------------ pad


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_values_and_derivatives_every_mode(mode):
    x = rng.standard_normal((3, 4))
    widths = ((2, 1), (1, 3))
    kw = {"stat_length": ((1, 2), (2, 3))} if mode in ("maximum", "minimum", "mean", "median") else {}
    expected = np.pad(x, widths, mode=mode, **kw)
    got = yb.jvp(lambda a: np.pad(a, widths, mode=mode, **kw), (x,), (x,))[0]
    np.testing.assert_array_equal(got, expected)
    check_all_modes(lambda a: weighted(np.pad(a.reshape(3, 4), widths, mode=mode, **kw)), x.ravel())


@pytest.mark.parametrize("mode", PAD_MODES)
def test_pad_gradient_matches_jax(mode):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    x = rng.standard_normal((4, 3))
    w = rng.standard_normal((7, 5))

    def ours(a):
        return np.sum(np.pad(a, ((1, 2), (2, 0)), mode=mode) * w)

    def theirs(a):
        return jax.numpy.sum(jax.numpy.pad(a, ((1, 2), (2, 0)), mode=mode) * w)

    np.testing.assert_allclose(yb.grad(ours)(x), np.asarray(jax.grad(theirs)(x)), rtol=1e-10, atol=1e-12)


def test_pad_end_and_constant_values_are_differentiated():
    def ramp(v):
        return weighted(np.pad(v[:4], (2, 3), mode="linear_ramp", end_values=(v[4], v[5] ** 2)))

    def constant(v):
        return weighted(np.pad(v[:4].reshape(2, 2), 1, constant_values=((v[4], 1.0), (v[5], v[4]))))

    for f in (ramp, constant):
        check_all_modes(f, rng.standard_normal(6))


def test_pad_empty_is_zero_in_the_pad_area():
    x = rng.standard_normal(4)
    g = yb.grad(lambda a: np.sum(np.pad(a, 2, mode="empty")[2:-2] ** 2))(x)
    np.testing.assert_allclose(g, 2 * x)
    _, t = yb.jvp(lambda a: np.pad(a, 2, mode="empty"), (x,), (np.ones(4),))
    np.testing.assert_array_equal(t, [0, 0, 1, 1, 1, 1, 0, 0])


def test_pad_refusals_name_the_fix():
    x = rng.standard_normal(4)
    with pytest.raises(RuleArgumentError, match="reflect_type='even'"):
        yb.grad(lambda a: np.sum(np.pad(a, 2, mode="reflect", reflect_type="odd")))(x)

    def fill(vector, pad, axis, kwargs):
        vector[:pad[0]] = 1.0

    with pytest.raises(RuleArgumentError, match="callable mode"):
        yb.grad(lambda a: np.sum(np.pad(a, 2, mode=fill)))(x)


def test_pad_of_integer_array_has_no_derivative():
    def f(x):
        return np.sum(np.pad(np.arange(3), 1, mode="mean")) * x
    assert yb.grad(f)(2.0) == pytest.approx(float(np.sum(np.pad(np.arange(3), 1, mode="mean"))))


# ------------------------------------------------------------------ array utilities

TOOLS = {
    "diagonal": lambda x: weighted(np.diagonal(np.outer(x, x), 1)),
    "diagonal method": lambda x: weighted(np.outer(x, x[::-1]).diagonal(-2)),
    "rollaxis": lambda x: weighted(np.rollaxis(x.reshape(1, 2, 3), 2, 1) ** 2),
    "fill_diagonal": lambda x: _filled(x),
    "cumulative_sum": lambda x: weighted(np.cumulative_sum(x.reshape(2, 3), axis=1, include_initial=True)),
    "cumulative_prod": lambda x: weighted(np.cumulative_prod(x)),
    "apply_along_axis": lambda x: weighted(np.apply_along_axis(lambda r: r * np.sum(r ** 2), 0, x.reshape(2, 3))),
}


def _filled(x):
    m = np.outer(x, x)
    np.fill_diagonal(m, x[:2] ** 2)
    return weighted(m)


@pytest.mark.parametrize("name", TOOLS)
def test_array_tools_in_every_mode(name):
    check_all_modes(TOOLS[name], rng.standard_normal(6))


def test_diagonal_view_carries_later_writes_back():
    def f(x):
        m = x.reshape(3, 3) * 1.0
        d = np.diagonal(m)
        return np.sum(d ** 2) + np.sum(m)  # the diagonal read through the view and through m

    x = rng.standard_normal(9)
    np.testing.assert_allclose(yb.grad(f)(x), fd_gradient(f, x), rtol=1e-6, atol=1e-7)


def test_trim_zeros_slices_as_numpy():
    x = np.array([0.0, 0.0, 1.5, -0.5, 0.0, 2.0, 0.0])
    w = rng.standard_normal(4)
    g = yb.grad(lambda a: np.sum(np.trim_zeros(a) * w))(x)
    expected = yb.grad(lambda a: np.sum(a[2:6] * w))(x)
    np.testing.assert_array_equal(g, expected)
    np.testing.assert_array_equal(yb.jvp(lambda a: np.trim_zeros(a, "f"), (x,), (x,))[0], np.trim_zeros(x, "f"))


def test_real_if_close_takes_the_real_part_when_numpy_does():
    z = rng.standard_normal(3) + 0j
    g = yb.grad(lambda a: np.sum(np.real_if_close(a) ** 2))(z)
    np.testing.assert_allclose(g, 2 * z.real)  # the real part's gradient: a real cotangent
    z2 = rng.standard_normal(3) + 1j * rng.standard_normal(3)
    g2 = yb.grad(lambda a: np.sum(np.abs(np.real_if_close(a)) ** 2))(z2)
    np.testing.assert_allclose(g2, 2 * z2)


def test_cumulative_sum_refuses_out():
    with pytest.raises(RuleArgumentError, match="out="):
        yb.grad(lambda a: np.sum(np.cumulative_sum(a, out=np.zeros(3))))(np.ones(3))
