"""Batched second order (transform/batched_second_order.py, api/batched_hessian.py): a dense
``yb.hessian`` carries up to ``chunk_size`` directions per forward-over-reverse pass. Each
Hessian is checked against the per-column one (``chunk_size=1``: one HVP per column), central
differences of the gradient, and its own transpose."""
import numpy as np
import pytest

import yuebing as yb
from yuebing.api import batched_hessian
from yuebing.transform import batched_second_order

RNG = np.random.default_rng(1616)


def _central_hessian(f, x, h=1e-5):
    """Central differences of yb.grad, column by column."""
    x = np.asarray(x, dtype=float)
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = h
        plus, minus = yb.grad(f)(x + e), yb.grad(f)(x - e)
        columns.append(np.ravel((plus - minus) / (2 * h)))
    return np.stack(columns, axis=1).reshape(x.shape + x.shape)


def _check(f, x, chunks=(None, 2)):
    """Batched Hessians (the default, all directions in one pass, and 2 per pass) equal the
    per-column one, which matches central differences; all are symmetric."""
    per_column = yb.hessian(f, chunk_size=1)(x)
    np.testing.assert_allclose(per_column, _central_hessian(f, x), rtol=1e-5, atol=1e-6)
    for chunk in chunks:
        batched = yb.hessian(f, chunk_size=chunk)(x)
        assert batched.shape == per_column.shape
        np.testing.assert_allclose(batched, per_column, rtol=1e-12, atol=1e-12)
    flat = per_column.reshape(x.size, x.size)
    np.testing.assert_allclose(flat, flat.T, rtol=1e-9, atol=1e-9)
    return per_column


@pytest.fixture
def looped_calls(monkeypatch):
    """The primitives a batched pass runs once per direction, and whether a pass was dropped."""
    calls: list = []
    original = batched_second_order.looped

    def spy(found, f, *rest):
        calls.append(f[0])
        return original(found, f, *rest)

    monkeypatch.setattr(batched_second_order, "looped", spy)
    return calls


# ---------------------------------------------------------------- array code, batch-aware throughout

W = RNG.standard_normal((4, 6))


def elementwise_and_matmul(x):
    h = np.tanh(W @ x + 0.1)
    return np.sum(h * h) + 0.5 * x @ x + np.sum(np.sin(x) * x[::-1])


def two_layers(x):
    w1, w2 = x[:6].reshape(2, 3), x[6:]
    h = np.tanh(w1 @ np.array([0.3, -0.7, 1.1]))
    return np.sum((w2 * h - 0.4) ** 2) + 1e-2 * np.sum(x * x)


def test_array_code_is_batched_without_loops(looped_calls):
    x = RNG.standard_normal(6)
    _check(elementwise_and_matmul, x)
    _check(two_layers, RNG.standard_normal(8))
    assert looped_calls == []


def scalar_loop(x):
    s = 0.0
    for i in range(len(x)):
        s += x[i] * x[i] * np.sin(x[i]) + x[i] / (1.0 + x[i - 1] ** 2)
    return s


def kernel_matrix(x):
    k = np.exp(-0.5 * (x[:, None] - x[None, :]) ** 2)
    return np.sum(k * k) + np.sum(x[..., 1:] ** 3)


def test_new_axes_and_ellipsis(looped_calls):
    _check(kernel_matrix, RNG.standard_normal(4))
    assert looped_calls == []


def test_scalar_loop(looped_calls):
    _check(scalar_loop, RNG.standard_normal(5))
    assert looped_calls == []


# ---------------------------------------------------------------- user code through the looped fallback


def in_place_writes(x):
    y = np.zeros(4)
    for i in range(4):
        y[i] = x[i] * x[(i + 1) % 4]
    y += x ** 2
    y *= np.cos(x)
    return np.sum(y * y)


def lists_and_dicts(x):
    terms = []
    for i in range(3):
        terms.append(x[i] * x[i + 1])
    table = {"a": x[0] ** 2, "b": [x[1], x[2] * x[3]]}
    a, b = terms[0], terms[-1]
    return sum(terms) * table["a"] + table["b"][1] ** 2 + a * b + float(np.array(terms) @ x[:3])


class Particle:
    def __init__(self, q, mass):
        self.q = q
        self.mass = mass

    def energy(self):
        return 0.5 * np.sum(self.q ** 2) / self.mass + np.sum(np.cos(self.q))

    def step(self, dt):
        self.q = self.q - dt * np.sin(self.q)


def objects(x):
    p = Particle(x[:3], 1.0 + x[3] ** 2)
    for _ in range(2):
        p.step(0.1)
    return p.energy()


def closures(x):
    scale = x[0] ** 2

    def inner(v):
        return np.sum(np.exp(-scale * v)) + scale * v[1]

    return inner(x[1:]) * x[2]


def view_written_through(x):
    y = x.copy()
    v = y[1:3]  # a view: writes through it reach y
    v *= x[0]
    v[0] = np.exp(v[1])
    return np.sum(y ** 3)


@pytest.mark.parametrize("f", [in_place_writes, lists_and_dicts, objects, closures, view_written_through])
def test_user_code(f):
    _check(f, RNG.uniform(0.3, 1.2, 4))


def fortran_argument(x):
    y = x.T.reshape(-1)  # a view of a Fortran-ordered x
    z = x * 2.0
    return np.sum(y * np.sin(y)) + np.sum(z ** 2 * x[0, 0]) + y[1] * y[4]


def test_fortran_ordered_argument():
    x = np.asfortranarray(RNG.standard_normal((2, 3)))
    _check(fortran_argument, x)


def test_two_arguments_and_a_float():
    def f(x, w, s):
        return np.sum(np.tanh(x * w) ** 2) * s + s ** 3 * np.sum(x)

    x, w = RNG.standard_normal(3), RNG.standard_normal(3)
    blocks = yb.hessian(f, argnums=(0, 1, 2), chunk_size=7)(x, w, 0.7)
    per_column = yb.hessian(f, argnums=(0, 1, 2), chunk_size=1)(x, w, 0.7)
    for row, expected_row in zip(blocks, per_column):
        for block, expected in zip(row, expected_row):
            np.testing.assert_allclose(block, expected, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(blocks[0][2], _central_hessian(lambda v: f(v[:3], w, v[3]), np.r_[x, 0.7])[:3, 3],
                               rtol=1e-5, atol=1e-6)


def test_third_derivatives_run_once_per_direction():
    """yb.grad inside a Hessian: its third-order rule runs once per direction inside the pass."""
    inner = yb.grad(lambda v: np.sum(v ** 3))

    def f(x):
        return np.sum(inner(x) ** 2)

    _check(f, RNG.standard_normal(3), chunks=(None,))


G = 0.0


def writes_a_global(x):
    global G
    G = x[0] * x[1]
    return G * np.sum(x ** 2)


def test_a_global_written_with_derivatives_gives_one_pass_per_column():
    _check(writes_a_global, RNG.standard_normal(3), chunks=(None,))


def test_prepared_hessian_is_batched():
    x = RNG.standard_normal(6)
    prepared = yb.prepare_hessian(elementwise_and_matmul, x)
    np.testing.assert_allclose(prepared(x), yb.hessian(elementwise_and_matmul, chunk_size=1)(x), rtol=1e-12,
                               atol=1e-12)


# ---------------------------------------------------------------- every rule case


@pytest.mark.slow  # every rule case of tests/test_rules.py: minutes
def test_every_rule_case_batched_equals_unbatched():
    """Each rule case with float arguments, made scalar: the batched Hessian (3 directions per
    pass) is the per-column one, or the pass refuses by name (never a different number)."""
    from yuebing.rules import rule_modules
    from yuebing.testing.targets import _project

    wrong = []
    for case in [c for module in rule_modules() for c in getattr(module, "CASES", ()) if "rev" in c.mode]:
        argnums = tuple(i for i, a in enumerate(case.args) if isinstance(a, (float, np.ndarray))
                        and np.asarray(a).dtype.kind == "f" and np.size(a) > 0)
        if not argnums:
            continue

        def g(*args, _case=case):
            out = _case.f(*args, **_case.kwargs)
            return _project(out, np.full(np.shape(out), 0.7) if isinstance(out, np.ndarray) else 0.7)
        try:
            with case.context():
                unbatched = yb.hessian(g, argnums=argnums, chunk_size=1)(*case.args)
        except Exception:  # noqa: BLE001 - cases made for other checks (complex outputs, errors, refusals)
            continue
        try:
            with case.context():
                batched = yb.hessian(g, argnums=argnums, chunk_size=3)(*case.args)
        except NotImplementedError as error:
            assert "chunk_size=1" in str(error)
            continue
        a, b = np.concatenate([np.ravel(h) for row in batched for h in row]), \
            np.concatenate([np.ravel(h) for row in unbatched for h in row])
        if a.shape != b.shape or not np.allclose(a, b, rtol=1e-9, atol=1e-9, equal_nan=True):
            wrong.append(case.name)
    assert not wrong


def test_a_reshape_method_in_a_batched_pass():
    """``c.reshape(shape)`` (numpy.polynomial's polyval) in a batched pass: its pullback gave one
    rdata tangent too few (an IndexError)."""
    rng = np.random.default_rng(3)
    c, x = rng.standard_normal(4), rng.standard_normal(5)

    def g(c, x):
        return np.sum(np.polynomial.Polynomial(c)(x) * np.sin(x))

    batched = yb.hessian(g, argnums=(0, 1), chunk_size=3)(c, x)
    per_column = yb.hessian(g, argnums=(0, 1), chunk_size=1)(c, x)
    for row_b, row_p in zip(batched, per_column):
        for hb, hp in zip(row_b, row_p):
            np.testing.assert_allclose(hb, hp, rtol=1e-10, atol=1e-12)


# ---------------------------------------------------------------- batched by default: what fell over


class _Namespace:
    """Attributes kept in a dict (a ``__getattr__`` with a ``try``)."""

    def __init__(self, **values):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None


def _collect(**values):
    return values


def keywords_into_a_dict(x):
    """A float with batched tangents passed by keyword to dict() and into **values."""
    d, e = dict(a=x[0], b=x[1] * x[2]), _collect(a=x[2], b=x[0])
    return d["a"] * d["b"] * e["a"] + e["b"] ** 3


def namespace_object(x):
    ns = _Namespace(a=x[0], w=x)
    return ns.a * ns.a * x[1] + np.sum(ns.w ** 2) * ns.a


@__import__("dataclasses").dataclass
class _Pair:
    a: float
    w: np.ndarray


def dataclass_fields(x):
    """A dataclass's float field: its slot holds one cotangent tangent per direction."""
    p = _Pair(x[0], x * x)
    return p.a * p.a * np.sum(p.w) + p.a * x[2]


@pytest.mark.parametrize("f", [keywords_into_a_dict, namespace_object, dataclass_fields])
def test_numbers_in_containers_and_objects(f):
    _check(f, RNG.standard_normal(3))


def _scalar_objective(x, b):
    return 0.25 * x ** 4 - b[1] * x ** 2 + (b[0] - 1.0) * x


def _minimum(b, options):
    import scipy.optimize as so

    res = so.minimize_scalar(_scalar_objective, bounds=(-3.0, 4.0), args=(b,), method="bounded", options=options)
    return res.x ** 3 + b[0] * res.x


def test_a_special_rule_drops_the_pass_even_after_reading_outside_state():
    """A solver's second order has no batched form: the pass is dropped (its columns one pass
    each) although it read a global dict, which it left as it was."""
    def f(b):
        return _minimum(b, _OPTIONS)

    b = np.array([1.3, 0.8])
    before = dict(_OPTIONS)
    h = yb.hessian(f, chunk_size=2)(b)
    np.testing.assert_allclose(h, yb.hessian(f, chunk_size=1)(b), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(h, _central_hessian(f, b), rtol=1e-4, atol=1e-5)
    assert _OPTIONS == before


_OPTIONS = {"xatol": 1e-12}
_LOG: list = []


def appends_then_meets_a_solver(b):
    _LOG.append(1)
    return _minimum(b, {"xatol": 1e-12})


class _Problem:
    """An outside object counting its evaluations (opfunu's problems keep ``self.n_fe``)."""

    def __init__(self):
        self.n_fe, self.seen = 0, []

    def evaluate(self, b):
        self.n_fe += 1
        self.seen.append(float(b[0]))
        return _minimum(b, _OPTIONS)


_PROBLEM = _Problem()
_CALLS = 0


def counts_in_a_global_then_meets_a_solver(b):
    global _CALLS
    _CALLS += 1
    return _minimum(b, _OPTIONS) * (1.0 + 0.0 * _CALLS)


def _counting_closure():
    calls = 0

    def counts(b):
        nonlocal calls
        calls += 1
        return _minimum(b, _OPTIONS)
    return counts, lambda: calls


_COUNTS, _COUNTED = _counting_closure()


_CHANGERS = {
    "module list": (appends_then_meets_a_solver, lambda: list(_LOG)),
    "object attributes": (lambda b: _PROBLEM.evaluate(b), lambda: (_PROBLEM.n_fe, list(_PROBLEM.seen))),
    "global": (counts_in_a_global_then_meets_a_solver, lambda: _CALLS),
    "nonlocal": (_COUNTS, _COUNTED),
}


@pytest.mark.parametrize("name", list(_CHANGERS))
def test_a_dropped_pass_puts_outside_state_back(name):
    """A pass dropped after it changed outside state (a module's list, an object's evaluation
    counter, a global, a nonlocal) puts it back before the columns are
    computed one pass each: the Hessian and the state after it are what one pass per column
    gives (it was refused, advising chunk_size=1)."""
    f, state = _CHANGERS[name]
    b = np.array([1.3, 0.8])
    start = state()
    per_column = yb.hessian(f, chunk_size=1)(b)
    change = (start, state())
    batched_columns_cache = dict(batched_hessian._PER_COLUMN)
    batched_hessian._PER_COLUMN.clear()  # (so that the batched pass runs, and is dropped)
    try:
        start = state()
        batched = yb.hessian(f, chunk_size=2)(b)
        assert (start, state()) == change or _same_increment(change, (start, state()))
    finally:
        batched_hessian._PER_COLUMN.update(batched_columns_cache)
    np.testing.assert_allclose(batched, per_column, rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(per_column, _central_hessian(f, b), rtol=1e-4, atol=1e-5)


def _same_increment(a, b):
    """Counters moved by as much in both runs (a list grown by as many items: each pass leaves its
    appends, as a plain call does, rules/outside_redo.py)."""
    if type(a[0]) is list:
        return len(b[1]) - len(b[0]) == len(a[1]) - len(a[0]) and b[1][:len(b[0])] == b[0]
    return type(a[0]) is int and b[1] - b[0] == a[1] - a[0] or (
        type(a[0]) is tuple and a[1][0] - a[0][0] == b[1][0] - b[0][0] and len(a[1][1]) - len(a[0][1])
        == len(b[1][1]) - len(b[0][1]))


_LOCKED = {"lock": __import__("threading").Lock(), "scale": 2.0}


def reads_an_object_it_cannot_copy(b):
    return _LOCKED["scale"] * _minimum(b, _OPTIONS)


def test_an_outside_object_it_cannot_copy_drops_the_pass_at_its_first_read(looped_calls):
    """A dict holding a lock cannot be copied, so a dropped pass could not put it back: the
    pass is dropped when it first reads it, before it can change anything."""
    b = np.array([1.3, 0.8])
    batched_hessian._PER_COLUMN.clear()
    h = yb.hessian(reads_an_object_it_cannot_copy, chunk_size=2)(b)
    np.testing.assert_allclose(h, yb.hessian(reads_an_object_it_cannot_copy, chunk_size=1)(b), rtol=1e-12,
                               atol=1e-12)
    assert not looped_calls  # (dropped before any call)


# ---------------------------------------------------------------- the derived-rule corpus


def _hessian_entries():
    """The corpus entries with scalar (projected) outputs whose arguments are all floats or float
    arrays: what ``yb.hessian`` takes."""
    from .test_second_order import CORPUS

    def plain(a):
        return type(a) is float or isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.size > 0
    return [entry for entry in CORPUS if entry.values[1] and all(plain(a) for a in entry.values[1])]


@pytest.mark.parametrize("fn, args, w", _hessian_entries())
def test_corpus_batched_hessian_is_the_per_column_one(fn, args, w):
    """Every corpus program: the batched Hessian (all columns in one pass, or the pass dropped and
    the columns redone one each) equals the per-column one, or both raise the same error class."""
    from .test_second_order import _projected

    s, nums = _projected(fn, w), tuple(range(len(args)))
    outcomes = []
    for chunk in (1, 64):
        try:
            outcomes.append(yb.hessian(s, argnums=nums, chunk_size=chunk)(*[np.copy(a) if isinstance(a, np.ndarray)
                                                                             else a for a in args]))
        except Exception as error:  # noqa: BLE001 - compared below
            outcomes.append(type(error))
    per_column, batched = outcomes
    if isinstance(per_column, type):
        assert batched is per_column
        return
    assert not isinstance(batched, type), f"batched raised {batched.__name__} where per column works"
    flat = [np.concatenate([np.ravel(h) for row in o for h in row]) for o in outcomes]
    np.testing.assert_allclose(flat[1], flat[0], rtol=1e-9, atol=1e-9)
