"""More everyday Python constructs for issue 13's construct suite (``tests/test_constructs.py``
collects this module beside ``constructs.py``): each takes a float and returns a float. These were
refused before: sets of frozensets, frozen objects, instances and tasks; a defaultdict's factory
reached through a copy or an attribute; ``g.__wrapped__``; ``setattr`` on a module;
``asyncio.Future()`` and ``asyncio.Task()`` made directly; a singledispatchmethod of an instance
holding floats, and a singledispatch implementation registered in the function."""
# ruff: noqa
import asyncio
import collections
import copy
import dataclasses
import functools

from tests.corpus import module_state
from tests.test_asyncio_made_directly import future_set_by_a_callback as c_future_made_directly
from tests.test_single_dispatch import Spring


@dataclasses.dataclass(frozen=True)
class _Point:
    v: float


class _Node:
    def __init__(self, v):
        self.v = v


def c_set_of_frozensets(x):
    s = {frozenset([x, 2.0]), frozenset([3.0 * x])}
    return sum(sum(e) * x for e in s)


def c_set_of_frozen_dataclasses(x):
    s = {_Point(x), _Point(2.0 * x)}
    s.add(_Point(x * x))
    return sum(p.v ** 2 for p in s)


def c_set_of_instances(x):
    a = _Node(x)
    s = {a, _Node(1.5)}
    a.v = a.v * x  # (seen through the set: the element is the object)
    return sum(n.v * x for n in set(s))


async def _square(v):
    await asyncio.sleep(0)
    return v * v


def c_set_of_waited_tasks(x):
    async def main(v):
        done, _ = await asyncio.wait([asyncio.create_task(_square(v)), asyncio.create_task(_square(2.0 * v))])
        return sum(t.result() for t in set(done)) * v

    return asyncio.run(main(x))


def c_defaultdict_copied(x):
    d = collections.defaultdict(lambda: x * x)
    d["a"] = 1.0
    return d.copy()["b"] * x + copy.copy(d)["c"]


def c_defaultdict_factory_attribute(x):
    d = collections.defaultdict(lambda: x * 3.0)
    return d.default_factory() * x


def _traced(func):
    @functools.wraps(func)
    def wrapper(v):
        return func(v) * 2.0
    return wrapper


def c_wrapped_read_back(x):
    @_traced
    def g(v):
        return v * x
    return g.__wrapped__(3.0) * x + g(x)


def c_setattr_on_a_module(x):
    saved = module_state.SCALE
    setattr(module_state, "SCALE", x * x)
    y = module_state.scaled(x)
    module_state.SCALE = saved
    return y


def c_task_made_directly(x):
    async def main(v):
        return await asyncio.Task(_square(v)) * v

    return asyncio.run(main(x))


def c_singledispatchmethod_of_an_instance_with_floats(x):
    return Spring(x * 2.0).stretch(x)


def c_singledispatch_registered_inside(x):
    @functools.singledispatch
    def e(obj):
        raise TypeError

    @e.register(float)
    def _(obj):
        return obj * x

    return e(x) + e(2.0)
