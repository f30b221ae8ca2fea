"""C functions without a rule, called with labels only: run as a plain call, zero derivative.

A library's Python code, differentiated because a differentiated call reached it, often calls C
helpers on labels: pandas' ``DataFrame.__getitem__`` calls ``lib.item_from_zerodim(key)`` on a
column name, other code ``normalize_axis_index(axis, ndim)``, ``sys.intern(name)``. No float
data goes in, so none that carries a derivative can come out: the call has zero derivative and
needs no rule. yuebing then runs it as written.

What counts as "labels only" is narrow, so that no derivative can be lost:

* the function is a C callable (a builtin or Cython function, a slot wrapper) not bound to an
  object that could hold float data (``__self__`` is None, a module, or itself a label);
* every argument is an immutable label: None, bools, ints, strings, bytes, dtypes, classes, enum
  members with such values, and tuples of them. A mutable argument (a list, an int array) is
  not: the call could write into it, and the gradient call would not put it back. A function
  argument is not: the C code could call it, and what it computes there would go unseen.
* the result is plain data without floats: labels, arrays of integers or booleans, and lists,
  tuples, dicts and sets of them. A C function handed labels can still hand back values that
  carry derivatives (``sys._getframe().f_locals``, ``gc.get_objects()``, an array a C object
  kept), or an object whose contents yuebing cannot see: those calls are refused as before
  naming the function.
"""
from __future__ import annotations

import enum
import types
from typing import Any, Callable

import numpy as np

from ._float_reach import LABEL_TYPES
from .declare import nondifferentiable

#: the kinds of callable the check applies to: C code, not Python functions or objects
_C_CALLABLE_KINDS = frozenset({"builtin_function_or_method", "cython_function_or_method", "fused_cython_function",
                               "method-wrapper", "method_descriptor", "wrapper_descriptor"})
_LABELS = LABEL_TYPES - {types.ModuleType}  # (a module passed in may hold floats in its globals)
_NESTING = 4


def takes_labels_only(fn: Any, args: tuple, kwargs: dict, primal_of: Callable[[Any], Any]) -> bool:
    """Whether ``fn(*args, **kwargs)`` is a C call handed nothing but immutable labels (``args``
    and ``kwargs`` in a mode's values; ``primal_of`` reads a value)."""
    if type(fn).__name__ not in _C_CALLABLE_KINDS:
        return False
    owner = getattr(fn, "__self__", None)
    if not (owner is None or isinstance(owner, types.ModuleType) or _is_immutable_label(owner)):
        return False
    return all(_is_immutable_label(primal_of(a)) for a in args) and \
        all(_is_immutable_label(primal_of(v)) for v in kwargs.values())


def plain_result(fn: Callable, args: tuple, kwargs: dict) -> tuple[bool, Any]:
    """Call ``fn`` on primal labels: ``(True, result)`` when the result is plain data without
    floats, ``(False, None)`` otherwise (the caller refuses the call as before, naming ``fn``)."""
    result = fn(*args, **kwargs)
    return (True, result) if _is_plain_data(result) else (False, None)


def given(value: Any) -> Any:
    """A C call's result on labels, as a value with zero derivative (the call made once, by
    ``plain_result``)."""
    return value


def _is_immutable_label(value: Any, depth: int = 0) -> bool:
    kind = type(value)
    if kind in _LABELS or isinstance(value, (type, np.integer, np.bool_)):
        return True
    if depth >= _NESTING:
        return False
    if kind is tuple or kind is frozenset:
        return all(_is_immutable_label(v, depth + 1) for v in value)
    if isinstance(value, enum.Enum):
        return _is_immutable_label(value.value, depth + 1)
    return False


def _is_plain_data(value: Any, depth: int = 0) -> bool:
    if _is_immutable_label(value):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "biuSU"
    if depth >= _NESTING or type(value) not in (list, tuple, dict, set, frozenset):
        return False
    items = [*value.keys(), *value.values()] if type(value) is dict else value
    return all(_is_plain_data(v, depth + 1) for v in items)


nondifferentiable(given)
