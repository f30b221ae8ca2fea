"""Objects of library classes in plain forward programs (third derivatives through ``yb.grad``).

SciPy's sparse matrices are Python classes whose methods and operators the other orders
differentiate from SciPy's source, except the few a Python definition replaces
(``rules/scipy_sparse.py``: ``_cs_matrix.prune`` reads a view's ``base``). Third order follows
them as it follows a user's objects (``plain_objects.py``); this module adds what that leaves:

* a bound method whose function has a Python definition (``self.prune()`` inside SciPy's
  ``__init__``): the definition's plain program, with the object and its tangent first, as the
  other orders call it. (Left alone, the bound method had no rule and was refused.)
* an operator reaching a Python dunder of an object third order does not follow (a library's
  class other than those: ``np.poly1d``, ``np.polynomial.Polynomial``), or a call of such an
  object: refused by name. (Left alone, ``operator.mul``'s array rule multiplied the object's
  tangent by a number, and a call looked the unhashable object up in a table: both crashed
  with ``TypeError``.)
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..rules.core import describe_callable
from . import protocols
from .lifting import lookup_second_order
from .plain_objects import _owner, _owner_tangent, _run, is_user_object
from .third_order import FOLLOWED_CALLS, _Call, _refusal


def library_call(call: _Call) -> Any:
    """The slot of a followed call's ``(value, tangent)`` pair, None for any other call; raises
    for an operator on an object third order cannot follow."""
    f = call.f
    definition = _method_definition(f)
    if definition is not None:
        owner = (_owner(call, 0), _owner_tangent(call, 1, f.__self__))
        return _run(call, definition, [owner, *call.arg_slots], dict(call.keyword_slots))
    if _unfollowed_object(f) and isinstance(getattr(type(f), "__call__", None), types.FunctionType) \
            and lookup_second_order(f) is None:
        raise _refusal(f"calls of objects of a library's class ({_class_name(f)}), whose __call__ is Python code "
                       "third order does not follow")
    values = [call.value(a) for a, _ in call.arg_slots]
    if values and protocols.may_be_operator(f):
        unfollowed = [v for v in values if _unfollowed_object(v)]
        if unfollowed and protocols.operator_candidates(f, values):
            raise _refusal(f"{describe_callable(f)} of objects of a library's class ({_class_name(unfollowed[0])}), "
                           "whose operators are Python code third order does not follow")
    return None


def _method_definition(f: Any) -> types.FunctionType | None:
    """The Python definition of a method bound to an object third order follows, whose function
    is declared ``defined_as`` (its source is not what the other orders differentiate)."""
    if not isinstance(f, types.MethodType) or type(f.__func__) is not types.FunctionType \
            or not is_user_object(f.__self__):
        return None
    found = lookup_second_order(f.__func__)
    rule = found[0] if found is not None else None
    return rule.definition if getattr(rule, "second_order_kind", None) == "python" else None


def _class_name(value: Any) -> str:
    return f"{type(value).__module__}.{type(value).__qualname__}"


def _unfollowed_object(value: Any) -> bool:
    """An instance of a class written in Python that third order does not follow as an object
    (not an array: NumPy's subclasses go by their rules)."""
    tp = type(value)
    return not isinstance(value, (np.ndarray, type, types.ModuleType)) \
        and tp.__module__ != "builtins" and hasattr(value, "__dict__") and not is_user_object(value)


FOLLOWED_CALLS.append(library_call)

__all__ = ["library_call"]
