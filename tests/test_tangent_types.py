"""Every row of DESIGN.md §3's table: the tangent type of each primal type, and its laws."""
import collections
import dataclasses
import functools
import random
import types

import numpy as np
import pytest

import yuebing.tangents as T
from yuebing.tangents.types import SetTangent
from yuebing.testing import check_tangent_interface, validate_tangent


@dataclasses.dataclass(frozen=True)
class Frozen:
    x: float
    n: int
    name: str


@dataclasses.dataclass(frozen=True)
class FrozenInts:
    n: int
    m: int


class Plain:
    def __init__(self):
        self.x = 1.5
        self.v = np.arange(3.0)
        self.n = 4

    def energy(self, k):
        return k * self.x


class Slots:
    __slots__ = ("a", "b", "__private")

    def __init__(self):
        self.a = 2.0
        self.b = "label"
        self.__private = np.ones(2)


class SlotsAndDict(Slots):
    def __init__(self):
        super().__init__()
        self.extra = 3.0


Point = collections.namedtuple("Point", "x y")

CASES = [
    (1.5, float),
    (np.float64(2.0), float),
    (np.float32(2.0), float),
    (1 + 2j, complex),
    (np.complex64(1 - 1j), complex),
    (3, type(T.NoTangent)),
    (True, type(T.NoTangent)),
    ("s", type(T.NoTangent)),
    (b"b", type(T.NoTangent)),
    (None, type(T.NoTangent)),
    (int, type(T.NoTangent)),
    (np, type(T.NoTangent)),
    ({1.0, 2.0}, SetTangent),  # element -> tangent (docs/tangents.md)
    (frozenset({1.0}), SetTangent),
    ({1, "a"}, type(T.NoTangent)),  # a set of labels carries none
    (random.Random(0), type(T.NoTangent)),
    (np.random.default_rng(0), type(T.NoTangent)),
    (len, type(T.NoTangent)),
    (np.sin, type(T.NoTangent)),
    (lambda v: v, type(T.NoTangent)),
    (np.ones((2, 3)), np.ndarray),
    (np.ones(3, np.float32), np.ndarray),
    (np.ones(3, np.complex128), np.ndarray),
    (np.array(2.0), np.ndarray),
    (np.arange(3), type(T.NoTangent)),
    (np.array([True]), type(T.NoTangent)),
    ((1.0, "a"), tuple),
    ((1, "a"), type(T.NoTangent)),
    (Point(1.0, 2), Point),
    ([1, 2], list),
    ([1.0, np.ones(2)], list),
    ({"a": 1.0, "b": 2}, dict),
    (collections.OrderedDict(a=1.0), dict),
    (Frozen(1.0, 2, "f"), T.Tangent),
    (FrozenInts(1, 2), type(T.NoTangent)),
    (Plain(), T.MutableTangent),
    (Slots(), T.MutableTangent),
    (SlotsAndDict(), T.MutableTangent),
    (types.SimpleNamespace(a=1.0), T.MutableTangent),
    (functools.partial(np.add, 1.0), T.Tangent),
    (Plain().energy, T.Tangent),
    ([].append, T.Tangent),
    (np.array([1.0, "a", np.ones(2)], dtype=object), np.ndarray),  # the elements' tangents (object_arrays.py)
    (np.array([[None, 1], ["b", 2]], dtype=object), type(T.NoTangent)),  # labels carry none
]


@pytest.mark.parametrize("primal, expected", CASES, ids=lambda v: type(v).__name__)
def test_tangent_type_and_laws(primal, expected):
    assert T.tangent_type(primal) is expected
    check_tangent_interface(primal)


def closure_over(value):
    def inner():
        return value

    return inner


def test_closure_tangent_is_tangent_of_cells():
    w = np.ones(3)
    f = closure_over(w)
    t = T.zero_tangent(f)
    assert isinstance(t, T.Tangent)
    assert isinstance(t.value, T.MutableTangent)
    assert t.value.cell_contents.shape == (3,)
    check_tangent_interface(f)


def test_two_closures_sharing_a_cell_share_its_tangent():
    def make():
        total = 1.0

        def read():
            return total

        def bump():
            nonlocal total
            total += 1.0

        return read, bump

    read, bump = make()
    t = T.zero_tangent((read, bump))
    assert t[0].total is t[1].total
    check_tangent_interface((read, bump))


def test_closure_over_only_ints_has_no_tangent():
    assert T.tangent_type(closure_over(3)) is type(T.NoTangent)


def test_bound_method_tangent_has_self():
    p = Plain()
    t = T.zero_tangent([p, p.energy])
    assert t[1].__self__ is t[0]


def test_partial_tangent_fields():
    p = functools.partial(np.add, 1.0, out=np.ones(2))
    t = T.randn_tangent(np.random.default_rng(1), p)
    assert isinstance(t.args[0], float)
    assert t.keywords["out"].shape == (2,)
    assert t.func is T.NoTangent


def test_slots_fields_include_mangled_private_and_dict():
    s = SlotsAndDict()
    t = T.zero_tangent(s)
    assert set(t.fields) == {"a", "b", "_Slots__private", "extra"}
    assert t.b is T.NoTangent and t.a == 0.0 and t.extra == 0.0


def test_unset_slot_is_absent():
    s = Slots.__new__(Slots)
    s.a = 1.0
    assert set(T.zero_tangent(s).fields) == {"a"}
    check_tangent_interface(s)


def test_frozen_dataclass_with_non_float_field():
    f = Frozen(2.0, 3, "name")
    t = T.randn_tangent(np.random.default_rng(0), f)
    assert t.n is T.NoTangent and t.name is T.NoTangent and isinstance(t.x, float)
    moved = T.add_to_primal(f, t)
    assert isinstance(moved, Frozen) and moved.n == 3 and moved.x == pytest.approx(2.0 + t.x)
    with pytest.raises(AttributeError, match="immutable"):
        t.x = 1.0


def test_namedtuple_tangent_keeps_field_access():
    t = T.randn_tangent(np.random.default_rng(0), Point(1.0, np.ones(2)))
    assert isinstance(t, Point) and t.y.shape == (2,)


def test_dict_subclass_rebuilds_its_type():
    d = collections.defaultdict(float, a=1.0)
    moved = T.add_to_primal(d, {"a": 2.0})
    assert type(moved) is collections.defaultdict and moved.default_factory is float and moved["a"] == 3.0


def test_float32_array_tangent_keeps_dtype():
    t = T.randn_tangent(np.random.default_rng(0), np.ones(4, np.float32))
    assert t.dtype == np.float32


def test_np_scalar_add_to_primal_keeps_type():
    assert type(T.add_to_primal(np.float32(1.0), 0.5)) is np.float32


def test_object_array_tangent_holds_the_elements_tangents():
    t = T.zero_tangent(np.array([1.0, "a", np.ones(2)], dtype=object))
    assert t.dtype == object and t[0] == 0.0 and t[1] is T.NoTangent and np.array_equal(t[2], np.zeros(2))


def test_unknown_type_is_rejected_with_advice():
    class Opaque:
        __slots__ = ()

    # builtins-defined opaque C objects have no tangent type
    with pytest.raises(TypeError, match="register_nondifferentiable_type"):
        T.zero_tangent(iter([1.0]))


def test_register_nondifferentiable_type():
    @T.register_nondifferentiable_type
    class Handle:
        def __init__(self):
            self.weight = 1.0

    assert T.zero_tangent([Handle()]) == [T.NoTangent]


def test_repr_is_readable():
    p = Plain()
    t = T.zero_tangent(p)
    text = repr(t)
    assert text.startswith("MutableTangent[Plain](") and "x=0.0" in text and "n=" not in text
    assert "x=1.0" in repr(T.Tangent(Frozen, {"x": 1.0, "n": T.NoTangent}))


def test_repr_of_cyclic_tangent_terminates():
    p = Plain()
    p.me = p
    assert "..." in repr(T.zero_tangent(p))


def test_attribute_errors_name_the_fields():
    t = T.zero_tangent(Plain())
    with pytest.raises(AttributeError, match="has no field 'nope'"):
        t.nope


def test_validate_tangent_rejects_wrong_shapes_with_path():
    x = {"w": [np.ones(3), 1.0]}
    with pytest.raises(TypeError, match=r"x\['w'\]\[0\].*shape \(3,\)"):
        validate_tangent(x, {"w": [np.ones(2), 1.0]})
    with pytest.raises(TypeError, match=r"x\['w'\]\[1\].*float"):
        validate_tangent(x, {"w": [np.ones(3), "no"]})


def test_add_to_primal_reports_mismatch_path():
    with pytest.raises(TypeError, match=r"x\[1\]"):
        T.add_to_primal([1.0, np.ones(2)], [1.0, np.ones(3)])
