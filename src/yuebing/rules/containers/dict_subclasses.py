"""Rules for the dict subclasses of ``collections``: making a ``defaultdict``, ``OrderedDict`` or
``Counter``, a missing key's default, and ``OrderedDict.move_to_end`` and ``popitem(last=)``.

Their tangent is a dict with the same keys, as for any dict (``tangents/kinds.py``): the methods
they share with ``dict`` run ``dict``'s rules. Each is made as an empty instance (a primitive with
no derivative: ``_empty``) filled by ``update`` (``dict.update``'s rules; ``Counter.update`` is
Python, differentiated from its source), so every mode follows from rules that exist.

A ``defaultdict``'s ``default_factory`` is data the dict's tangent has no place for: a factory
capturing values with derivatives (``defaultdict(lambda: x)``) keeps its tangent beside the dict
for the pass (``outside_state.register``, as exception data does: ``_Factory``), where a missing
key's read finds it (``default_factory_of``), and the rdata its calls gather goes back to the
constructor's argument. It is kept by the factory too, so a copy made in the pass (``d.copy()``,
``copy.copy(d)``, ``defaultdict(d.default_factory, d)``) finds it, and so does ``d.default_factory``
read as an attribute (``getattr``'s rules ask here). The factory of a defaultdict made outside
the pass (passed in, a global) captures constants of the differentiation, as finite differences of
the arguments see them (no dict's tangent has a place for it): it is called as a closure made
outside is, its defaults carrying no derivative. A missing key read from a dict subclass whose ``__missing__``
is Python (``Counter``, a user's class) runs that method differentiated (``missing_value``); a
``defaultdict``'s inserts the factory's value (``indexing/items.py``).
"""
from __future__ import annotations

import collections
from typing import Any

from ... import tangents as T
from ...tangents import NoFData, NoRData, NoTangent
from ...tangents import kinds as K
from .. import outside_state
from ..batched import _ALWAYS
from ..cases import Case, randn
from ..core import CoDual, Dual, frule_for, primal, rrule_for
from ..indexing.items import default_factory_of
from ..second_order import _register as special, defined_as, defined_by
from ..util import output, sum_rdata, tangent, zero_fdata
from .common import _element_fdata, _reinsert, _with_rdata

_TYPES = (collections.defaultdict, collections.OrderedDict, collections.Counter)


_KIND = "default_factory"  # (outside_state's entries for factories, apart from other registrations)
_BY_FUNCTION = "default_factory function"  # (the same entries, by the factory itself: a copy's dict holds it)
_ROLE_TANGENT = "tangent"


def _carries(factory: Any) -> bool:
    """Whether a ``default_factory`` may carry derivatives (a closure over the function's values)."""
    return factory is not None and K.primal_kind(factory) is not K.NONDIFF


class _Factory:
    """A factory's fdata (tangent, fdata tangent) kept beside its defaultdict for the pass, and the
    rdata its reads gather for the constructor's pullback (handed once)."""

    __slots__ = ("data", "rdata")

    def __init__(self, data: Any) -> None:
        self.data, self.rdata = data, NoRData

    def gather(self, r: Any) -> None:
        self.rdata = sum_rdata(self.rdata, r)

    def take(self) -> Any:
        r, self.rdata = self.rdata, NoRData
        return r


T.register_nondifferentiable_type(_Factory)


def _keep(role: str, made: Any, factory: Any, data: Any) -> _Factory | None:
    """Register ``data`` for ``made``'s factory in ``role`` (None: nothing to follow, or no pass)."""
    if not _carries(factory) or not outside_state.active():
        return None
    kept = _Factory(data)
    outside_state.register(role, made, kept, _KIND)
    outside_state.register(role, factory, kept, _BY_FUNCTION)
    return kept


def _kept(role: str, d: Any, factory: Any) -> _Factory | None:
    """What ``_keep`` registered for ``d``, or for its factory (a copy of a defaultdict made in the
    pass, ``d.copy()``, ``copy.copy(d)``, ``defaultdict(d.default_factory)``, holds the same function,
    whose tangent is the one kept); None for a defaultdict made outside the pass, whose factory's
    captured values are constants (one an outer pass registered is refused by ``registered``)."""
    if not _carries(factory):
        return None
    return outside_state.registered(role, d, _KIND) or outside_state.registered(role, factory, _BY_FUNCTION)


def _empty(cls: type, factory: Any = None) -> Any:
    """A new empty ``cls`` (``factory``: a defaultdict's ``default_factory``)."""
    if cls is collections.defaultdict:
        return collections.defaultdict(factory)
    return cls()


@rrule_for(_empty)
def _empty_rrule(cls, factory=None):
    made = _empty(primal(cls), primal(factory))
    kept = _keep("fdata", made, primal(factory), factory.fdata if isinstance(factory, CoDual) else NoFData)

    def pullback(dy):
        if factory is None:
            return NoRData, NoRData
        return NoRData, NoRData, NoRData if kept is None else kept.take()

    return CoDual(made, {}), pullback


@frule_for(_empty)
def _empty_frule(cls, factory=None):
    made = _empty(primal(cls), primal(factory))
    _keep(_ROLE_TANGENT, made, primal(factory), tangent(factory) if factory is not None else NoTangent)
    return Dual(made, {})


def _empty_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: the factory's fdata, tangent and fdata tangent kept; the dual pullback hands
    back what the reads gathered in both reverse roles."""
    factory4 = args[1] if len(args) > 1 else None
    factory = None if factory4 is None else factory4[0]
    made = _empty(args[0][0], factory)
    out = (made, {}, {}, zero_fdata(made))
    nothing = (NoRData,) * (len(args) + 1)
    fdata = _keep("fdata", made, factory, NoFData if factory4 is None else factory4[1])
    if fdata is None:
        return out, lambda dy, dy_d: (nothing, nothing)
    fdata_tangent = _keep("fdata_tangent", made, factory, factory4[3])
    _keep(_ROLE_TANGENT, made, factory, factory4[2])

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return (NoRData, NoRData, fdata.take()), (NoRData, NoRData, fdata_tangent.take())

    return out, pullback


@rrule_for(default_factory_of)
def _factory_rrule(d):
    x = primal(d)
    factory = default_factory_of(x)
    kept = _kept("fdata", x, factory)
    if kept is None:
        return CoDual(factory, NoFData), lambda dy: (NoRData, NoRData)

    def pullback(dy):
        kept.gather(dy)
        return NoRData, NoRData

    return CoDual(factory, kept.data), pullback


@frule_for(default_factory_of)
def _factory_frule(d):
    x = primal(d)
    factory = default_factory_of(x)
    kept = _kept(_ROLE_TANGENT, x, factory)
    return Dual(factory, NoTangent if kept is None else kept.data)


def _factory_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    x = args[0][0]
    factory = default_factory_of(x)
    nothing = ((NoRData, NoRData), (NoRData, NoRData))
    fdata = _kept("fdata", x, factory)
    if fdata is None:
        return (factory, NoFData, NoTangent, NoFData), lambda dy, dy_d: nothing
    fdata_tangent, kept_tangent = _kept("fdata_tangent", x, factory), _kept(_ROLE_TANGENT, x, factory)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        fdata.gather(dy)
        fdata_tangent.gather(dy_d)
        return nothing

    return (factory, fdata.data, kept_tangent.data, fdata_tangent.data), pullback


def factory_read_rrule(d: CoDual) -> tuple:
    """``d.default_factory`` read as an attribute (``getattr``'s rule asks here): the factory with
    the fdata kept for it, and a pullback gathering its rdata for the constructor."""
    out, pullback = _factory_rrule(d)
    return out, lambda dy: pullback(dy)[1]


def factory_read_frule(d: Dual) -> Dual:
    """Forward mode of ``d.default_factory``: the factory with the tangent kept for it."""
    return _factory_frule(d)


def factory_read_dual(d4: tuple) -> tuple:
    """Second order of ``d.default_factory`` (``transform/lifting_objects.py`` asks here)."""
    return _factory_dual((default_factory_of, NoFData, NoTangent, NoFData), (d4,), {})


special((_empty,), _empty_dual)
special((default_factory_of,), _factory_dual)
# batched forward mode: they move the factory's (batched) tangent in and out of the registry
_ALWAYS.update((_empty, default_factory_of))


def _defaultdict(default_factory=None, /, *args, **kwargs):
    made = _empty(collections.defaultdict, default_factory)
    if args or kwargs:
        made.update(*args, **kwargs)
    return made


def _ordered_dict(*args, **kwargs):
    made = _empty(collections.OrderedDict)
    if args or kwargs:
        made.update(*args, **kwargs)
    return made


def _counter(iterable=None, /, **kwargs):
    made = _empty(collections.Counter)
    if iterable is not None or kwargs:
        made.update(iterable, **kwargs)
    return made


def _count_elements(mapping, iterable):
    """``Counter.update``'s counting loop (C in CPython, this Python in its fallback): a count
    is an int, so a Counter of labels carries no derivative, and one holding float counts keeps
    theirs (``c[k] + 1``)."""
    for element in iterable:
        mapping[element] = mapping.get(element, 0) + 1


defined_as(collections.defaultdict, _defaultdict)
defined_as(collections.OrderedDict, _ordered_dict)
defined_as(collections.Counter, _counter)
defined_as(collections._count_elements, _count_elements)


# ------------------------------------------------------------------------------------------------
# OrderedDict: move_to_end, popitem(last=)
# ------------------------------------------------------------------------------------------------


def _move_tangent(t: Any, key: Any, last: bool) -> None:
    """Move ``key`` in tangent dict ``t`` as ``move_to_end`` moved it in the primal: a tangent
    keeps its primal's key order (values are paired with keys in it)."""
    if not isinstance(t, dict) or key not in t:
        return
    _reinsert(t, key, t.pop(key), None if last else 0)


@rrule_for((collections.OrderedDict, "move_to_end"))
def _move_to_end(self, key, last=True):
    d, fd = self.primal, self.fdata
    k = primal(key)
    position = list(d).index(k)  # KeyError for a missing key, as Python
    d.move_to_end(k, primal(last))
    _move_tangent(fd, k, primal(last))

    def pullback(dy):
        _reinsert(d, k, d.pop(k), position)
        if isinstance(fd, dict) and k in fd:
            _reinsert(fd, k, fd.pop(k), position)
        return (NoRData,) * (4 if last is not True else 3)

    return output(None), pullback


@frule_for((collections.OrderedDict, "move_to_end"))
def _move_to_end_frule(self, key, last=True):
    k = primal(key)
    self.primal.move_to_end(k, primal(last))
    _move_tangent(self.tangent, k, primal(last))
    return Dual(None, NoTangent)


@rrule_for((collections.OrderedDict, "popitem"))
def _ordered_popitem(self, last=True):
    d, fd = self.primal, self.fdata
    k, v = d.popitem(last=primal(last))
    position = None if last is True or primal(last) else 0  # KeyError on an empty dict, as Python
    slot = fd.pop(k) if isinstance(fd, dict) else NoTangent
    v_fd = _element_fdata(slot)

    def pullback(dy):
        _reinsert(d, k, v, position)
        if isinstance(fd, dict):
            _reinsert(fd, k, _with_rdata(slot, v, NoRData if dy is NoRData else dy[1]), position)
        return (NoRData,) * (3 if last is not True else 2)

    return CoDual((k, v), NoFData if v_fd is NoFData else (NoFData, v_fd)), pullback


@frule_for((collections.OrderedDict, "popitem"))
def _ordered_popitem_frule(self, last=True):
    k, v = self.primal.popitem(last=primal(last))
    t = self.tangent.pop(k) if isinstance(self.tangent, dict) else T.zero_tangent(v)
    return Dual((k, v), NoTangent if t is NoTangent else (NoTangent, t))


# second order: written with covered functions, whose dual rules follow the primal's keys
def _move_to_end_definition(d, key, last=True):
    value = d.pop(key)
    if last:
        d[key] = value
    else:
        rest = list(d.items())
        d.clear()
        d[key] = value
        d.update(rest)


def _popitem_definition(d, last=True):
    key = next(reversed(d)) if last else next(iter(d))
    return key, d.pop(key)


defined_by((collections.OrderedDict, "move_to_end"), _move_to_end_definition)
defined_by((collections.OrderedDict, "popitem"), _popitem_definition)


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------

_C = Case

CASES = [
    _C(collections.defaultdict, float, {"a": randn(), "b": randn(2)}, name="defaultdict(float, dict)"),
    _C(collections.OrderedDict, [("a", randn()), ("b", randn(3))], name="OrderedDict(pairs)"),
    _C(collections.OrderedDict.move_to_end, collections.OrderedDict(a=randn(), b=randn(2), c=randn()), "a"),
    _C(collections.OrderedDict.move_to_end, collections.OrderedDict(a=randn(), b=randn(2), c=randn()), "c", False,
       name="OrderedDict.move_to_end(last=False)"),
    _C(collections.OrderedDict.popitem, collections.OrderedDict(a=randn(), b=randn(2))),
    _C(collections.OrderedDict.popitem, collections.OrderedDict(a=randn(), b=randn()), False,
       name="OrderedDict.popitem(last=False)"),
]
