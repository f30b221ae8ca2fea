"""Classify primal values into the kinds of DESIGN.md §3, and take them apart and rebuild them.

A *kind* says which tangent type a primal value has and how the tangent operations walk it. It is
decided per type (cached), refined by value for arrays (dtype) and functions (captured cells).

Kinds and their tangents:

========== ============================================== =====================================
kind       primal                                         tangent
========== ============================================== =====================================
FLOAT      float, NumPy real floating scalar              float
COMPLEX    complex, NumPy complex scalar                  complex
ARRAY      ndarray of float/complex dtype                 ndarray, same shape and dtype
           (numpy.ma masked arrays too)                   (of the data: tangents/masked.py)
           structured array or record with float fields   the same, its float fields the
                                                          derivatives (structured.py)
OBJECT_ARRAY ndarray of object dtype holding float data   object ndarray of the elements' tangents
                                                          (fdata; object_arrays.py)
NONDIFF    int, bool, str, None, type, module, int arrays, NoTangent
           sets of labels, RNGs, plain functions, registered types
SET        set, frozenset holding an element with a tangent   SetTangent: element -> its tangent (fdata)
TUPLE      tuple, namedtuple                              tuple / same namedtuple (or NoTangent)
LIST       list                                           list (fdata)
DEQUE      collections.deque                              deque, same maxlen (fdata; deques.py)
DICT       dict                                           dict with the same keys (fdata)
VIEW       d.values(), d.items() holding floats           the same view of d's tangent (fdata;
                                                          dict_views.py)
FROZEN     frozen dataclass                               Tangent (or NoTangent)
OBJECT     object with __dict__ and/or __slots__          MutableTangent (fdata)
CELL       closure cell                                   MutableTangent with field cell_contents
FUNCTION   closure (function with captured cells)         Tangent, one field per free variable
PARTIAL    functools.partial                              Tangent(func, args, keywords)
METHOD     bound method (Python or builtin)               Tangent(__self__, __func__)
========== ============================================== =====================================
"""
from __future__ import annotations

import _thread
import collections
import copy
import dataclasses
import enum
import functools
import logging
import random
import sys
import types
from typing import Any, Callable

import numpy as np

from .dict_views import VALUE_VIEW_NAMES, view_like, view_name, view_parts
from .deques import DEQUE, is_plain_deque_type, refused_subclass, subclass_advice
from .function_copies import function_copy
from .masked import SEEN as MASKED_SEEN
from .object_arrays import OBJECT_ARRAY, fill, tangent_shell
from .object_arrays import elements as object_elements
from .structured import has_float_fields
from .types import _Marker
from .walk import ATTR, ITEM, StructureError

FLOAT = "float"
COMPLEX = "complex"
ARRAY = "array"
NONDIFF = "nondifferentiable"
TUPLE = "tuple"
LIST = "list"
DICT = "dict"
FROZEN = "frozen object"
OBJECT = "object"
CELL = "cell"
FUNCTION = "function"
PARTIAL = "partial"
METHOD = "method"
SET = "set"
VIEW = "view of a dict"

#: Kinds whose tangent is created once per primal object and mutated in place (fdata). A
#: frozenset is immutable, but its tangent is identity data like a set's (docs/tangents.md).
MUTABLE_KINDS = frozenset({LIST, DICT, OBJECT, CELL, SET, DEQUE, VIEW, OBJECT_ARRAY})

_NONDIFF_TYPES: tuple = (
    bool, int, str, bytes, type(None), type, types.ModuleType, range, slice,
    bytearray, type(Ellipsis), type(NotImplemented), types.CodeType,
    types.WrapperDescriptorType, types.MethodDescriptorType, types.GetSetDescriptorType, types.MemberDescriptorType,
    np.integer, np.bool_, np.dtype, np.ufunc, random.Random, np.random.Generator,
    np.random.RandomState, np.random.BitGenerator, np.random.SeedSequence, enum.Enum,
    BaseException, property, staticmethod, classmethod, _Marker, types.MappingProxyType,
    type(np._NoValue), type(np.empty(0).flags),  # NumPy's "not given" marker and x.flags, read by its own Python
    _thread.LockType, _thread.RLock,  # locks: threads' state, never a derivative's (logging's handlers hold one)
    # logging's loggers, handlers (both Filterers), their manager, formatters and adapters: a walk
    # of a logger reached its manager's dict of every logger in the process (2166 loggers once a
    # test suite's libraries were imported: yb.hvp of a solve_ivp whose rhs logs took 103 s, not 0.5)
    logging.Filterer, logging.Manager, logging.PlaceHolder, logging.Formatter, logging.LoggerAdapter,
)

#: what a numpy.ma masked array reaching a rule that would ignore its mask is told (the refusal
#: itself is in ``rules/numpy_masked.py``; a masked array's tangent is its data's: ``tangents/masked.py``)
MASKED_ARRAYS = (
    "yuebing differentiates numpy.ma masked arrays through numpy.ma's own functions and methods only "
    "(np.ma.sqrt(m), m.sum(), m.filled(0.0), m.data...), since this one would ignore the mask; use the "
    "numpy.ma form, or work on plain arrays: np.sum(m.filled(0.0)) for np.sum(m)"
)

_registered_nondiff: set[type] = set()
_kind_of_type: dict[type, str] = {}


def register_nondifferentiable_type(tp: type) -> type:
    """Declare that values of ``tp`` (and subclasses) have tangent ``NoTangent``.

    Usable as a class decorator. Use it for handles, caches and other state that a derivative
    must not flow through.
    """
    _registered_nondiff.add(tp)
    _kind_of_type.clear()
    return tp


def _has_instance_fields(tp: type) -> bool:
    if tp.__dictoffset__ != 0:
        return True
    return any("__slots__" in vars(cls) for cls in tp.__mro__[:-1])


def _kind_for_type(tp: type) -> str | None:
    if issubclass(tp, (set, frozenset)):
        return SET  # refined by value in primal_kind
    if tp in _DICT_VIEW_TYPES:
        return _DICT_VIEW  # refined by value in primal_kind
    if issubclass(tp, _NONDIFF_TYPES) or any(issubclass(tp, r) for r in _registered_nondiff):
        return NONDIFF
    if issubclass(tp, (float, np.floating)):
        return FLOAT
    if issubclass(tp, (complex, np.complexfloating)):
        return COMPLEX
    if issubclass(tp, np.void):
        return ARRAY  # a structured array's record: refined by dtype in primal_kind (structured.py)
    if issubclass(tp, np.ndarray):
        MASKED_SEEN[0] = MASKED_SEEN[0] or issubclass(tp, np.ma.MaskedArray)
        return ARRAY  # numpy.ma masked arrays too: their tangent is their data's (tangents/masked.py)
    if issubclass(tp, tuple):
        return TUPLE
    if issubclass(tp, list):
        return LIST
    if is_plain_deque_type(tp):
        return DEQUE
    if refused_subclass(tp):
        return None
    if issubclass(tp, dict):
        return DICT
    if tp is types.CellType:
        return CELL
    if tp is types.FunctionType:
        return FUNCTION
    if tp is functools.partial:
        return PARTIAL
    if tp is types.MethodType or tp is types.BuiltinMethodType:  # BuiltinMethodType is BuiltinFunctionType
        return METHOD
    if dataclasses.is_dataclass(tp) and tp.__dataclass_params__.frozen:
        return FROZEN
    if not tp.__flags__ & _HEAP_TYPE and _is_c_callable(tp):
        # A callable implemented in C (e.g. NumPy's function dispatchers) is a function, not
        # data; creating a blank one to copy it into may even crash the interpreter.
        return NONDIFF
    if _has_instance_fields(tp) and tp.__module__ != "builtins":
        return OBJECT
    if issubclass(tp, _thread._local):
        # threading.local: an object whose fields live in a per-thread __dict__ (its __dictoffset__
        # is 0). Differentiated code runs on one thread, so its fields are followed as an object's
        # (scikit-learn keeps its configuration in one and writes it from the first call)
        return OBJECT
    if tp is object:  # object(): a sentinel (``_MISSING = object()``), which holds nothing
        return NONDIFF
    return None


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: set for classes created by a class statement


def _is_c_callable(tp: type) -> bool:
    return "__call__" in tp.__dict__ or any("__call__" in vars(base) for base in tp.__mro__[:-1])


#: Called before a type is classified for the first time: ``rules/lazy.py`` sets it to load the
#: rules of a library imported since (they may declare its types non-differentiable).
BEFORE_NEW_TYPE: list[Callable[[], object]] = []


def primal_kind(x: Any) -> str:
    """The kind of ``x`` (see the module docstring); raises ``StructureError`` if it has none."""
    tp = type(x)
    kind = _kind_of_type.get(tp)
    if kind is None:
        for hook in BEFORE_NEW_TYPE:
            hook()
        kind = _kind_for_type(tp)
        if kind is None and refused_subclass(tp):
            raise StructureError(subclass_advice(tp))
        if kind is None:
            raise StructureError(
                f"yuebing has no tangent type for {tp.__module__}.{tp.__qualname__}; if values of "
                "this type carry no derivative, declare it with "
                "yuebing.tangents.register_nondifferentiable_type"
            )
        _kind_of_type[tp] = kind
    if kind is DICT and x is sys.modules:  # the module registry: modules, and whatever libraries put there (a
        return NONDIFF  # struct.Struct): library code reads it (array_api_compat), no derivatives
    if kind is SET:
        return _set_kind(x)
    if kind is _DICT_VIEW:
        return _dict_view_kind(x)
    if kind is ARRAY:
        code = x.dtype.kind
        if code in "fc":
            return ARRAY
        if code == "O":
            return _object_array_kind(x)
        if code == "V" and has_float_fields(x.dtype):
            return ARRAY  # a structured array (or record) with float fields: structured.py
        return NONDIFF
    if kind is FUNCTION:
        return FUNCTION if _closure_may_carry_tangent(x) else NONDIFF
    if kind is METHOD and tp is types.BuiltinMethodType:
        owner = x.__self__
        if owner is None or isinstance(owner, (types.ModuleType, type)) or is_function_record(owner):
            return NONDIFF
    return kind


def is_function_record(owner: Any) -> bool:
    """Whether ``owner``, the ``__self__`` of a builtin function, is the record pybind11 binds each
    free function to (a ``PyCapsule`` in older versions): the function is then a module's, like
    ``scipy.spatial._distance_pybind.cdist_euclidean``, not a method of data."""
    name = type(owner).__name__
    return name == "PyCapsule" or name.startswith("pybind11_detail_function_record")


def _object_array_kind(x: np.ndarray) -> str:
    """An object-dtype array of labels (``np.array([[None] * n]).T``, a table of strings and ints)
    or of functions without closures (pykalman's ``array1d(transition_functions)``) carries no
    derivative; one holding anything else has an object array of its elements' tangents
    (``object_arrays.py``)."""
    if all(type(v) in _PLAIN_LABELS or type(v) is types.FunctionType and not v.__closure__ for v in x.flat):
        return NONDIFF
    return OBJECT_ARRAY


_NUMBER_ELEMENTS = (float, complex, np.floating, np.complexfloating)
_PLAIN_LABELS = {int, bool, str, bytes, type(None)}
_PLAIN_ELEMENTS = _PLAIN_LABELS | {float, complex, np.float64, np.float32, np.complex128}


def _set_kind(x: Any) -> str:
    """A set (or frozenset) holding an element that carries a derivative -- a float or complex
    number, a tuple or frozenset with one inside, a hashable object holding float data (a frozen
    dataclass, an instance hashed by identity, a task) -- has a ``SetTangent`` keyed by element; a
    set of labels (ints, strings, tuples of them) has none."""
    kinds = set(map(type, x))  # one pass in C: sets are read often (every method call)
    if kinds <= _PLAIN_LABELS:
        return NONDIFF
    if kinds <= _PLAIN_ELEMENTS:
        return SET
    found = NONDIFF
    for v in x:
        if not _label(v):
            primal_kind(v)  # (an element of a type with no tangent is refused here, by name)
            found = SET
    return found


def set_element_carries(v: Any) -> bool:
    """Whether set element ``v`` has a tangent a set's ``SetTangent`` keeps: anything hashable that
    is not a label (a number, a tuple or frozenset with a number inside, an object with float data)."""
    return isinstance(v, _NUMBER_ELEMENTS) or not _label(v)


_DICT_VIEW = "dict view"
# The dict view classes, named once for every layer. OrderedDict's views subclass these, so an
# isinstance test takes them too; _DICT_VIEW_TYPES lists them for exact-type lookups.
DICT_KEYS, DICT_VALUES, DICT_ITEMS = type({}.keys()), type({}.values()), type({}.items())
VALUE_CARRYING_DICT_VIEWS = (DICT_VALUES, DICT_ITEMS)  # the views whose elements can carry tangents
_DICT_VIEW_TYPES = frozenset(type(view) for mapping in ({}, collections.OrderedDict())
                             for view in (mapping.keys(), mapping.values(), mapping.items()))


def _dict_view_kind(x: Any) -> str:
    """A dict's keys, values or items handed on as a view (``sig.parameters.values()``, read by
    ``inspect.Signature.bind``) carry no derivative when nothing in them does; a values or items
    view of float data has the same view of its dict's tangent as its tangent (``VIEW``). A keys
    view of float keys has none: the dict's tangent has no slot for its keys' derivatives."""
    if all(_label(v) for v in x):
        return NONDIFF
    if view_name(x) in VALUE_VIEW_NAMES:
        return VIEW
    raise StructureError(
        f"yuebing has no tangent type for a {type(x).__name__} holding values that carry derivatives; "
        f"pass list({type(x).__name__.split('_')[-1]}) instead")


def is_number_tuple(v: Any) -> bool:
    """Whether ``v`` is a tuple (or namedtuple, nested ones too) of numbers and labels with a number
    inside: a set keeps its tangent, a tuple of the numbers' tangents, as it keeps a number's."""
    if not isinstance(v, tuple):
        return False
    stack, found = list(v), False
    while stack:
        item = stack.pop()
        if isinstance(item, _NUMBER_ELEMENTS):
            found = True
        elif isinstance(item, tuple):
            stack.extend(item)
        elif not _label(item):
            return False
    return found


def _label(v: Any) -> bool:
    """Whether hashable ``v`` carries no derivative (an int, a string, a tuple of them...)."""
    stack = [v]
    while stack:
        item = stack.pop()
        if isinstance(item, _NUMBER_ELEMENTS):
            return False
        if isinstance(item, (tuple, frozenset)):
            stack.extend(item)
        elif _kind_for_type(type(item)) is not NONDIFF:
            return False
    return True


def canonical_order(elements: Any) -> list:
    """A set's elements in an order that does not depend on its history (numbers by value, tuples
    by their elements' ranks, frozensets by their sorted ranks, objects by type and their fields'
    ranks, then everything else by type and repr): how two sets' elements are paired."""
    def rank(v: Any, depth: int = 0) -> tuple:
        if isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool):
            return (0, float(v), "")
        if isinstance(v, (complex, np.complexfloating)):
            return (1, abs(v), repr(v))
        if isinstance(v, tuple):  # (not by repr: "(10.0," sorts before "(9.0,")
            return (2, 0.0, "", tuple(rank(e, depth) for e in v))
        if isinstance(v, frozenset):
            return (2, 0.0, "frozenset", tuple(sorted(rank(e, depth) for e in v)))
        if depth == 0 and _kind_for_type(type(v)) in (OBJECT, FROZEN):  # (not by repr: it may show the address)
            return (2, 0.0, f"{type(v).__qualname__}:", tuple(rank(f, 1) for f in object_fields(v).values()))
        return (2, 0.0, f"{type(v).__qualname__}:{v!r}")

    return sorted(elements, key=rank)


def _closure_may_carry_tangent(fn: types.FunctionType, seen: frozenset = frozenset()) -> bool:
    """Whether a cell of ``fn`` holds (or may come to hold: an empty one) something with a
    tangent. A function in a cell carries one only if its own cells do, at any depth (a helper
    calling a helper that reads only modules has none); ``seen``: the functions being asked
    about, which a recursive closure reaches again (it carries a tangent only through others)."""
    seen = seen | {id(fn)}
    for cell in fn.__closure__ or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # empty cell: may be filled later
            return True
        if _kind_of_type.get(type(contents)) is not NONDIFF and not _is_plain_nondiff(contents, seen):
            return True
    return False


def _is_plain_nondiff(x: Any, seen: frozenset) -> bool:
    kind = _kind_for_type(type(x))
    if kind is SET:
        try:
            kind = _set_kind(x)
        except StructureError:
            return False
    if kind is NONDIFF:
        return True
    if type(x) is not types.FunctionType:
        return False
    return not x.__closure__ or id(x) in seen or not _closure_may_carry_tangent(x, seen)


# --------------------------------------------------------------------------------------------
# Taking values apart
# --------------------------------------------------------------------------------------------

def _slot_names(tp: type) -> tuple[str, ...]:
    names = []
    for cls in reversed(tp.__mro__[:-1]):
        slots = vars(cls).get("__slots__", ())
        if isinstance(slots, str):
            slots = (slots,)
        for name in slots:
            if name in ("__dict__", "__weakref__"):
                continue
            if name.startswith("__") and not name.endswith("__"):
                name = f"_{cls.__name__.lstrip('_')}{name}"
            names.append(name)
    return tuple(names)


_slots_cache: dict[type, tuple[str, ...]] = {}


def object_fields(x: Any) -> dict[str, Any]:
    """The instance fields of an object: set ``__slots__`` in MRO order, then ``__dict__``."""
    tp = type(x)
    slots = _slots_cache.get(tp)
    if slots is None:
        slots = _slots_cache[tp] = _slot_names(tp)
    fields = {}
    for name in slots:
        try:
            fields[name] = object.__getattribute__(x, name)
        except AttributeError:  # slot never assigned
            pass
    instance_dict = getattr(x, "__dict__", None)
    if instance_dict:
        fields.update(instance_dict)
    return fields


def parts(x: Any, kind: str) -> tuple[list, list, str]:
    """``(keys, children, key_style)`` of a container primal of the given kind."""
    if kind is TUPLE or kind is LIST or kind is DEQUE:
        return list(range(len(x))), list(x), ITEM
    if kind is DICT:
        return list(x.keys()), list(x.values()), ITEM
    if kind is OBJECT_ARRAY:
        return list(range(x.size)), object_elements(x), ITEM
    if kind is VIEW:
        keys, children = view_parts(x)
        return keys, children, ATTR
    if kind is OBJECT or kind is FROZEN:
        fields = object_fields(x)
        return list(fields), list(fields.values()), ATTR
    if kind is SET:
        elements = canonical_order(x)
        return elements, elements, ITEM
    if kind is CELL:
        try:
            return ["cell_contents"], [x.cell_contents], ATTR
        except ValueError:
            return [], [], ATTR
    if kind is FUNCTION:
        return list(x.__code__.co_freevars), list(x.__closure__), ATTR
    if kind is PARTIAL:
        return ["func", "args", "keywords"], [x.func, x.args, x.keywords], ATTR
    if kind is METHOD:
        if type(x) is types.BuiltinMethodType:
            return ["__self__"], [x.__self__], ATTR
        return ["__self__", "__func__"], [x.__self__, x.__func__], ATTR
    raise AssertionError(f"not a container kind: {kind}")


# --------------------------------------------------------------------------------------------
# Rebuilding values (for structural copies and add_to_primal)
# --------------------------------------------------------------------------------------------

def _new_instance(x: Any) -> Any:
    tp = type(x)
    try:
        return tp.__new__(tp)
    except TypeError:
        # __new__ wants arguments: let copy's reduce protocol make a blank-enough shell.
        return copy.copy(x)


def _set_field(obj: Any, name: str, value: Any, slots: tuple[str, ...]) -> None:
    if name in slots:
        object.__setattr__(obj, name, value)
    else:
        obj.__dict__[name] = value


def new_mutable_shell(x: Any, kind: str) -> Any:
    """An empty primal of the same type as mutable ``x``, to be filled by ``fill_mutable``."""
    if kind is LIST or kind is DICT:
        if type(x) is list:
            return []
        if type(x) is dict:
            return {}
        shell = copy.copy(x)  # a subclass: keeps its attributes, e.g. a defaultdict's factory
        shell.clear()
        return shell
    if kind is CELL:
        return types.CellType()
    if kind is DEQUE:  # (its type: a subclass adding only methods too, without running its __init__)
        shell = collections.deque.__new__(type(x))
        collections.deque.__init__(shell, maxlen=x.maxlen)
        return shell
    if kind is OBJECT_ARRAY:
        return tangent_shell(x)
    return _new_instance(x)


def fill_mutable(shell: Any, kind: str, keys: list, values: list) -> Any:
    if kind is LIST:
        shell[:] = values
    elif kind is DEQUE:
        shell.clear()
        shell.extend(values)
    elif kind is OBJECT_ARRAY:
        fill(shell, values)
    elif kind is DICT:
        shell.clear()
        shell.update(zip(keys, values))
    elif kind is CELL:
        if keys:
            shell.cell_contents = values[0]
    else:
        slots = _slots_cache.get(type(shell)) or _slot_names(type(shell))
        for name, value in zip(keys, values):
            _set_field(shell, name, value, slots)
    return shell


def build_immutable(x: Any, kind: str, keys: list, values: list) -> Any:
    """A new immutable primal like ``x`` with children ``values``."""
    if kind is TUPLE:
        if type(x) is tuple:
            return tuple(values)
        return tuple.__new__(type(x), values)
    if kind is FROZEN:
        obj = _new_instance(x)
        fill_mutable(obj, OBJECT, keys, values)
        return obj
    if kind is FUNCTION:
        return function_copy(x, closure=tuple(values))
    if kind is PARTIAL:
        func, args, keywords = values
        rebuilt = functools.partial(func)
        # __setstate__ adopts an exact dict as is, so an aliased keywords dict stays aliased.
        rebuilt.__setstate__((func, tuple(args), keywords, None))
        return rebuilt
    if kind is METHOD:
        if type(x) is types.BuiltinMethodType:
            return getattr(values[0], x.__name__)
        return types.MethodType(values[1], values[0])
    if kind is VIEW:  # (a view is identity data, but made from its dict's copy once that exists)
        return view_like(x, values[0])
    raise AssertionError(f"not an immutable container kind: {kind}")


_RNG_TYPES = (random.Random, np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def is_mutable_nondiff(x: Any) -> bool:
    """Non-differentiable values that a structural copy must still copy (they can be mutated)."""
    return isinstance(x, (np.ndarray, set, bytearray) + _RNG_TYPES)  # (sets of labels)


def copy_nondiff(x: Any) -> Any:
    """Copy a mutable non-differentiable value (random generators keep their state)."""
    return copy.deepcopy(x) if isinstance(x, _RNG_TYPES) else copy.copy(x)


def rng_state(x: Any) -> Any:
    """The comparable state of a random generator, or None if ``x`` is not one."""
    if isinstance(x, random.Random):
        return x.getstate()
    if isinstance(x, np.random.Generator):
        return x.bit_generator.state
    if isinstance(x, np.random.BitGenerator):
        return x.state
    if isinstance(x, np.random.RandomState):
        return repr(x.get_state(legacy=False))
    return None
