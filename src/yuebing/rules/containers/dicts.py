"""Rules for the methods of ``dict``: ``get``, ``setdefault``, ``pop``, ``popitem``, ``update``,
``copy``, ``clear``, ``fromkeys``, and the live views ``keys``, ``values``, ``items`` (the mutation
convention: ``common.py``).
"""
from __future__ import annotations

from typing import Any

from ... import tangents as T
from ...tangents import NoFData, NoRData, NoTangent
from ..cases import Case, randn
from ..core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from ..second_order import defined_as, defined_by, linear
from ..util import add_rdata_to, output, sum_rdata, tangent
from .common import (
    _NOT_PASSED, _Elements, _counted, _element_fdata, _overwriting_slot, _reinsert, _remove, _restored,
    _shallow_copy_rrule, _slot, _store, _with_rdata,
)

# ------------------------------------------------------------------------------------------------
# dict
# ------------------------------------------------------------------------------------------------


def _position_of(d: dict, key: Any) -> int | None:
    """``key``'s position in ``d``, or None when it is the last key (the cheap common case)."""
    if next(reversed(d)) is key:
        return None
    return next(i for i, k in enumerate(d) if k is key or k == key)


@rrule_for((dict, "get"))
def _dict_get(self, key, default=_NOT_PASSED):
    d, fd = self.primal, self.fdata
    k = primal(key)
    missing = object()
    v = dict.get(d, k, missing)
    if v is missing:
        return _passthrough_default(default, 3)
    if not isinstance(fd, dict):  # a dict without fdata (sys.modules, a constant): a constant value
        return output(v), lambda dy: (NoRData,) * (3 if default is _NOT_PASSED else 4)

    def pullback(dy):
        if dy is not NoRData:
            fd[k] = add_rdata_to(fd[k], dy)
        return _counted(NoRData, NoRData, NoRData, default if default is _NOT_PASSED else NoRData)

    return CoDual(v, _element_fdata(fd[k])), pullback


def _passthrough_default(default: Any, n_before: int) -> tuple[CoDual, Any]:
    """Return the ``default`` argument itself (its rdata is the output's)."""
    if default is _NOT_PASSED:
        return output(None), lambda dy: (NoRData,) * n_before
    if not isinstance(default, CoDual):
        return output(default), lambda dy: (NoRData,) * (n_before + 1)
    return CoDual(default.primal, default.fdata), lambda dy: (NoRData,) * n_before + (dy,)


@frule_for((dict, "get"))
def _dict_get_frule(self, key, default=_NOT_PASSED):
    d, k = self.primal, primal(key)
    if k in d:
        t = self.tangent
        return Dual(d[k], t[k] if isinstance(t, dict) else T.zero_tangent(d[k]))
    if default is _NOT_PASSED:
        return Dual(None, NoTangent)
    return Dual(primal(default), tangent(default) if isinstance(default, Dual) else T.zero_tangent(default))


@rrule_for((dict, "setdefault"))
def _dict_setdefault(self, key, default=_NOT_PASSED):
    d, fd = self.primal, self.fdata
    k = primal(key)
    if k in d:
        return _dict_get(self, key, default)
    v = None if default is _NOT_PASSED else primal(default)
    v_fd = default.fdata if isinstance(default, CoDual) else NoFData
    _store(d, k, v)
    fd[k] = _slot(v, v_fd)

    def pullback(dy):
        slot = fd.pop(k)
        _remove(d, k)
        return _counted(NoRData, NoRData, NoRData,
                        default if default is _NOT_PASSED else sum_rdata(T.rdata(slot), dy))

    return CoDual(v, _element_fdata(fd[k]) if v_fd is NoFData else v_fd), pullback


@frule_for((dict, "setdefault"))
def _dict_setdefault_frule(self, key, default=_NOT_PASSED):
    d, k = self.primal, primal(key)
    if k not in d:
        v = None if default is _NOT_PASSED else primal(default)
        d[k] = v
        self.tangent[k] = tangent(default) if isinstance(default, Dual) else T.zero_tangent(v)
    return Dual(d[k], self.tangent[k])


@rrule_for((dict, "pop"))
def _dict_pop(self, key, default=_NOT_PASSED):
    d, fd = self.primal, self.fdata
    k = primal(key)
    if k not in d:
        if default is _NOT_PASSED:
            raise KeyError(k)
        return _passthrough_default(default, 3)
    position = _position_of(d, k)
    v = _remove(d, k)
    slot = fd.pop(k)

    def pullback(dy):
        _reinsert(d, k, v, position)
        fd[k] = _with_rdata(slot, v, dy)
        return _counted(NoRData, NoRData, NoRData, default if default is _NOT_PASSED else NoRData)

    return CoDual(v, _element_fdata(slot)), pullback


@frule_for((dict, "pop"))
def _dict_pop_frule(self, key, default=_NOT_PASSED):
    d, k = self.primal, primal(key)
    if k not in d and default is not _NOT_PASSED:
        return Dual(primal(default), tangent(default) if isinstance(default, Dual) else T.zero_tangent(default))
    v = _remove(d, k)
    return Dual(v, self.tangent.pop(k))


@rrule_for((dict, "popitem"))
def _dict_popitem(self):
    d, fd = self.primal, self.fdata
    k, v = d.popitem()  # raises KeyError on an empty dict, as Python does
    slot = fd.pop(k)
    v_fd = _element_fdata(slot)

    def pullback(dy):
        _store(d, k, v)  # it was the last key: order is restored
        fd[k] = _with_rdata(slot, v, NoRData if dy is NoRData else dy[1])
        return NoRData, NoRData

    return CoDual((k, v), NoFData if v_fd is NoFData else (NoFData, v_fd)), pullback


@frule_for((dict, "popitem"))
def _dict_popitem_frule(self):
    k, v = self.primal.popitem()
    t = self.tangent.pop(k)
    return Dual((k, v), NoTangent if t is NoTangent else (NoTangent, t))


def _pair_sources(other: Any) -> tuple[list, Any]:
    """``dict.update``'s positional argument as ``[(key, value, fdata)]`` and a function that
    takes the values' rdata and returns the argument's rdata."""
    x = primal(other)
    fd = other.fdata if isinstance(other, CoDual) else NoFData
    if isinstance(x, dict):
        keys = list(x)
        entries = [(k, x[k], NoFData if fd is NoFData else _element_fdata(fd[k])) for k in keys]

        def deliver(rdatas: list) -> Any:
            for k, r in zip(keys, rdatas):
                if r is not NoRData and fd is not NoFData:
                    fd[k] = add_rdata_to(fd[k], r)
            return NoRData

        return entries, deliver
    if not isinstance(x, (list, tuple)):
        raise RuleArgumentError(
            f"dict.update: yuebing supports a dict, a list or tuple of pairs, and keywords, not a "
            f"{type(x).__qualname__}; convert it with dict(...) first"
        )
    pairs = _Elements(other, "dict.update")
    entries, makers = [], []
    for pair, pair_fd in zip(pairs.values, pairs.fdatas):
        if not isinstance(pair, (tuple, list)) or len(pair) != 2:
            raise RuleArgumentError(f"dict.update: expected (key, value) pairs, got {pair!r:.60}")
        if isinstance(pair, tuple):
            entries.append((pair[0], pair[1], NoFData if pair_fd is NoFData else pair_fd[1]))
            makers.append(lambda r: NoRData if r is NoRData else (NoRData, r))
        else:  # a list pair: its tangent list holds the value's slot
            entries.append((pair[0], pair[1], _element_fdata(pair_fd[1])))
            makers.append(lambda r, t=pair_fd: (t.__setitem__(1, add_rdata_to(t[1], r)), NoRData)[1])
    return entries, lambda rdatas: pairs.deliver([m(r) for m, r in zip(makers, rdatas)])


@rrule_for((dict, "update"))
def _dict_update(self, *args, **kwargs):
    d, fd = self.primal, self.fdata
    if len(args) > 1:
        raise TypeError(f"update expected at most 1 argument, got {len(args)}")
    entries, deliver = _pair_sources(args[0]) if args else ([], None)
    entries += [(name, primal(c), c.fdata if isinstance(c, CoDual) else NoFData) for name, c in kwargs.items()]
    log = []  # (key, existed, old value, old slot), in assignment order
    for k, v, v_fd in entries:
        existed = k in d
        log.append((k, existed, d[k] if existed else None, fd[k] if existed else None))
        _store(d, k, v)
        fd[k] = _overwriting_slot(fd[k], v, v_fd) if existed else _slot(v, v_fd)

    def pullback(dy):
        rdatas = [NoRData] * len(entries)
        for j in range(len(log) - 1, -1, -1):
            k, existed, old, old_slot = log[j]
            rdatas[j] = T.rdata(fd[k])
            if existed:
                _store(d, k, old)
                fd[k] = _restored(old_slot, old)
            else:
                _remove(d, k)
                del fd[k]
        n = len(entries) - len(kwargs)
        other_rdata = (deliver(rdatas[:n]),) if args else ()
        return (NoRData, NoRData, *other_rdata, *rdatas[n:])

    return output(None), pullback


@frule_for((dict, "update"))
def _dict_update_frule(self, *args, **kwargs):
    d, t = self.primal, self.tangent
    if args:
        x, xt = primal(args[0]), tangent(args[0])
        if isinstance(x, dict):
            pairs = [(k, x[k], T.zero_tangent(x[k]) if xt is NoTangent else xt[k]) for k in x]
        else:
            elements = _Elements(args[0], "dict.update")
            pairs = [(p[0], p[1], T.zero_tangent(p[1]) if pt is NoTangent else pt[1])
                     for p, pt in zip(elements.values, elements.tangents())]
    else:
        pairs = []
    pairs += [(name, primal(c), tangent(c) if isinstance(c, Dual) else T.zero_tangent(c)) for name, c in kwargs.items()]
    for k, v, vt in pairs:
        _store(d, k, v)
        t[k] = vt
    return Dual(None, NoTangent)


@rrule_for((dict, "copy"))
def _dict_copy(self):
    new = self.primal.copy()
    return _shallow_copy_rrule(new, list(new.items()), self.fdata, {})


@frule_for((dict, "copy"))
def _dict_copy_frule(self):
    return Dual(self.primal.copy(), dict(self.tangent))


@rrule_for((dict, "clear"))
def _dict_clear(self):
    d, fd = self.primal, self.fdata
    saved, saved_fd = list(d.items()), dict(fd)
    d.clear()
    fd.clear()

    def pullback(dy):
        d.update(saved)
        fd.update((k, _restored(saved_fd[k], v)) for k, v in saved)
        return NoRData, NoRData

    return output(None), pullback


@frule_for((dict, "clear"))
def _dict_clear_frule(self):
    self.primal.clear()
    self.tangent.clear()
    return Dual(None, NoTangent)


# keys(), values() and items() return live views. Their fdata is the same live view of the dict's
# fdata (a float value's slot is read through it; consumers deliver into the dict's slots, which
# ``dict_of_view`` finds: tangents/dict_views.py), and their pullback has nothing to add: the
# cotangents flow through the dict's own slots. check_rule cannot run on them (a view is made from
# its dict, which check_rule would copy apart from it), so they have no CASES.
def _view_rules(name: str) -> None:
    def rrule(self):
        return CoDual(getattr(self.primal, name)(), getattr(self.fdata, name)()), lambda dy: (NoRData, NoRData)

    def frule(self):
        return Dual(getattr(self.primal, name)(), getattr(self.tangent, name)())

    rrule_for((dict, name))(rrule)
    frule_for((dict, name))(frule)


for _name in ("keys", "values", "items"):
    _view_rules(_name)


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------

# the tangent call mirrors the mutation on the tangent dict (get, __getitem__, __setitem__,
# keys/values/items: declared in second_order.py)
linear((dict, "pop"), (dict, "popitem"), (dict, "clear"))
linear((dict, "setdefault"), stored=(2,))  # the default is written into the dict


# a list of (key, value) pairs has no tangent for its keys: dict.update is written with covered
# functions, whose second order follows the primal's keys
def _dict_update(d, other=(), **entries):
    for key, value in dict(other).items():
        d[key] = value
    for key, value in entries.items():
        d[key] = value


defined_by((dict, "update"), _dict_update)


def _dict_fromkeys(cls, keys, value=None):
    """``dict.fromkeys(keys, value)`` (bound to the class): every key holds the one value, whose
    derivative each entry carries (a subclass made by ``cls()``, as ``dict.fromkeys`` makes it)."""
    made = cls()
    for key in keys:
        made[key] = value
    return made


defined_as((dict, "fromkeys"), _dict_fromkeys)


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


_C = Case

CASES = [
    _C(dict.get, {"a": randn(), "b": randn(2)}, "a"),
    _C(dict.get, {"a": randn(), "b": randn(2)}, "b", name="dict.get(array value)"),
    _C(dict.get, {"a": randn()}, "z", name="dict.get(missing)"),
    _C(dict.get, {"a": randn()}, "z", randn(), name="dict.get(missing, default)"),
    _C(dict.get, {"a": randn()}, "a", randn(), name="dict.get(present, default)"),
    _C(dict.setdefault, {"a": randn()}, "a", randn()),
    _C(dict.setdefault, {"a": randn()}, "b", randn(), name="dict.setdefault(new key)"),
    _C(dict.setdefault, {"a": randn()}, "b", randn(3), name="dict.setdefault(new key, array)"),
    _C(dict.setdefault, {"a": randn()}, "b", name="dict.setdefault(new key, None)"),
    _C(dict.pop, {"a": randn(), "b": randn(2), "c": randn()}, "a", name="dict.pop(first key)"),
    _C(dict.pop, {"a": randn(), "b": randn(2)}, "b", name="dict.pop(last key, array)"),
    _C(dict.pop, {"a": randn()}, "z", randn(), name="dict.pop(missing, default)"),
    _C(dict.pop, {"a": randn(), "b": randn()}, "a", randn(), name="dict.pop(present, default)"),
    _C(dict.popitem, {"a": randn(), "b": randn()}),
    _C(dict.popitem, {"a": randn(), "b": randn(3)}, name="dict.popitem(array)"),
    _C(dict.update, {"a": randn(), "b": randn(2)}, {"b": randn(2), "c": randn()}),
    _C(dict.update, {"a": randn()}, [("a", randn()), ("b", randn(2)), ("a", randn())], name="dict.update(pairs, repeated key)"),
    _C(dict.update, {"a": randn()}, (("b", randn()), ["c", randn()]), name="dict.update(tuple of pairs, list pair)"),
    _C(dict.update, {"a": randn(), "b": randn()}, kwargs={"a": 2.5, "c": 1.0}, name="dict.update(keywords)"),
    _C(dict.update, {"a": randn()}, {"a": randn()}, kwargs={"b": 3.0}, name="dict.update(dict and keywords)"),
    _C(dict.copy, {"a": randn(), "b": randn(2), "c": [randn()]}),
    _C(dict.clear, {"a": randn(), "b": randn(2)}),
    _C(dict.fromkeys, ("a", "b", "c"), randn(2)),
    _C(dict.fromkeys, ["a", "b"], name="dict.fromkeys(no value)"),
]
