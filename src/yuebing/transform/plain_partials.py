"""``functools.partial`` in plain forward programs (third derivatives through ``yb.grad``).

A partial made inside the function under ``yb.grad`` binds a function (a closure over its
variables, whose tangent is its plain program, or any other) and arguments, each with a tangent.
In the plain program (``plain_forward.py``) its tangent is a tuple of all of them, primals and
tangents (``(PARTIAL, f, f_t, args, args_t, keywords, keywords_t)``), built by second order's
own tuple and dict rules; a call of the partial is the call ``_jvp(f, f_t, *stored, *given)``,
whose rule (``third_order.jvp_rule``) follows whatever ``f`` is. A partial made outside stays
what ``jvp_rule`` makes of it.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

from ..ir import primitives as P
from .plain_forward import TANGENT_KEYWORD, jvp_call
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function

#: the first item of a partial's tangent in a plain program (what a call of it recognises)
PARTIAL = "<third order: functools.partial>"

_MKTUPLE, _MKDICT = _function(P.mktuple), _function(P.mkdict)
_GETITEM, _SETITEM = _function(operator.getitem), _function(operator.setitem)


def partial_call(call: _Call) -> Any:
    """``functools.partial(f, ...)`` made, or such a partial called: the slots of the result;
    None for other calls."""
    if call.f is functools.partial and call.arg_slots:
        return _make(call)
    tangent = call.value(1)
    if type(call.f) is functools.partial and type(tangent) is tuple and tangent and tangent[0] is PARTIAL:
        return _call(call)
    return None


def _make(call: _Call) -> tuple[int, int]:
    c = call.composition
    value = c.call(_function(functools.partial), [a for a, _ in call.arg_slots],
                   {k: a for k, (a, _) in call.keyword_slots.items()})
    (f, f_t), stored = call.arg_slots[0], call.arg_slots[1:]
    keywords = [c.call(_MKDICT, []), c.call(_MKDICT, [])]
    for name, pair in call.keyword_slots.items():
        name_slot = c.add(_constant(name))
        for mapping, item in zip(keywords, pair):
            c.call(_SETITEM, [mapping, name_slot, item])
    parts = [c.add(_constant(PARTIAL)), f, f_t, c.call(_MKTUPLE, [a for a, _ in stored]),
             c.call(_MKTUPLE, [t for _, t in stored]), *keywords]
    return value, c.call(_MKTUPLE, parts)


def _call(call: _Call) -> int:
    """``p(*args, **kwargs)``: ``_jvp(f, f_t, *stored, *args, **keywords, **kwargs)``."""
    c = call.composition
    tangent = call.value(1)

    def item(slot: int, key: Any) -> int:
        return c.call(_GETITEM, [slot, c.add(_constant(key))])

    f, f_t, args, args_t, keywords, keywords_t = (item(1, k) for k in range(1, 7))
    slots = [f, f_t]
    for k in range(len(tangent[3])):
        slots += [item(args, k), item(args_t, k)]
    for a, t in call.arg_slots:
        slots += [a, t]
    given = {}
    for name in tangent[5]:
        given[name], given[TANGENT_KEYWORD + name] = item(keywords, name), item(keywords_t, name)
    for name, (a, t) in call.keyword_slots.items():  # (a call's keyword replaces a stored one)
        given[name], given[TANGENT_KEYWORD + name] = a, t
    return c.call(_function(jvp_call), slots, given)


FOLLOWED_CALLS.append(partial_call)

__all__ = ["PARTIAL", "partial_call"]
