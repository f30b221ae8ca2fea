"""Derived-rule corpus, extended: classes (methods calling methods, super(), properties,
classmethods, staticmethods), dataclasses (mutable, frozen, nested), objects in containers,
cyclic object graphs, mutation of objects."""
import dataclasses
import math

import numpy as np

from yuebing.testing.cases import randn, randpos
from . import corpus_registry

CORPUS, case = corpus_registry()


# ---------------------------------------------------------------- classes

class Polynomial:
    def __init__(self, coeffs):
        self.coeffs = coeffs

    @classmethod
    def from_roots(cls, roots):
        coeffs = [1.0]
        for r in roots:
            new = [0.0] * (len(coeffs) + 1)
            for i, c in enumerate(coeffs):
                new[i] += c
                new[i + 1] -= c * r
            coeffs = new
        return cls(coeffs)

    @staticmethod
    def horner(coeffs, x):
        acc = 0.0
        for c in coeffs:
            acc = acc * x + c
        return acc

    def __call__(self, x):
        return Polynomial.horner(self.coeffs, x)

    def derivative(self):
        n = len(self.coeffs) - 1
        return Polynomial([c * (n - i) for i, c in enumerate(self.coeffs[:-1])])

    def newton_step(self, x):
        return x - self(x) / self.derivative()(x)


@case([0.3, 1.2, -0.8], 0.9)
def classmethod_staticmethod_call(roots, x):
    p = Polynomial.from_roots(roots)
    return p(x) + p.newton_step(x) + Polynomial.horner(p.coeffs, 0.5)


class Shape:
    def __init__(self, scale):
        self.scale = scale

    def area(self):
        raise NotImplementedError

    def describe(self):
        return self.area() * self.scale + self.perimeter()

    def perimeter(self):
        return 0.0


class Rectangle(Shape):
    def __init__(self, w, h, scale=1.0):
        super().__init__(scale)
        self.w = w
        self.h = h

    def area(self):
        return self.w * self.h

    def perimeter(self):
        return 2.0 * (self.w + self.h)


class Square(Rectangle):
    def __init__(self, side):
        super().__init__(side, side, scale=0.5)

    def area(self):
        return super().area() * 1.1

    @property
    def diagonal(self):
        return math.sqrt(2.0) * self.w

    @diagonal.setter
    def diagonal(self, d):
        self.w = d / math.sqrt(2.0)
        self.h = self.w


@case(0.7, 1.3)
def class_hierarchy_super_chain(w, h):
    shapes = [Rectangle(w, h, scale=h), Square(w)]
    total = 0.0
    for s in shapes:
        total += s.describe()
    return total


@case(0.9)
def property_getter_and_setter(side):
    sq = Square(side)
    sq.diagonal = sq.diagonal * 1.5
    return sq.area() + sq.diagonal


class Account:
    rate = 0.05

    def __init__(self, balance):
        self.balance = balance
        self.history = []

    def accrue(self):
        interest = self.balance * self.rate
        self.deposit(interest)
        return interest

    def deposit(self, amount):
        self.balance += amount
        self.history.append(self.balance)


@case(1.5)
def methods_calling_methods(b0):
    acct = Account(b0)
    earned = 0.0
    for _ in range(5):
        earned += acct.accrue()
    return earned * acct.balance + sum(acct.history)


@case(Account(2.0))
def object_argument_mutated(acct):
    acct.deposit(acct.balance * 0.3)
    acct.rate = 0.1 * acct.balance   # instance attribute shadows the class one
    acct.accrue()
    return acct.balance


class Vec2:
    def __init__(self, x, y):
        self.x = x
        self.y = y

    def __add__(self, other):
        return Vec2(self.x + other.x, self.y + other.y)

    def __mul__(self, k):
        return Vec2(self.x * k, self.y * k)

    __rmul__ = __mul__

    def __neg__(self):
        return Vec2(-self.x, -self.y)

    def __matmul__(self, other):
        return self.x * other.x + self.y * other.y

    def __getitem__(self, i):
        return self.x if i == 0 else self.y

    def __len__(self):
        return 2


@case(0.4, -1.1, 0.8)
def operator_overloading(a, b, c):
    u = Vec2(a, b)
    v = Vec2(c, a * b)
    w = 2.0 * u + (-v) * c
    return w @ u + w[1] * len(w)


class Counter:
    def __init__(self):
        self.total = 0.0
        self.count = 0

    def __iadd__(self, v):
        self.total = self.total + v
        self.count += 1
        return self

    def mean(self):
        return self.total / self.count


@case(randn(5))
def custom_iadd(x):
    c = Counter()
    for v in x:
        c += v * v
    return c.mean()


# ---------------------------------------------------------------- dataclasses

@dataclasses.dataclass
class Layer:
    w: np.ndarray
    b: np.ndarray

    def __call__(self, x):
        return np.tanh(self.w @ x + self.b)


@dataclasses.dataclass
class Network:
    layers: list
    scale: float = 1.0

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return self.scale * x


@case(Network([Layer(randn(3, 2), randn(3)), Layer(randn(1, 3), randn(1))], 0.8), randn(2))
def nested_dataclasses(net, x):
    return float(np.sum(net.forward(x) ** 2))


@dataclasses.dataclass(frozen=True)
class Gaussian:
    mu: float
    log_sigma: float

    @property
    def sigma(self):
        return math.exp(self.log_sigma)

    def logpdf(self, x):
        z = (x - self.mu) / self.sigma
        return -0.5 * z * z - self.log_sigma - 0.5 * math.log(2.0 * math.pi)


@dataclasses.dataclass(frozen=True)
class Mixture:
    a: Gaussian
    b: Gaussian
    weight: float


@case(Mixture(Gaussian(0.1, -0.2), Gaussian(1.2, 0.3), 0.35), [0.4, -0.3, 1.5])
def frozen_nested_dataclasses(mix, xs):
    total = 0.0
    for x in xs:
        pa = math.exp(mix.a.logpdf(x))
        pb = math.exp(mix.b.logpdf(x))
        total += math.log(mix.weight * pa + (1.0 - mix.weight) * pb)
    return total


@case(0.2, 0.5)
def frozen_dataclass_replace(mu, ls):
    g = Gaussian(mu, ls)
    h = dataclasses.replace(g, mu=g.mu * 2.0)
    return g.logpdf(0.3) + h.logpdf(-0.1) + h.sigma


@dataclasses.dataclass
class State:
    pos: np.ndarray
    vel: np.ndarray
    t: float = 0.0


@case(State(randn(3), randn(3)))
def mutable_dataclass_mutated(s):
    for _ in range(4):
        s.vel = s.vel - 0.1 * s.pos
        s.pos += 0.1 * s.vel      # in place on the array
        s.t += 0.1
    return np.sum(s.pos ** 2) + s.t * np.sum(s.vel)


# ---------------------------------------------------------------- objects in containers

class Spring:
    def __init__(self, k, rest):
        self.k = k
        self.rest = rest

    def energy(self, length):
        return 0.5 * self.k * (length - self.rest) ** 2


@case([Spring(1.2, 0.5), Spring(0.7, 1.1), Spring(2.0, 0.9)], randpos(3))
def objects_in_list(springs, lengths):
    return sum(s.energy(l) for s, l in zip(springs, lengths))


@case({"inner": Spring(1.5, 0.4), "outer": Spring(0.6, 1.0)}, 0.8)
def objects_in_dict_mutated(springs, x):
    for name in ("inner", "outer"):
        springs[name].k *= 1.0 + x
    springs["outer"].rest = springs["inner"].rest + x
    return springs["inner"].energy(x) + springs["outer"].energy(2.0 * x)


@case(0.7)
def same_object_in_two_containers(k):
    s = Spring(k, 0.3)
    lst = [s, s]
    d = {"a": s}
    d["a"].k = d["a"].k * 2.0
    return lst[0].energy(1.0) + lst[1].k


# ---------------------------------------------------------------- cyclic structures

class DNode:
    def __init__(self, value):
        self.value = value
        self.prev = None
        self.next = None


class DList:
    def __init__(self, values):
        self.head = None
        self.tail = None
        for v in values:
            self.push(v)

    def push(self, v):
        n = DNode(v)
        if self.tail is None:
            self.head = n
            self.tail = n
        else:
            n.prev = self.tail
            self.tail.next = n
            self.tail = n


@case(DList([0.5, -1.2, 0.8, 1.7]))
def doubly_linked_walk_both_ways(dl):
    s = 0.0
    for _ in range(2):
        node = dl.head
        while node is not None:
            s += node.value * (node.prev.value if node.prev is not None else 1.0)
            node = node.next
        node = dl.tail
        while node is not None:
            node.value = node.value * 0.9
            node = node.prev
    return s + dl.head.next.value


class GNode:
    def __init__(self, x):
        self.x = x
        self.neighbours = []
        self.owner = None


class Graph:
    def __init__(self, xs, edges):
        self.nodes = [GNode(x) for x in xs]
        for n in self.nodes:
            n.owner = self          # back reference to the graph
        for i, j in edges:
            self.nodes[i].neighbours.append(self.nodes[j])
            self.nodes[j].neighbours.append(self.nodes[i])


@case(Graph([0.3, -0.5, 1.1, 0.7], [(0, 1), (1, 2), (2, 3), (3, 0), (0, 2)]))
def graph_with_back_references(g):
    # a few sweeps of Laplacian smoothing, then an energy
    for _ in range(3):
        new = []
        for n in g.nodes:
            avg = sum(m.x for m in n.neighbours) / len(n.neighbours)
            new.append(0.5 * n.x + 0.5 * avg)
        for n, v in zip(g.nodes[0].owner.nodes, new):
            n.x = v
    e = 0.0
    for n in g.nodes:
        for m in n.neighbours:
            e += (n.x - m.x) ** 2
    return e + g.nodes[0].owner.nodes[1].x


class Ring:
    def __init__(self, arrays):
        self.nodes = []
        for a in arrays:
            node = {"a": a, "next": None}
            self.nodes.append(node)
        for i, node in enumerate(self.nodes):
            node["next"] = self.nodes[(i + 1) % len(self.nodes)]


@case(Ring([randn(2), randn(2), randn(2)]))
def ring_of_dicts_with_arrays(ring):
    node = ring.nodes[0]
    s = 0.0
    for _ in range(7):
        s += np.dot(node["a"], node["next"]["a"])
        node["a"] = node["a"] * 0.8
        node = node["next"]
    return s


class Tree:
    def __init__(self, value, children=()):
        self.value = value
        self.children = list(children)
        self.parent = None
        for c in self.children:
            c.parent = self

    def total(self):
        return self.value + sum(c.total() for c in self.children)

    def depth(self):
        return 0 if self.parent is None else 1 + self.parent.depth()

    def weighted(self):
        return self.value * (self.depth() + 1) + sum(c.weighted() for c in self.children)


@case(Tree(0.5, [Tree(1.2, [Tree(-0.3), Tree(0.9)]), Tree(0.4)]))
def tree_with_parent_pointers(root):
    root.children[0].children[1].value *= root.value
    return root.total() * root.weighted()


# ---------------------------------------------------------------- object state

class Slotted2:
    __slots__ = ("w", "scale")

    def __init__(self, w, scale):
        self.w = w
        self.scale = scale

    def apply(self, x):
        return self.scale * np.dot(self.w, x)


@case(randn(3), 0.6)
def slots_object_built_inside(w, s):
    m = Slotted2(w, s)
    m.scale *= 2.0
    return m.apply(w) + m.apply(np.ones(3))


class Memo:
    def __init__(self):
        self.cache = {}

    def get(self, key, fn, x):
        if key not in self.cache:
            self.cache[key] = fn(x)
        return self.cache[key]


@case(0.7)
def object_with_cache_dict(x):
    m = Memo()
    a = m.get("sin", math.sin, x)
    b = m.get("sin", math.sin, 100.0)   # cached: the second input is ignored
    c = m.get("sq", lambda v: v * v, x)
    return a * b + c


class Bound:
    def __init__(self, k):
        self.k = k

    def f(self, x):
        return self.k * x * x


@case(0.8, 1.3)
def bound_method_as_value(k, x):
    obj = Bound(k)
    meth = obj.f
    fs = [meth, Bound(x).f]
    return sum(f(x) for f in fs) + getattr(obj, "k") * x


class Grid:
    def __init__(self, values):
        self.values = values                 # (n, m) array
        self.interior = values[1:-1, 1:-1]   # a view held as another attribute

    def relax(self):
        v = self.values
        self.interior[...] = 0.25 * (v[:-2, 1:-1] + v[2:, 1:-1] + v[1:-1, :-2] + v[1:-1, 2:])


@case(randn(4, 4))
def object_attribute_is_view_of_another(values):
    g = Grid(values)
    for _ in range(3):
        g.relax()
    return np.sum(g.values ** 2)


@case(Grid(randn(4, 5)))
def object_argument_with_view_attribute(g):
    g.relax()
    g.interior *= 2.0
    return np.sum(g.values) + np.sum(g.interior ** 2)
