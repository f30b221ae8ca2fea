"""Second order of ``np.linalg.eigh`` where its outputs go unread, or are read in part, at a
repeated eigenvalue that the perturbation splits (``rules/linalg/eigh_second_order.py``).

Fuzz seed 95157: ``yb.hvp`` was NaN when eigh's outputs were computed and never used, at
``2 I + c t t^T`` with ``|t| ~ 1e-9`` (all four eigenvalues tied to rounding): the tangent of the
tied vectors is infinite, and the forward transform of the cotangent map multiplied it by the
zero cotangent (inf * 0). Outputs nobody reads must contribute zero and warn of nothing; the
vector of a simple eigenvalue, read alone, has a second derivative; reading the tied vectors
stays not finite, with the warning. Each finite answer is checked against central differences
of the gradient.
"""
import warnings

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order

X = np.array([0.43632936, 0.77879853, -0.35175031, -1.04008767])
V = np.array([0.3, -1.1, 0.7, 0.4])
K = np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 0.0], [0.0, 0.0, 0.0]])  # splits the tie of diag(1, 1, 3)
Q = np.linalg.qr(np.array([[1.0, 0.2, -0.3], [0.4, 1.0, 0.1], [-0.2, 0.5, 1.0]]))[0]


def _differences_of_gradient(f, x, v, h=1e-5):
    g = yb.grad(f)
    return (g(x + h * v) - g(x - h * v)) / (2 * h)


def _silent_hvp(f, x, v):
    """hvp with a NoDerivativeWarning made an error: nothing here may say a derivative is missing."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", yb.NoDerivativeWarning)
        return yb.hvp(f, (x,), (v,))[2][0]


def _unused_all(x):
    t = np.tanh(x * 1e-9)
    w, vectors = np.linalg.eigh(2.0 * np.eye(4) + 0.562 * np.outer(t, t))
    unused = np.sum(w * np.arange(1, 5)) + np.sum(vectors)  # noqa: F841 - computed, never used
    return np.sum(x * x)


def _unused_stack(x):
    t = np.tanh(x * 1e-9)
    s = 2.0 * np.eye(4) + 0.562 * np.outer(t, t)
    w, vectors = np.linalg.eigh(np.stack([s, s + np.diag(x)]))
    return np.sum(x * x) + np.sum(w[1] * np.arange(1, 5))


def _unused_upper(x):
    t = np.tanh(x * 1e-9)
    w, vectors = np.linalg.eigh(2.0 * np.eye(4) + 0.562 * np.outer(t, t), UPLO="U")
    return np.sum(x ** 3)


@pytest.mark.parametrize("f", [_unused_all, _unused_stack, _unused_upper], ids=["matrix", "stack", "upper"])
def test_unread_outputs_at_a_split_tie_add_nothing_and_say_nothing(f):
    np.testing.assert_allclose(_silent_hvp(f, X, V), _differences_of_gradient(f, X, V), rtol=1e-6, atol=1e-8)


def test_the_fuzz_program_seed_95157():
    """The fuzzer's program (shrunk of its other terms): eigh's values summed into a name nobody reads."""
    w_matrix = np.array([[-0.94699346, -1.35454324, -1.01924868, -0.91978183],
                         [-0.32440978, -0.7263032, -0.62044058, 1.48724416],
                         [0.2980962, 1.16675945, 0.93028333, 1.10322655],
                         [-1.28882729, 1.11712565, -0.3717575, 1.19557793]])

    def f(x):
        p = np.sum(x / (1.0 + x ** 2)) ** 4
        a = np.sum(w_matrix * (w_matrix[:, 3] * p)[:, None], axis=0)
        t = np.tanh(a)
        ev, vectors = np.linalg.eigh(2.0 * np.eye(4) + 0.562 * np.outer(t, t))
        unused = np.sum(ev * np.arange(1, 5))  # noqa: F841
        return np.sum(a * a) * 0.1 + p

    x = np.array([1e-3, -2e-3, 1.5e-3, 0.5e-3])
    np.testing.assert_allclose(_silent_hvp(f, x, V), _differences_of_gradient(f, x, V, h=1e-6), rtol=1e-5, atol=1e-12)


def _simple_vector_read(x):
    """The vector of the simple eigenvalue 3 of Q diag(1, 1, 3) Q^T + x0 K: smooth in x although
    the other two are tied at x0 = 0 and x0 splits them."""
    a = (Q * np.array([1.0, 1.0, 3.0])) @ Q.T + x[0] * K + x[1] * np.outer(Q[:, 2], Q[:, 0])
    w, vectors = np.linalg.eigh(a + a.T)
    return np.dot(vectors[:, 2], np.array([0.3, 0.5, 0.7])) ** 2 + w[2] * x[2]


def test_the_vector_of_a_simple_eigenvalue_read_alone_has_a_second_derivative():
    x = np.array([0.0, 0.0, 0.4])
    for v in (np.array([1.0, 0.0, 0.0]), np.array([0.3, -0.8, 0.5])):
        np.testing.assert_allclose(_silent_hvp(_simple_vector_read, x, v),
                                   _differences_of_gradient(_simple_vector_read, x, v, h=1e-6), rtol=1e-5, atol=1e-9)
    hessian = yb.hessian(_simple_vector_read)(x)
    columns = [_differences_of_gradient(_simple_vector_read, x, e, h=1e-6) for e in np.eye(3)]
    np.testing.assert_allclose(hessian, np.stack(columns, axis=1), rtol=1e-5, atol=1e-9)


def test_reading_a_tied_vector_at_a_split_tie_is_not_finite_and_said():
    def f(x):
        w, vectors = np.linalg.eigh(np.diag([1.0, 1.0, 3.0]) + x[0] * K)
        return np.dot(vectors[:, 0], np.array([0.3, 0.5, 0.7])) ** 2 + x[1] * w[0]

    with pytest.warns(yb.NoDerivativeWarning):
        assert not np.all(np.isfinite(yb.hvp(f, (np.array([0.0, 0.2]),), (np.array([1.0, 0.0]),))[2][0]))


def test_tied_values_read_at_a_split_tie_are_not_a_silent_number():
    """sum(w**2) = |A|^2 has Hessian 2 I, but at an exact tie its cotangent 2 w ties too and the
    rule cannot tell it from sum(w) (Hessian 0): NaN with the warning, never 0."""
    def f(x):
        w, vectors = np.linalg.eigh(np.diag([1.0, 1.0, 3.0]) + x[0] * K)
        return np.sum(w ** 2)

    with pytest.warns(yb.NoDerivativeWarning, match=r"repeated eigenvalue or singular value \(1\) is read.*curvature"):
        assert not np.all(np.isfinite(yb.hvp(f, (np.array([0.0, 0.2]),), (np.array([1.0, 0.0]),))[2][0]))


@pytest.mark.parametrize("a, kwargs", [
    (np.array([[2.0, 0.3, -0.1], [0.3, 1.0, 0.4], [-0.1, 0.4, -1.5]]), {}),
    (np.array([[2.0, 0.3, -0.1], [0.7, 1.0, 0.4], [-0.6, 0.2, -1.5]]), {"UPLO": "U"}),
    (np.stack([np.diag([1.0, 2.0, 4.0]) + 0.1, np.diag([-1.0, 0.5, 3.0]) - 0.2]), {}),
], ids=["matrix", "upper", "stack"])
def test_the_written_second_order_matches_differences_away_from_ties(a, kwargs):
    """Every output read (check_second_order's random scalar function of w and V): hvp against
    central differences of the gradient, through the formula of eigh_second_order."""
    check_second_order(np.linalg.eigh, a, kwargs=kwargs)


def test_the_written_second_order_agrees_with_forward_and_reverse():
    """Reverse over a forward pass and forward over reverse give the same Hessian entries (a
    function of both outputs, away from ties)."""
    def f(x):
        a = np.array([[x[0], x[1], 0.2], [x[1], 2.0, x[2]], [0.2, x[2], -1.0 + x[0] * x[2]]])
        w, vectors = np.linalg.eigh(a)
        return np.sum(w * np.array([0.5, -1.0, 2.0])) + np.sum(vectors[:, 1] ** 3 * np.array([1.0, 2.0, 3.0]))

    x = np.array([0.7, 0.3, -0.4])
    v = np.array([1.0, -0.5, 0.25])
    by_hvp = yb.hvp(f, (x,), (v,))[2][0]
    by_forward_of_grad = yb.jvp(yb.grad(f), (x,), (v,))[1]
    np.testing.assert_allclose(by_hvp, by_forward_of_grad, rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(by_hvp, _differences_of_gradient(f, x, v, h=1e-6), rtol=1e-5, atol=1e-8)


def _unused_eigvalsh(x):
    t = np.tanh(x * 1e-9)
    w = np.linalg.eigvalsh(2.0 * np.eye(4) + 0.562 * np.outer(t, t))
    unused = np.sum(w * np.arange(1, 5))  # noqa: F841
    return np.sum(x * x)


def _unused_scipy(x):
    import scipy.linalg
    t = np.tanh(x * 1e-9)
    w, vectors = scipy.linalg.eigh(2.0 * np.eye(4) + 0.562 * np.outer(t, t), lower=False)
    unused = np.sum(w * np.arange(1, 5)) + vectors[0, 0]  # noqa: F841
    return np.sum(x * x)


def _unused_scipy_values(x):
    import scipy.linalg
    t = np.tanh(x * 1e-9)
    w = scipy.linalg.eigh(2.0 * np.eye(4) + 0.562 * np.outer(t, t), eigvals_only=True)
    unused = np.sum(w * np.arange(1, 5))  # noqa: F841
    return np.sum(x * np.sin(x))


@pytest.mark.parametrize("f", [_unused_eigvalsh, _unused_scipy, _unused_scipy_values],
                         ids=["eigvalsh", "scipy", "scipy values"])
def test_unread_outputs_of_eigvalsh_and_scipy_eigh_add_nothing(f):
    np.testing.assert_allclose(_silent_hvp(f, X, V), _differences_of_gradient(f, X, V), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("kwargs", [{}, {"lower": False}, {"eigvals_only": True}, {"driver": "evd"}],
                         ids=["default", "upper", "values", "driver"])
def test_scipy_eigh_written_second_order_matches_differences(kwargs):
    import scipy.linalg
    a = np.array([[2.0, 0.3, -0.1], [0.7, 1.0, 0.4], [-0.6, 0.2, -1.5]])
    check_second_order(scipy.linalg.eigh, a, kwargs=kwargs)


def test_eigvalsh_written_second_order_matches_differences():
    check_second_order(np.linalg.eigvalsh, np.stack([np.diag([1.0, 2.0, 4.0]) + 0.1, np.diag([-1.0, 0.5, 3.0])]))


def _unused_singular_values(x):
    t = np.tanh(x * 1e-9)
    s = np.linalg.svd(2.0 * np.eye(4) + 0.562 * np.outer(t, t), compute_uv=False)
    unused = np.sum(s * np.arange(1, 5))  # noqa: F841
    return np.sum(x * x)


def _unused_singular_values_wide(x):
    t = np.tanh(x * 1e-9)
    s = np.linalg.svd(np.hstack([np.eye(3) + 0.5 * np.outer(t[:3], t[1:]), np.outer(t[:3], t[:1])]), compute_uv=False)
    unused = np.sum(s * np.arange(1, 4))  # noqa: F841
    return np.sum(x * x)


@pytest.mark.parametrize("f", [_unused_singular_values, _unused_singular_values_wide], ids=["square", "wide"])
def test_unread_singular_values_at_a_split_tie_add_nothing(f):
    np.testing.assert_allclose(_silent_hvp(f, X, V), _differences_of_gradient(f, X, V), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("a", [
    np.array([[2.0, 0.3, -0.1], [0.7, 1.0, 0.4], [-0.6, 0.2, -1.5], [0.3, 0.9, 0.1]]),
    np.array([[2.0, 0.3, -0.1, 0.5], [0.7, 1.0, 0.4, -0.2]]),
    np.array([[2.0, 0.3, -0.1], [0.7, 1.0, 0.4], [-0.6, 0.2, -1.5]]),
    np.stack([np.diag([1.0, 2.0, 4.0]) + 0.1, np.diag([-1.0, 0.5, 3.0])]),
], ids=["tall", "wide", "square", "stack"])
def test_singular_values_written_second_order_matches_differences(a):
    check_second_order(np.linalg.svd, a, kwargs={"compute_uv": False})


def test_singular_values_read_at_a_split_tie_are_not_a_silent_number():
    def f(x):
        return np.sum(np.linalg.svd(np.diag([1.0, 1.0, 3.0]) + x[0] * K, compute_uv=False) ** 3)

    with pytest.warns(yb.NoDerivativeWarning):
        assert not np.all(np.isfinite(yb.hvp(f, (np.array([0.0, 0.2]),), (np.array([1.0, 0.0]),))[2][0]))


def _unused_svd(x, shape):
    t = np.tanh(x * 1e-9)
    a = (2.0 * np.eye(4) + 0.562 * np.outer(t, t))[:shape[0], :shape[1]]
    u, s, vh = np.linalg.svd(a)
    unused = np.sum(s * np.arange(1, s.size + 1)) + u[0, 0] * vh[0, 0]  # noqa: F841
    return np.sum(x * x) + np.sum(s[-1:] * 0.0)


@pytest.mark.parametrize("shape", [(4, 4), (4, 3), (3, 4)], ids=["square", "tall", "wide"])
def test_unread_svd_outputs_at_a_split_tie_add_nothing(shape):
    f = lambda x: _unused_svd(x, shape)  # noqa: E731
    np.testing.assert_allclose(_silent_hvp(f, X, V), _differences_of_gradient(f, X, V), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("a, kwargs", [
    (np.array([[2.0, 0.3, -0.1], [0.7, 1.0, 0.4], [-0.6, 0.2, -1.5], [0.3, 0.9, 0.1]]), {}),
    (np.array([[2.0, 0.3, -0.1, 0.5], [0.7, 1.0, 0.4, -0.2]]), {"full_matrices": False}),
    (np.stack([np.diag([1.0, 2.0, 4.0]) + 0.1, np.diag([-1.0, 0.5, 3.0])]), {}),
], ids=["tall full", "wide reduced", "stack"])
def test_svd_second_order_with_the_vectors_read_matches_differences(a, kwargs):
    """The vectors read (check_second_order's random function of u, s, vh): the cotangent map's
    forward transform, which the direct rule hands such calls to."""
    check_second_order(np.linalg.svd, a, kwargs=kwargs)


def test_svd_values_alone_read_take_the_values_formula():
    """u and vh computed and unused, s read, away from ties: hvp against differences of the gradient."""
    def f(x):
        a = np.array([[x[0], x[1], 0.2], [x[1], 2.0, x[2]], [0.2, x[2] * x[0], -1.0], [0.5, 0.1, x[1]]])
        u, s, vh = np.linalg.svd(a)
        return np.sum(s ** 3 * np.array([0.5, -1.0, 2.0])) + 0.0 * u[0, 0]

    x = np.array([0.7, 0.3, -0.4])
    v = np.array([1.0, -0.5, 0.25])
    np.testing.assert_allclose(_silent_hvp(f, x, v), _differences_of_gradient(f, x, v, h=1e-6), rtol=1e-5, atol=1e-8)
