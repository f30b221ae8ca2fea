"""Linear algebra rules in the batched forward mode (``jacobian(mode="fwd")`` with several
directions per pass, ``hessian(chunk_size=k)``) against the one-direction modes, and the two
mechanisms fuzz seeds 93356 and 93597 broke:

* a repeated eigenvalue next to a close simple one (``2 I + c t t^T`` with a small ``|t|``): the
  tied vectors lean ``eps |w| / gap`` towards the simple one, and ``gap_product`` took the
  rounding this puts in ``V^T dA V`` for a real entry (NaN in ``yb.hvp`` and every Hessian);
* a NaN tangent, which the plain forward pass makes by design (``0 * inf`` is fixed by the strong
  zero pass only if the NaN reaches the output), raised inside a rule's tangent solve
  (``scipy.linalg.cho_solve``'s ``check_finite``) instead of reaching the output.
"""
import numpy as np
import pytest
import scipy.linalg

import yuebing as yb
from yuebing import tangents as T
from yuebing.rules import rule_modules
from yuebing.rules.core import Dual, frule
from yuebing.testing.targets import _project

RNG = np.random.default_rng(93356)
LINALG = ("linalg.", "scipy_linalg", "scipy_rules")


def _linalg_modules():
    return [m for m in rule_modules() if any(part in m.__name__ for part in LINALG)]


def _float_argnums(args):
    return tuple(i for i, a in enumerate(args) if isinstance(a, (float, np.ndarray))
                 and np.asarray(a).dtype.kind == "f" and np.size(a) > 0)


def _real_float64(value):
    """Whether every number in ``value`` (nested tuples and lists) is a real float64 or an int."""
    if isinstance(value, (tuple, list)):
        return all(_real_float64(v) for v in value)
    return not isinstance(value, (complex, np.ndarray)) or value.dtype in (np.float64, np.int64, np.intp, bool)


def _scalar(case, argnums):
    """The case's function of its float arguments ``argnums`` (the others fixed), made real and
    scalar (a fixed weighing of its outputs)."""
    def g(*floats):
        args = list(case.args)
        for i, a in zip(argnums, floats):
            args[i] = a
        out = case.f(*args, **case.kwargs)
        return _project(out, np.full(np.shape(out), 0.7) if isinstance(out, np.ndarray) else 0.7)
    return g


def _flat(blocks):
    return np.concatenate([np.ravel(b) for b in (blocks if isinstance(blocks, tuple) else (blocks,))])


def _hessian_flat(blocks):
    return np.concatenate([np.ravel(h) for row in blocks for h in row])


# ---------------------------------------------------------------- every linalg rule case, batched


@pytest.mark.parametrize("module", _linalg_modules(), ids=lambda m: m.__name__.rsplit(".", 1)[-1])
def test_batched_forward_and_hessian_match_one_direction(module):
    """Each case of the family (real float arguments, output made scalar): the batched Jacobian
    (3 directions per pass) is the reverse gradient, and the batched Hessian (3 per pass) is the
    per-column one (one hvp per column); both finite where those are."""
    checked = 0
    for case in [c for c in getattr(module, "CASES", ()) if "rev" in c.mode and "fwd" in c.mode]:
        argnums = _float_argnums(case.args)
        if not argnums or not _real_float64(case.args):
            continue  # (complex and float32 cases: other tolerances, checked by tests/test_rules.py)
        g, floats, argnums = _scalar(case, argnums), [case.args[i] for i in argnums], tuple(range(len(argnums)))
        with case.context():
            try:
                gradient = yb.grad(g, argnums=argnums)(*floats)
            except Exception:  # noqa: BLE001 - cases made for refusals and other checks
                continue
            jacobian = yb.jacobian(g, argnums=argnums, mode="fwd", chunk_size=3)(*floats)
            np.testing.assert_allclose(_flat(jacobian), _flat(gradient), rtol=1e-9, atol=1e-9, err_msg=case.name)
            per_column = yb.hessian(g, argnums=argnums, chunk_size=1)(*floats)
            batched = yb.hessian(g, argnums=argnums, chunk_size=3)(*floats)
            np.testing.assert_allclose(_hessian_flat(batched), _hessian_flat(per_column), rtol=1e-9, atol=1e-9,
                                       err_msg=case.name)
        checked += 1
    assert checked or not getattr(module, "CASES", ())


# ---------------------------------------------------------------- NaN tangents reach the output


def _forward(case, scale):
    """The case's forward rule on copies of its arguments, with random tangents times ``scale``."""
    args = T.structural_copy(case.args)
    tangents = T.scale(T.randn_tangent(np.random.default_rng(0), args), scale)
    with case.context():
        return frule(case.f, *(Dual(a, t) for a, t in zip(args, tangents)), **T.structural_copy(case.kwargs))


@pytest.mark.parametrize("module", [m for m in rule_modules() if getattr(m, "CASES", ())],
                         ids=lambda m: m.__name__.removeprefix("yuebing.rules."))
def test_a_nan_tangent_is_carried_not_refused(module):
    """Every forward rule given NaN tangents returns (NaN tangents, for the strong-zero pass to
    redo), wherever it works with finite ones: SciPy's check_finite in a tangent's solve raised
    ValueError (cho_solve, solve_triangular, Lyapunov, logm; seed 93597). All linalg families and
    every other rule module with cases (2544 cases, 9 s)."""
    for case in [c for c in module.CASES if "fwd" in c.mode]:
        try:
            _forward(case, 1.0)
        except Exception:  # noqa: BLE001 - cases made for refusals and other checks
            continue
        assert isinstance(_forward(case, np.nan), Dual), case.name


def _nan_power_then_cho_solve(x):
    """np.power(b, 4.0): the literal's zero tangent times the NaN exponent partial at b < 0 is NaN
    in the plain forward pass; cho_solve's tangent solve raised on it (shrunk fuzz seed 93597)."""
    d = {"w": x * 0.5}
    for it in range(3):
        d["w"] = d["w"] - 0.3 * (d["w"] - np.tanh(x))
        if np.linalg.norm(d["w"]) < 0.3:
            break
    b = np.tanh(x) * 0.33
    t = np.sum(b ** 2.0 + np.power(b, 4.0) * 0.1)
    u = np.tanh(-x)
    c = scipy.linalg.cho_factor(2.0 * np.eye(4) + 0.858 * np.outer(u, u), lower=True)
    return np.sum(scipy.linalg.cho_solve(c, x - t) * (x - t)) * 0.5 + np.sum(d["w"] ** 2)


def _nan_into_triangular_lyapunov_logm(x):
    """The same NaN tangent into solve_triangular, solve_continuous_lyapunov and logm."""
    b = np.tanh(x) * 0.33
    r = x - np.sum(np.power(b, 4.0))
    low = np.tril(np.outer(np.cosh(x), np.cosh(x))) + 2.0 * np.eye(4)
    s = scipy.linalg.solve_triangular(low, r, lower=True)
    a = -3.0 * np.eye(4) + 0.1 * np.outer(x, np.ones(4))
    q = scipy.linalg.solve_continuous_lyapunov(a, np.outer(r, r))
    m = scipy.linalg.logm(2.0 * np.eye(4) + 0.1 * np.outer(r, r))
    return np.sum(s * s) + np.sum(q) + np.sum(m)


@pytest.mark.parametrize("f", [_nan_power_then_cho_solve, _nan_into_triangular_lyapunov_logm])
def test_batched_jacobian_through_a_nan_tangent(f):
    x = np.array([0.13, -0.13, 0.64, -0.5])
    gradient = yb.grad(f)(x)
    h = 1e-6
    differences = np.array([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(4)])
    np.testing.assert_allclose(gradient, differences, rtol=1e-6, atol=1e-8)
    for chunk in (None, 1):
        np.testing.assert_allclose(yb.jacobian(f, mode="fwd", chunk_size=chunk)(x), gradient, rtol=1e-10, atol=1e-12)
    hessian = yb.hessian(f, chunk_size=3)(x)
    np.testing.assert_allclose(hessian @ x, yb.hvp(f, (x,), (x,))[2][0], rtol=1e-8, atol=1e-10)


# ---------------------------------------------------------------- a tie next to a close simple value


def _spike(x, c=1.202, scale=0.18):
    """2 I + c t t^T: eigenvalue 2 three times and 2 + c |t|^2, here about 0.02 above it."""
    t = np.tanh(scale * x)
    return 2.0 * np.eye(x.size) + c * np.outer(t, t)


SPECTRAL = {
    "eigvalsh": lambda x: np.sum(np.linalg.eigvalsh(_spike(x)) ** 2),
    "eigh values and the simple vector": lambda x: np.sum(np.linalg.eigh(_spike(x))[1][:, -1] ** 2 * np.sin(x))
    + np.sum(np.linalg.eigh(_spike(x))[0] ** 3),
    "svd values": lambda x: np.sum(np.linalg.svd(_spike(x), compute_uv=False) ** 3),
    "scipy eigh": lambda x: np.sum(scipy.linalg.eigh(_spike(x))[0] ** 2) + np.sum(scipy.linalg.eigh(_spike(x))[1][:, -1] * x),
    "an unused eigvalsh": lambda x: (np.linalg.eigvalsh(_spike(x)), np.sum(np.sin(x) * x))[1],
}

WEIGHTS = np.add.outer(np.arange(4.0), np.arange(4.0) ** 2)


@pytest.mark.parametrize("name", SPECTRAL)
def test_a_tie_next_to_a_close_value_in_every_mode(name):
    """yb.hvp and the batched Hessian were NaN at 2 I + c t t^T with a gap of 0.02 (seed 93356):
    the rounding-level entries of V^T dA V, 1e-15 where dA's largest is 0.03, were taken for
    real ones; now the Hessian is central differences of the gradient in every mode."""
    f = SPECTRAL[name]
    x = np.array([0.12573022, -0.13210486, 0.64042265, 0.10490012])
    gradient = yb.grad(f)(x)
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(x), gradient, rtol=1e-9, atol=1e-12)
    h = 1e-5
    differences = np.array([(yb.grad(f)(x + h * e) - yb.grad(f)(x - h * e)) / (2 * h) for e in np.eye(4)])
    hvps = np.array([yb.hvp(f, (x,), (e,))[2][0] for e in np.eye(4)])
    np.testing.assert_allclose(hvps, differences, rtol=1e-5, atol=1e-7)
    for chunk in (None, 3):
        np.testing.assert_allclose(yb.hessian(f, chunk_size=chunk)(x), hvps, rtol=1e-9, atol=1e-10)


def test_a_literal_gives_a_batched_elementwise_call_no_tangent(monkeypatch):
    """In a batched pass a literal's tangent (0.0, without the batch axis) is zero in every
    direction and is not multiplied: np.power(b, 4.0)'s exponent partial is NaN at b < 0, which
    made the plain pass's tangent NaN and forced the strong-zero pass (seed 93597's NaN)."""
    from yuebing.api import forward

    redone = []
    original = forward._strong_zero_pass
    monkeypatch.setattr(forward, "_strong_zero_pass", lambda *a: redone.append(1) or original(*a))

    def f(x):
        b = np.tanh(x) * 0.33
        return np.sum(np.power(b, 4.0) + np.power(2.0, b) + b ** 3.0)

    x = np.array([0.13, -0.13, 0.64, -0.5])
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd")(x), yb.grad(f)(x), rtol=1e-12, atol=1e-15)
    assert not redone


# ---------------------------------------------------------------- an exact tie, any direction

TIED = 2.0 * np.eye(4) + 0.7 * np.outer([0.3, -0.5, 0.8, 0.1], [0.3, -0.5, 0.8, 0.1])
SYMMETRIC = WEIGHTS + WEIGHTS.T


def _eigh_function(eigh):
    def f(a):
        w, v = eigh(a)
        return np.sum((v * np.exp(w)) @ v.T * SYMMETRIC)  # expm(a) through the spectrum
    return f


def _svd_function(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum((vh.T * s ** 3) @ vh * SYMMETRIC) + np.sum(u @ vh * SYMMETRIC)


def _polar_function(a):
    u, p = scipy.linalg.polar(a)
    return np.sum(u * SYMMETRIC) + np.sum(p * SYMMETRIC)


def _never_a_wrong_number(f, sign=1.0):
    """f's gradient at TIED (eigenvalue 2 three times), along a generic symmetric direction (or
    an anti-symmetric one, ``sign`` -1): the cotangent maps cannot tell a tied pair's limit (f' of
    a matrix function) from zero (a projector), so the derivative is either right or not finite,
    never a wrong number."""
    direction = np.random.default_rng(5).standard_normal((4, 4))
    direction = direction + sign * direction.T
    h = 1e-6
    expected = (f(TIED + h * direction) - f(TIED - h * direction)) / (2 * h)
    for got in (np.sum(np.tril(yb.grad(f)(TIED)) * direction) if f is not _svd_function and f is not _polar_function
                else np.sum(yb.grad(f)(TIED) * direction), yb.jvp(f, (TIED,), (direction,))[1]):
        assert not np.isfinite(got) or abs(got - expected) <= 1e-5 * abs(expected), (got, expected)


_eigh_function_scipy = _eigh_function(scipy.linalg.eigh)


@pytest.mark.parametrize("f", [_eigh_function_scipy, _svd_function, _polar_function],
                         ids=["scipy eigh", "svd", "polar"])
def test_an_exact_tie_along_any_direction_is_right_or_not_finite(f):
    _never_a_wrong_number(f)
    if f is not _eigh_function_scipy:  # (eigh reads one triangle: a symmetric matrix's directions only)
        _never_a_wrong_number(f, sign=-1.0)


def _tied_projector(a):
    """The projector onto the repeated eigenvalue's eigenspace: a smooth function of ``a``."""
    v = np.linalg.eigh(a)[1][:, :3]
    return np.sum((v @ v.T) * SYMMETRIC)


@pytest.mark.parametrize("f", [_eigh_function(np.linalg.eigh), _tied_projector], ids=["expm", "projector"])
def test_numpy_eigh_at_an_exact_tie_is_right_or_not_finite(f):
    """numpy eigh's cotangent map once weighed only V^T gv's anti-symmetric part, zero at a tie for
    the projector (right) and for a matrix function (expm through eigh: a finite, wrong gradient,
    whose limit is f'(w)); a tied pair now gives no finite gradient in either."""
    _never_a_wrong_number(f)
