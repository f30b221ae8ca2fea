"""Derived-rule corpus: classes, methods, properties, dataclasses, cycles."""
import dataclasses

import numpy as np

from yuebing.testing.cases import randn
from . import corpus_registry

CORPUS, case = corpus_registry()


class Particle:
    def __init__(self, x, v):
        self.x = x
        self.v = v

    def step(self, dt):
        self.x = self.x + dt * self.v
        self.v = self.v - dt * self.x

    def energy(self):
        return 0.5 * (self.x * self.x + self.v * self.v)


class HeavyParticle(Particle):
    def __init__(self, x, v, m):
        super().__init__(x, v)
        self.m = m

    def energy(self):
        return self.m * super().energy()

    @property
    def momentum(self):
        return self.m * self.v


@dataclasses.dataclass
class Params:
    w: np.ndarray
    b: float


@dataclasses.dataclass(frozen=True)
class FrozenParams:
    w: np.ndarray
    b: float


class Node:
    def __init__(self, value):
        self.value = value
        self.next = self
        self.prev = self


def make_ring(values):
    nodes = [Node(v) for v in values]
    n = len(nodes)
    for i in range(n):
        nodes[i].next = nodes[(i + 1) % n]
        nodes[i].prev = nodes[(i - 1) % n]
    return nodes[0]


class Slotted:
    __slots__ = ("a", "b")

    def __init__(self, a, b):
        self.a = a
        self.b = b


@case(Particle(0.5, 1.5))
def particle_method_mutates_self(p):
    for _ in range(5):
        p.step(0.1)
    return p.energy()


@case(0.5, 1.5)
def particle_constructed_inside(x, v):
    p = Particle(x, v)
    p.step(0.2)
    return p.energy()


@case(0.5, 1.5, 2.0)
def subclass_super_and_property(x, v, m):
    p = HeavyParticle(x, v, m)
    p.step(0.1)
    return p.energy() + p.momentum


@case(Params(randn(3), 0.5))
def dataclass_argument(p):
    return np.sum(p.w * p.w) * p.b


@case(randn(3), 0.5)
def dataclass_built_inside(w, b):
    p = Params(w, b)
    q = FrozenParams(w * 2.0, b)
    return np.sum(p.w * q.w) + p.b * q.b


@case(make_ring([0.5, 1.5, -1.0]))
def ring_walked_twice(head):
    s = 0.0
    node = head
    for _ in range(6):
        s += node.value * node.next.value
        node = node.next
    return s


@case(Slotted(0.5, randn(2)))
def slots_object(o):
    o.a = o.a * 2.0
    return o.a * np.sum(o.b)


@case(1.5)
def object_cycle_built_inside(x):
    a = Node(x)
    b = Node(x * 2.0)
    a.next = b
    b.next = a
    return a.next.next.value * b.value
