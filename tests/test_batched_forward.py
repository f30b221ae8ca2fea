"""Batched forward mode (rules/batched.py, transform/batched_forward.py): ``jacobian(mode="fwd",
chunk_size=k)`` runs one forward pass per k input directions. Every case is compared with the
unbatched Jacobian (``chunk_size=1``: one JVP per direction) and with central differences."""
import collections

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import Dual, register_frule, FRULES
from yuebing.transform import batched_forward, forward_runtime

RNG = np.random.default_rng(7)
A = RNG.standard_normal((4, 5))


def _flat(x):
    """Leaves of a Jacobian (an array, a dict or tuple of them) in order, as one flat vector."""
    if isinstance(x, dict):
        return np.concatenate([_flat(x[k]) for k in sorted(x)])
    if isinstance(x, (tuple, list)):
        return np.concatenate([_flat(v) for v in x])
    return np.ravel(np.asarray(x, dtype=float))


def _central(f, x, h=1e-6):
    """The Jacobian of f at float array x by central differences, shaped out.shape + x.shape."""
    y = np.asarray(f(x.copy()), dtype=float)
    cols = []
    for i in range(x.size):
        e = np.zeros(x.size)
        e[i] = h
        up = np.asarray(f(x + e.reshape(x.shape)), dtype=float)
        down = np.asarray(f(x - e.reshape(x.shape)), dtype=float)
        cols.append(((up - down) / (2 * h)).ravel())
    return np.stack(cols, axis=-1).reshape(y.shape + x.shape)


def _check(f, *args, argnums=0, fd=None):
    """Batched Jacobians (chunk 3 and the default) equal the unbatched one and central differences."""
    unbatched = yb.jacobian(f, argnums=argnums, mode="fwd", chunk_size=1)(*args)
    for chunk in (3, None):
        batched = yb.jacobian(f, argnums=argnums, mode="fwd", chunk_size=chunk)(*args)
        np.testing.assert_allclose(_flat(batched), _flat(unbatched), rtol=1e-12, atol=1e-12)
    if fd is not None:
        np.testing.assert_allclose(_flat(unbatched), _flat(fd), rtol=1e-5, atol=1e-6)
    return unbatched


def elementwise(x):
    return np.sin(x) * x + np.exp(-x * x) / (1.0 + x ** 2) - 2.0 * np.tanh(x)


def scalar_loop(x):
    s = 0.0
    for i in range(len(x)):
        s = s * 0.5 + x[i] * x[i] - np.cos(x[i])
    return np.array([s, s * x[0]])


def products(x):
    y = A @ x
    m = np.outer(x, x)[:4, :4]
    return np.dot(m, y) + x[:4] @ m + A @ np.sin(x)


def reductions(x):
    m = x.reshape(2, 3)
    return np.concatenate([np.sum(m * m, axis=1), m.mean(axis=0), [np.sum(m), m.T.sum(0)[1]],
                           np.mean(m, axis=-1, keepdims=True).ravel()])


def indexing(x):
    m = x.reshape(3, 2)
    stacked = np.stack([m[0], m[1] ** 2], axis=-1).ravel()
    return np.concatenate([m[1], m[:, 0] * m[:, 1], x[np.array([4, 0, 4])], x[x > 0.0], m[..., -1], [m[2, 1]],
                           stacked, np.array([[x[0], 2.0], [x[1] * x[2], x[3]]]).ravel()], axis=0)


def in_place(x):
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] ** 2
    y[1:3] += x[0:2]
    y *= 2.0
    v = y[2:]  # a view: writes through it reach y
    v[0] = np.sin(x[3])
    v -= x[-3:]
    y[y > 0.5] = x[y > 0.5] * 3.0  # writes through a mask and an integer array (not views)
    y[np.array([0, 2])] = np.cos(x[:2])
    y[np.array([1])] = 0.25
    return y


def with_int(x, n):
    return x ** n + n * np.sum(x)


def containers(d):
    out = []
    for key in ("a", "b"):
        out.append(d[key] * 2.0)
    out.append(d["a"].sum() * d["b"][0])
    total = out[0] + out[1]
    cache = {"t": total}
    cache["t"] = cache["t"] * d["b"]
    return np.concatenate([cache["t"], np.array([out[2], d["c"][0] * d["c"][1]])])


def lists_of_floats(x):
    values = [x[0], x[1] * x[2]]
    values.append(values[0] * values[1])
    values += [np.sin(values[-1])]
    return np.array(values)


X5 = RNG.standard_normal(5)
X6 = RNG.standard_normal(6)


@pytest.mark.parametrize("f, x", [(elementwise, X5), (scalar_loop, X5), (products, X5), (reductions, X6),
                                  (indexing, X6), (in_place, X5), (lists_of_floats, X5)],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_batched_jacobian_equals_unbatched_and_differences(f, x):
    _check(f, x, fd=_central(f, x))


def test_integer_argument_and_argnums():
    x = RNG.standard_normal(4)
    _check(with_int, x, 3, fd=_central(lambda v: with_int(v, 3), x))

    def two(a, b):
        return np.concatenate([a * b[0], [np.sum(a) * b[1]]])
    _check(two, x, RNG.standard_normal(2), argnums=(0, 1))


def test_dict_and_list_arguments():
    d = {"a": RNG.standard_normal(3), "b": RNG.standard_normal(3), "c": [0.3, -1.2]}
    jac = _check(containers, d)

    def of_flat(v):
        return containers({"a": v[:3], "b": v[3:6], "c": [v[6], v[7]]})
    flat = np.concatenate([d["a"], d["b"], d["c"]])
    fd = _central(of_flat, flat)
    np.testing.assert_allclose(np.concatenate([jac["a"], jac["b"], np.stack(jac["c"], axis=-1)], axis=1), fd,
                               rtol=1e-5, atol=1e-6)


def test_has_aux_and_scalar_input():
    def f(x):
        return np.array([x * x, np.sin(x)]), "aux"
    jac, aux = yb.jacobian(f, mode="fwd", has_aux=True, chunk_size=None)(0.7)
    assert aux == "aux"
    np.testing.assert_allclose(jac, [1.4, np.cos(0.7)], rtol=1e-12)


@pytest.fixture
def looped_calls(monkeypatch):
    """Names of the callables that went through the looped fallback."""
    calls = collections.Counter()
    original = batched_forward.looped

    def spy(run, f, args, kwargs):
        calls[getattr(f.primal, "__name__", str(f.primal))] += 1
        return original(run, f, args, kwargs)
    monkeypatch.setattr(batched_forward, "looped", spy)
    monkeypatch.setattr(forward_runtime, "looped", spy)
    return calls


def test_rules_without_batch_support_loop_over_the_batch(looped_calls):
    """np.cumsum, np.linalg.solve and np.flip (a view) have no batch-aware rule: each runs once per
    direction inside the batched pass, and the Jacobian is what the unbatched pass gives."""
    m = RNG.standard_normal((5, 5)) + 5 * np.eye(5)

    def f(x):
        y = np.cumsum(x * x)
        z = np.linalg.solve(m, y)
        w = np.flip(z)  # a view of z: the write below must reach z's tangent too
        w[0] = x[1] ** 3
        return z + np.sin(w)
    x = RNG.standard_normal(5)
    _check(f, x, fd=_central(f, x))
    assert {"cumsum", "solve", "flip"} <= set(looped_calls)


def test_forward_over_grad_in_a_batched_pass(looped_calls):
    def g(x):
        return np.sum(np.sin(x) * x ** 2)
    x = RNG.standard_normal(4)
    jac = _check(yb.grad(g), x)
    np.testing.assert_allclose(jac, yb.hessian(g)(x), rtol=1e-10)


def test_random_draws_repeat_in_each_direction():
    def f(x):
        rng = np.random.default_rng(3)
        return x * rng.normal(size=x.shape) + np.random.default_rng(4).uniform() * x ** 2
    x = RNG.standard_normal(4)
    _check(f, x, fd=_central(f, x))


def _push(xs, v):
    xs.append(v)


def test_a_rule_changing_a_list_tangent_in_place_is_refused():
    """A (user-registered) rule that appends to a list tangent cannot run once per direction on
    slices: the batched pass refuses it, naming the rule, rather than drop the derivative."""
    def push_frule(xs, v):
        _push(xs.primal, v.primal)
        xs.tangent.append(v.tangent)
        return Dual(None, yb.NoTangent)
    register_frule(_push, push_frule)
    try:
        def f(x):
            xs = [x[0]]
            _push(xs, x[1] * 2.0)
            return np.array(xs)
        x = RNG.standard_normal(3)
        np.testing.assert_allclose(yb.jacobian(f, mode="fwd", chunk_size=1)(x), [[1, 0, 0], [0, 2, 0]])
        with pytest.raises(NotImplementedError, match="_push.*chunk_size=1"):
            yb.jacobian(f, mode="fwd", chunk_size=3)(x)
    finally:
        FRULES.by_function.pop(_push, None)


@pytest.mark.parametrize("bad", [0, -1, 2.5, True])
def test_bad_chunk_size(bad):
    with pytest.raises((ValueError, TypeError), match="chunk_size"):
        yb.jacobian(elementwise, mode="fwd", chunk_size=bad)
    with pytest.raises((ValueError, TypeError), match="chunk_size"):
        yb.hessian(lambda x: np.sum(x ** 3), chunk_size=bad)


@pytest.mark.parametrize("chunk", [1, 3, None])
def test_hessian_chunk_size(chunk):
    def f(x):
        s = 0.0
        for i in range(len(x) - 1):
            s += x[i] * x[i + 1] ** 2
        return s + np.sum(np.sin(A @ x))
    x = RNG.standard_normal(5)
    h = yb.hessian(f, chunk_size=chunk)(x)
    np.testing.assert_allclose(h, yb.hessian(f, chunk_size=1)(x), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, _central(yb.grad(f), x), rtol=1e-5, atol=1e-6)


def test_keyword_buffer_written_with_batched_values():
    """A keyword argument (not differentiated) written with values that carry the batch."""
    def f(x, buf=None):
        for i in range(len(x)):
            buf[i] = x[i] * x[-1 - i]
        return buf * 2.0
    x = RNG.standard_normal(4)
    jac = [yb.jacobian(f, mode="fwd", chunk_size=c)(x, buf=np.zeros(4)) for c in (1, 3, None)]
    np.testing.assert_allclose(jac[1], jac[0], rtol=1e-12)
    np.testing.assert_allclose(jac[2], jac[0], rtol=1e-12)
    np.testing.assert_allclose(jac[0], _central(lambda v: f(v, buf=np.zeros(4)), x), rtol=1e-5, atol=1e-6)


def extend_rows(x):
    xs = [1.0]
    xs.extend(x[:3] * 2.0)
    rows = []
    rows.extend(x.reshape(2, 3) ** 2)
    return np.array(xs) * xs[1] + np.concatenate(rows)[:4]


def write_with_leading_ones(x):
    m = np.zeros((2, 3))
    m[0] = (x[:3] * x[3]).reshape(1, 3)
    m[1, :] = np.sin(x[3:])
    return m.ravel() + np.array(list(x.flat))


def rounding_into_out(x):
    y = x * 3.0
    r = np.zeros(6)
    np.round(y, out=r)  # a zero derivative written through out=
    return r + y * x


@pytest.mark.parametrize("f", [extend_rows, write_with_leading_ones, rounding_into_out],
                         ids=lambda f: f.__name__)
def test_extend_leading_ones_flat_and_out(f):
    x = RNG.standard_normal(6)
    _check(f, x, fd=_central(f, x) if f is not rounding_into_out else None)


def test_fortran_ordered_argument():
    """A Fortran-ordered array's basis directions (C-order seeds: the flat write is not lost in a copy)."""
    from scipy.linalg import solve_triangular
    a = np.asfortranarray(np.tril(RNG.standard_normal((3, 3))) + 3 * np.eye(3))
    b = RNG.standard_normal(3)

    def g(a, b):
        return solve_triangular(a, b, lower=True)
    jac = _check(g, a, b, argnums=(0, 1))
    rev = yb.jacobian(g, argnums=(0, 1))(a, b)
    np.testing.assert_allclose(_flat(jac), _flat(rev), rtol=1e-10, atol=1e-12)


class Body:
    def __init__(self, position, mass):
        self.position, self.mass = position, mass

    def energy(self):
        return 0.5 * self.mass * np.sum(self.position ** 2)


def test_objects_closures_and_one_array_passed_twice():
    def f(x):
        bodies = [Body(x[:2], 2.0), Body(x[2:] * x[0], 3.0)]
        scale = x[1]

        def weighted(b):
            return b.energy() * scale
        bodies[0].position = bodies[0].position + 1.0
        return np.array([weighted(b) for b in bodies] + [bodies[1].position[0]])
    x = RNG.standard_normal(4)
    _check(f, x, fd=_central(f, x))

    def g(a, b):
        return a * b + np.sin(a)
    _check(g, x, x, argnums=(0, 1))
    np.testing.assert_allclose(yb.jacobian(g, mode="fwd")(x, x), np.diag(x + np.cos(x)), rtol=1e-12)


def test_rules_defined_as_python_code_run_batched(looped_calls):
    """itertools, functools.reduce and NumPy's polynomial classes are defined as Python code
    (rules.second_order.defined_as): that code runs batched, with no per-direction loop."""
    import functools
    import itertools
    from numpy.polynomial import Chebyshev, Polynomial

    def f(c):
        x = np.linspace(-1, 1, 5)
        pairs = sum(a * b for a, b in itertools.product([c[0], 2.0], [c[1], 0.5]))
        product = functools.reduce(lambda a, b: a * b, [c[0], c[2], 2.0])
        return Polynomial(c)(x) + Chebyshev(c * 2.0, domain=[-1, 3])(x) * pairs + product
    c = RNG.standard_normal(3)
    _check(f, c, fd=_central(f, c))
    assert not {"product", "reduce", "__init__"} & set(looped_calls)


def _leaves_of(jac):
    if isinstance(jac, (np.ndarray, float, np.floating)):
        return [np.ravel(np.asarray(jac))]
    if isinstance(jac, (tuple, list)):
        return [leaf for v in jac for leaf in _leaves_of(v)]
    if isinstance(jac, dict):
        return [leaf for v in jac.values() for leaf in _leaves_of(v)]
    if hasattr(jac, "fields"):
        return [leaf for v in jac.fields.values() for leaf in _leaves_of(v)]
    return []


@pytest.mark.slow  # every rule case of tests/test_rules.py: minutes
def test_every_rule_case_batched_equals_unbatched():
    """Each rule case with float arguments: the batched Jacobian (3 directions per pass) is the
    unbatched one, or the batched pass refuses by name (never a different number)."""
    from yuebing.rules import rule_modules

    wrong = []
    for case in [c for module in rule_modules() for c in getattr(module, "CASES", ()) if "fwd" in c.mode]:
        argnums = tuple(i for i, a in enumerate(case.args) if isinstance(a, (float, np.ndarray))
                        and np.asarray(a).dtype.kind == "f")
        if not argnums:
            continue

        def g(*args, _case=case):
            return _case.f(*args, **_case.kwargs)
        try:
            with case.context():
                unbatched = yb.jacobian(g, argnums=argnums, mode="fwd", chunk_size=1)(*case.args)
        except Exception:  # noqa: BLE001 - cases made for other checks (complex outputs, errors)
            continue
        try:
            with case.context():
                batched = yb.jacobian(g, argnums=argnums, mode="fwd", chunk_size=3)(*case.args)
        except NotImplementedError as error:
            assert "chunk_size=1" in str(error)
            continue
        a, b = _leaves_of(batched), _leaves_of(unbatched)
        if len(a) != len(b) or not all(x.shape == y.shape and np.allclose(x, y, rtol=1e-9, atol=1e-9, equal_nan=True)
                                       for x, y in zip(a, b)):
            wrong.append(case.name)
    assert not wrong


def reshape_copy_and_view(x):
    m = x.reshape(3, 4)
    c = m.T.reshape(12)  # a copy (m.T is not contiguous): a write into it must not reach x
    c[0] = 100.0 * x[1]
    v = x.reshape(2, 6)  # a view: a write into it reaches x
    v[1, 1] = x[0] ** 2
    return np.concatenate([c, x])


def test_reshape_keeps_copies_and_views_apart():
    x = RNG.standard_normal(12)
    _check(reshape_copy_and_view, x, fd=_central(reshape_copy_and_view, x))


def writes_through_fortran_views(x):
    y = x.T.reshape(-1)  # a view when x is Fortran-ordered: so must each direction's tangent be
    y[1] = y[0] ** 2
    z = x * 2.0  # Fortran-ordered too (NumPy keeps the layout)
    z.T.reshape(-1)[2] = np.sin(x[0, 0])
    return np.concatenate([x.ravel(), z.ravel()])


def test_fortran_ordered_writes_through_views():
    x = np.asfortranarray(RNG.standard_normal((2, 3)))
    jac = _check(writes_through_fortran_views, x)
    rev = yb.jacobian(writes_through_fortran_views)(x)
    np.testing.assert_allclose(jac, rev, rtol=1e-12, atol=1e-12)
