"""``scipy.linalg`` as users call it: scalar losses through each function, differentiated by
yuebing in reverse (``grad``), forward (``jvp``) and second order (``hvp``), against central
finite differences, each at two random points; then ``yb.grad`` against ``jax.grad`` of the same
loss written with ``jax.scipy.linalg`` (float64, every JAX twin in one jitted program); and the
refusals, which must name the function and say what to do.

The losses of eigen- and singular vectors are gauge-invariant where the two libraries may pick
different signs (squares of the vectors); ``eig``'s are not (yuebing follows LAPACK's gauge).
"""
import numpy as np
import pytest
import scipy.linalg as sla

import yuebing as yb

_rng = np.random.default_rng(20261202)


def _weights(*shape):
    return _rng.standard_normal(shape)


W3, W3b, W4, W43, W34, W5 = _weights(3, 3), _weights(3, 3), _weights(4, 4), _weights(4, 3), _weights(3, 4), _weights(5)
C3, C4 = _weights(3), _weights(4)


def _sym(x, n):
    a = np.reshape(x, (n, n))
    return a + a.T


def _spd(x, n):
    a = np.reshape(x, (n, n))
    return a @ a.T + n * np.eye(n)


def _well(x, n):
    return np.reshape(x, (n, n)) + n * np.eye(n)


# ---------------------------------------------------------------- the losses (x: one flat vector)


def eigh_loss(x):
    w, v = sla.eigh(_sym(x, 3))
    return np.sum(w * C3) + np.sum(v ** 2 * W3)


def eigh_pencil_loss(x):
    w, v = sla.eigh(_sym(x[:9], 3), _spd(x[9:], 3), lower=False)
    return np.sum(w * C3) + np.sum(v ** 2 * W3)


def eigh_values_subset_loss(x):
    w = sla.eigh(_sym(x, 4), eigvals_only=True, subset_by_index=[1, 3])
    v = sla.eigh(_sym(x, 4), subset_by_index=[0, 1])[1]
    return np.sum(w ** 2) + np.sum(v ** 2 * W43[:, :2])


def eig_loss(x):
    w, v = sla.eig(np.reshape(x, (3, 3)))
    return np.sum(np.real(w) * C3 + np.imag(w) ** 2) + np.sum(np.real(v) * W3 + np.imag(v) * W3b)


def eigvals_loss(x):
    w = sla.eig(np.reshape(x, (4, 4)), right=False)
    return np.sum((np.real(w) ** 2 + np.imag(w) ** 2) * C4)


def svd_loss(x):
    u, s, vh = sla.svd(np.reshape(x, (4, 3)), full_matrices=False)
    return np.sum(s * C3) + np.sum(u ** 2 * W43) + np.sum(vh ** 2 * W3)


def svd_values_loss(x):
    return np.sum(sla.svd(np.reshape(x, (3, 4)), compute_uv=False) * C3)


def qr_loss(x):
    q, r = sla.qr(np.reshape(x, (4, 3)), mode="economic")
    return np.sum(q * W43) + np.sum(r * W3)


def qr_full_r_pivoting_loss(x):
    q, r = sla.qr(np.reshape(x, (3, 3)))
    (r2,) = sla.qr(np.reshape(x, (3, 3)), mode="r")
    q3, r3, p3 = sla.qr(np.reshape(x, (3, 3)), pivoting=True)
    return np.sum(q * W3) + np.sum(r * r2) + np.sum(q3 * W3b + r3)


def lu_loss(x):
    p, lo, up = sla.lu(np.reshape(x, (4, 4)))
    pl, up2 = sla.lu(np.reshape(x, (4, 4)), permute_l=True)
    return np.sum(lo * W4) + np.sum(up ** 2) + np.sum(pl * up2)


def lu_solve_loss(x):
    lu_piv = sla.lu_factor(_well(x[:9], 3))
    return np.sum(sla.lu_solve(lu_piv, x[9:]) * C3) + np.sum(sla.lu_solve(lu_piv, x[9:], trans=1) ** 2)


def cho_loss(x):
    c = sla.cho_factor(_spd(x[:9], 3), lower=True)
    return np.sum(sla.cho_solve(c, x[9:]) * C3) + np.sum(sla.cholesky(_spd(x[:9], 3)) * W3)


def solve_assume_loss(x):
    a, b = _well(x[:16], 4), np.reshape(x[16:], (4, 2))
    total = 0.0
    for assume_a in (None, "gen", "sym", "pos", "upper triangular", "lower triangular", "diagonal", "tridiagonal",
                     "banded"):
        m = a @ a.T if assume_a == "pos" else a
        total = total + np.sum(sla.solve(m, b, assume_a=assume_a) * W43[:, :2])
    return total + np.sum(sla.solve(a, b, transposed=True) ** 2)


def solve_triangular_loss(x):
    a = _well(x[:9], 3)
    return np.sum(sla.solve_triangular(a, x[9:], lower=True) * C3) + np.sum(
        sla.solve_triangular(a, x[9:], trans=1, unit_diagonal=True) ** 2)


def banded_loss(x):
    ab = np.reshape(x[:15], (3, 5)) + np.array([[0.0], [6.0], [0.0]])
    hb = np.reshape(x[15:25], (2, 5)) + np.array([[0.0], [6.0]])
    b = x[25:]
    return np.sum(sla.solve_banded((1, 1), ab, b) * W5) + np.sum(sla.solveh_banded(hb, b) ** 2) + np.sum(
        sla.solveh_banded(hb[::-1], b, lower=True) * W5)


def sylvester_loss(x):
    a, b, q = _well(x[:9], 3), _well(x[9:13], 2), np.reshape(x[13:19], (3, 2))
    return np.sum(sla.solve_sylvester(a, b, q) * W43[:3, :2])


def lyapunov_loss(x):
    return np.sum(sla.solve_continuous_lyapunov(-_well(x[:9], 3), np.reshape(x[9:], (3, 3))) * W3)


def matrix_functions_loss(x):
    a = np.reshape(x, (3, 3)) / 3
    e, frechet = sla.expm_frechet(a, W3)
    return (np.sum(sla.expm(a) * W3) + np.sum(sla.logm(_spd(x, 3)) * W3b) + np.sum(sla.sqrtm(_spd(x, 3)) * W3)
            + np.sum(e * frechet))


def inverses_loss(x):
    a = np.reshape(x[:12], (4, 3))
    sq = _well(x[:9], 3)
    return np.sum(sla.pinv(a) * W34) + np.sum(sla.inv(sq) * W3) + sla.det(sq) + np.sum(sla.pinv(a.T) ** 2)


def special_matrices_loss(x):
    t = sla.toeplitz(x[:3], x[3:7])
    t1 = sla.toeplitz(x[:4])
    c = sla.circulant(x[:3])
    bd = sla.block_diag(np.reshape(x[:4], (2, 2)), x[4:6], x[6])
    return np.sum(np.sin(t) * W34) + np.sum(t1 @ x[:4]) + np.sum(c @ c) + np.sum(np.cos(bd))


LOSSES = [
    (eigh_loss, 9), (eigh_pencil_loss, 18), (eigh_values_subset_loss, 16), (eig_loss, 9), (eigvals_loss, 16),
    (svd_loss, 12), (svd_values_loss, 12), (qr_loss, 12), (qr_full_r_pivoting_loss, 9), (lu_loss, 16),
    (lu_solve_loss, 12), (cho_loss, 12), (solve_assume_loss, 24), (solve_triangular_loss, 12),
    (banded_loss, 30), (sylvester_loss, 19), (lyapunov_loss, 18), (matrix_functions_loss, 9),
    (inverses_loss, 12), (special_matrices_loss, 7),
]


def _fd(f, x, d, h=1e-6):
    return (f(x + h * d) - f(x - h * d)) / (2 * h)


@pytest.mark.parametrize("loss,n", LOSSES, ids=[f.__name__ for f, _ in LOSSES])
def test_loss_in_every_mode(loss, n):
    for point in range(2):
        x = _rng.standard_normal(n)
        d = _rng.standard_normal(n)
        expected = _fd(loss, x, d)
        scale = max(1.0, abs(expected))
        g = yb.grad(loss)(x)
        assert abs(g @ d - expected) < 1e-5 * scale, f"reverse at point {point}: {g @ d} vs {expected}"
        _, forward = yb.jvp(loss, (x,), (d,))
        assert abs(forward - expected) < 1e-5 * scale, f"forward at point {point}: {forward} vs {expected}"
        _, _, (hv,) = yb.hvp(loss, (x,), (d,))
        hv_fd = _fd(lambda z: yb.grad(loss)(z), x, d, h=1e-5)
        np.testing.assert_allclose(hv, hv_fd, rtol=1e-4, atol=1e-4 * max(1.0, np.max(np.abs(hv_fd))),
                                   err_msg=f"second order at point {point}")


# ---------------------------------------------------------------- JAX twins


jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy
jsl = jax.scipy.linalg


def _twin(np_, la):
    """The same losses, written once for NumPy/SciPy and once for jax.numpy/jax.scipy.linalg."""

    def sym(x, n):
        a = np_.reshape(x, (n, n))
        return a + a.T

    def well(x, n):
        return np_.reshape(x, (n, n)) + n * np_.eye(n)

    def spd(x, n):
        a = np_.reshape(x, (n, n))
        return a @ a.T + n * np_.eye(n)

    def eigh(x):
        w, v = la.eigh(sym(x, 3))
        return np_.sum(w * C3) + np_.sum(v ** 2 * W3)

    def eigh_values(x):
        return np_.sum(la.eigh(sym(x, 3), eigvals_only=True) ** 2 * C3)

    def svd(x):
        u, s, vh = la.svd(np_.reshape(x, (4, 3)), full_matrices=False)
        return np_.sum(s * C3) + np_.sum(u ** 2 * W43) + np_.sum(vh ** 2 * W3)

    def qr(x):
        q, r = la.qr(np_.reshape(x, (4, 3)), mode="economic")
        return np_.sum(q ** 2 * W43) + np_.sum(r ** 2 * W3)

    def lu(x):
        p, lo, up = la.lu(np_.reshape(x, (3, 3)))
        return np_.sum(lo * W3) + np_.sum(up * W3b)

    def lu_factor_solve(x):
        lu_piv = la.lu_factor(well(x[:9], 3))
        return np_.sum(lu_piv[0] * W3) + np_.sum(la.lu_solve(lu_piv, x[9:]) * C3)

    def cho(x):
        c = la.cho_factor(spd(x[:9], 3))
        return np_.sum(la.cho_solve(c, x[9:]) * C3)

    def solve_triangular(x):
        return np_.sum(la.solve_triangular(well(x[:9], 3), x[9:], lower=True, trans=1) * C3)

    def expm(x):
        return np_.sum(la.expm(np_.reshape(x, (3, 3)) / 2) * W3)

    def block_diag(x):
        return np_.sum(np_.sin(la.block_diag(np_.reshape(x[:4], (2, 2)), np_.reshape(x[4:7], (1, 3)))))

    def toeplitz(x):
        return np_.sum(np_.sin(la.toeplitz(x[:3], x[3:]) * W34))

    def det_inv_solve(x):
        a = well(x[:9], 3)
        return (la.det(a) + np_.sum(la.inv(a) * W3) + np_.sum(la.solve(a, x[9:]) * C3)
                + np_.sum(la.solve(spd(x[:9], 3), x[9:], assume_a="pos") ** 2))

    return [(eigh, 9), (eigh_values, 9), (svd, 12), (qr, 12), (lu, 9), (lu_factor_solve, 12), (cho, 12),
            (solve_triangular, 12), (expm, 9), (block_diag, 7), (toeplitz, 7), (det_inv_solve, 12)]


def test_gradients_equal_jax_scipy_linalg():
    ours, theirs = _twin(np, sla), _twin(jnp, jsl)
    points = [_rng.standard_normal(n) for _, n in ours]
    # one program, compiled without XLA's expensive passes (5 s instead of 13 s: expm's dominates)
    jitted = jax.jit(lambda xs: [jax.grad(f)(x) for (f, _), x in zip(theirs, xs)],
                     compiler_options={"xla_backend_optimization_level": 0, "xla_llvm_disable_expensive_passes": True})
    expected = jitted([jnp.asarray(x) for x in points])
    disagree = []
    for (f, _), x, want in zip(ours, points, expected):
        got = yb.grad(f)(x)
        if not np.allclose(got, np.asarray(want), rtol=1e-8, atol=1e-9):
            disagree.append(f"{f.__name__}: {got} vs {np.asarray(want)}")
    assert not disagree, "\n".join(disagree)


# ---------------------------------------------------------------- refusals


@pytest.mark.parametrize("call,message", [
    (lambda a: sla.eigh(a, type=2)[0], "type=1"),
    (lambda a: sla.eig(a, left=True)[0], "left=False"),
    (lambda a: sla.eig(a, a + 3 * np.eye(3))[0], "b=None"),
    (lambda a: sla.svd(a[:, :2])[0], "full_matrices=False"),
    (lambda a: sla.qr(a[:, :2])[0], "'economic'"),
    (lambda a: sla.qr(a[:2], mode="economic")[0], "square or tall"),
    (lambda a: sla.qr(a, mode="raw")[0][0], "'raw'"),
    (lambda a: sla.lu_factor(a[:, :2])[0], "square"),  # (lu of a rectangular matrix works: test_rectangular_lu.py)
    (lambda a: sla.pinv(np.outer(a[0], a[1])), "full-rank"),
    (lambda a: sla.sqrtm(a @ a.T + 3 * np.eye(3), blocksize=64), "blocksize="),
], ids=["eigh type", "eig left", "eig b", "svd full tall", "qr full tall", "qr wide", "qr raw",
        "lu_factor rectangular", "pinv rank", "sqrtm blocksize"])
def test_refusals_name_the_function(call, message):
    a = _rng.standard_normal((3, 3))
    a = a + a.T + np.diag([6.0, 0.0, -6.0])

    def loss(x):
        y = call(x)
        return np.sum(np.real(y * np.conj(y)))

    with pytest.raises(TypeError, match="scipy.linalg") as info:
        yb.grad(loss)(a)
    assert message in str(info.value)


def test_scipy_linalg_kron_is_gone():
    """SciPy 1.17 removed ``scipy.linalg.kron`` (``numpy.kron`` has a rule)."""
    assert not hasattr(sla, "kron")
