"""Forward mode: the derived-rule corpus through check_rule in forward mode (and forward against
reverse), dispatch of every kind of callable, jvp/jacobian against finite differences on the
realistic programs, and error messages."""
import dataclasses
import functools

import numpy as np
import pytest

import yuebing.api  # noqa: F401 - registers every rule, as `import yuebing` does
from yuebing.api import jacobian, jvp, show_forward
from yuebing.rules.core import Dual, MissingRuleError, frule
from yuebing.tangents import NoTangent
from yuebing.testing import check_rule

from .corpus import data, extra_data, extra_language, extra_objects, extra_programs, language, objects, programs
from .corpus.extra_programs import (
    LeapfrogParticle,
    explicit_euler_ode_preallocated,
    heat_equation_stencil,
    leapfrog_argument_mutated,
    leapfrog_particle_class,
    newton_sqrt_while,
)
from .corpus.programs import gp_log_likelihood, mlp_params_in_dict

MODULES = (language, data, objects, programs, extra_language, extra_data, extra_objects, extra_programs)
ENTRIES = [pytest.param(fn, args, options, id=f"{module.__name__.rsplit('.', 1)[-1]}:{fn.__name__}")
           for module in MODULES for fn, args, options in module.CORPUS]


# ---------------------------------------------------------------- the corpus


@pytest.mark.parametrize("fn, args, options", ENTRIES)
def test_corpus_forward(fn, args, options):
    check_rule(fn, *args, mode=("fwd",), **options)


@pytest.mark.parametrize("fn, args, options", ENTRIES)
def test_corpus_forward_agrees_with_reverse(fn, args, options):
    check_rule(fn, *args, mode=("rev", "fwd"), **options)


# ---------------------------------------------------------------- dispatch: every kind of callable


class Vec:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __mul__(self, s):
        return Vec(self.x * s, self.y * s)

    def __rmul__(self, s):
        return Vec(self.x * s, self.y * s)

    def __neg__(self):
        return Vec(-self.x, -self.y)

    @property
    def norm2(self):
        return self.x * self.x + self.y * self.y

    @norm2.setter
    def norm2(self, value):
        scale = (value / self.norm2) ** 0.5
        self.x = self.x * scale
        self.y = self.y * scale

    def __call__(self, t):
        return self.x * t + self.y


class Base:
    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return self.w * x * x


class Derived(Base):
    def energy(self, x):
        return super().energy(x) + np.sin(x)


@dataclasses.dataclass(frozen=True)
class Frozen:
    a: float
    b: np.ndarray


@dataclasses.dataclass
class Mutable:
    a: float
    b: list


def operators_on_user_class(x, y):
    v = Vec(x, y)
    w = -(v + 2.0 * v) * 0.5
    return w.x * w.y


def property_get_and_set(x, y):
    v = Vec(x, y)
    v.norm2 = 2.0 * v.norm2 + x
    return v.x + v.norm2


def callable_object(x, y):
    v = Vec(x, y)
    return v(3.0) + v.__call__(x)


def bound_method_passed_around(x):
    b = Derived(x)
    energy = b.energy
    return energy(x) + energy(2.0)


_ENERGY = functools.partial(Base.energy, Base(1.5))
_PRODUCT = functools.partial(lambda a, b: a * b + a, 0.5)


def partial_of_user_function(x, y):
    # partials built outside (constructing functools.partial has no rule in either mode yet)
    return _ENERGY(x) + _PRODUCT(y) * x


def dataclasses_frozen_and_mutable(x, arr):
    f = Frozen(x, arr * 2.0)
    m = Mutable(x, [x, arr])
    m.b.append(f.a * 3.0)
    m.a = m.a * m.b[2]
    return m.a + np.sum(f.b * m.b[1])


def vectorized(x):
    sq = np.vectorize(lambda t: t * t + np.sin(t))
    return sq(x)


def star_args_and_kwargs(x, y):
    def inner(*args, scale=1.0, **kwargs):
        return sum(args) * scale + kwargs["extra"]

    parts = [x, y, x * y]
    options = {"extra": y * y}
    return inner(*parts, scale=x, **options)


def nonlocal_closure(x):
    total = 0.0

    def add(v):
        nonlocal total
        total = total + v * x

    for k in range(3):
        add(x + k)
    return total


DISPATCH = [
    (operators_on_user_class, (0.7, -1.2)),
    (property_get_and_set, (0.7, -1.2)),
    (callable_object, (0.7, -1.2)),
    (bound_method_passed_around, (0.8,)),
    (partial_of_user_function, (0.7, -1.2)),
    (dataclasses_frozen_and_mutable, (0.7, np.array([0.5, -1.0]))),
    (vectorized, (np.array([0.1, 0.4, -0.3]),)),
    (star_args_and_kwargs, (0.7, -1.2)),
    (nonlocal_closure, (0.6,)),
]


@pytest.mark.parametrize("fn, args", DISPATCH, ids=[fn.__name__ for fn, _ in DISPATCH])
def test_dispatch(fn, args):
    check_rule(fn, *args, mode=("rev", "fwd"))


def test_method_class_and_partial_called_directly():
    # frule (check_rule's entry point) falls back to derived rules for any Python callable
    check_rule(Vec.__add__, Vec(0.3, 0.4), Vec(1.0, 2.0), mode=("fwd",))
    check_rule(functools.partial(Base.energy, Base(1.5)), 0.4, mode=("fwd",))
    check_rule(Derived(0.5).energy, 0.4, mode=("fwd",))
    out = frule(Vec, Dual(1.0, 0.5), Dual(2.0, 0.0))
    assert isinstance(out.primal, Vec) and out.tangent.x == 0.5 and out.tangent.y == 0.0


# ---------------------------------------------------------------- jvp


def mutates(x, lst):
    x *= 2.0
    lst.append(x[0] * lst[0])
    return np.sum(x) + lst[-1]


def test_jvp_leaves_the_caller_arguments_alone():
    x, lst = np.array([1.0, 2.0]), [3.0]
    dx, dlst = np.array([1.0, 0.0]), [0.5]
    value, tangent = jvp(mutates, (x, lst), (dx, dlst))
    assert value == pytest.approx(6.0 + 2.0 * 3.0)
    # d/dε [2(x+εdx).sum() + 2(x0+εdx0)(l0+εdl0)] = 2 + 2*(1*3 + 1*0.5)
    assert tangent == pytest.approx(2.0 + 2.0 * (3.0 + 0.5))
    np.testing.assert_array_equal(x, [1.0, 2.0])
    assert lst == [3.0] and dlst == [0.5]
    np.testing.assert_array_equal(dx, [1.0, 0.0])


def test_jvp_has_aux_and_int_arguments():
    def f(x, n):
        return x ** n, {"n": n}

    value, tangent, aux = jvp(f, (2.0, 3), (1.0, NoTangent), has_aux=True)
    assert value == 8.0 and tangent == pytest.approx(12.0) and aux == {"n": 3}


def test_jvp_rejects_bad_tangents():
    def f(x, y):
        return x * y

    with pytest.raises(TypeError, match=r"tangents\[0\].*shape \(3,\)"):
        jvp(f, (np.ones(3), 2.0), (np.ones(2), 1.0))
    with pytest.raises(TypeError, match="one tangent per argument"):
        jvp(f, (np.ones(3), 2.0), (np.ones(3),))
    with pytest.raises(TypeError, match="tuples"):
        jvp(f, np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match=r"tangents\[1\]"):
        jvp(f, (np.ones(3), 2.0), (np.ones(3), np.ones(3)))
    value, tangent = jvp(lambda x: x, (2.0,), (1,))  # an int tangent of a float is taken as a float
    assert type(tangent) is float and tangent == 1.0


def uses_c_function_without_rule(x):
    y = x * 2.0
    return np.frompyfunc(lambda t: t, 1, 1)(y)


def test_missing_rule_names_the_user_line():
    with pytest.raises(MissingRuleError, match="forward-mode rule") as info:
        jvp(uses_c_function_without_rule, (np.ones(2),), (np.ones(2),))
    notes = "".join(getattr(info.value, "__notes__", []))
    assert "test_forward.py" in notes and "frompyfunc" in notes


def test_show_forward_is_readable():
    source = show_forward(newton_sqrt_while)
    assert "def newton_sqrt_while_jvp" in source and "# line" in source and "while True:" in source
    assert "def newton_sqrt_while" in show_forward(newton_sqrt_while, stage="ir")


# ---------------------------------------------------------------- jacobian on realistic programs


def fd_jacobian(f, x, h=1e-6):
    """Central differences: shape output.shape + x.shape."""
    y = np.asarray(f(x))
    jac = np.zeros(y.shape + x.shape)
    flat = jac.reshape(y.shape + (-1,))
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = h
        flat[..., j] = (np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h)
    return jac


def _as_vector_function(fn, args, argnum):
    args = list(args)

    def g(v):
        a = list(args)
        a[argnum] = v if isinstance(args[argnum], np.ndarray) else float(v)
        copied = [x.copy() if isinstance(x, np.ndarray) else x for x in a]
        return fn(*copied)

    return g


def ode_trajectory(z0, theta):
    n, dt = 10, 0.05
    traj = np.empty((n + 1, 2))
    traj[0] = z0
    for k in range(n):
        x, y = traj[k]
        traj[k + 1, 0] = traj[k, 0] + dt * (theta[0] * x - theta[1] * x * y)
        traj[k + 1, 1] = traj[k, 1] + dt * (theta[3] * x * y - theta[2] * y)
    return traj[:, 1]


def stencil_field(u0, kappa):
    u = u0.copy()
    for _ in range(5):
        lap = np.zeros_like(u)
        lap[1:-1] = u[2:] - 2.0 * u[1:-1] + u[:-2]
        u += kappa * lap
    return u


def mlp_outputs(w1, x):
    h = np.tanh(w1 @ x)
    return np.sum(h * h, axis=0)


def particle_positions(q0, p0):
    part = LeapfrogParticle(q0, p0, 1.3)
    for _ in range(8):
        part.step(0.05)
    return part.q * part.p


def newton_roots(a):
    out = np.zeros_like(a)
    for i in range(len(a)):
        out[i] = newton_sqrt_while(a[i])
    return out


rng = np.random.default_rng(3)
REALISTIC = [
    (explicit_euler_ode_preallocated, (rng.uniform(0.5, 1.5, 2), rng.uniform(0.5, 1.5, 4)), 1),
    (ode_trajectory, (rng.uniform(0.5, 1.5, 2), rng.uniform(0.5, 1.5, 4)), 0),
    (ode_trajectory, (rng.uniform(0.5, 1.5, 2), rng.uniform(0.5, 1.5, 4)), 1),
    (heat_equation_stencil, (np.sin(np.linspace(0.0, np.pi, 8)), 0.3), 0),
    (stencil_field, (rng.standard_normal(7), 0.2), 0),
    (stencil_field, (rng.standard_normal(7), 0.2), 1),
    (mlp_outputs, (rng.standard_normal((4, 3)), rng.standard_normal((3, 5))), 0),
    (mlp_params_in_dict, ({"W1": rng.standard_normal((4, 3)), "b1": rng.standard_normal(4),
                           "W2": rng.standard_normal((1, 4)), "b2": rng.standard_normal(1)},
                          rng.standard_normal((3, 5)), rng.standard_normal((1, 5))), 1),
    (gp_log_likelihood, (0.2 * np.arange(6.0), rng.standard_normal(6), 0.7), 1),
    (gp_log_likelihood, (0.2 * np.arange(6.0), rng.standard_normal(6), 0.7), 2),
    (leapfrog_particle_class, (rng.standard_normal(3), rng.standard_normal(3), 1.3), 0),
    (particle_positions, (rng.standard_normal(3), rng.standard_normal(3)), 1),
    (newton_roots, (rng.uniform(0.5, 4.0, 4),), 0),
]


@pytest.mark.parametrize("fn, args, argnum", REALISTIC, ids=[f"{fn.__name__}-arg{a}" for fn, _, a in REALISTIC])
def test_jacobian_matches_finite_differences(fn, args, argnum):
    x = args[argnum]
    expected = fd_jacobian(_as_vector_function(fn, args, argnum), np.asarray(x, dtype=float))
    fwd = jacobian(fn, argnums=argnum, mode="fwd")(*args)
    rev = jacobian(fn, argnums=argnum, mode="rev")(*args)
    assert np.shape(fwd) == expected.shape and np.shape(rev) == expected.shape
    np.testing.assert_allclose(fwd, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rev, expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(fwd, rev, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("fn, args, argnum", REALISTIC[:8], ids=[f"{fn.__name__}-arg{a}" for fn, _, a in REALISTIC[:8]])
def test_jvp_matches_finite_differences(fn, args, argnum):
    x = np.asarray(args[argnum], dtype=float)
    direction = np.random.default_rng(1).standard_normal(x.shape)
    g = _as_vector_function(fn, args, argnum)
    h = 1e-6
    expected = (np.asarray(g(x + h * direction)) - np.asarray(g(x - h * direction))) / (2 * h)
    tangents = [NoTangent if isinstance(a, int) else _zero_like(a) for a in args]
    tangents[argnum] = direction if isinstance(args[argnum], np.ndarray) else float(direction)
    value, tangent = jvp(fn, args, tangents)
    np.testing.assert_allclose(value, fn(*[a.copy() if isinstance(a, np.ndarray) else a for a in args]))
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-6)


def _zero_like(a):
    from yuebing.tangents import zero_tangent

    return zero_tangent(a)


def test_jacobian_of_an_argument_the_function_mutates():
    part = LeapfrogParticle(np.array([0.3, -0.2]), np.array([0.1, 0.4]), 0.9)
    before = (part.q.copy(), part.p.copy())
    jac = jacobian(leapfrog_argument_mutated, mode="fwd")(part)
    np.testing.assert_array_equal(part.q, before[0])  # the caller's object is untouched
    np.testing.assert_array_equal(part.p, before[1])
    h = 1e-6
    for field in ("q", "p"):
        for i in range(2):
            def at(step):
                moved = LeapfrogParticle(before[0].copy(), before[1].copy(), 0.9)
                getattr(moved, field)[i] += step
                return leapfrog_argument_mutated(moved)

            assert getattr(jac, field)[i] == pytest.approx((at(h) - at(-h)) / (2 * h), rel=1e-5, abs=1e-7)
    assert jac.mass == pytest.approx((leapfrog_argument_mutated(LeapfrogParticle(before[0].copy(), before[1].copy(), 0.9 + h))
                                      - leapfrog_argument_mutated(LeapfrogParticle(before[0].copy(), before[1].copy(), 0.9 - h))) / (2 * h), rel=1e-5)


def test_jacobian_nested_structures_and_argnums_tuple():
    def f(p, s):
        return {"a": p["w"] @ p["b"] * s, "n": 3, "s": float(np.sum(p["w"]))}

    p = {"w": np.arange(6.0).reshape(2, 3), "b": np.array([1.0, -1.0, 0.5])}
    for mode in ("fwd", "rev"):
        jp, js = jacobian(f, argnums=(0, 1), mode=mode)(p, 2.0)
        assert jp["a"]["w"].shape == (2, 2, 3) and jp["a"]["b"].shape == (2, 3)
        np.testing.assert_allclose(jp["a"]["b"], 2.0 * p["w"])
        np.testing.assert_allclose(jp["s"]["w"], np.ones((2, 3)))
        np.testing.assert_allclose(jp["s"]["b"], np.zeros(3))
        assert jp["n"] is NoTangent
        np.testing.assert_allclose(js["a"], p["w"] @ p["b"])
        assert js["s"] == 0.0


def test_jacobian_scalar_and_errors():
    def f(x):
        return x * x * x

    assert jacobian(f, mode="fwd")(2.0) == pytest.approx(12.0)
    assert jacobian(f, mode="rev")(2.0) == pytest.approx(12.0)
    with pytest.raises(ValueError, match="mode"):
        jacobian(f, mode="forward")
    with pytest.raises(TypeError, match="no derivative"):
        jacobian(f)(3)
    with pytest.raises(TypeError, match="complex"):
        jacobian(f, mode="fwd")(1.0 + 2.0j)
    with pytest.raises(ValueError, match="out of range"):
        jacobian(f, argnums=1)(2.0)


def test_jacobian_has_aux_and_kwargs():
    def f(x, scale=1.0):
        return np.sin(x) * scale, "aux"

    x = np.array([0.1, 0.2])
    for mode in ("fwd", "rev"):
        jac, aux = jacobian(f, mode=mode, has_aux=True)(x, scale=3.0)
        assert aux == "aux"
        np.testing.assert_allclose(jac, np.diag(3.0 * np.cos(x)))


# ---------------------------------------------------------------- nested differentiation


def calls_grad_inside(x):
    import yuebing as yb

    return x * yb.grad(lambda y: x + y)(1.0)


def calls_jvp_inside(x):
    return x * jvp(lambda y: x + y, (1.0,), (1.0,))[1]


def calls_grad_of_product(x):
    import yuebing as yb

    return x * yb.grad(lambda y: x * y)(1.0)  # x * x


def test_forward_over_grad_does_not_confuse_perturbations():
    # d/dx [x * d/dy (x + y)] = 1: the inner derivative's perturbation (y) is not the outer one (x)
    assert jvp(calls_grad_inside, (1.0,), (1.0,)) == (pytest.approx(1.0), pytest.approx(1.0))
    # d/dx [x * d/dy (x * y)] = 2x: the outer perturbation reaches the inner gradient through x
    assert jvp(calls_grad_of_product, (1.5,), (1.0,))[1] == pytest.approx(3.0)


def test_forward_over_grad_is_a_hessian():
    import yuebing as yb

    assert jvp(yb.grad(lambda x: x * x * x), (1.0,), (1.0,))[1] == pytest.approx(6.0)
    x = np.array([0.5, 1.5])
    np.testing.assert_allclose(jacobian(yb.grad(lambda x: np.sum(x ** 3)), mode="fwd")(x), np.diag(6 * x))


def test_forward_over_jvp_keeps_perturbations_apart():
    # d/dx [x * d/dy (x + y)] = 1 with the inner derivative by forward mode too
    assert jvp(calls_jvp_inside, (1.0,), (1.0,))[1] == pytest.approx(1.0)


def calls_hvp_inside(x):
    import yuebing as yb

    return x * yb.hvp(lambda y: x * y * y, (1.0,), (1.0,))[2][0]


def _cubic(y):
    return y * y * y


def calls_hvp_of_a_module_function(x):
    import yuebing as yb

    return x * yb.hvp(_cubic, (x,), (1.0,))[2][0]


def test_forward_over_hvp_is_differentiated_or_refused():
    # forward mode over yb.hvp: its Python definition (api/composed_transforms.py), third order
    # over the inner function; a closure over the outer variable is refused by third order, by name
    h = 1e-6
    f = calls_hvp_of_a_module_function
    expected = (f(1.0 + h) - f(1.0 - h)) / (2 * h)
    assert jvp(f, (1.0,), (1.0,))[1] == pytest.approx(expected, rel=1e-7)
    from yuebing.transform.forward_runtime import NestedDifferentiationError

    with pytest.raises(NestedDifferentiationError, match="third derivatives") as info:
        jvp(calls_hvp_inside, (1.0,), (1.0,))
    assert "test_forward.py" in "".join(getattr(info.value, "__notes__", []))


def _identity_decorator(h):
    return h


_OFFSET = 0.25


def nested_def_with_decorator_and_default(x):
    @_identity_decorator
    def inner(y, offset=_OFFSET):
        return y * x + offset

    return inner(x) + (lambda z, c=_OFFSET: z * c)(x)


def test_nested_definition_reads_globals_when_created():
    check_rule(nested_def_with_decorator_and_default, 1.5, mode=("fwd",))
