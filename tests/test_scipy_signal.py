"""scipy.signal through yuebing: the values of the rules and definitions against SciPy (every
method, mode, boundary and length order), gradients, forward tangents and Hessian-vector products
of small user functions against finite differences, jax as an oracle for the convolutions, and the
refusals.

The rule cases (check_rule; second order in tests/test_second_order.py) are in
``yuebing/rules/scipy_signal.py``.
"""
import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import RuleArgumentError

ss = pytest.importorskip("scipy.signal")
rng = np.random.default_rng(11)
MODES = ("full", "same", "valid")


def real(*shape):
    return rng.standard_normal(shape)


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def fd_gradient(f, x, h=1e-6):
    x = np.asarray(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


def check_all_modes(f, x, hvp=True, rtol=1e-5, atol=1e-6):
    """Reverse against central differences, forward against reverse, and (``hvp``) the
    Hessian-vector product against central differences of the gradient."""
    g = yb.grad(f)(x)
    np.testing.assert_allclose(g, fd_gradient(f, x), rtol=rtol, atol=atol)
    v = real(*np.shape(x))
    assert yb.jvp(f, (x,), (v,))[1] == pytest.approx(np.sum(g * v), rel=1e-8, abs=1e-9)
    if hvp:
        hv = yb.hvp(f, (x,), (v,))[2][0]
        h = 1e-5
        expected = (yb.grad(f)(x + h * v) - yb.grad(f)(x - h * v)) / (2 * h)
        np.testing.assert_allclose(hv, expected, rtol=1e-4, atol=1e-5 * max(1.0, np.max(np.abs(expected))))


def value_of(f, *args):
    """The value yuebing's forward mode computes (the rule's or the definition's)."""
    return yb.jvp(f, args, tuple(np.zeros_like(a) for a in args))[0]


# ------------------------------------------------------------------ convolutions


@pytest.mark.parametrize("fn, method", [(ss.convolve, "direct"), (ss.convolve, "fft"), (ss.correlate, "direct"),
                                        (ss.correlate, "fft"), (ss.fftconvolve, None), (ss.oaconvolve, None)])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("sx, sk", [((5,), (3,)), ((3,), (5,)), ((4, 5), (2, 3)), ((2, 3), (4, 5)), ((4, 4), (4, 1))])
def test_convolutions_dot_product(fn, method, mode, sx, sk):
    """<J (dx, dk), w> = <(dx, dk), J^T w> with complex factors; the tangent is SciPy's bilinear form."""
    kw = {} if method is None else {"method": method}
    call = lambda p, q: fn(p, q, mode=mode, **kw)  # noqa: E731
    x, k, dx, dk = cplx(*sx), cplx(*sk), cplx(*sx), cplx(*sk)
    y, jv = yb.jvp(call, (x, k), (dx, dk))
    np.testing.assert_allclose(y, call(x, k), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(jv, call(dx, k) + call(x, dk), rtol=1e-10, atol=1e-10)
    w = cplx(*np.shape(y))
    _, pullback = yb.vjp(call, x, k)
    gx, gk = pullback(w)
    lhs = np.real(np.vdot(jv, w))
    assert lhs == pytest.approx(np.real(np.vdot(dx, gx) + np.vdot(dk, gk)), rel=1e-9, abs=1e-9)


def test_fftconvolve_axes_broadcasts_the_other_axes():
    x, k = real(3, 6), real(1, 3)
    check_all_modes(lambda q: np.sum(ss.fftconvolve(x, q.reshape(1, 3), axes=1) ** 2), k.ravel())
    check_all_modes(lambda p: np.sum(np.sin(ss.oaconvolve(p.reshape(3, 6), k, mode="same", axes=[1]))), x.ravel())


@pytest.mark.parametrize("fn", [ss.convolve, ss.correlate, ss.fftconvolve])
@pytest.mark.parametrize("mode", MODES)
def test_convolutions_in_user_functions(fn, mode):
    kernel, signal = real(3), real(7)
    check_all_modes(lambda x: np.sum(np.sin(fn(x, kernel, mode=mode))), real(7))
    check_all_modes(lambda k: np.sum(fn(signal, k, mode=mode) ** 3), kernel)
    check_all_modes(lambda v: np.sum(fn(v[:5], v[5:], mode=mode) ** 2), real(8))  # both factors


def test_list_inputs():
    check_all_modes(lambda a: np.sum(ss.convolve([a[0], 2.0 * a[1], 1.0], [0.5, a[1]]) ** 2), real(2))
    check_all_modes(lambda a: np.sum(ss.convolve2d([[a[0], 1.0], [a[1], 2.0]], [[1.0, a[0]]], boundary="symm") ** 2), real(2))


# ------------------------------------------------------------------ convolve2d, correlate2d


@pytest.mark.parametrize("fn", [ss.convolve2d, ss.correlate2d])
@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("boundary", ["fill", "wrap", "symm"])
def test_2d_values_and_derivatives(fn, mode, boundary):
    for sx, sk in [((5, 4), (3, 2)), ((3, 3), (5, 4)), ((4, 6), (2, 2)), ((2, 2), (5, 5))]:
        x, k = cplx(*sx), cplx(*sk)
        try:
            expected = fn(x, k, mode=mode, boundary=boundary, fillvalue=0.7)
        except ValueError:
            continue
        ours = value_of(lambda p, q: fn(p, q, mode=mode, boundary=boundary, fillvalue=0.7), x, k)
        np.testing.assert_allclose(ours, expected, rtol=1e-10, atol=1e-10)
    x, k = real(4, 5), real(2, 3)
    check_all_modes(lambda v: np.sum(np.sin(fn(v[:20].reshape(4, 5), v[20:].reshape(2, 3), mode=mode,
                                                 boundary=boundary, fillvalue=0.3))), np.concatenate([x.ravel(), k.ravel()]))


def test_2d_refusals():
    with pytest.raises(ValueError):  # SciPy's own error, before any derivative
        yb.grad(lambda x: np.sum(ss.convolve2d(x, np.ones((2, 2)), boundary="bogus")))(real(3, 3))


# ------------------------------------------------------------------ lfilter, sosfilt, filtfilt

B, A = np.array([0.3, 0.2, -0.1]), np.poly([0.5, -0.3])


@pytest.mark.parametrize("case", ["plain", "zi", "a0", "fir", "short", "axis0", "long b"])
def test_lfilter_values_match_scipy(case):
    b, a, x, kw = B, A, real(9), {}
    if case == "zi":
        kw = {"zi": real(2)}
    elif case == "a0":
        a, kw = 2.0 * A, {"zi": real(2)}
    elif case == "fir":
        a, kw = np.array([1.5]), {"zi": real(2)}
    elif case == "short":
        x, kw = real(1), {"zi": real(2)}
    elif case == "axis0":
        x, kw = real(6, 3), {"axis": 0, "zi": real(2, 3)}
    elif case == "long b":
        b, kw = real(5), {"zi": real(4)}
    expected = ss.lfilter(b, a, x, **kw)
    ours = value_of(lambda p, q, s: ss.lfilter(p, q, s, **kw), b, a, x)
    for o, e in zip(ours if "zi" in kw else [ours], expected if "zi" in kw else [expected]):
        np.testing.assert_allclose(o, e, rtol=1e-12, atol=1e-12)


def test_lfilter_in_every_argument():
    x, zi = real(12), real(2)
    check_all_modes(lambda x: np.sum(ss.lfilter(B, A, x) ** 2), x)
    check_all_modes(lambda b: np.sum(np.sin(ss.lfilter(b, A, x))), B)
    check_all_modes(lambda a: np.sum(ss.lfilter(B, a, x) ** 2), 1.3 * A)
    check_all_modes(lambda z: np.sum(ss.lfilter(B, A, x, zi=z)[0] ** 2) + np.sum(ss.lfilter(B, A, x, zi=z)[1] ** 3), zi)
    check_all_modes(lambda a: np.sum(ss.lfilter(B, a, x, zi=zi)[1] ** 2), A)
    x2 = real(3, 8)
    check_all_modes(lambda a: np.sum(ss.lfilter(B, a, x2.T, axis=0) ** 2), A)


def test_sosfilt_and_filtfilt():
    sos = ss.butter(4, 0.2, output="sos")
    x = real(16)
    check_all_modes(lambda x: np.sum(ss.sosfilt(sos, x) ** 2), x)
    free = np.ones((2, 6), dtype=bool)
    free[:, 3] = False  # SciPy accepts only 1 there
    check_all_modes(lambda c: np.sum(ss.sosfilt(np.where(free, c.reshape(2, 6), sos), x) ** 2), sos.ravel())
    zi = 0.1 * real(2, 2)
    check_all_modes(lambda z: np.sum(ss.sosfilt(sos, x, zi=z.reshape(2, 2))[0] ** 2), zi.ravel())
    b, a = ss.butter(3, 0.3)
    y = np.linspace(0.0, 3.0, 20) ** 2
    check_all_modes(lambda x: np.sum(ss.filtfilt(b, a, x) ** 2), real(20))
    check_all_modes(lambda a: np.sum(ss.filtfilt(b, a, y, padtype="even") ** 2), a)
    for padtype in ("odd", "even", "constant", None):
        np.testing.assert_allclose(value_of(lambda s: ss.filtfilt(b, a, s, padtype=padtype), y),
                                   ss.filtfilt(b, a, y, padtype=padtype), rtol=1e-10, atol=1e-12)


def test_filter_refusals():
    b, a = ss.butter(2, 0.3)
    with pytest.raises(RuleArgumentError, match="method='pad' only"):
        yb.grad(lambda x: np.sum(ss.filtfilt(b, a, x, method="gust")))(real(20))
    with pytest.raises(ValueError):  # SciPy's own check of sos
        yb.grad(lambda x: np.sum(ss.sosfilt(np.ones((1, 6)) * 2.0, x)))(real(5))


# ------------------------------------------------------------------ against jax

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jsig = pytest.importorskip("jax.scipy.signal")


@pytest.mark.parametrize("name", ["convolve", "correlate", "convolve2d", "correlate2d"])
@pytest.mark.parametrize("mode", MODES)
def test_gradients_agree_with_jax(name, mode):
    two_d = name.endswith("2d")
    x, k = (real(5, 4), real(2, 3)) if two_d else (real(7), real(3))

    def loss(xp, fn):
        return lambda q: xp.sum(xp.sin(fn(x, q, mode=mode)) ** 2)

    ours = yb.grad(loss(np, getattr(ss, name)))(k)
    theirs = jax.grad(loss(jax.numpy, getattr(jsig, name)))(k)
    np.testing.assert_allclose(ours, np.asarray(theirs), rtol=1e-10, atol=1e-12)
