"""numpy.linalg in full (issue 14, item 3): every function, real and complex, with and without a
batch dimension, in reverse (``yb.grad``), forward (``yb.jvp``) and second order (``yb.hvp``)
against central differences, and ``yb.grad`` against ``jax.grad`` of the ``jax.numpy.linalg`` twin
(x64, every twin's gradient in one jitted call).

Each function enters a real scalar loss: the real (and imaginary) parts of its outputs, weighted
and squared. Eigen- and singular vectors whose phase (or completion) is not unique enter through
``|v|**2`` (phase invariant; docs/linalg.md, gauge conventions); where NumPy's own gauge is
matched (``eig``, ``eigh``, tall ``svd``) the raw vectors are checked too. The rule cases
(check_rule, second and third order of each) are the ``CASES`` of ``yuebing/rules/linalg/``.
"""
import numpy as np
import pytest

import yuebing as yb

jax = pytest.importorskip("jax")
jax.config.update("jax_enable_x64", True)
import jax.numpy as jnp  # noqa: E402

rng = np.random.default_rng(314)


def real(*shape):
    return rng.standard_normal(shape)


def cplx(*shape):
    return rng.standard_normal(shape) + 1j * rng.standard_normal(shape)


def square(n, batch, c):
    """Well conditioned, distinct eigenvalues."""
    return (cplx if c else real)(*batch, n, n) + n * np.eye(n)


def hermitian(n, batch, c):
    x = (cplx if c else real)(*batch, n, n)
    return x + np.conj(np.swapaxes(x, -1, -2)) + 2 * n * np.diag(np.arange(n))


def spd(n, batch, c):
    x = (cplx if c else real)(*batch, n, n)
    return x @ np.conj(np.swapaxes(x, -1, -2)) + n * np.eye(n)


def rect(m, n):
    return lambda batch, c: (cplx if c else real)(*batch, m, n)


def vec(n):
    return lambda batch, c: (cplx if c else real)(*batch, n)


def sq(n, maker=square):
    return lambda batch, c: maker(n, batch, c)


B23 = {c: (cplx if c else real)(2, 3) for c in (False, True)}
V3 = {c: (cplx if c else real)(3) for c in (False, True)}
M32 = {c: (cplx if c else real)(3, 2) for c in (False, True)}
T6 = {c: square(6, (), c).reshape(2, 3, 2, 3) for c in (False, True)}
A3 = {c: square(3, (), c) for c in (False, True)}

#: (name, f(xp, x, c), input maker(batch, c), phase-invariant outputs, batched?)
SPECS = [
    ("eig", lambda xp, x, c: xp.linalg.eig(x), sq(3), (1,), True),
    ("eig vectors, NumPy's gauge", lambda xp, x, c: xp.linalg.eig(x)[1], sq(3), (), True),
    ("eigvals", lambda xp, x, c: xp.linalg.eigvals(x), sq(3), (), True),
    ("eigh", lambda xp, x, c: xp.linalg.eigh(x), sq(3, hermitian), (1,), True),
    ("eigh vectors, NumPy's gauge", lambda xp, x, c: xp.linalg.eigh(x)[1], sq(3, hermitian), (), True),
    ("eigh UPLO=U", lambda xp, x, c: xp.linalg.eigh(x, UPLO="U"), sq(3, hermitian), (1,), True),
    ("eigvalsh", lambda xp, x, c: xp.linalg.eigvalsh(x), sq(3, hermitian), (), True),
    ("svd reduced", lambda xp, x, c: xp.linalg.svd(x, full_matrices=False), rect(4, 3), (0, 2), True),
    ("svd tall, NumPy's gauge", lambda xp, x, c: xp.linalg.svd(x, full_matrices=False), rect(4, 3), (), True),
    ("svd full tall", lambda xp, x, c: xp.linalg.svd(x), rect(4, 3), (0, 2), True),
    ("svd full wide", lambda xp, x, c: xp.linalg.svd(x), rect(3, 4), (0, 2), True),
    ("svd compute_uv=False", lambda xp, x, c: xp.linalg.svd(x, compute_uv=False), rect(3, 4), (), True),
    ("svdvals", lambda xp, x, c: xp.linalg.svdvals(x), rect(4, 3), (), True),
    ("qr reduced", lambda xp, x, c: xp.linalg.qr(x), rect(4, 3), (), True),
    ("qr wide", lambda xp, x, c: xp.linalg.qr(x), rect(2, 4), (), True),
    ("qr complete", lambda xp, x, c: xp.linalg.qr(x, mode="complete"), rect(4, 3), (0,), True),
    ("qr r", lambda xp, x, c: xp.linalg.qr(x, mode="r"), rect(4, 3), (), True),
    ("lstsq", lambda xp, x, c: xp.linalg.lstsq(x, M32[c][[0, 1, 2, 0, 1]], rcond=None)[0], rect(5, 3), (), False),
    ("lstsq in b", lambda xp, x, c: xp.linalg.lstsq(xp.asarray(np.eye(5, 3) + 0.1), x, rcond=None)[0],
     vec(5), (), False),
    ("pinv", lambda xp, x, c: xp.linalg.pinv(x), rect(4, 3), (), True),
    ("matrix_power 3", lambda xp, x, c: xp.linalg.matrix_power(x, 3), lambda b, c: square(3, b, c) / 3, (), True),
    ("matrix_power -2", lambda xp, x, c: xp.linalg.matrix_power(x, -2), lambda b, c: square(3, b, c) / 3, (), True),
    ("matrix_rank (zero)", lambda xp, x, c: xp.linalg.matrix_rank(x) * 1.0 + xp.sum(xp.real(x)), rect(3, 3), (), True),
    *[(f"cond p={p}", (lambda p: lambda xp, x, c: xp.linalg.cond(x, p))(p), sq(3), (), True)
      for p in (None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc")],
    *[(f"norm matrix ord={o}", (lambda o: lambda xp, x, c: xp.linalg.norm(x, o, axis=(-2, -1)))(o), rect(3, 4), (), True)
      for o in (None, 1, -1, 2, -2, np.inf, -np.inf, "fro", "nuc")],
    *[(f"norm vector ord={o}", (lambda o: lambda xp, x, c: xp.linalg.norm(x, o, axis=-1))(o), vec(4), (), True)
      for o in (None, 1, 2, 3, 0.5, -1, np.inf, -np.inf)],
    ("norm vector ord=0 (zero)", lambda xp, x, c: xp.linalg.norm(x, 0, axis=-1) + xp.sum(xp.real(x)), vec(4), (), True),
    ("norm all", lambda xp, x, c: xp.linalg.norm(x), rect(3, 4), (), True),
    ("matrix_norm nuc", lambda xp, x, c: xp.linalg.matrix_norm(x, ord="nuc"), rect(3, 4), (), True),
    ("vector_norm ord=3 axis=None", lambda xp, x, c: xp.linalg.vector_norm(x, ord=3), rect(3, 4), (), True),
    ("tensorsolve", lambda xp, x, c: xp.linalg.tensorsolve(x, xp.asarray(B23[c])), lambda b, c: T6[c] + 0.1 * real(*T6[c].shape),
     (), False),
    ("tensorsolve in b", lambda xp, x, c: xp.linalg.tensorsolve(xp.asarray(T6[c]), x), lambda b, c: B23[c] + 0.1 * real(2, 3),
     (), False),
    ("tensorinv", lambda xp, x, c: xp.linalg.tensorinv(x, ind=2), lambda b, c: square(6, (), c).reshape(2, 3, 6), (), False),
    ("multi_dot", lambda xp, x, c: xp.linalg.multi_dot([x, xp.asarray(M32[c]), xp.asarray(M32[c].T)]), rect(2, 3), (),
     False),
    ("slogdet", lambda xp, x, c: xp.linalg.slogdet(x), sq(3), (), True),
    ("det", lambda xp, x, c: xp.linalg.det(x), sq(3), (), True),
    ("inv", lambda xp, x, c: xp.linalg.inv(x), sq(3), (), True),
    ("solve", lambda xp, x, c: xp.linalg.solve(x, xp.asarray(M32[c])), sq(3), (), True),
    ("solve in b", lambda xp, x, c: xp.linalg.solve(xp.asarray(A3[c]), x), rect(3, 2), (), True),
    ("cholesky", lambda xp, x, c: xp.linalg.cholesky(x), sq(3, spd), (), True),
    ("cholesky upper", lambda xp, x, c: xp.linalg.cholesky(x, upper=True), sq(3, spd), (), True),
    ("cross", lambda xp, x, c: xp.linalg.cross(x, xp.asarray(V3[c])), vec(3), (), True),
    ("outer", lambda xp, x, c: xp.linalg.outer(x, xp.asarray(V3[c])), vec(2), (), False),
    ("trace", lambda xp, x, c: xp.linalg.trace(x), rect(3, 3), (), True),
    ("vecdot", lambda xp, x, c: xp.linalg.vecdot(x, xp.asarray(V3[c])), vec(3), (), True),
    ("matmul", lambda xp, x, c: xp.linalg.matmul(x, xp.asarray(M32[c])), rect(2, 3), (), True),
    ("matrix_transpose", lambda xp, x, c: xp.linalg.matrix_transpose(x), rect(2, 3), (), True),
    ("diagonal", lambda xp, x, c: xp.linalg.diagonal(x, offset=1), rect(3, 4), (), True),
    ("tensordot", lambda xp, x, c: xp.linalg.tensordot(x, xp.asarray(M32[c]), axes=1), rect(2, 3), (), True),
]

#: Complex second order through these is refused by the second-order machinery (complex
#: elementwise products in the definitions), with a clear SecondOrderError
COMPLEX_SECOND_ORDER_REFUSED = {"cross", "vecdot", "matrix_rank (zero)"}


def _outputs(y):
    return list(y) if isinstance(y, tuple) else [y]


def make_loss(xp, spec, c, x0):
    """The loss of ``spec``'s outputs; which are float or complex is read once at ``x0`` (outside
    the differentiated code)."""
    name, f, _, gauge, _ = spec
    kinds = [np.asarray(o).dtype.kind for o in _outputs(f(np, x0, c))]

    def loss(x):
        total = 0.0
        for k, o in enumerate(_outputs(f(xp, x, c))):
            if kinds[k] not in "fc":
                continue
            w = np.linspace(0.3, 1.1, int(np.prod(np.shape(o)))).reshape(np.shape(o))
            if k in gauge:
                a = xp.real(o) ** 2 + xp.imag(o) ** 2
                total = total + xp.sum(w * a) + 0.5 * xp.sum(a * a)
                continue
            r = xp.real(o)
            total = total + xp.sum(w * r) + 0.5 * xp.sum(r * r)
            if kinds[k] == "c":
                i = xp.imag(o)
                total = total + xp.sum(w[..., ::-1] * i if np.ndim(w) else w * i) + 0.5 * xp.sum(i * i)
        return total

    return loss


def central_gradient(loss, x, h=1e-6):
    """The gradient by central differences, in the repository's convention for complex x
    (d/dRe + 1j d/dIm)."""
    g = np.zeros(x.shape, dtype=x.dtype)
    for part in ((1.0, 1j) if np.iscomplexobj(x) else (1.0,)):
        for idx in np.ndindex(x.shape):
            e = np.zeros(x.shape, dtype=x.dtype)
            e[idx] = part * h
            g[idx] += part * (loss(x + e) - loss(x - e)) / (2 * h)
    return g


def _inputs():
    params = []
    for spec in SPECS:
        for c in (False, True):
            for batch in (((), (2,)) if spec[4] and c else ((),)):  # the batch: complex (the real path is in CASES)
                params.append(pytest.param(spec, c, batch, id=f"{spec[0]}-{'complex' if c else 'real'}{list(batch)}"))
    return params


INPUTS = _inputs()


def _close(ours, expected, what, rtol=1e-5):
    scale = max(1.0, float(np.max(np.abs(expected), initial=0.0)))
    np.testing.assert_allclose(ours, expected, rtol=rtol, atol=rtol * scale, err_msg=what)


@pytest.mark.parametrize("spec, c, batch", INPUTS)
def test_every_mode_against_central_differences(spec, c, batch):
    x = spec[2](batch, c)
    loss = make_loss(np, spec, c, x)
    expected = central_gradient(loss, x)
    _close(yb.grad(loss)(x.copy()), expected, "grad")
    v = (real(*x.shape) + (1j * real(*x.shape) if c else 0)).astype(x.dtype)
    _, slope = yb.jvp(loss, (x.copy(),), (v,))
    _close(slope, np.real(np.vdot(expected, v)), "jvp")
    try:
        _, (g2,), (hv,) = yb.hvp(loss, (x.copy(),), (v,))
    except yb.SecondOrderError as error:
        assert c and spec[0] in COMPLEX_SECOND_ORDER_REFUSED, error
        assert "complex" in str(error)
        return
    h = 1e-5
    grad = yb.grad(loss)
    _close(g2, expected, "hvp: gradient")
    _close(hv, (grad(x + h * v) - grad(x - h * v)) / (2 * h), "hvp", rtol=1e-4)


def _read_triangle(xp, x, upper):
    """The Hermitian matrix LAPACK reads from one triangle (docs/conventions.md); JAX's eigh and
    cholesky differentiate the symmetrised input instead, so their twins are given this matrix."""
    t = xp.triu(x, 1) if upper else xp.tril(x, -1)
    return t + xp.conj(xp.swapaxes(t, -1, -2)) + xp.real(x) * xp.eye(x.shape[-1])


def _twin(spec):
    """The JAX twin of ``spec`` (the triangle-reading functions read their triangle explicitly)."""
    name, f, *rest = spec
    if not name.startswith(("eigh", "eigvalsh", "cholesky")):
        return spec
    upper = name in ("eigh UPLO=U", "cholesky upper")
    return (name, lambda xp, x, c: f(xp, _read_triangle(xp, x, upper), c), *rest)


def _jax_cases(everything):
    """(spec, complex?, input) compared with JAX: all of them, or (the fast test) one per
    function -- complex, batched where the function takes a batch -- and the real path of the
    decompositions."""
    cases, seen = [], set()
    for spec, c, batch in (p.values for p in INPUTS):
        name = spec[0]
        if name.startswith(("eig vectors", "eigh vectors", "svd tall, NumPy", "svd full", "qr complete")) or name == "eig":
            continue  # JAX's gauge differs; it does not differentiate completions or jnp.linalg.eig's vectors
        function = name.split(" ")[0]
        wanted = c and (batch or not spec[4]) and function not in seen
        real_path = not c and not batch and function in ("eigvals", "eigh", "eigvalsh", "svd", "qr", "cholesky")
        if everything or wanted or real_path:
            seen.add(function) if wanted else None
            cases.append((spec, c, spec[2](batch, c)))
    return cases


def _disagreements(cases):
    twins = [make_loss(jnp, _twin(spec), c, x) for spec, c, x in cases]
    theirs = jax.jit(lambda xs: [jax.grad(t)(x) for t, x in zip(twins, xs)])([jnp.asarray(x) for _, _, x in cases])
    disagree = []
    for (spec, c, x), expected in zip(cases, theirs):
        ours = yb.grad(make_loss(np, spec, c, x))(x.copy())
        expected = np.conj(np.asarray(expected))
        if not np.allclose(ours, expected, rtol=1e-7, atol=1e-7 * max(1.0, np.max(np.abs(expected)))):
            disagree.append(f"{spec[0]} {'complex' if c else 'real'}{list(x.shape)}: {np.max(np.abs(ours - expected))}")
    return disagree


@pytest.mark.slow  # 8 s: the jax oracle over every linear-algebra case
def test_gradients_agree_with_jax():
    """yb.grad against jax.grad of the jax.numpy.linalg twin (JAX's gradient of a real loss in a
    complex input is the conjugate of ours), one input per function, in one jitted call."""
    cases = _jax_cases(everything=False)
    assert len({spec[0].split(" ")[0] for spec, _, _ in cases}) >= 30
    disagree = _disagreements(cases)
    assert not disagree, "\n".join(disagree)


@pytest.mark.slow
def test_every_gradient_agrees_with_jax():
    """The same for every spec and input kind (about 250 gradients: JAX compiles for minutes)."""
    disagree = _disagreements(_jax_cases(everything=True))
    assert not disagree, "\n".join(disagree)


def test_refusals_are_clear():
    with pytest.raises(TypeError, match="mode='raw'"):
        yb.grad(lambda a: np.sum(np.linalg.qr(a, mode="raw")[0]))(real(4, 3))
    # repeated eigenvalues: forward mode refuses, reverse mode gives NaN (a constant matrix
    # inside the function discards it, and its eigen-decomposition is fine)
    double = np.diag([1.0, 2.0, 1.0])
    with pytest.raises(TypeError, match="repeated"):
        yb.jvp(lambda a: np.sum(np.abs(np.linalg.eig(a)[1]) ** 2), (double,), (real(3, 3),))
    with pytest.raises(TypeError, match="repeated"):
        yb.jvp(lambda a: np.sum(np.real(np.linalg.eigvals(a))), (double,), (real(3, 3),))
    assert np.all(np.isnan(yb.grad(lambda a: np.sum(np.abs(np.linalg.eig(a)[1]) ** 2))(double)))
    assert np.all(np.isnan(yb.grad(lambda a: np.sum(np.real(np.linalg.eigvals(a))))(double)))

    def constant_inside(x):
        return x * np.sum(np.real(np.linalg.eigvals(np.eye(2))))

    assert yb.grad(constant_inside)(1.5) == 2.0
    assert yb.jvp(constant_inside, (1.5,), (1.0,))[1] == 2.0
    with pytest.raises(TypeError, match="hermitian=True"):
        yb.grad(lambda a: np.sum(np.linalg.svd(a, hermitian=True)[1]))(spd(3, (), False))
    with pytest.raises(TypeError, match="singular"):
        yb.grad(lambda a: np.linalg.slogdet(a)[1])(np.ones((3, 3)))
