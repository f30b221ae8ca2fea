"""``yb.jacobian`` of complex inputs and outputs, as JAX's ``jacfwd``/``jacrev`` give them: real
inputs with complex outputs (``d Re y/dx + i d Im y/dx``), and ``holomorphic=True`` for complex
inputs (``f'(z)``). Each against JAX (the oracle, in float64) and central differences, in both
modes, batched and one direction per pass, under an executor, for structures and scalars; and the
refusals JAX makes (complex inputs without ``holomorphic``, real inputs or outputs with it);
``yb.hessian(holomorphic=True)`` against ``jax.hessian`` and differences of the complex Jacobian."""
from __future__ import annotations

import pickle
from concurrent.futures import ThreadPoolExecutor

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import yuebing as yb

jax.config.update("jax_enable_x64", True)

Z = np.array([0.3 + 0.4j, -0.7 + 0.2j, 1.1 - 0.5j])
A = np.array([[1 + 2j, 0.5, -1j], [0.3j, 2.0, 1 - 1j]])

#: holomorphic functions: (NumPy, jax.numpy) pairs
HOLOMORPHIC = {
    "polynomial": (lambda z: z ** 3 + 2 * z * z - 1j * z, lambda z: z ** 3 + 2 * z * z - 1j * z),
    "exp": (lambda z: np.exp(z) * z[::-1], lambda z: jnp.exp(z) * z[::-1]),
    "sin_over": (lambda z: np.sin(z) / (1 + z), lambda z: jnp.sin(z) / (1 + z)),
    "reciprocal": (lambda z: 1 / z, lambda z: 1 / z),
    "matrix_product": (lambda z: A @ np.exp(z) + np.outer(z, z).sum(axis=0)[:2],
                       lambda z: jnp.asarray(A) @ jnp.exp(z) + jnp.outer(z, z).sum(axis=0)[:2]),
}
MODES = [("fwd", None), ("fwd", 1), ("rev", None)]


def complex_differences(f, z, h=1e-6):
    """Columns ``(f(z + h e_k) - f(z - h e_k)) / 2h``: ``f'(z)`` of a holomorphic ``f`` (any
    direction gives it), ``d Re y + i d Im y`` of a function of real ``z``."""
    columns = []
    for k in range(z.size):
        e = np.zeros(z.size, z.dtype)
        e[k] = h
        columns.append((np.asarray(f(z + e)) - np.asarray(f(z - e))) / (2 * h))
    return np.stack(columns, axis=-1)


def jax_jacobian(mode, f, **options):
    return (jax.jacfwd if mode == "fwd" else jax.jacrev)(f, **options)


@pytest.mark.parametrize("mode, chunk", MODES)
@pytest.mark.parametrize("name", HOLOMORPHIC)
def test_holomorphic_matches_jax_and_differences(name, mode, chunk):
    f, f_jax = HOLOMORPHIC[name]
    got = yb.jacobian(f, mode=mode, holomorphic=True, chunk_size=chunk)(Z.copy())
    assert got.dtype == np.complex128 and got.shape == np.shape(f(Z)) + Z.shape
    expected = np.asarray(jax_jacobian(mode, f_jax, holomorphic=True)(jnp.asarray(Z)))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, complex_differences(f, Z), rtol=1e-6, atol=1e-8)
    # holomorphic: the imaginary direction gives i f'(z)
    np.testing.assert_allclose(1j * got, complex_differences(lambda z: f(z * 1j), Z / 1j), rtol=1e-6, atol=1e-8)


def real_to_complex(x):
    return np.exp(1j * x) * x[::-1] + np.array([1j, 2.0]) * x[0] ** 2


@pytest.mark.parametrize("mode, chunk", MODES)
def test_real_inputs_complex_outputs(mode, chunk):
    x = np.array([0.3, -0.8])
    got = yb.jacobian(real_to_complex, mode=mode, chunk_size=chunk)(x.copy())
    expected = jax.jacfwd(lambda x: jnp.exp(1j * x) * x[::-1] + jnp.array([1j, 2.0]) * x[0] ** 2)(jnp.asarray(x))
    np.testing.assert_allclose(got, np.asarray(expected), rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(got, complex_differences(real_to_complex, x), rtol=1e-6, atol=1e-8)


def mixed_outputs(x):
    """A real and a complex output of real inputs: real and complex blocks."""
    return {"real": np.sum(x ** 2), "complex": np.exp(1j * x[0]) * x[1]}


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_structured_real_and_complex_outputs(mode):
    x = np.array([0.4, 1.3])
    got = yb.jacobian(mixed_outputs, mode=mode)(x.copy())
    assert got["real"].dtype == np.float64 and got["complex"].dtype == np.complex128
    np.testing.assert_allclose(got["real"], 2 * x, rtol=1e-12)
    np.testing.assert_allclose(got["complex"], complex_differences(lambda u: mixed_outputs(u)["complex"], x),
                               rtol=1e-6, atol=1e-8)


def pair(p):
    z, w = p
    return {"product": z * w ** 2, "sum": np.sin(z) + w}


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_holomorphic_structures_and_scalars(mode):
    z, w = 0.5 - 0.3j, np.array([1.0 + 1.0j, -0.2 + 0.7j])
    got = yb.jacobian(pair, mode=mode, holomorphic=True)((z, w.copy()))
    expected = jax_jacobian(mode, lambda p: {"product": p[0] * p[1] ** 2, "sum": jnp.sin(p[0]) + p[1]},
                            holomorphic=True)((jnp.asarray(z), jnp.asarray(w)))
    for key in ("product", "sum"):
        for k in range(2):
            np.testing.assert_allclose(got[key][k], np.asarray(expected[key][k]), rtol=1e-12, atol=1e-14)
    scalar = yb.jacobian(lambda z: np.exp(z) / z, mode=mode, holomorphic=True)(z)
    np.testing.assert_allclose(scalar, np.exp(z) * (z - 1) / z ** 2, rtol=1e-12)


@pytest.mark.parametrize("mode", ["fwd", "rev"])
def test_holomorphic_under_an_executor_with_aux(mode):
    f, f_jax = HOLOMORPHIC["exp"]
    with ThreadPoolExecutor(2) as pool:
        got, aux = yb.jacobian(lambda z: (f(z), np.abs(z)), mode=mode, has_aux=True, holomorphic=True,
                               executor=pool, chunk_size=1)(Z.copy())
    np.testing.assert_allclose(got, np.asarray(jax.jacfwd(f_jax, holomorphic=True)(jnp.asarray(Z))), rtol=1e-12)
    np.testing.assert_allclose(aux, np.abs(Z))


def exp_of_reversed(z):
    return np.exp(z[::-1]) * z


def test_holomorphic_survives_pickling():
    jac = yb.jacobian(exp_of_reversed, mode="rev", holomorphic=True)
    assert "holomorphic=True" in repr(jac)
    loaded = pickle.loads(pickle.dumps(jac))
    assert loaded.holomorphic
    np.testing.assert_allclose(loaded(Z.copy()), complex_differences(exp_of_reversed, Z), rtol=1e-6, atol=1e-8)


def test_complex_input_without_holomorphic_says_what_to_do():
    with pytest.raises(TypeError, match=r"argument 0 contains a complex value.*holomorphic=True.*real and imaginary"):
        yb.jacobian(lambda z: z * z)(Z)
    # the advice works as printed: real and imaginary parts as real inputs
    parts = yb.jacobian(lambda x, y: (x + 1j * y) ** 2, argnums=(0, 1))(Z.real.copy(), Z.imag.copy())
    np.testing.assert_allclose(parts[0], np.diag(2 * Z), rtol=1e-12)
    np.testing.assert_allclose(parts[1], np.diag(2j * Z), rtol=1e-12)


def test_holomorphic_refuses_real_inputs_and_outputs():
    with pytest.raises(TypeError, match="takes complex inputs"):
        yb.jacobian(lambda z: z * z, holomorphic=True)(Z.real.copy())
    for mode in ("fwd", "rev"):
        with pytest.raises(TypeError, match="needs complex outputs"):
            yb.jacobian(lambda z: np.abs(z), mode=mode, holomorphic=True)(Z)


# ---------------------------------------------------------------- yb.hessian(holomorphic=True)


def scalar_holomorphic(z):
    return np.sum(np.exp(z) * z[::-1] ** 2) + 1 / z[0]


def scalar_holomorphic_jax(z):
    return jnp.sum(jnp.exp(z) * z[::-1] ** 2) + 1 / z[0]


@pytest.mark.parametrize("chunk", [None, 1])
def test_holomorphic_hessian_matches_jax_and_differences(chunk):
    got = yb.hessian(scalar_holomorphic, holomorphic=True, chunk_size=chunk)(Z.copy())
    expected = np.asarray(jax.hessian(scalar_holomorphic_jax, holomorphic=True)(jnp.asarray(Z)))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-14)
    derivative = yb.jacobian(scalar_holomorphic, holomorphic=True)  # f'(z), differentiated again by differences
    np.testing.assert_allclose(got, complex_differences(derivative, Z), rtol=1e-6, atol=1e-8)


def two_arguments(a, b):
    return np.sin(a) * b ** 3 + a * a * b


def test_holomorphic_hessian_of_two_scalars():
    a, b = 0.3 + 0.2j, 1.0 - 0.5j
    got = yb.hessian(two_arguments, argnums=(0, 1), holomorphic=True)(a, b)
    expected = jax.hessian(lambda a, b: jnp.sin(a) * b ** 3 + a * a * b, argnums=(0, 1), holomorphic=True)(a, b)
    for i in range(2):
        for j in range(2):
            np.testing.assert_allclose(got[i][j], complex(expected[i][j]), rtol=1e-12)
    loaded = pickle.loads(pickle.dumps(yb.hessian(two_arguments, argnums=(0, 1), holomorphic=True)))
    assert "holomorphic=True" in repr(loaded) and loaded(a, b) == got


def test_hessian_refusals_and_their_advice():
    with pytest.raises(TypeError, match=r"argument 0 is complex.*holomorphic=True.*real and imaginary"):
        yb.hessian(scalar_holomorphic)(Z)
    parts = yb.hessian(lambda x, y: scalar_holomorphic(x + 1j * y).real, argnums=(0, 1))(Z.real.copy(), Z.imag.copy())
    expected = jax.hessian(lambda x, y: scalar_holomorphic_jax(x + 1j * y).real, argnums=(0, 1))(Z.real, Z.imag)
    np.testing.assert_allclose(parts[0][1], np.asarray(expected[0][1]), rtol=1e-12, atol=1e-14)
    with pytest.raises(TypeError, match="takes complex arguments"):
        yb.hessian(scalar_holomorphic, holomorphic=True)(Z.real.copy())
    with pytest.raises(TypeError, match="needs a complex scalar output"):
        yb.hessian(lambda z: np.sum(np.abs(z)), holomorphic=True)(Z)


def test_holomorphic_inside_differentiated_code_is_refused_by_name():
    def outer(x):
        return np.sum(np.abs(yb.jacobian(np.exp, holomorphic=True)(x + 0j)) ** 2)

    with pytest.raises(yb.NestedDifferentiationError, match="with holomorphic=True is not supported"):
        yb.grad(outer)(np.array([0.3, -0.8]))
