"""numpy.ma masked arrays in plain forward programs (third derivatives through ``yb.grad``).

A masked array's tangent is a plain array (``tangents/masked.py``), and its methods, operators and
properties are Python functions that ``rules/numpy_masked.py`` defines over its data. In the plain
forward program of the function under ``yb.grad`` each reaches ``third_order.jvp_rule`` in a form
it would take for a plain array's: ``m.sum`` a bound method (whose lookup sees builtin methods
only), ``m * n`` the multilinear ``operator.mul`` (whose tangent ``m_t * n + m * n_t`` would be a
masked product, not the tangent of the product's data), ``m.data`` an attribute read off the
tangent. Here each becomes the call NumPy makes, again through ``jvp_call``: ``MaskedArray.sum``
with ``m`` and its tangent first, ``MaskedArray.__mul__(m, n)`` (``__rmul__`` with the operands
swapped), the property's getter. Their declarations then decide as for any other call (a Python
definition by its plain program, a zero derivative a constant); what numpy.ma's rules do not
declare is left to ``jvp_rule``, which refuses it by name.
"""
from __future__ import annotations

import operator
import types
from typing import Any

import numpy as np

from ..rules.numpy_masked import _Like, masked_form, masked_method
from ..tangents import NoTangent
from . import protocols
from .lifting import lookup_second_order
from .lifting_objects import _BoundTangent
from .plain_forward import TANGENT_KEYWORD, jvp_call
from .third_order import FOLLOWED_CALLS, _Call, _constant, _function, _unbind_method, _zero

MaskedArray = np.ma.MaskedArray


def masked_call(call: _Call) -> Any:
    """The slot of the ``(value, tangent)`` pair of a method call, an operator or a property read
    on a masked array, made through the function NumPy calls; None for any other call."""
    f = call.f
    if isinstance(f, types.MethodType) and isinstance(f.__self__, MaskedArray):
        if not _declared(f.__func__):
            return None
        _unbind_method(call, f.__self__)
        return _redirect(call, call.f, call.arg_slots, call.keyword_slots)
    values = [call.value(a) for a, _ in call.arg_slots]
    if f is getattr and values and isinstance(values[0], _Like):
        # what numpy.ma's call returned (its fill value, its data): no derivative, where the
        # linear rule of getattr would take the primal attribute of the tangentless owner for one
        return _zero(call)
    if not any(isinstance(v, MaskedArray) for v in values):
        return None
    form = masked_form(f, tuple(values), {k: call.value(a) for k, (a, _) in call.keyword_slots.items()}, _itself)
    if form is not None:  # np.sum(m), np.sin(m), for v in m (rules/numpy_masked_forms.py)
        return _redirect(call, form, call.arg_slots, call.keyword_slots)
    if call.keyword_slots:
        return None
    if f is getattr and len(values) == 2 and isinstance(values[0], MaskedArray):
        return _attribute(call, values)
    if protocols.may_be_operator(f):
        return _operator(call, values)
    return None


def _itself(value: Any) -> Any:
    return value


def _declared(fn: Any) -> bool:
    return isinstance(fn, types.FunctionType) and lookup_second_order(fn) is not None


def _attribute(call: _Call, values: list) -> Any:
    """``m.data``, ``m.mask``: the getter of a masked array's property, when declared; ``m.filled``:
    the bound method, its tangent bound to the masked array's (a plain array has no ``filled``)."""
    if masked_method(values[0], values[1]):
        c = call.composition
        method = c.call(_function(getattr), [a for a, _ in call.arg_slots])
        owner_t = call.composition.values[call.arg_slots[0][1]]
        return method, c.add(tuple(_BoundTangent(part) for part in owner_t))
    found = protocols.find_property(type(values[0]), values[1])
    if found is None or found.fget is None or lookup_second_order(found.fget) is None:
        return None
    return _redirect(call, found.fget, call.arg_slots[:1], {})


def _operator(call: _Call, values: list) -> Any:
    """``m + n``, ``2.0 * m``: the dunder Python calls first (a reflected one with the operands
    swapped), when numpy.ma's rules define it."""
    if call.f in (operator.neg, operator.pos):  # (NumPy negates all the data: linear, as for an array)
        return None
    candidates = protocols.operator_candidates(call.f, values)
    if not candidates or not _declared(candidates[0].method):
        return None
    pairs = call.arg_slots[::-1] if candidates[0].reflected else call.arg_slots
    return _redirect(call, candidates[0].method, pairs, {})


def _redirect(call: _Call, fn: Any, pairs: list, keywords: dict) -> int:
    """``jvp_call(fn, ...)`` on the call's ``(value, tangent)`` slot pairs: the slot of its pair."""
    c = call.composition
    slots = [c.add(_function(fn)), c.add(_constant(NoTangent))] + [s for pair in pairs for s in pair]
    named = {}
    for key, (value, tangent) in keywords.items():
        named[key], named[TANGENT_KEYWORD + key] = value, tangent
    return c.call(_function(jvp_call), slots, named)


FOLLOWED_CALLS.append(masked_call)
