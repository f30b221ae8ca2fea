"""``functools.partial`` and ``np.vectorize`` in plain forward programs (third derivatives
through ``yb.grad``).

A partial made inside the function under ``yb.grad`` binds a function (a closure over its
variables, whose tangent is its plain program, or any other) and arguments, each with a tangent.
In the plain program (``plain_forward.py``) its tangent is a tuple of all of them, primals and
tangents (``(PARTIAL, f, f_t, args, args_t, keywords, keywords_t)``), built by second order's
own tuple and dict rules; a call of the partial is the call ``_jvp(f, f_t, *stored, *given)``,
whose rule (``third_order.jvp_rule``) follows whatever ``f`` is. A partial made outside stays
what ``jvp_rule`` makes of it.

``np.vectorize(f)`` made there has the tangent ``(VECTORIZED, f, f_t)``; a call of it on one
array is a short definition looping ``_jvp(f, f_t, v, v_t)`` over the elements (so ``f`` may be
a closure over the function's variables), differentiated like user code. A call with several
arguments, keywords, ``excluded`` ones or a signature (of such an object, or of one made outside,
whose ``f`` is a constant) is ``_jvp`` of the covered-code definition every mode runs.
"""
from __future__ import annotations

import functools
import operator
from typing import Any

import numpy as np

from ..ir import primitives as P
from ..rules.numpy_vectorize import call_definition
from ..tangents import NoTangent
from .plain_forward import TANGENT_KEYWORD, jvp_call
from . import plain_closures
from .plain_forward import _refusal
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function, _run_definition

#: the first item of a partial's (a vectorized function's) tangent in a plain program (what a
#: call of it recognises)
PARTIAL, VECTORIZED = "<third order: functools.partial>", "<third order: np.vectorize>"

VECTORIZED_CALL = plain_closures.compiled_definitions('''\
def vectorized_call(vectorized, f, f_t, x, x_t):
    xs = np.asarray(x)
    ts = np.zeros(xs.shape) if x_t is NoTangent else np.broadcast_to(np.asarray(x_t, dtype=float), xs.shape)
    values = []
    tangents = []
    probe = vectorized.otypes is None and not vectorized.cache and xs.size > 0  # (numpy_vectorize.probes_first)
    for k in ([0] if probe else []) + list(range(xs.size)):
        value, tangent = _jvp(f, f_t, xs.flat[k], ts.flat[k])
        values.append(value)
        tangents.append(0.0 if tangent is NoTangent else tangent)
    if probe:
        values, tangents = values[1:], tangents[1:]
    dtype = vectorized.otypes[0] if vectorized.otypes else None
    return np.array(values, dtype=dtype).reshape(xs.shape), np.array(tangents, dtype=float).reshape(xs.shape)
''', "<third order np.vectorize>", {"__name__": __name__, "np": np, "_jvp": jvp_call,
                                   "NoTangent": NoTangent})["vectorized_call"]

_MKTUPLE, _MKDICT = _function(P.mktuple), _function(P.mkdict)
_GETITEM, _SETITEM = _function(operator.getitem), _function(operator.setitem)


def partial_call(call: _Call) -> Any:
    """``functools.partial(f, ...)`` made, or such a partial called: the slots of the result;
    None for other calls."""
    if call.f is functools.partial and call.arg_slots:
        return _make(call)
    tangent = call.value(1)
    marked = type(tangent) is tuple and bool(tangent)
    if type(call.f) is functools.partial and marked and tangent[0] is PARTIAL:
        return _call(call)
    if call.f is np.vectorize and call.arg_slots and plain_closures.is_plain_closure(call.value(call.arg_slots[0][1])):
        c = call.composition
        value = c.call(_function(np.vectorize), [a for a, _ in call.arg_slots],
                       {k: a for k, (a, _) in call.keyword_slots.items()})
        return value, c.call(_MKTUPLE, [c.add(_constant(VECTORIZED)), *call.arg_slots[0]])
    if type(call.f) is np.vectorize and marked and tangent[0] is VECTORIZED:
        c = call.composition
        f, f_t = (c.call(_GETITEM, [1, c.add(_constant(k))]) for k in (1, 2))
        return _vectorized(call, f, f_t)
    if call.f is getattr and len(call.arg_slots) == 2 and type(call.value(call.arg_slots[0][0])) is np.vectorize:
        return _vectorize_attribute(call)
    if type(call.f) is np.vectorize and not _on_one_array(call.f, call):
        # made outside the function under yb.grad: its pyfunc is a constant, as it was made
        c = call.composition
        return _vectorized(call, c.add(_constant(call.f.pyfunc)), c.add(_constant(NoTangent)))
    return None


def _vectorize_attribute(call: _Call) -> Any:
    """``vec.pyfunc``: the function, with the tangent ``np.vectorize`` gave it here (its plain
    program, for a closure over the function's variables), or none (a function capturing none, or
    one made outside); ``vec.otypes`` and the other data attributes: constants. Methods stay
    refused by ``third_order.jvp_rule``."""
    (vectorized, vectorized_t), (name, _) = call.arg_slots
    attribute = call.value(name)
    if attribute != "pyfunc" and callable(getattr(call.value(vectorized), attribute, None)):
        return None
    c = call.composition
    value = c.call(_function(getattr), [vectorized, name])
    tangent = call.value(vectorized_t)
    if attribute == "pyfunc" and type(tangent) is tuple and tangent and tangent[0] is VECTORIZED:
        return value, c.call(_GETITEM, [vectorized_t, c.add(_constant(2))])
    return value, c.add(_constant(NoTangent))


def _on_one_array(vectorized: np.vectorize, call: _Call) -> bool:
    return len(call.arg_slots) == 1 and not call.keyword_slots and vectorized.signature is None \
        and not vectorized.excluded


def _vectorized(call: _Call, f: int, f_t: int) -> int:
    """A vectorized function ``f`` (with tangent ``f_t``) called: on one array, the loop
    ``VECTORIZED_CALL``; with several arguments, keywords, ``excluded`` ones or a signature,
    ``_jvp`` of the definition every other mode runs (``numpy_vectorize.call_definition``), whose
    rule follows it like user code."""
    if _on_one_array(call.f, call):
        return _run_definition(call, VECTORIZED_CALL, [0, f, f_t, *call.arg_slots[0]])
    c = call.composition
    definition, constants = call_definition(call.f)
    no_tangent = c.add(_constant(NoTangent))
    slots = [c.add(_constant(definition)), no_tangent, f, f_t]
    for value in constants:
        slots += [c.add(_constant(value)), no_tangent]
    for a, t in call.arg_slots:
        slots += [a, t]
    given = {}
    for name, (a, t) in call.keyword_slots.items():
        given[name], given[TANGENT_KEYWORD + name] = a, t
    return c.call(_function(jvp_call), slots, given)


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

__all__ = ["PARTIAL", "VECTORIZED", "VECTORIZED_CALL", "partial_call"]
