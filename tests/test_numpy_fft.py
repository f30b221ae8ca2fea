"""numpy.fft in every mode: a dot-product test (<J v, w> = <v, J^T w>, real inner product on
complex values) and a linearity test (J v = f(v)) for every transform and every norm, gradients
against central differences and against ``jax.grad`` of the ``jax.numpy.fft`` twin, Hessians and
Hessian-vector products of real losses through the transforms, and the refusals.

The rule cases (check_rule, second order of each) are in ``yuebing/rules/numpy_fft.py``.
"""
import numpy as np
import pytest

import yuebing as yb

from .all_modes import check_all_modes

fft = np.fft
NORMS = (None, "backward", "ortho", "forward")
rng = np.random.default_rng(14)


def real(*shape):
    return rng.standard_normal(shape)


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def inner(a, b):
    """The real inner product Re(conj(a) b) (docs/conventions.md)."""
    return float(np.real(np.vdot(np.asarray(a), np.asarray(b))))


#: (function, input maker, shape, keywords): every transform with n/s, axis/axes, cropping and padding
TRANSFORMS = [
    (fft.fft, cplx, (6,), {}),
    (fft.fft, real, (3, 5), {"n": 7, "axis": 0}),
    (fft.fft, cplx, (8,), {"n": 5}),
    (fft.ifft, cplx, (5,), {}),
    (fft.ifft, cplx, (4, 3), {"n": 2, "axis": 0}),
    (fft.rfft, real, (6,), {}),
    (fft.rfft, real, (7,), {"n": 10}),
    (fft.rfft, real, (3, 9), {"n": 5}),
    (fft.irfft, cplx, (4,), {}),
    (fft.irfft, cplx, (5,), {"n": 9}),
    (fft.irfft, cplx, (6, 2), {"n": 4, "axis": 0}),
    (fft.hfft, cplx, (4,), {}),
    (fft.hfft, cplx, (5,), {"n": 7}),
    (fft.hfft, cplx, (2, 6), {"n": 6}),
    (fft.ihfft, real, (6,), {}),
    (fft.ihfft, real, (5, 3), {"n": 7, "axis": 0}),
    (fft.fft2, cplx, (3, 4), {}),
    (fft.fft2, real, (2, 3, 4), {"s": (5, 2)}),
    (fft.ifft2, cplx, (4, 3), {"axes": (1, 0), "s": (2, 6)}),
    (fft.rfft2, real, (4, 6), {}),
    (fft.rfft2, real, (3, 5), {"s": (4, 3)}),
    (fft.irfft2, cplx, (4, 3), {}),
    (fft.irfft2, cplx, (3, 4), {"s": (5, 5)}),
    (fft.fftn, cplx, (2, 3, 4), {}),
    (fft.fftn, cplx, (3, 4, 2), {"s": (2, 5), "axes": (2, 0)}),
    (fft.fftn, real, (4, 3), {"axes": (1, 1)}),
    (fft.ifftn, cplx, (3, 2, 4), {"axes": (0, 2)}),
    (fft.rfftn, real, (2, 3, 4), {}),
    (fft.rfftn, real, (4, 3, 5), {"s": (3, 6), "axes": (0, 2)}),
    (fft.irfftn, cplx, (3, 2, 3), {}),
    (fft.irfftn, cplx, (4, 3), {"s": (3, 5), "axes": (0, 1)}),
]


def _id(param):
    f, make, shape, kw = param
    return f"{f.__name__}-{make.__name__}{list(shape)}-{kw}"


def _apply(f, kw, norm):
    return lambda x: f(x, norm=norm, **kw)


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("spec", TRANSFORMS, ids=[_id(p) for p in TRANSFORMS])
def test_dot_product_and_linearity(spec, norm):
    f, make, shape, kw = spec
    g = _apply(f, kw, norm)
    x, v = make(*shape), make(*shape)
    y, jv = yb.jvp(g, (x,), (v,))
    np.testing.assert_allclose(y, g(x), rtol=1e-12, atol=1e-12)
    # linear over the reals: the forward derivative is the function itself
    np.testing.assert_allclose(jv, g(v), rtol=1e-10, atol=1e-10)
    w = real(*np.shape(y)) + (1j * real(*np.shape(y)) if np.iscomplexobj(y) else 0)
    _, pullback = yb.vjp(g, x)
    (xbar,) = pullback(w)
    assert np.shape(xbar) == np.shape(x) and np.iscomplexobj(xbar) == np.iscomplexobj(x)
    assert inner(jv, w) == pytest.approx(inner(v, xbar), rel=1e-10, abs=1e-10)


def _jacobian_by_columns(g, x):
    """The real Jacobian of g at x (columns: real parts, then imaginary parts of complex x)
    from g itself (a linear map), flattened to real vectors."""
    def flat(y):
        y = np.asarray(y).ravel()
        return np.concatenate([y.real, y.imag]) if np.iscomplexobj(y) else y

    cols = []
    for part in ((1.0, 1j) if np.iscomplexobj(x) else (1.0,)):
        for i in range(x.size):
            e = np.zeros(x.size, dtype=x.dtype)
            e[i] = part
            cols.append(flat(g(e.reshape(x.shape))))
    return np.array(cols).T


@pytest.mark.parametrize("norm", ("backward", "ortho", "forward"))
@pytest.mark.parametrize("spec", [p for p in TRANSFORMS if len(p[2]) == 1], ids=[_id(p) for p in TRANSFORMS if len(p[2]) == 1])
def test_pullback_is_the_transpose_of_the_dense_jacobian(spec, norm):
    """The whole real Jacobian, column by column, against the pullback of every basis cotangent
    (the Hermitian-half weights of rfft/irfft/hfft/ihfft are where a wrong adjoint would show)."""
    f, make, shape, kw = spec
    g = _apply(f, kw, norm)
    x = make(*shape)
    J = _jacobian_by_columns(g, x)
    y = g(x)
    rows = []
    for part in ((1.0, 1j) if np.iscomplexobj(y) else (1.0,)):
        for i in range(y.size):
            e = np.zeros(y.size, dtype=y.dtype)
            e[i] = part
            (xbar,) = yb.vjp(g, x)[1](e.reshape(y.shape))
            xbar = np.asarray(xbar).ravel()
            rows.append(np.concatenate([xbar.real, xbar.imag]) if np.iscomplexobj(x) else xbar)
    np.testing.assert_allclose(np.array(rows), J, rtol=1e-10, atol=1e-12)


def test_float32_keeps_its_precision():
    x = real(8).astype(np.float32)
    (xbar,) = yb.vjp(fft.rfft, x)[1](np.ones(5, np.complex64))
    assert xbar.dtype == np.float32
    y, t = yb.jvp(fft.fft, (x,), (np.ones(8, np.float32),))
    assert y.dtype == t.dtype == np.complex64


def test_lists_are_transformed_like_arrays():
    def loss(a, b):
        return np.sum(np.abs(np.fft.fft([a, b, 2.0 * a, 1.0])) ** 2)

    ga, gb = yb.grad(loss, argnums=(0, 1))(0.3, -1.2)
    h = 1e-6
    assert ga == pytest.approx((loss(0.3 + h, -1.2) - loss(0.3 - h, -1.2)) / (2 * h), rel=1e-6)
    assert gb == pytest.approx((loss(0.3, -1.2 + h) - loss(0.3, -1.2 - h)) / (2 * h), rel=1e-6)


# ------------------------------------------------------------------ real losses: FD, JAX, Hessians


def power(x):
    return np.sum(np.abs(np.fft.rfft(x)) ** 2)


def filtered(x):
    spectrum = np.fft.rfft(x, norm="ortho")
    k = np.arange(spectrum.shape[-1])
    return np.sum(np.fft.irfft(spectrum * np.exp(-0.3 * k), n=x.shape[-1], norm="ortho") ** 3)


def n_d(x):
    z = np.fft.rfftn(x, s=(4, 6), axes=(0, 1))
    return np.sum(np.fft.irfftn(z * np.conj(z), s=(4, 6), axes=(0, 1)) ** 2)


def hermitian(x):
    spectrum = np.fft.ihfft(x, norm="forward")
    return np.sum(np.fft.hfft(spectrum ** 2, n=x.shape[-1]) * np.cos(np.arange(x.shape[-1])))


# Second order of complex elementwise arithmetic (abs, +, *, ** of complex values, even with a
# constant) is refused by yuebing for now (SecondOrderError), so the Hessian losses reach complex
# values only through the transforms themselves and np.real / np.imag / .real / .imag.


def power_parts(x):
    z = np.fft.rfft(x)
    return np.sum(np.real(z) ** 2 + np.imag(z) ** 2)


def filtered_parts(x):
    z = np.fft.fft(np.tanh(x), n=10, norm="ortho")
    back = np.fft.ifft(z, n=8, norm="forward")
    return np.sum(z.real ** 3 * np.exp(-0.2 * np.arange(10))) + np.sum(np.sin(back.imag)) + np.sum(back.real ** 2)


def two_d(x):
    y = np.fft.fftshift(np.fft.fft2(x, norm="forward"))
    return np.sum(np.real(y) ** 2 * np.arange(y.size).reshape(y.shape)) + np.sum(np.imag(y) ** 3)


def n_d_parts(x):
    z = np.fft.rfftn(x, s=(4, 6), axes=(0, 1), norm="ortho")
    return np.sum(np.fft.irfftn(z, s=(4, 5), axes=(0, 1)) ** 3) + np.sum(z.real * z.imag)


def hermitian_parts(x):
    spectrum = np.fft.ihfft(np.tanh(x), n=9, norm="forward")
    return np.sum(np.fft.hfft(spectrum, n=8) ** 2) + np.sum(np.imag(spectrum) ** 2 * np.real(spectrum))


def shifted_inverse(x):
    z = np.fft.ifftshift(np.fft.ifftn(x, axes=(1,)), axes=1)
    w = np.fft.ifft(z, n=7, axis=0)
    return np.sum(w.real ** 2 + w.imag ** 2) + np.sum(np.real(z) * np.sin(x))


FIRST_ORDER = [(power, (9,)), (filtered, (8,)), (n_d, (3, 5)), (hermitian, (7,))]
SECOND_ORDER = [(power_parts, (9,)), (filtered_parts, (7,)), (two_d, (3, 4)), (n_d_parts, (3, 5)),
                (hermitian_parts, (6,)), (shifted_inverse, (4, 3))]


def _fd_gradient(f, x, h=1e-6):
    g = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e.flat[i] = h
        g.flat[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g


@pytest.mark.parametrize("f, shape", FIRST_ORDER + SECOND_ORDER, ids=[f.__name__ for f, _ in FIRST_ORDER + SECOND_ORDER])
def test_gradient_and_jvp_of_real_losses(f, shape):
    x, v = real(*shape), real(*shape)
    g = yb.grad(f)(x)
    np.testing.assert_allclose(g, _fd_gradient(f, x), rtol=1e-5, atol=1e-6)
    _, jv = yb.jvp(f, (x,), (v,))
    assert jv == pytest.approx(np.sum(g * v), rel=1e-9, abs=1e-9)


@pytest.mark.parametrize("f, shape", SECOND_ORDER, ids=[f.__name__ for f, _ in SECOND_ORDER])
def test_hvp_and_hessian_of_real_losses(f, shape):
    x, v = real(*shape), real(*shape)
    value, grad2, hv = yb.hvp(f, (x,), (v,))
    assert value == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(grad2[0], yb.grad(f)(x), rtol=1e-10, atol=1e-12)
    h = 1e-5
    fd_hv = (yb.grad(f)(x + h * v) - yb.grad(f)(x - h * v)) / (2 * h)
    np.testing.assert_allclose(hv[0], fd_hv, rtol=1e-5, atol=1e-6)
    H = yb.hessian(f)(x).reshape(x.size, x.size)
    np.testing.assert_allclose(H, H.T, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(H @ v.ravel(), np.ravel(hv[0]), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("f, shape", FIRST_ORDER, ids=[f.__name__ for f, _ in FIRST_ORDER])
def test_second_order_of_complex_arithmetic_is_right_or_refused(f, shape):
    """abs, * and ** of complex values: a Hessian-vector product that matches finite differences
    of the gradient, or yuebing's SecondOrderError naming the complex operation; never a wrong one."""
    x, v = real(*shape), real(*shape)
    try:
        hv = yb.hvp(f, (x,), (v,))[2][0]
    except yb.SecondOrderError as error:
        assert "of complex numbers is not supported in second order" in str(error)
        return
    h = 1e-5
    np.testing.assert_allclose(hv, (yb.grad(f)(x + h * v) - yb.grad(f)(x - h * v)) / (2 * h), rtol=1e-5, atol=1e-6)


def test_complex_input_gradient():
    def loss(z):
        return np.sum(np.abs(np.fft.ifft(z, n=6, norm="ortho")) ** 3) + np.sum(np.fft.irfft(z) ** 2)

    z = cplx(5)
    g = yb.grad(loss)(z)
    h = 1e-6
    fd = np.array([(loss(z + h * e) - loss(z - h * e)) / (2 * h) for e in np.eye(5)]) \
        + 1j * np.array([(loss(z + 1j * h * e) - loss(z - 1j * h * e)) / (2 * h) for e in np.eye(5)])
    np.testing.assert_allclose(g, fd, rtol=1e-5, atol=1e-6)  # d/dRe + i d/dIm


jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
jnp = jax.numpy


def _twin(f):
    """The same loss written with jax.numpy (np -> jnp), by evaluating its source again."""
    import inspect
    import textwrap

    namespace = {"np": jnp}
    exec(textwrap.dedent(inspect.getsource(f)), namespace)  # noqa: S102 - our own test source
    return namespace[f.__name__]


@pytest.mark.parametrize("f, shape", FIRST_ORDER + SECOND_ORDER, ids=[f.__name__ for f, _ in FIRST_ORDER + SECOND_ORDER])
def test_gradient_agrees_with_jax(f, shape):
    twin = _twin(f)
    x = real(*shape)
    assert float(jax.jit(twin)(x)) == pytest.approx(f(x), rel=1e-12)
    np.testing.assert_allclose(yb.grad(f)(x), np.asarray(jax.jit(jax.grad(twin))(x)), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("f, shape", SECOND_ORDER, ids=[f.__name__ for f, _ in SECOND_ORDER])
def test_hvp_agrees_with_jax(f, shape):
    twin = _twin(f)
    x, v = real(*shape), real(*shape)
    jax_hv = jax.jit(lambda x, v: jax.jvp(jax.grad(twin), (x,), (v,))[1])(x, v)
    np.testing.assert_allclose(yb.hvp(f, (x,), (v,))[2][0], np.asarray(jax_hv), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("name, norm", [("fft", "backward"), ("fft", "ortho"), ("ifft", "forward"),
                                        ("irfft", "ortho"), ("irfft", "backward"), ("hfft", "forward")])
def test_complex_gradient_is_the_conjugate_of_jax(name, norm):
    """JAX's gradient of a real function of complex z is d/dRe - i d/dIm; ours, under the real
    inner product, is d/dRe + i d/dIm: the conjugate."""
    np_f, jax_f = getattr(np.fft, name), getattr(jnp.fft, name)
    weights = real(7)

    def ours(z):
        return np.sum(np.abs(np_f(z, n=7, norm=norm)) ** 2 * weights)

    def theirs(z):
        return jnp.sum(jnp.abs(jax_f(z, n=7, norm=norm)) ** 2 * weights)

    z = cplx(5)
    np.testing.assert_allclose(yb.grad(ours)(z), np.conj(np.asarray(jax.jit(jax.grad(theirs))(z))), rtol=1e-10, atol=1e-10)


# ------------------------------------------------------------------ frequencies, shifts, refusals


def test_frequencies_differentiate_the_spacing_in_every_mode():
    def loss(d):
        return np.sum(np.fft.fftfreq(5, d) ** 2) + np.sum(np.fft.rfftfreq(6, d=d) ** 3)

    d, h = 0.7, 1e-6
    assert yb.grad(loss)(d) == pytest.approx((loss(d + h) - loss(d - h)) / (2 * h), rel=1e-6)
    assert yb.jvp(loss, (d,), (1.0,))[1] == pytest.approx(yb.grad(loss)(d), rel=1e-12)
    fd2 = (yb.grad(loss)(d + 1e-5) - yb.grad(loss)(d - 1e-5)) / 2e-5
    assert yb.hessian(loss)(d) == pytest.approx(fd2, rel=1e-6)


def test_shifts_are_inverse_permutations():
    x = real(4, 5)
    for f, inverse in ((fft.fftshift, fft.ifftshift), (fft.ifftshift, fft.fftshift)):
        for axes in (None, 0, (1,)):
            (xbar,) = yb.vjp(lambda a: f(a, axes=axes), x)[1](x)
            np.testing.assert_array_equal(xbar, inverse(x, axes=axes))


def test_out_runs_as_an_assignment():
    """out= is the result assigned into the array (numpy_arguments.rule), in every mode; the
    rule cases check it with check_rule, here a gradient and a Hessian against differences."""
    x = real(6)

    def loss(a):
        out = np.empty(6, complex)
        np.fft.fft(a * a, norm="ortho", out=out)
        return np.sum(out.real * out.imag + out.real)

    check_all_modes(loss, x)


def test_bad_arguments_raise_numpys_own_errors():
    x = real(6)
    with pytest.raises(ValueError, match="norm"):
        yb.grad(lambda a: np.sum(np.abs(np.fft.fft(a, norm="bogus"))))(x)
    with pytest.raises(TypeError):
        yb.grad(lambda z: np.sum(np.abs(np.fft.rfft(z))))(cplx(4))  # rfft of complex input: NumPy refuses
