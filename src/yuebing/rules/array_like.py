"""The array_like boundary: which arguments of a call NumPy itself would pass through
``np.asarray``, so that every mode converts them with ``np.asarray``'s own rule before the
callee's rule runs, and the cotangents that reach the array flow back to the list's elements.

NumPy accepts a list, a tuple or a nested list of numbers wherever it takes an array
(``np.sin([a, 2 * a])``, ``x * [a, b]``, ``np.interp(t, [0, 1], [a, b])``). A rule written for
arrays would see a list and drop its derivative; instead the runtime of each mode (reverse,
forward, second order) asks ``conversions(fn, args, kwargs)`` which arguments to convert, and
converts them itself. This module decides; it holds no derivative.

What is converted (see ``docs/conventions.md``, "array_like arguments"):

* calls of NumPy and SciPy functions, ufuncs and ndarray methods: a list or tuple whose
  elements are numbers (floats among them) or nested lists/tuples/arrays of numbers, that
  ``np.asarray`` turns into one float or complex array. Lists of ints only carry no derivative
  but are converted too (a rule's cotangent map computes with its array arguments: ``x * 1.0``
  on a list of ints failed), except for parameters that take shapes, axes or indices
  (``_INDEX_PARAMETERS``) and functions whose parameters cannot be named (no signature):
  those keep their lists. Ufunc operands are always converted. Functions whose
  parameter is a *sequence of arrays* (``np.concatenate``, ``np.stack``...) and the array
  constructors themselves (``np.array``, ``np.asarray``) take lists as they are;
* an object NumPy reads through ``__array__`` (a ``np.poly1d``, a user class) given to a NumPy
  rule other than the zero-derivative ones and ``TAKES_ARRAY_OBJECTS``: ``np.asarray``'s rule
  refuses it by name when it carries float data (never a silent zero);
* operators (``x * [a, b]``, ``x - [3, 5]``, ``x += [a, b]``) when the other operand is a NumPy
  array or scalar, which is when NumPy (not Python's list protocol) gives the result.
"""
from __future__ import annotations

import inspect
import operator
import types
from typing import Any

import numpy as np

from .core import is_hashable

_ARRAY_OPERATORS = frozenset({
    operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv, operator.mod,
    operator.pow, operator.matmul, operator.lt, operator.le, operator.gt, operator.ge,
    operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
    operator.imod, operator.ipow, operator.imatmul, pow, divmod,
})

#: functions that take lists as they are: the converters themselves, and parameters that are a
#: sequence of arrays (iterated, not made one array)
_TAKES_SEQUENCES = frozenset(f for f in (
    np.array, np.asarray, np.asanyarray, np.ascontiguousarray, np.asfortranarray, np.copy,
    np.concatenate, np.stack, np.vstack, np.hstack, np.dstack, np.column_stack, getattr(np, "row_stack", None),
    np.block, np.select, np.piecewise, np.choose, np.lexsort, np.meshgrid, np.broadcast_arrays, np.ix_,
    np.linalg.multi_dot, np.ravel_multi_index, np.histogramdd, np.fromiter, np.nditer,
    # NumPy splits a list by its length, an array by the axis's: their rules take lists as they are
    np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit,
) if f is not None)

_NUMBER = (float, int, complex, np.number, np.bool_)

#: SciPy functions (and classes, whose instances are called) that read a tuple of arrays otherwise
#: than the array it would make: ``interpn``'s and ``RegularGridInterpolator``'s points as a tuple
#: of coordinate arrays, ``make_interp_spline``'s ``bc_type`` pairs. Their rule modules add them
#: (``takes_sequences``); converting such a tuple gave wrong values.
TAKES_SEQUENCES: set = set()


def takes_sequences(*targets: Any) -> None:
    """Pass lists and tuples to ``targets`` (functions, or classes whose instances are called) as
    they are."""
    for target in targets:
        TAKES_SEQUENCES.add(target)
        _APPLIES.pop(target, None)


def _registered_sequences(fn: Any) -> bool:
    for candidate in (fn, getattr(fn, "__func__", None), type(fn)):
        try:
            if candidate in TAKES_SEQUENCES:
                return True
        except TypeError:  # an unhashable callable
            pass
    return False


#: functions that shuffle a list in place: the list itself must reach the rule
_IN_PLACE_ON_LISTS = frozenset({"shuffle"})


def _numpy_owned(fn: Any) -> bool:
    """Whether ``fn`` is a NumPy or SciPy function, a ufunc or an ndarray method."""
    if getattr(fn, "__name__", None) in _IN_PLACE_ON_LISTS:
        return False
    if isinstance(fn, np.ufunc):
        return True
    owner = getattr(fn, "__self__", None)
    if isinstance(owner, (np.ndarray, np.generic)):
        return True
    objclass = getattr(fn, "__objclass__", None)
    if isinstance(objclass, type) and issubclass(objclass, (np.ndarray, np.generic)):
        return True
    module = getattr(fn, "__module__", None) or ""
    return module == "numpy" or module.startswith(("numpy.", "scipy.", "scipy"))


_APPLIES: dict = {}

#: functions of yuebing's own rule modules that take array-likes as NumPy does (a SciPy ufunc's
#: outputs, one function each: scipy_special_outputs.py): lists are converted for them too
CONVERTS_ARRAY_LIKES: set = set()


def applies(fn: Any) -> bool:
    """Whether calls of ``fn`` may need array_like conversion (cached per function; not for
    methods bound to an object, which are new at every access and would keep it alive)."""
    if TAKES_SEQUENCES and _registered_sequences(fn):
        return False
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, (types.ModuleType, type)):
        return _numpy_owned(fn)
    try:
        found = _APPLIES.get(fn)
    except TypeError:  # an unhashable callable
        return False
    if found is None:
        try:
            found = fn in _ARRAY_OPERATORS or fn in CONVERTS_ARRAY_LIKES or (fn not in _TAKES_SEQUENCES and _numpy_owned(fn))
        except TypeError:
            found = False
        _APPLIES[fn] = found
    return found


def _leaves_ok(value: Any, depth: int = 0) -> tuple[bool, bool]:
    """``(numeric, has_float)``: whether a nested list/tuple holds only numbers and numeric
    arrays, and whether a float or complex is among them."""
    if depth > 32:
        return False, False
    if isinstance(value, _NUMBER):
        return not isinstance(value, (bool, np.bool_)), isinstance(value, (float, complex, np.inexact))
    if type(value) is np.ndarray:
        return value.dtype.kind in "biufc", value.dtype.kind in "fc"
    if type(value) in (list, tuple):
        numeric, has_float = bool(value), False
        for e in value:
            n, f = _leaves_ok(e, depth + 1)
            if not n:
                return False, False
            has_float = has_float or f
        return numeric, has_float
    return False, False


def carries_floats(value: Any) -> bool:
    """Whether ``value`` (any nesting of lists, tuples, numbers and arrays) holds a float."""
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fcO"
    if isinstance(value, (list, tuple)):
        return any(carries_floats(v) for v in value)
    return not isinstance(value, (int, np.integer, np.bool_, str, bytes, type(None)))


def _convertible(value: Any, ints_too: bool) -> bool:
    if type(value) not in (list, tuple):
        return False
    numeric, has_float = _leaves_ok(value)
    if not numeric or not (has_float or ints_too):
        return False
    try:  # ragged lists are not one array: leave them to the rule (or NumPy's own error)
        converted = np.asarray(value)
    except (ValueError, TypeError):
        return False
    return converted.dtype.kind in "iufc"


_PLAIN = frozenset({np.ndarray, float, int, np.float64})
#: keyword values that are never converted (``x.sum(axis=0)``, ``keepdims=True``, ``ord="fro"``)
_PLAIN_KEYWORDS = _PLAIN | {bool, str, type(None)}


def conversions(fn: Any, primals: list, keywords: dict) -> list:
    """The arguments of ``fn(*primals, **keywords)`` to convert with ``np.asarray``: positions
    (ints) and keyword names. Empty for most calls; ``applies(fn)`` is the cheap test first."""
    if all(type(v) in _PLAIN for v in primals) and all(type(v) in _PLAIN_KEYWORDS for v in keywords.values()):
        return []  # arrays, numbers and flags: nothing to convert (the checks below would find nothing)
    if is_hashable(fn) and fn in _ARRAY_OPERATORS:
        if len(primals) != 2 or keywords:
            return []
        a, b = primals
        if isinstance(a, (np.ndarray, np.generic)) and _convertible(b, True):
            return [1]
        # ``list op= array``: lists have no in-place number methods, so NumPy's reflected operator
        # gives a new array; a list of floats becomes a float array the in-place rule may write
        # (ints alone stay a list, which the in-place rules send to the out-of-place operator)
        if isinstance(b, (np.ndarray, np.generic)) and _convertible(a, fn not in _INPLACE):
            return [0]
        return []
    ufunc = isinstance(fn, np.ufunc)
    objects_too = ufunc or not _takes_array_objects(fn)
    names = None if ufunc else _parameter_names(fn)
    found: list = [i for i, v in enumerate(primals)
                   if _convertible(v, ufunc or _takes_values(names, i)) or objects_too and _array_object(v)
                   or ufunc and takes_part_in_numpy(v)]
    found += [k for k, v in keywords.items()
              if k not in _INDEX_PARAMETERS and _convertible(v, ufunc or names is not None and k in names[0])]
    return found


#: parameters of NumPy/SciPy functions that take shapes, axes, indices or masks: a list of ints
#: there is not an array of values (``np.reshape(x, [2, 3])``, ``np.take(x, [0, 2])``)
_INDEX_PARAMETERS = frozenset({
    "out", "shape", "newshape", "new_shape", "axis", "axes", "axis1", "axis2", "axisa", "axisb", "axisc",
    "source", "destination", "start", "indices", "ind", "indices_or_sections", "sections", "obj", "reps",
    "repeats", "pad_width", "shift", "size", "dims", "dimensions", "kth", "order", "s", "subscripts",
    "sorter", "where", "mask", "minlength", "key", "subset_by_index", "dtype", "strides", "buffer", "like", "casting", "k", "n",
})

_PARAMETERS: dict = {}


def _parameter_names(fn: Any) -> tuple | None:
    """``(names, positional names, *args name)`` of ``fn``'s signature, or None without one.
    Cached per function; a method bound to an object by its class's function (its ``self``
    dropped), as the bound method is new at every access and would keep the object alive."""
    owner = getattr(fn, "__self__", None)
    if owner is not None and not isinstance(owner, (types.ModuleType, type)):
        unbound = getattr(type(owner), getattr(fn, "__name__", ""), None)
        found = _parameter_names(unbound) if unbound is not None and unbound is not fn else None
        return None if found is None or not found[1] else (found[0], found[1][1:], found[2])
    try:
        return _PARAMETERS[fn]
    except (KeyError, TypeError):
        pass
    try:
        parameters = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):
        found = None
    else:
        positional = tuple(p.name for p in parameters if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD))
        star = next((p.name for p in parameters if p.kind is p.VAR_POSITIONAL), None)
        if _ndarray_method(fn):  # an ndarray method's *args are shapes, axes or indices (reshape, item)
            star = None
        found = (frozenset(p.name for p in parameters), positional, star)
    try:
        _PARAMETERS[fn] = found
    except TypeError:  # an unhashable callable
        pass
    return found


def _ndarray_method(fn: Any) -> bool:
    objclass = getattr(fn, "__objclass__", None)
    return isinstance(getattr(fn, "__self__", None), (np.ndarray, np.generic)) \
        or isinstance(objclass, type) and issubclass(objclass, (np.ndarray, np.generic))


def _takes_values(names: tuple | None, position: int) -> bool:
    """Whether positional argument ``position`` binds to a parameter of values (not an index one)."""
    if names is None:
        return False
    _, positional, star = names
    name = positional[position] if position < len(positional) else star
    return name is not None and name not in _INDEX_PARAMETERS


#: functions whose rules take an object with ``__array__`` as it is: zero-derivative ones
#: (``declare.nondifferentiable`` adds them: ``np.isscalar(p)`` in poly1d's own code) and rules
#: that follow a ``np.poly1d`` themselves (``np.polyval``)
TAKES_ARRAY_OBJECTS: set = set()


def _takes_array_objects(fn: Any) -> bool:
    try:
        return fn in TAKES_ARRAY_OBJECTS
    except TypeError:  # an unhashable callable
        return False


def _array_object(value: Any) -> bool:
    """An object NumPy turns into an array through its ``__array__`` (a ``np.poly1d``, a user
    class): a rule would see an object without a derivative (``np.atleast_1d(p)`` gave a zero
    gradient), so it goes through ``np.asarray``'s rule, which follows it or refuses it by name
    (never a silent zero)."""
    return not isinstance(value, (np.ndarray, np.generic, *_NUMBER, str, bytes, list, tuple, type(None))) \
        and hasattr(type(value), "__array__")


def takes_part_in_numpy(value: Any) -> bool:
    """An object that declares itself to NumPy without ``__array__`` (a SciPy sparse matrix, by its
    ``__array_priority__``; a class with ``__array_ufunc__``): a ufunc holds it in an object array
    and calls its own methods (``np.abs(A)`` calls ``A.__abs__``), which the ufunc's rule would run
    on the primal, dropping the derivative; ``np.asarray``'s rule refuses it instead."""
    tp = type(value)
    return not isinstance(value, (np.ndarray, np.generic, *_NUMBER, str, bytes, list, tuple, type(None))) \
        and (getattr(tp, "__array_priority__", None) is not None or getattr(tp, "__array_ufunc__", None) is not None)


def rdata_slot(key: Any, n_args: int, keywords: list) -> int:
    """Where the rdata of converted argument ``key`` (a position or a keyword name) stands among
    a pullback's results: the function's own first, then positional, then keywords in order."""
    return 1 + key if isinstance(key, int) else 1 + n_args + keywords.index(key)


_INPLACE = frozenset({operator.iadd, operator.isub, operator.imul, operator.itruediv, operator.ifloordiv,
                      operator.imod, operator.ipow, operator.imatmul})
