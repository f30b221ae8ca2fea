"""Class and call protocols (issue 13, items 6 and 8): ``f(*array)`` at a call site, dataclasses
with ``__post_init__`` (frozen ones too), classes overriding ``__getattr__``/``__setattr__``/
``__getattribute__``, ``__slots__`` classes and ``super()`` chains. Each function is checked in
reverse mode (``yb.grad``), forward mode (``yb.jvp``) and second order (``yb.hessian``,
``yb.hvp``) against central finite differences of the plain function."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb

H1, H2 = 1e-6, 1e-4


def _fd_gradient(f, x):
    e = np.eye(len(x))
    return np.array([(f(x + H1 * e[i]) - f(x - H1 * e[i])) / (2 * H1) for i in range(len(x))])


def _fd_hessian(f, x):
    n, e = len(x), np.eye(len(x)) * H2
    return np.array([[(f(x + e[i] + e[j]) - f(x + e[i] - e[j]) - f(x - e[i] + e[j]) + f(x - e[i] - e[j]))
                      / (4 * H2 * H2) for j in range(n)] for i in range(n)])


def check_all_modes(f, x):
    """Gradient, JVP, Hessian and HVP of ``f`` at ``x`` against finite differences; ``x`` restored."""
    x = np.asarray(x, dtype=float)
    before = x.copy()
    gradient = _fd_gradient(f, x)
    np.testing.assert_allclose(yb.grad(f)(x), gradient, rtol=1e-5, atol=1e-7)
    v = np.linspace(0.3, 1.1, len(x))
    np.testing.assert_allclose(yb.jvp(f, (x,), (v,))[1], gradient @ v, rtol=1e-5, atol=1e-7)
    hessian = _fd_hessian(f, x)
    np.testing.assert_allclose(yb.hessian(f)(x), hessian, rtol=1e-4, atol=1e-5)
    _, g, hv = yb.hvp(f, (x,), (v,))
    np.testing.assert_allclose(g[0], gradient, rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(hv[0], hessian @ v, rtol=1e-4, atol=1e-5)
    np.testing.assert_array_equal(x, before)


X3 = np.array([0.7, -1.3, 0.4])

# --------------------------------------------------------------------------------------------
# f(*array)
# --------------------------------------------------------------------------------------------


def _three(a, b, c):
    return a * b * b + np.sin(c) * a


def _rows(r0, r1):
    return float(np.sum(r0 * r1 ** 2))


def star_vector(x):
    return _three(*x)


def star_mixed(x):
    return _three(x[0] * 2.0, *x[1:])


def star_rows(x):
    m = np.stack([x, x * x])
    return _rows(*m)


def star_built_inside(x):
    return _three(*np.array([x[1], x[2], x[0]]) ** 2)


@pytest.mark.parametrize("f", [star_vector, star_mixed, star_rows, star_built_inside])
def test_star_array(f):
    check_all_modes(f, X3)


def test_star_int_array_is_constant():
    def f(x):
        return _three(x[0], *np.array([2, 3]))
    check_all_modes(f, X3)


# --------------------------------------------------------------------------------------------
# __getattr__ / __setattr__ / __getattribute__ / __delattr__
# --------------------------------------------------------------------------------------------


class Namespace:
    """Attributes kept in a dict: reads through ``__getattr__``, writes through ``__setattr__``."""

    def __init__(self, **values):
        object.__setattr__(self, "_values", dict(values))

    def __getattr__(self, name):
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(name) from None

    def __setattr__(self, name, value):
        self._values[name] = value

    def __delattr__(self, name):
        del self._values[name]


class Logged:
    """``__setattr__`` that scales what it stores and defers to ``super().__setattr__``."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value * 2.0)


class Computed:
    """``__getattribute__`` computing one attribute, with a ``__getattr__`` fallback."""

    def __init__(self, v):
        self.v = v

    def __getattribute__(self, name):
        if name == "square":
            return object.__getattribute__(self, "v") ** 2
        return object.__getattribute__(self, name)

    def __getattr__(self, name):
        if name == "twice":
            return self.v * 2.0
        raise AttributeError(name)


class OnlyGetattribute:
    def __init__(self, v):
        self.v = v

    def __getattribute__(self, name):
        value = object.__getattribute__(self, name)
        return value * 3.0 if name == "v" else value


def namespace_reads_and_writes(x):
    ns = Namespace(a=x[0], w=x)
    ns.b = ns.a * x[1]
    ns.b = ns.b + np.sum(ns.w ** 2)
    return ns.b * ns.a + np.cos(ns.w[2])


def namespace_default_and_delattr(x):
    ns = Namespace(a=x[0])
    ns.c = x[1] * x[2]
    extra = getattr(ns, "missing", x[2]) + getattr(ns, "c", 10.0)
    del ns.c
    return extra * ns.a + (1.0 if hasattr(ns, "c") else x[1])


def setattr_through_super(x):
    obj = Logged()
    obj.a = x[0] * x[1]
    obj.a = obj.a + x[2]
    return obj.a * x[0]


def getattribute_with_fallback(x):
    obj = Computed(x[0] * x[1])
    return obj.square + obj.twice * x[2] + getattr(obj, "nothing", x[1])


def getattribute_only(x):
    obj = OnlyGetattribute(x[2])
    return obj.v * x[0] + getattr(obj, "missing", x[1])


@pytest.mark.parametrize("f", [namespace_reads_and_writes, namespace_default_and_delattr, setattr_through_super,
                               getattribute_with_fallback, getattribute_only])
def test_attribute_protocols(f):
    check_all_modes(f, X3)


def test_namespace_passed_in_gets_its_gradient():
    def f(ns):
        ns.b = ns.a * ns.a
        return ns.b * 3.0

    ns = Namespace(a=1.5)
    g = yb.grad(f)(ns)
    eps = 1e-6
    expected = (f(Namespace(a=1.5 + eps)) - f(Namespace(a=1.5 - eps))) / (2 * eps)
    assert g._values["a"] == pytest.approx(expected, rel=1e-6)
    assert ns._values == {"a": 1.5}  # the write was undone


# --------------------------------------------------------------------------------------------
# dataclasses with __post_init__
# --------------------------------------------------------------------------------------------


@dataclasses.dataclass
class Derived:
    a: float
    w: np.ndarray
    scale: dataclasses.InitVar[float] = 2.0
    total: float = dataclasses.field(init=False)
    history: list = dataclasses.field(default_factory=list)

    def __post_init__(self, scale):
        self.total = self.a * np.sum(self.w) * scale
        self.w = self.w * self.a
        self.history.append(self.total)


@dataclasses.dataclass(frozen=True)
class FrozenDerived:
    a: float
    b: float = 1.0
    c: float = dataclasses.field(init=False, default=0.0)

    def __post_init__(self):
        object.__setattr__(self, "b", self.b * self.a)
        object.__setattr__(self, "c", np.sin(self.a) + self.b)


@dataclasses.dataclass(frozen=True)
class FrozenChild(FrozenDerived):
    d: float = 3.0

    def __post_init__(self):
        super().__post_init__()
        object.__setattr__(self, "d", self.d * self.c)


def post_init_mutable(x):
    p = Derived(x[0], x * x, scale=x[2])
    q = Derived(x[1], np.array([x[2], 1.0]))
    return p.total * q.total + np.sum(p.w) + p.history[0]


def post_init_frozen(x):
    p = FrozenDerived(x[0], b=x[1])
    q = FrozenChild(x[2], x[0], 2.0 * x[1])
    return p.b * p.c + q.d * q.a


def post_init_frozen_array(x):
    @dataclasses.dataclass(frozen=True)
    class Normalised:
        v: np.ndarray
        norm: float = 0.0

        def __post_init__(self):
            norm = float(np.sqrt(np.sum(self.v ** 2)))
            object.__setattr__(self, "norm", norm)
            object.__setattr__(self, "v", self.v / norm)

    n = Normalised(x * np.array([1.0, 2.0, 3.0]))
    return float(np.sum(n.v * np.arange(1.0, 4.0))) * n.norm ** 0.5


@pytest.mark.parametrize("f", [post_init_mutable, post_init_frozen, post_init_frozen_array])
def test_post_init(f):
    check_all_modes(f, X3)


def test_frozen_dataclass_passed_in_after_post_init():
    def f(x):
        p = FrozenDerived(x, 2.0)
        return p.c * p.b

    def g(p):
        return p.c * p.b

    eps = 1e-6
    assert yb.grad(f)(0.4) == pytest.approx((f(0.4 + eps) - f(0.4 - eps)) / (2 * eps), rel=1e-6)
    grad = yb.grad(g)(FrozenDerived(0.4, 2.0))  # built outside: a frozen tangent with the fields
    assert grad.c == pytest.approx(FrozenDerived(0.4, 2.0).b)
