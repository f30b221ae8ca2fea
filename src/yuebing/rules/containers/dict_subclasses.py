"""Rules for the dict subclasses of ``collections``: making a ``defaultdict``, ``OrderedDict`` or
``Counter``, a missing key's default, and ``OrderedDict.move_to_end`` and ``popitem(last=)``.

Their tangent is a dict with the same keys, as for any dict (``tangents/kinds.py``): the methods
they share with ``dict`` run ``dict``'s rules. Each is made as an empty instance (a primitive with
no derivative: ``_empty``) filled by ``update`` (``dict.update``'s rules; ``Counter.update`` is
Python, differentiated from its source), so every mode follows from rules that exist.

A ``defaultdict``'s ``default_factory`` is data the dict's tangent has no place for: a factory
capturing values with derivatives (``defaultdict(lambda: x)``) is refused, not dropped. A missing
key read from a dict subclass whose ``__missing__`` is Python (``Counter``, a user's class) runs
that method differentiated (``missing_value``); a ``defaultdict``'s inserts the factory's value,
a constant (``indexing/items.py``).
"""
from __future__ import annotations

import collections
from typing import Any

from ... import tangents as T
from ...tangents import NoFData, NoRData, NoTangent
from ...tangents import kinds as K
from ..cases import Case, randn
from ..core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from ..second_order import defined_as, defined_by, zero
from ..util import output
from .common import _element_fdata, _reinsert, _with_rdata

_TYPES = (collections.defaultdict, collections.OrderedDict, collections.Counter)


def _check_factory(factory: Any) -> None:
    """Refuse a ``default_factory`` carrying derivatives: the dict's tangent has no place for it."""
    if factory is not None and K.primal_kind(factory) is not K.NONDIFF:
        raise RuleArgumentError(
            f"collections.defaultdict: yuebing cannot differentiate a default_factory "
            f"({getattr(factory, '__qualname__', type(factory).__qualname__)}) that captures values carrying "
            "derivatives; write the default where it is read: d.get(k, default), or d.setdefault(k, default)")


def _empty(cls: type, factory: Any = None) -> Any:
    """A new empty ``cls`` (``factory``: a defaultdict's ``default_factory``)."""
    if cls is collections.defaultdict:
        _check_factory(factory)
        return collections.defaultdict(factory)
    return cls()


@rrule_for(_empty)
def _empty_rrule(cls, factory=None):
    made = _empty(primal(cls), primal(factory))
    return CoDual(made, {}), lambda dy: (NoRData,) * (3 if factory is not None else 2)


@frule_for(_empty)
def _empty_frule(cls, factory=None):
    return Dual(_empty(primal(cls), primal(factory)), {})


zero(_empty)


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


defined_as(collections.defaultdict, _defaultdict)
defined_as(collections.OrderedDict, _ordered_dict)
defined_as(collections.Counter, _counter)


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
