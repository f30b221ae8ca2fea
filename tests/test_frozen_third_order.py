"""Third derivatives through frozen dataclasses made under the inner ``yb.grad`` (issue 13/16).

Third order differentiates the plain forward program of the function under ``yb.grad``, where
``plain_objects._construct`` built a frozen dataclass like a mutable object under construction:
its fdata stayed a ``MutableTangent``, and the first rule storing it (``[Config(x0), Config(x1)]``,
``_mklist_rrule``'s slot) raised an unnamed ``StructureError: cannot join fdata MutableTangent
[Config] with rdata Tangent[Config]``. The construction now ends frozen (``transform/
third_order_frozen.py``); so does a frozen dataclass's with an ``__init__`` of its own in reverse
mode, forward mode and second order, which had the same fault (``transform/frozen_objects.py``).
Each function is checked by ``check_third_order`` (Hessian-vector
products of a function taking a gradient, against central differences of its gradient, which is
reverse over reverse) and in every first- and second-order mode against differences
(``tests/modes.py``); the containers of ``test_frozen_in_containers`` in third order too.
"""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.third_order import check_third_order

from tests.modes import central, check_every_mode
from tests.test_frozen_in_containers import CASES, X


@dataclasses.dataclass(frozen=True)
class Config:
    a: float


@dataclasses.dataclass(frozen=True)
class Derived:
    a: float
    b: float = 2.0
    c: float = dataclasses.field(init=False)

    def __post_init__(self):
        object.__setattr__(self, "c", self.a * self.b)


@dataclasses.dataclass(frozen=True)
class OwnInit:
    """An ``__init__`` of its own: every mode left its tangent mutable (frozen_objects.py)."""
    a: float

    def __init__(self, v):
        object.__setattr__(self, "a", v * 2.0)


@dataclasses.dataclass(frozen=True)
class Labelled:
    n: int
    name: str


@dataclasses.dataclass(frozen=True)
class Particle:
    a: float
    b: float

    def energy(self):
        return self.a ** 2 * self.b


class Box:
    def __init__(self, c):
        self.c = c


def brief_example(x):
    cs = [Config(x[0]), Config(x[1])]
    return cs[0].a ** 3 * cs[1].a + x[2] * x[3]


def appended_in_a_loop(x):
    cs = []
    for v in x:
        cs.append(Config(v))
    return cs[0].a ** 3 * cs[1].a + cs[2].a * cs[3].a ** 2


def comprehension(x):
    cs = [Config(v) for v in x]
    return sum(c.a ** 3 for c in cs) * cs[0].a


def post_init(x):
    cs = [Derived(x[0], x[1]), Derived(x[2])]
    return cs[0].c ** 2 * cs[1].c + cs[0].a * x[3]


def own_init(x):
    cs = [OwnInit(x[0]), OwnInit(x[1])]
    return cs[0].a ** 3 * cs[1].a + x[2] * x[3]


def without_floats(x):
    cs = [Labelled(1, "p"), (Labelled(2, "q"), x[0])]
    return cs[1][1] ** 3 * cs[0].n + x[1] * x[2] ** 2 * x[3]


def methods(x):
    cs = [Particle(x[0], x[1]), Particle(x[2], x[3])]
    return sum(c.energy() for c in cs) * cs[0].b


def attribute_of_a_mutable_object(x):
    box = Box(Particle(x[0], x[1]))
    items = [box.c]
    box.c = Particle(items[0].a * x[2], x[3])
    return box.c.energy() * items[0].a


def _keep(c, out):
    out.append(c)
    return c.a


def passed_to_a_helper(x):
    out = []
    s = _keep(Particle(x[0], x[1]), out) + _keep(Particle(x[2], x[3]), out)
    return s * out[0].energy() * out[1].b


def array_fields(x):
    cs = [Particle(x[:2] * 1.0, x[2])]
    return np.sum(cs[0].energy() ** 2) * x[3]


MADE_HERE = [brief_example, appended_in_a_loop, comprehension, post_init, own_init, without_floats, methods,
             attribute_of_a_mutable_object, passed_to_a_helper, array_fields]
#: batched forward mode (``jacobian(mode="fwd")``) refuses ``object.__setattr__`` in ``__post_init__``
#: or ``__init__`` by name (``test_frozen_in_containers``); the other modes are checked below
WRITTEN_BY_SETATTR = (post_init, own_init)
FIRST_ORDER_EVERY_MODE = [f for f in MADE_HERE if f not in WRITTEN_BY_SETATTR]


@pytest.mark.parametrize("f", MADE_HERE, ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X.copy())


@pytest.mark.parametrize("f", FIRST_ORDER_EVERY_MODE, ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


@pytest.mark.parametrize("f", WRITTEN_BY_SETATTR, ids=lambda f: f.__name__)
def test_reverse_forward_and_second_order(f):
    """Grad, jvp and hvp against differences (a frozen dataclass with an ``__init__`` of its own
    stored in a list raised "cannot join fdata MutableTangent[OwnInit] with rdata
    Tangent[OwnInit]" in reverse mode and second order)."""
    v = np.array([0.4, -0.2, 0.9, 0.3])
    expected = central(f, X, 1e-6)
    np.testing.assert_allclose(yb.grad(f)(X.copy()), expected, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(yb.jvp(f, (X.copy(),), (v,))[1], expected @ v, rtol=1e-5, atol=1e-6)
    hessian = central(lambda u: yb.grad(f)(u.copy()), X, 1e-5)
    np.testing.assert_allclose(yb.hvp(f, (X.copy(),), (v,))[2][0], hessian @ v, rtol=1e-4, atol=1e-5)


def test_jacobian_of_the_hessian_against_differences():
    """Third derivatives as the brief asked for them: ``yb.jacobian(yb.hessian(f))``, in both
    modes, against central differences of ``yb.hessian``."""
    expected = central(lambda u: yb.hessian(brief_example)(u.copy()), X, 1e-5)
    for mode in ("rev", "fwd"):
        np.testing.assert_allclose(yb.jacobian(yb.hessian(brief_example), mode=mode)(X.copy()), expected,
                                   rtol=1e-4, atol=1e-5, err_msg=mode)


#: what third order refuses by name in ``test_frozen_in_containers``' functions (selection rules;
#: ``_in_dict``'s walk of ``d.values()`` works since dict views have a tangent)
REFUSED = {"_deep_copied": "copy.deepcopy", "_frozenset_in_list": "frozenset"}  # (list.index: followed)


@pytest.mark.parametrize("f", [f for f in CASES if f.__name__ not in REFUSED], ids=lambda f: f.__name__.strip("_"))
def test_frozen_in_containers_in_third_order(f):
    check_third_order(f, X.copy())


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_what_third_order_refuses_is_named(name):
    f = next(f for f in CASES if f.__name__ == name)
    with pytest.raises((yb.NestedDifferentiationError, yb.tangents.StructureError), match=REFUSED[name]):
        check_third_order(f, X.copy())
