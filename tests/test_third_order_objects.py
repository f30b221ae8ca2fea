"""Third derivatives (``yb.hessian``/``yb.hvp`` of a function calling ``yb.grad``) when the function
under ``yb.grad`` works with objects of user classes (issue 13): models with methods reading their
attributes, dataclasses (frozen, with ``__post_init__``), properties and their setters, callable
objects, class and static methods, ``__slots__`` and operator dunders, inheritance through
``super()``, methods that mutate the object, ``__getattr__`` and ``vars(self)``.

Every Hessian is checked against central differences of the gradient (``yb.grad`` of the outer
function is reverse over reverse, which needs only second derivatives of the inner one) and for
symmetry; the Hessian-vector products against the same Hessian times the direction.
"""
import copy
import dataclasses
import typing

import numpy as np
import pytest

import yuebing as yb
from yuebing.tangents import NoTangent
from yuebing.transform.plain_forward import plain_forward

from tests.all_modes import check_all_modes
from tests.test_second_order import _fd_hessian
from tests.test_third_order import check_hessian


class Model:
    def __init__(self, w):
        self.w = w

    def predict(self, x):
        return np.tanh(self.w * x)


MODEL = Model(0.5)


def makes_an_object(y):
    return np.sum(Model(y[0]).predict(y) ** 2)


def uses_a_global_object(y):
    return np.sum(MODEL.predict(y) ** 2)


@dataclasses.dataclass
class Params:
    a: float
    b: np.ndarray
    c: float = 2.0

    def energy(self, x):
        return self.a * np.sum(np.sin(self.b * x)) + self.c * np.sum(x ** 3)


@dataclasses.dataclass(frozen=True)
class Frozen:
    k: float
    scale: float = 1.5

    def __post_init__(self):
        object.__setattr__(self, "scale", self.scale * self.k)


def uses_dataclasses(y):
    p = Params(y[0] ** 2, y * 0.5)
    f = Frozen(y[1])
    return p.energy(y) * f.scale + f.k ** 3


class Layer:
    def __init__(self, weights, bias):
        self.weights = weights
        self.bias = bias

    @property
    def norm(self):
        return np.sum(self.weights ** 2)

    @norm.setter
    def norm(self, value):
        self.weights = self.weights * (value / np.sum(self.weights ** 2))

    def __call__(self, x):
        return np.tanh(self.weights @ x + self.bias)


class Network:
    def __init__(self, layers):
        self.layers = layers
        self.calls = 0

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
            self.calls += 1
        return x

    @classmethod
    def make(cls, w, b):
        return cls([Layer(w, b), Layer(w.T, -b)])

    @staticmethod
    def loss(out):
        return np.sum(out ** 2)


W = np.array([[0.5, -0.2, 0.1], [0.3, 0.8, -0.4], [-0.6, 0.2, 0.7]])


def network(y):
    net = Network.make(W * y[0], y[1:3].sum() * np.ones(3))
    first = net.layers[0]
    first.norm = 2.0 + y[2] ** 2
    out = net.forward(y)
    return Network.loss(out) + first.norm * y[0] + net.calls


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec(self.x + other.x, self.y + other.y)

    def __mul__(self, s):
        return Vec(self.x * s, self.y * s)

    def __rmul__(self, s):
        return self * s

    def __neg__(self):
        return Vec(-self.x, -self.y)

    def length2(self):
        return self.x ** 2 + self.y ** 2


def vectors(y):
    v = Vec(y[0], y[1]) + 2.0 * Vec(y[2], y[0] * y[1])
    w = -(v * y[2])
    return w.length2() * v.x


class Base:
    def __init__(self, s):
        self.s = s

    def value(self, x):
        return self.s * x


class Derived(Base):
    def __init__(self, s, t):
        super().__init__(s)
        self.t = t

    def value(self, x):
        return super().value(x) ** 2 + self.t * x


def inheritance(y):
    d = Derived(y[0], y[1])
    return np.sum(d.value(y))


class Counter:
    def __init__(self):
        self.total = 0.0
        self.history = []

    def add(self, v):
        self.total = self.total + v * v
        self.history.append(self.total)


def mutating_methods(y):
    c = Counter()
    for v in y:
        c.add(v * y[0])
    return c.total * c.history[0] + sum(c.history)


def object_argument(y, model):
    return np.sum(model.predict(y) ** 3)


class Lazy:
    def __init__(self, data):
        self.data = data

    def __getattr__(self, name):
        if name.startswith("sq_"):
            return getattr(self, name[3:]) ** 2
        raise AttributeError(name)


class Record:
    def __init__(self, q):
        self.__dict__["q"] = q


def dynamic_attributes(y):
    lazy = Lazy(y[0] * y[1])
    r = Record(y[2])
    r.__dict__["q"] = r.q * y[1]
    return lazy.sq_data * r.q + getattr(r, "q") ** 2 + vars(r)["q"] * y[0]


def with_the_model_as_an_argument(y):
    return object_argument(y, MODEL) + object_argument(y ** 2, Model(y[1]))


class Accumulator:
    def __init__(self, v):
        self.v = v
        self.arr = np.zeros(3)

    def __add__(self, other):
        return Accumulator(self.v + (other.v if isinstance(other, Accumulator) else other))

    __radd__ = __add__


def builtins_on_objects(y):
    a = Accumulator(y[0])
    b = getattr(a, "missing", 2.0) * y[1] + getattr(a, "v", 0.0)
    c = a.v ** 2 if hasattr(a, "v") and isinstance(a, Accumulator) else 0.0
    return b * c + sum([Accumulator(y[0]), Accumulator(y[1] ** 2), Accumulator(y[2])]).v ** 2


def array_attribute(y):
    a = Accumulator(y[0])
    a.arr[1] = y[1] * a.v
    a.arr += y ** 2
    a.arr[2] *= y[0]
    return np.sum(a.arr ** 2)


def list_of_objects(y):
    objs = [Accumulator(v) for v in y]
    objs.append(Accumulator(y[0] * y[1]))
    return sum(o.v ** 2 for o in objs) * objs[-1].v


class Stack:
    def __init__(self, items):
        self.items = list(items)

    def __len__(self):
        return len(self.items)

    def __getitem__(self, i):
        return self.items[i]

    def __iter__(self):
        return iter(self.items)

    def __eq__(self, other):
        return isinstance(other, Stack) and len(other) == len(self)


def container_protocol(y):
    s = Stack([y[0] * 2, y[1], y[2] ** 2])
    total = 0.0
    for v in s:
        total = total + v ** 2
    return total * s[1] + len(s) * s[0] + (1.0 if s == Stack([1, 2, 3]) else 0.0) * y[2]


class Scaler:
    def __init__(self, w):
        self.w = w

    def scaled(self, xs):
        for x in xs:
            yield x * self.w


def generator_method(y):
    return sum(Scaler(y[0]).scaled(y)) ** 2


OBJECTS = [makes_an_object, uses_a_global_object, uses_dataclasses, network, vectors, inheritance, mutating_methods,
           dynamic_attributes, with_the_model_as_an_argument, builtins_on_objects, array_attribute, list_of_objects,
           container_protocol, generator_method]

X = np.array([0.3, -0.7, 1.1])
#: (a generator method runs lazily, frontend/generator_eagerness.py: third order drains it before
#: sum, transform/plain_generators.py; it was refused)
THIRD_ORDER = OBJECTS


def generator_method_consumers(y):
    items = Scaler(y[1]).scaled
    return sorted(items(y))[0] * max(items(y)) + sum(list(items(y * y))) ** 2 + min(tuple(items(y)), key=abs)


@pytest.mark.slow  # 12 s
def test_third_order_drains_a_generator_method_for_builtins_that_read_it_whole():
    check_hessian(lambda y: np.sum(yb.grad(generator_method_consumers)(y) ** 2), X, rtol=1e-5, atol=1e-5)


def test_third_order_of_a_generator_method_read_in_part():
    """zip stops at its shortest argument: the generator is not drained (it runs two steps)."""
    def first_two(y):
        return sum(a * b for a, b in zip(Scaler(y[0]).scaled(y), [1.0, 2.0])) ** 2

    check_hessian(lambda y: np.sum(yb.grad(first_two)(y) ** 2), X, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("g", THIRD_ORDER, ids=lambda g: g.__name__)
def test_hessian_through_grad_of_objects(g):
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), X, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("g", THIRD_ORDER, ids=lambda g: g.__name__)
def test_hvp_through_grad_of_objects(g):
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    value, gradient, product = yb.hvp(F, (X,), (v,))
    np.testing.assert_allclose(value, F(X), rtol=1e-12)
    np.testing.assert_allclose(gradient[0], yb.grad(F)(X), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(product[0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("g", OBJECTS, ids=lambda g: g.__name__)
def test_plain_forward_program_runs_as_forward_mode(g):
    """The plain program run as it is (``jvp_call`` as forward mode of each call) is ``yb.jvp``."""
    v = np.array([1.0, -2.0, 0.5])
    value, tangent = plain_forward(g)(g, NoTangent, X, v)
    expected = yb.jvp(g, (X,), (v,))
    np.testing.assert_allclose(value, expected[0], rtol=1e-12)
    np.testing.assert_allclose(tangent, expected[1], rtol=1e-12)


@pytest.mark.parametrize("g", OBJECTS, ids=lambda g: g.__name__)
def test_every_mode_of_the_inner_function(g):
    check_all_modes(g, X)


class Bag:
    def __init__(self, **values):
        vars(self).update(values)


def instance_dict_updated(y):
    bag = Bag(p=y[2], q=y[0])
    return bag.q ** 2 * bag.p


def test_instance_dict_keeps_its_derivatives():
    """``vars(self).update(values)``: second order read the instance dict's tangent as a fresh zero
    (a class attribute's), so the Hessian was zero, silently; it is the tangent's fields. In third
    order the dict ``vars``' definition returned had a tangent of its own (a KeyError later)."""
    check_all_modes(instance_dict_updated, X)
    check_hessian(lambda y: np.sum(yb.grad(instance_dict_updated)(y) ** 2), X, rtol=1e-5, atol=1e-5)


class Point(typing.NamedTuple):
    x: float
    y: float
    weight: float = 2.0

    def moment(self):
        return self.weight * (self.x ** 2 + self.y * self.x)


def named_tuples(y):
    p = Point(y[0], y=y[1] * y[2])
    q = Point(p.x * 3.0, p.y, weight=p.x)
    return p.moment() + q.moment() * q.weight + Point(y[2], 1).x ** 3


def test_named_tuples():
    check_hessian(lambda y: np.sum(yb.grad(named_tuples)(y) ** 2), X, rtol=1e-5, atol=1e-5)
    check_all_modes(named_tuples, X)


def copies_an_object(y):
    a = Accumulator(y[0])
    b = copy.copy(a)
    b.v = b.v * y[1]
    return a.v * b.v


def test_a_copied_object_in_second_order_and_refused_in_third():
    """``copy.copy`` of an object in second order copies its tangent too (it was refused by name
    before), against differences; third order still refuses it, naming it and the line."""
    check_hessian(copies_an_object, X, rtol=1e-5, atol=1e-5)
    F = lambda y: np.sum(yb.grad(copies_an_object)(y) ** 2)  # noqa: E731
    with pytest.raises(yb.NestedDifferentiationError, match=r"copy.copy(.|\n)*test_third_order_objects.py\", line \d+"):
        yb.hessian(F)(X)


def classes_defined_inside(y):
    class Scale:
        factor = 2.0

        def __init__(self, k):
            self.k = k

        def apply(self, v):
            return v * self.k * self.factor

    @dataclasses.dataclass
    class Pair:
        a: float
        b: float = 1.0

    p = Pair(y[1])
    return np.sum(Scale(y[0]).apply(y) ** 2) * p.a * p.b


def test_classes_defined_inside_reading_none_of_its_variables():
    """A class defined in the function under ``yb.grad`` whose body and methods read none of its
    variables is followed like a module-level one (one reading them is refused:
    tests/test_third_order_closures.py)."""
    check_hessian(lambda y: np.sum(yb.grad(classes_defined_inside)(y) ** 2), X, rtol=1e-5, atol=1e-5)
    check_all_modes(classes_defined_inside, X)


def test_an_object_given_to_the_gradient_function():
    """``yb.grad(loss)(x, model)`` inside a Hessian: the gradient's pullback reaches the object's
    fields (a constant model, and one built from the variable)."""
    for model in (lambda x: MODEL, lambda x: Model(x * 2.0)):
        F = lambda x: np.sum(yb.grad(object_argument)(x, model(x)) ** 2)  # noqa: E731
        check_hessian(F, X, rtol=1e-5, atol=1e-6)


# -------------------------------------------------------------------- objects and structures as
# arguments of the gradient function itself (yb.grad(loss)(x, model)): any object may be passed
# beside the differentiated arguments; gradients are taken with respect to floats, float arrays
# and tuples, lists and dicts of them

class Predictor:
    def __init__(self, w, b):
        self.w, self.b = w, b

    def predict(self, v):
        return np.tanh(self.w * v) + self.b


class Tally:
    def __init__(self):
        self.total = 0.0


@dataclasses.dataclass
class Spot:
    u: float
    v: np.ndarray


def predictor_loss(x, model):
    return np.sum(model.predict(x) ** 2)


def accumulating_loss(x, acc):
    acc.total += np.sum(x ** 2)
    return acc.total * x[0]


def point_loss(p, x):
    return np.sum(np.cos(p.v * x) * p.u)


def dict_loss(x, d):
    return np.sum(np.sin(x * d["w"]) * d["s"] ** 2)


def mutating_list_loss(ws, x):
    ws[0] = ws[0] * x
    ws.append(np.sum(ws[0]) * ws[1])
    return ws[2] ** 2


def mutating_dict_loss(d, x):
    d["a"] *= x
    return np.sum(d["a"] ** 2) * d["b"]


ARGUMENT_CASES = {
    "an object with a method": lambda y: np.sum(yb.grad(predictor_loss)(y, Predictor(y * 2.0, y[1])) ** 2),
    "an object mutated": lambda y: np.sum(yb.grad(accumulating_loss)(y, Tally()) ** 2),
    "a dataclass beside argnums": lambda y: np.sum(yb.grad(point_loss, argnums=1)(Spot(y[0], y * 3), y) ** 2),
    # its gradient a tangent object, read as g.v (more: tests/test_object_gradients_nested.py)
    "a dataclass in argnums": lambda y: np.sum(yb.grad(point_loss)(Spot(y[0], y * 3), y).v ** 2),
    "a dict holding the argument": lambda y: np.sum(yb.grad(dict_loss)(y, {"w": y[1], "s": y}) ** 2),
    "a list in argnums, mutated": lambda y: np.sum(yb.grad(mutating_list_loss)([y ** 2, y[0]], y)[0] ** 2),
    "a dict in argnums, mutated": lambda y: np.sum(
        yb.grad(mutating_dict_loss, argnums=(0, 1))({"a": y * 1.5, "b": y[2]}, y)[1] ** 2),
}


@pytest.mark.parametrize("name", sorted(ARGUMENT_CASES))
def test_object_and_structure_arguments_of_the_gradient_function(name):
    F = ARGUMENT_CASES[name]
    x = np.array([0.3, -0.7, 1.1])
    hessian = check_hessian(F, x, rtol=1e-5, atol=1e-6)
    v = np.array([0.3, 1.0, -2.0])
    np.testing.assert_allclose(yb.hvp(F, (x,), (v,))[2][0], hessian @ v, rtol=1e-6, atol=1e-7)
