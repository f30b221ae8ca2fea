"""Calls of a ``functools.partial`` made outside the plain forward program (third derivatives
through ``yb.grad``).

A partial made inside the function under ``yb.grad`` carries its plain tangent
(``plain_partials.py``). One made outside reaches the plain program as a value: the function
given to ``yb.vjp`` (its pullback is the gradient of a pairing taking that function as an
argument, ``rules/_nested_definitions.py``), or a global. Its call is the call of what it binds,
``_jvp(p.func, func_t, *p.args, *args, **p.keywords, **kwargs)``, each stored value a slot of its
own taken out of the partial's 4-tuple by ``_stored``: its fdata, tangent and fdata tangent are
the parts of the partial's, and its rdata goes back as the partial's (a stored keyword's into its
slot in the keywords' fdata, as ``rules/functools_rules.py`` keeps them). The captured values'
cotangents so reach the partial, and through its own rule what it was made from. ``part_read``
follows ``p.func``, ``p.args`` and ``p.keywords`` of any partial.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

from ..rules.util import add_rdata_to
from ..tangents import NoFData, NoRData, NoTangent, Tangent, fdata
from .lifting import _zero_tangent_of
from .plain_forward import TANGENT_KEYWORD, jvp_call
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function

_GETATTR, _GETITEM = _function(getattr), _function(operator.getitem)


def _field(part: Any, name: str, key: Any, empty: Any) -> Any:
    """``part.fields[name][key]`` of a partial's fdata or tangent (``empty`` where it has none)."""
    if not isinstance(part, Tangent):
        return empty
    held = part.fields.get(name, empty)
    if key is None:
        return held
    if isinstance(held, tuple) and isinstance(key, int) and key < len(held) \
            or isinstance(held, dict) and key in held:
        return held[key]
    return empty


def _stored(c: Any, partial_slot: int, name: str, key: Any) -> int:
    """The slot of the partial's ``func`` (``key`` None), ``args[key]`` or ``keywords[key]``."""
    p, fd, t, fdt = c.values[partial_slot]
    value = p.func if key is None else getattr(p, name)[key]
    parts = [value]
    for part, empty in ((fd, NoFData), (t, NoTangent), (fdt, NoFData)):
        held = _field(part, name, key, empty)
        if name == "keywords" and part is not t and held is not NoFData:  # a full tangent in a mutable slot
            held = fdata(held)
        parts.append(_zero_tangent_of(value) if held is NoTangent and part is t else held)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        if name == "keywords":
            for part, r in ((fd, dy), (fdt, dy_d)):
                slots = _field(part, "keywords", None, None)
                if isinstance(slots, dict) and key in slots:
                    slots[key] = add_rdata_to(slots[key], r)
            return (NoRData, NoRData), (NoRData, NoRData)
        return (NoRData, _partial_rdata(p, name, key, dy)), (NoRData, _partial_rdata(p, name, key, dy_d))

    c.steps.append((pullback, [partial_slot], len(c.values)))
    return c.add(tuple(parts))


def _partial_rdata(p: functools.partial, name: str, key: Any, r: Any) -> Any:
    """The partial's rdata holding ``r`` as the rdata of its ``func`` or of ``args[key]``."""
    if r is NoRData:
        return NoRData
    if name == "func":
        return Tangent(functools.partial, {"func": r})
    stored = tuple(r if k == key else NoRData for k in range(len(p.args)))
    return Tangent(functools.partial, {"args": stored})


def _plain_tangent(c: Any, call: _Call, name: str, key: Any, value: Any) -> int:
    """The slot of a stored value's plain tangent: zero (the inner gradient holds what a
    partial made outside captured constant) unless the partial's plain tangent gives one."""
    held = _field(call.value(1), name, key, NoTangent)
    return c.add(_constant(_zero_tangent_of(value) if held is NoTangent else held))


def outside_partial_call(call: _Call) -> Any:
    """The slot of the ``(value, tangent)`` pair of a call of a partial made outside the plain
    program; None for other calls."""
    p = call.f
    if type(p) is not functools.partial or type(call.value(1)) is tuple:  # (made inside: plain_partials.py)
        return None
    c = call.composition
    slots = [_stored(c, call.function_slot, "func", None), _plain_tangent(c, call, "func", None, p.func)]
    for k, value in enumerate(p.args):
        slots += [_stored(c, call.function_slot, "args", k), _plain_tangent(c, call, "args", k, value)]
    for a, t in call.arg_slots:
        slots += [a, t]
    given = {}
    for name, value in p.keywords.items():
        given[name] = _stored(c, call.function_slot, "keywords", name)
        given[TANGENT_KEYWORD + name] = _plain_tangent(c, call, "keywords", name, value)
    for name, (a, t) in call.keyword_slots.items():  # (a call's keyword replaces a stored one)
        given[name], given[TANGENT_KEYWORD + name] = a, t
    return c.call(_function(jvp_call), slots, given)


#: where a partial made in the plain program keeps each part's tangent (``plain_partials._make``)
_MARKED_TANGENT = {"func": 2, "args": 4, "keywords": 6}


def part_read(call: _Call) -> Any:
    """``p.func``, ``p.args``, ``p.keywords`` of any partial: the value by second order's
    attribute rule (``rules/functools_rules.read_part``), the tangent that part of the partial's
    plain tangent (an item of the marked tuple of one made in the plain program, the field of a
    ``Tangent``, or a zero); None for other calls."""
    values = [call.value(a) for a, _ in call.arg_slots]
    if call.f is not getattr or len(values) != 2 or type(values[0]) is not functools.partial \
            or values[1] not in _MARKED_TANGENT:
        return None
    c = call.composition
    (p, p_t), (name, _) = call.arg_slots
    value = c.call(_GETATTR, [p, name])
    tangent = call.value(p_t)
    if type(tangent) is tuple:  # (made in the plain program: PARTIAL, f, f_t, args, args_t, kw, kw_t)
        return value, c.call(_GETITEM, [p_t, c.add(_constant(_MARKED_TANGENT[values[1]]))])
    held = _field(tangent, values[1], None, NoTangent)
    if held is NoTangent:
        return value, c.add(_constant(_zero_tangent_of(call.value(value))))
    fields = c.call(_GETATTR, [p_t, c.add(_constant("fields"))])
    return value, c.call(_GETITEM, [fields, name])


FOLLOWED_CALLS.extend([outside_partial_call, part_read])

__all__ = ["outside_partial_call", "part_read"]
