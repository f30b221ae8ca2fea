"""Forward mode's fast paths (issue 16 item 3): the random states saved lazily for the strong-zero
pass (``transform/forward_random.py``), plain arguments copied without the structural walks and
their rule run without dispatch (``api/forward.py``), and the inline templates of an array with a
float and of ``x ** c`` (``transform/forward_templates.py``). Derivatives against central
differences; the random draws against a replay from the same seed."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import FRULES

from .all_modes import check_all_modes


def _central(f, args, directions, h=1e-6):
    plus = f(*[a + h * d for a, d in zip(args, directions)])
    minus = f(*[a - h * d for a, d in zip(args, directions)])
    return (plus - minus) / (2 * h)


def _one_normal(x):
    return np.sum(np.sqrt(x)) * np.random.normal()


def test_strong_pass_draws_what_the_first_drew_with_a_cached_gaussian():
    """sqrt'(0) * 0 makes the first pass's tangent NaN; the second must draw the same normal,
    though the legacy generator held a cached Gaussian (not in its bit generator's state)."""
    np.random.seed(7)
    np.random.normal()  # leaves a cached Gaussian: the next draw takes it without advancing the state
    value, tangent = yb.jvp(_one_normal, (np.array([0.0, 4.0]),), (np.array([0.0, 1.0]),))
    after = np.random.normal()
    np.random.seed(7)
    np.random.normal()
    noise = np.random.normal()
    assert value == 2.0 * noise and tangent == pytest.approx(0.25 * noise, rel=1e-12)
    assert after == np.random.normal()  # the state is left as the primal call leaves it


def _uniform_noise():
    return np.random.uniform()


def _draws_past_the_rules(x):
    return np.sum(np.sqrt(x)) * _uniform_noise()


@pytest.fixture
def rules_that_hide_their_draws():
    """A zero-derivative rule that draws, filed as a yuebing module's that cannot: its draws go
    past the lazy save (the backstop: the raw state)."""
    yb.nondifferentiable(_uniform_noise)
    FRULES.origin[_uniform_noise] = "yuebing.rules.numpy_shape"
    yield
    FRULES.origin[_uniform_noise] = __name__


def test_a_draw_past_the_rules_replays_from_the_raw_state(rules_that_hide_their_draws):
    np.random.seed(3)
    value, tangent = yb.jvp(_draws_past_the_rules, (np.array([0.0, 9.0]),), (np.array([0.0, 1.0]),))
    np.random.seed(3)
    noise = np.random.uniform()
    assert value == 3.0 * noise and tangent == pytest.approx(noise / 6.0, rel=1e-12)


def _user_normal_noise():
    return np.random.normal()


def _user_draw(x):
    return np.sum(np.sqrt(x)) * _user_normal_noise()


def test_a_users_zero_derivative_draw_replays_its_cached_gaussian():
    """A function the user declares nondifferentiable may draw: its rule saves the states first,
    so the strong pass takes the same cached Gaussian."""
    yb.nondifferentiable(_user_normal_noise)
    np.random.seed(3)
    np.random.normal()
    value, tangent = yb.jvp(_user_draw, (np.array([0.0, 9.0]),), (np.array([0.0, 1.0]),))
    np.random.seed(3)
    np.random.normal()
    noise = np.random.normal()
    assert value == 3.0 * noise and tangent == pytest.approx(noise / 6.0, rel=1e-12)


def _mixed(x, s):
    y = 2.0 + x  # a constant plus an array: the tangent must be a new array
    y[0] = s * 3.0
    z = (x - s) / s * 0.5 - s * x + (s / (x + 4.0))
    return np.sum(y) + np.sum(z ** 2) + np.sum(x ** 0.5) + np.sum(x ** 3) + (s ** 2) * np.sum(x)


@pytest.mark.parametrize("order", ["C", "F"])
def test_array_and_float_templates_against_central_differences(order):
    x = np.asarray(np.random.default_rng(0).uniform(0.5, 2.0, (3, 4)), order=order)
    dx = np.asarray(np.random.default_rng(1).standard_normal((3, 4)), order="F" if order == "C" else "C")
    s, ds = 1.3, -0.4
    before = (x.copy(), dx.copy())
    value, tangent = yb.jvp(_mixed, (x, s), (dx, ds))
    assert value == _mixed(x.copy(order="K"), s)
    assert tangent == pytest.approx(_central(lambda a, b: _mixed(a.copy(), b), (x, s), (dx, ds)), rel=1e-6)
    np.testing.assert_array_equal(x, before[0])  # the caller's arguments and tangents are untouched
    np.testing.assert_array_equal(dx, before[1])
    assert "(inline)" in yb.show(_mixed, mode="forward")


def _writes_its_argument(x):
    x *= 2.0
    return np.sum(x * x)


def test_plain_arguments_are_copied_and_repeat():
    x, dx = np.arange(1.0, 5.0), np.ones(4)
    first = yb.jvp(_writes_its_argument, (x,), (dx,))
    second = yb.jvp(_writes_its_argument, (x,), (dx,))  # the direct path, after the rule exists
    assert first == second
    np.testing.assert_array_equal(x, np.arange(1.0, 5.0))
    assert first[1] == pytest.approx(8.0 * np.sum(x), rel=1e-12)


def test_one_array_passed_twice_takes_the_general_path():
    x = np.arange(1.0, 4.0)
    value, tangent = yb.jvp(lambda a, b: np.sum(a * b), (x, x), (np.ones(3), np.zeros(3)))
    assert value == 14.0 and tangent == 6.0


def _grid(x, s):
    y = np.zeros((3, 4))
    for i in range(3):
        for j in range(4):
            y[i, j] = np.sin(x[i, j]) * s  # a tuple index built in the loop, a float written
    y[0, :] = s * 2.0  # a float written across a row: the tangent's row too
    return np.sum(y * y)


def test_tuple_indices_and_float_writes_against_central_differences():
    x = np.random.default_rng(2).standard_normal((3, 4))
    dx, s, ds = np.random.default_rng(3).standard_normal((3, 4)), 0.7, 0.3
    value, tangent = yb.jvp(_grid, (x, s), (dx, ds))
    assert value == _grid(x, s)
    assert tangent == pytest.approx(_central(_grid, (x, s), (dx, ds)), rel=1e-6)
    assert "y[_t" in yb.show(_grid, mode="forward")  # the write inline


def _sqrt_sum(x):
    return np.sum(np.sqrt(x))


def test_the_direct_path_runs_the_strong_zero_pass():
    """A NaN tangent out of the direct path (``jvp`` of a function whose forward code exists):
    sqrt'(0) * 0 is 0 by the strong-zero rule, on both calls."""
    x, dx = np.array([0.0, 4.0]), np.array([0.0, 1.0])
    first = yb.jvp(_sqrt_sum, (x,), (dx,))
    second = yb.jvp(_sqrt_sum, (x,), (dx,))  # the direct path
    assert first == second == (2.0, 0.25)


def _returns_its_arguments(x, s):
    return x, s


def test_the_direct_path_returns_copies_of_its_arguments():
    x, dx = np.arange(3.0), np.ones(3)
    for _ in range(2):  # the general path, then the direct one
        (y, s), (dy, ds) = yb.jvp(_returns_its_arguments, (x, 1.5), (dx, 0.5))
        assert y is not x and dy is not dx and not np.shares_memory(y, x) and not np.shares_memory(dy, dx)
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(dy, dx)
        assert (s, ds) == (1.5, 0.5)


@pytest.mark.parametrize("shapes", [((20, 20), (40, 40)), ((3,), (4,)), ((2, 3), (4, 5)), ((1, 2, 3), (2, 2, 2)),
                                    ((0, 3), (2, 2)), ((2, 1), (3, 3))])
def test_kron_tangent_of_both_factors_against_central_differences(shapes):
    """``kron``'s tangent along both factors is written as one batched matrix product into one
    array (``rules/linalg/products.py``): the same as the two products summed, in every shape."""
    rng = np.random.default_rng(4)
    a, b, da, db = (rng.standard_normal(s) for s in shapes + shapes)
    value, tangent = yb.jvp(np.kron, (a, b), (da, db))
    np.testing.assert_array_equal(value, np.kron(a, b))
    assert tangent.shape == value.shape
    np.testing.assert_allclose(tangent, _central(np.kron, (a, b), (da, db)), rtol=1e-6, atol=1e-8)
    weights = rng.standard_normal(value.shape)
    grads = yb.grad(lambda p, q: np.sum(weights * np.kron(p, q)), argnums=(0, 1))(a, b)
    assert np.sum(weights * tangent) == pytest.approx(np.sum(grads[0] * da) + np.sum(grads[1] * db), abs=1e-9)


def _kron_tangent(a, b):
    return np.kron(a, b) * 1.0


def test_a_kept_kron_tangent_is_not_reused():
    """A large kron's tangent comes from the buffer pool: one the caller keeps is never handed out
    again (the next JVPs' tangents are other arrays, and the kept one keeps its values)."""
    rng = np.random.default_rng(5)
    a, b, da, db = (rng.standard_normal(s) for s in ((20, 20), (40, 40)) * 2)
    kept = [yb.jvp(np.kron, (a, b), (k * da, db))[1] for k in range(3)]
    for k, t in enumerate(kept):
        np.testing.assert_allclose(t, np.kron(k * da, b) + np.kron(a, db), rtol=1e-12, atol=1e-12)
    assert not any(np.shares_memory(s, t) for s in kept for t in kept if s is not t)
    value, tangent = yb.jvp(_kron_tangent, (a, b), (da, db))  # a tangent used inside and dropped
    np.testing.assert_allclose(tangent, np.kron(da, b) + np.kron(a, db), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("shapes", [((20, 20), (40, 40)), ((2, 3, 8), (4, 5, 9)), ((8,), (64,)), ((4, 1), (40, 40)),
                                    ((30, 30), (1, 30)), ((0, 5), (4, 4)), ((6, 6), (2,))])
def test_kron_values_are_numpys(shapes):
    """The rules' kron (``kron_product``: by rows of repeated and tiled factors into a pooled
    buffer where that is faster) gives NumPy's numbers exactly, infinities and NaNs included, for
    real, complex, float32 and transposed factors."""
    from yuebing.rules.linalg.products import kron_product

    rng = np.random.default_rng(7)
    a, b = rng.standard_normal(shapes[0]), rng.standard_normal(shapes[1])
    if a.size and b.size:
        a.flat[0], b.flat[-1] = np.inf, np.nan
    for p, q in ((a, b), (a + 1j * a[::-1], b), (a.astype(np.float32), b), (a.T, b.T)):
        value = kron_product(p, q)
        np.testing.assert_array_equal(value, np.kron(p, q))
        assert value.dtype == np.kron(p, q).dtype and value.shape == np.kron(p, q).shape


def test_kept_kron_values_and_tangents_are_not_reused():
    """A large kron's value (and a one-factor tangent) comes from the buffer pool in every mode:
    what the caller keeps is never handed out again and keeps its values."""
    rng = np.random.default_rng(6)
    a, b, da = (rng.standard_normal(s) for s in ((20, 20), (40, 40), (20, 20)))
    kept = [yb.jvp(np.kron, (k * a, b), (da, np.zeros_like(b))) for k in range(1, 4)]
    kept += [yb.jvp(lambda p: np.kron(p, b), (k * a,), (da,)) for k in range(4, 6)]
    kept_grads = [yb.value_and_grad(lambda p: np.kron(p, b).sum(), has_aux=False)(k * a) for k in range(6, 8)]
    for k, (value, tangent) in enumerate(kept, start=1):
        np.testing.assert_array_equal(value, np.kron(k * a, b))
        np.testing.assert_allclose(tangent, np.kron(da, b), rtol=1e-12, atol=1e-12)
    for k, (value, grad) in enumerate(kept_grads, start=6):
        assert value == pytest.approx(np.kron(k * a, b).sum())
        np.testing.assert_allclose(grad, np.full_like(a, b.sum()), rtol=1e-12)
    arrays = [x for pair in kept for x in pair]
    assert not any(np.shares_memory(s, t) for s in arrays for t in arrays if s is not t)


def test_kron_in_every_mode():
    check_all_modes(lambda z: np.sum(np.kron(z[:6].reshape(2, 3), z[6:].reshape(3, 2)) ** 2),
                    np.linspace(-1.0, 1.3, 12))


def _vectorized_draws(x):
    return np.sum(np.vectorize(lambda v: np.sqrt(v) * np.random.normal())(x))


def test_a_vectorized_functions_draws_replay_in_the_strong_pass():
    """``np.vectorize(pyfunc)`` draws nothing itself (its rule only builds the object); the draws
    of ``pyfunc`` go through rules, so the strong-zero pass (sqrt'(0) * 0) draws the same numbers.
    Without ``otypes`` NumPy calls ``pyfunc`` once more on the first element, first: three draws."""
    x = np.array([0.0, 4.0])
    np.random.seed(3)
    probe, first, second = np.random.normal(), np.random.normal(), np.random.normal()
    after = np.random.normal()
    np.random.seed(3)
    plain = _vectorized_draws(x)
    np.random.seed(3)
    value, tangent = yb.jvp(_vectorized_draws, (x,), (np.array([0.0, 1.0]),))
    assert value == pytest.approx(plain, rel=1e-15) and plain == pytest.approx(0.0 * first + 2.0 * second, rel=1e-15)
    assert tangent == pytest.approx(0.25 * second, rel=1e-15)
    assert np.random.normal() == after  # the state advanced as the plain call's


def test_large_copies_are_recycled_only_when_nothing_holds_them():
    """The direct path copies large arguments into recycled buffers (``transform/buffers.py``):
    outputs that are those copies stay the caller's (never handed out again), a function that
    writes its argument sees a fresh copy each call, and the caller's arrays are untouched."""
    x, dx = np.linspace(0.0, 1.0, 20000), np.full(20000, 0.5)
    kept = [yb.jvp(_returns_its_arguments, (x, 1.0), (dx, 0.0)) for _ in range(4)]
    arrays = [a for (y, _), (dy, _) in kept for a in (y, dy)]
    for a in arrays:
        assert not np.shares_memory(a, x) and not np.shares_memory(a, dx)
    assert len({id(a) for a in arrays}) == len(arrays)
    for (y, _), (dy, _) in kept:
        np.testing.assert_array_equal(y, x)
        np.testing.assert_array_equal(dy, dx)
    results = [yb.jvp(_writes_its_argument, (x,), (dx,)) for _ in range(3)]
    assert results[0] == results[1] == results[2]
    assert results[0][1] == pytest.approx(8.0 * np.sum(x * dx), rel=1e-12)
    np.testing.assert_array_equal(x, np.linspace(0.0, 1.0, 20000))
    np.testing.assert_array_equal(dx, np.full(20000, 0.5))


def _vectorized_chain(x):
    return np.sum(np.vectorize(lambda v: np.sin(np.cos(np.exp(v))))(x))


def _vectorized_sqrt(x):
    return np.sum(np.vectorize(lambda v: np.sqrt(v) * 2.0 - v)(x))


def _vectorized_branch(x):
    return np.sum(np.vectorize(lambda v: np.sin(v) if v > 0 else v * v)(x))


@pytest.mark.parametrize("f", [_vectorized_chain, _vectorized_sqrt, _vectorized_branch])
@pytest.mark.parametrize("shape", [(7,), (3, 4)])
def test_vectorize_of_an_elementwise_function_runs_on_the_whole_array(f, shape):
    """``np.vectorize(pyfunc)(x)`` with an elementwise ``pyfunc`` runs its forward rule once on
    the array (others element by element): the value is the plain call's, the tangent central
    differences'."""
    x = np.linspace(0.2, 1.9, int(np.prod(shape))).reshape(shape) * np.where(np.arange(np.prod(shape)) % 3, 1, -1).reshape(shape)
    x = np.abs(x) if f is _vectorized_sqrt else x
    v = np.linspace(-1.0, 0.7, x.size).reshape(shape)
    for _ in range(2):  # derived, then direct
        value, tangent = yb.jvp(f, (x,), (v,))
        assert value == f(x)
        assert tangent == pytest.approx(_central(f, (x,), (v,)), rel=1e-6)


def test_vectorize_on_the_whole_array_keeps_the_strong_zero():
    """sqrt'(0) is inf: with a zero tangent there the JVP is finite (the strong-zero pass)."""
    x, v = np.array([0.0, 4.0, 1.0]), np.array([0.0, 1.0, 2.0])
    value, tangent = yb.jvp(_vectorized_sqrt, (x,), (v,))
    assert value == _vectorized_sqrt(x) and tangent == pytest.approx((0.5 - 1.0) + (2.0 - 2.0), abs=1e-12)


def _network(z):
    w1, w2, x = z[:12].reshape(4, 3), z[12:20].reshape(2, 4), z[20:26].reshape(3, 2)
    h = w1 @ x
    h = h * (0 <= h)
    mask = h[0] > 0.1  # a row of bools broadcast over the rows
    return np.sum((w2 @ h) ** 2) + np.sum(h * mask) + np.sum(mask * h)


def test_matmul_comparison_and_mask_templates_in_every_mode():
    """``@`` of float64 matrices, comparisons with an array and products with a bool mask run
    inline in forward mode (``forward_templates._array_products``); every mode agrees with
    differences."""
    z = np.linspace(-1.1, 1.3, 26)
    check_all_modes(_network, z)
    for _ in range(2):  # derived, then the speculative program (no rule call left)
        value, tangent = yb.jvp(_network, (z,), (np.cos(z),))
        assert value == _network(z)
        assert tangent == pytest.approx(_central(_network, (z,), (np.cos(z),)), rel=1e-6)


def _vector_products(a, b):
    return np.sum(a @ b) + float(a[0] < 0.5) * np.sum(b @ a)


def test_products_the_templates_leave_to_the_rules():
    """A vector ``@`` a matrix and a float compared with a float take the rules, as before."""
    a, b = np.linspace(0.2, 0.9, 3), np.linspace(-1.0, 1.0, 9).reshape(3, 3)
    da, db = np.ones(3), np.full((3, 3), 0.5)
    for _ in range(2):
        value, tangent = yb.jvp(_vector_products, (a, b), (da, db))
        assert value == _vector_products(a, b)
        assert tangent == pytest.approx(_central(_vector_products, (a, b), (da, db)), rel=1e-6)


def _spd(n, seed=0):
    b = np.random.default_rng(seed).standard_normal((n, n))
    return b @ b.T + n * np.eye(n)


def _weighted_cholesky(a):
    low = np.linalg.cholesky(a)
    return np.sum(np.cos(np.arange(low.size).reshape(low.shape)) * low) + np.sum(np.log(np.diag(low)))


@pytest.fixture
def split_jvp_orders(monkeypatch):
    """The orders ``_split_cholesky_jvp`` is called at."""
    from yuebing.rules.linalg import cholesky_blocks

    orders = []
    split = cholesky_blocks._split_cholesky_jvp

    def counted(low, h, need_inverse):
        orders.append(low.shape[0])
        return split(low, h, need_inverse)

    monkeypatch.setattr(cholesky_blocks, "_split_cholesky_jvp", counted)
    return orders


def _dense_cholesky_tangent(low, h):
    """``L Phi(L^-1 H L^-T)`` in plain NumPy: the formula the block recursion must equal."""
    inverse = np.linalg.inv(low)
    x = inverse @ h @ inverse.T
    return low @ (np.tril(x, -1) + 0.5 * np.diag(np.diag(x)))


@pytest.mark.parametrize("n", [3, 33, 97, 203])
def test_cholesky_tangent_split_in_blocks(n, split_jvp_orders):
    """Above order 64 the Cholesky factor's tangent is the forward block recursion (97: one
    level, halves 48 and 49; 203: two levels, odd halves; 3 and 33: one leaf), equal to the
    dense formula, to differences of the factor, and to differences in every mode; the inverse
    it forms for second order is the factor's."""
    from yuebing.rules.linalg import cholesky_blocks

    a = _spd(n)
    check_all_modes(_weighted_cholesky, a, tol=1e-6, second_order=n < 100)
    assert n in split_jvp_orders
    assert (n > cholesky_blocks._CHOLESKY_JVP_LEAF) == (len(split_jvp_orders) > 1)
    low = np.linalg.cholesky(a)
    h = np.random.default_rng(1).standard_normal((n, n))
    h = h + h.T
    tangent = cholesky_blocks.real_cholesky_jvp(low, h)
    np.testing.assert_allclose(tangent, _dense_cholesky_tangent(low, h), rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(tangent, _central(np.linalg.cholesky, (a,), (h,)), rtol=1e-5, atol=1e-6)
    same, inverse = cholesky_blocks.cholesky_tangent_and_inverse(low, h)
    np.testing.assert_array_equal(same, tangent)
    np.testing.assert_allclose(inverse @ low, np.eye(n), atol=1e-12)
    np.testing.assert_array_equal(np.triu(inverse, 1), 0.0)


@pytest.mark.parametrize("n", [40, 130])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_tangent_reads_one_triangle_of_an_unsymmetric_tangent(n, upper):
    """The BLAS route reads only the triangle LAPACK read (no symmetrised copy of the tangent):
    along an unsymmetric tangent it is the derivative of the factor, whose central differences
    read that triangle too, for the dense formula (40) and the block recursion (130)."""
    a = _spd(n, seed=2)
    h = np.random.default_rng(3).standard_normal((n, n))
    factor = lambda m: np.linalg.cholesky(m, upper=upper)  # noqa: E731
    value, tangent = yb.jvp(factor, (a,), (h,))
    np.testing.assert_allclose(value, factor(a), rtol=1e-12, atol=1e-12)  # (the rule's LAPACK call rounds its own way)
    np.testing.assert_allclose(tangent, _central(factor, (a,), (h,)), rtol=1e-5, atol=1e-7)


def _triangular_solves(a, b, da_scale):
    import scipy.linalg as sla

    return sum(np.sum(np.sin(sla.solve_triangular(a + da_scale * a.T, b, trans=trans, lower=lower,
                                                  unit_diagonal=unit)))
               for trans in (0, 1, "T") for lower in (False, True) for unit in (False, True))


@pytest.mark.parametrize("rhs_shape", [(30,), (30, 3)])
def test_solve_triangular_tangent_by_blas(rhs_shape):
    """``solve_triangular``'s tangent by BLAS's triangular product and LAPACK's solve (every
    ``trans``, triangle and diagonal; a vector and a matrix right-hand side; a tangent of ``a``
    alone, of ``b`` alone, of both) against central differences, in every mode."""
    pytest.importorskip("scipy")
    rng = np.random.default_rng(4)
    a = 0.05 * rng.standard_normal((30, 30)) + np.eye(30)  # small: unit-diagonal solves stay tame
    b = rng.standard_normal(rhs_shape)
    da, db = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    f = lambda a, b: _triangular_solves(a, b, 0.0)  # noqa: E731
    for directions in ((da, db), (da, 0 * b), (0 * a, db)):
        value, tangent = yb.jvp(f, (a, b), directions)
        assert value == f(a, b)
        assert tangent == pytest.approx(_central(f, (a, b), directions), rel=1e-6, abs=1e-8)
    check_all_modes(lambda s: _triangular_solves(a, b, s), 0.01, tol=1e-6)


def test_solve_triangular_blas_tangent_of_one_argument():
    """The BLAS route with no tangent for ``a`` or for ``b`` (None: zero) is the general formula's."""
    pytest.importorskip("scipy")
    import scipy.linalg as sla

    from yuebing.rules.scipy_rules import _real_solve_triangular_jvp

    rng = np.random.default_rng(5)
    a, b = rng.standard_normal((6, 6)) + 6 * np.eye(6), rng.standard_normal((6, 2))
    da, db = rng.standard_normal(a.shape), rng.standard_normal(b.shape)
    x = sla.solve_triangular(a, b, trans=1, lower=True)
    for ta, tb in ((da, None), (None, db)):
        dx = _real_solve_triangular_jvp(a, x, ta, tb, 1, True, False)
        central = _central(lambda a, b: sla.solve_triangular(a, b, trans=1, lower=True), (a, b),
                           (0 * a if ta is None else ta, 0 * b if tb is None else tb))
        np.testing.assert_allclose(dx, central, rtol=1e-6, atol=1e-8)
