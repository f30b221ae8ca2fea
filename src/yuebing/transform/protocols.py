"""Python's call protocols, resolved once for every mode: which kind of callable a call reaches
(``dispatch``, with a ``CallMode`` of handlers per mode), how its arguments fill a Python
function's parameters (``bind_call``, ``SourceFunction``), and the protocols of user classes.

``a + b`` on a user class runs ``type(a).__add__`` (or ``type(b).__radd__``), ``obj.name`` on a
property runs its getter: the call a differentiated program makes (``operator.add``,
``getattr``) reaches Python methods that yuebing differentiates from source like any other. Which
method, with which operands, is the same question in reverse mode (``runtime.py``), forward mode
(``forward_runtime.py``) and second order (``second_order.py``); this module answers it, and each
mode runs the answer with its own values (coduals, duals, 4-tuples).
"""
from __future__ import annotations

import collections
import functools
import operator
import os
import types
from typing import Any, Callable, NamedTuple

import numpy as np

from ..frontend.underscore_names import user_parameter
from ..ir.primitives import made_exception
from ..rules import attribute_protocol
from ..rules.cached_calls import answered_by_cache, cached_call, refuse_captured_floats
from ..rules._comparisons import is_builtin_key, python_key
from ..rules.comparing_calls import comparing_call, may_compare
from ..rules.containers.deque_arguments import method_on_items, plain_deque_call
from ..rules.core import CoDual, Dual, RuleArgumentError, describe_callable
from ..rules.exception_data import carry_handed
from ..rules.iteration import call_listed, is_consumer, listing_user_iterators
from ..rules.label_calls import given, plain_result, takes_labels_only
from ..rules.numpy_internals import ufunc_call_definition
from ..rules.numpy_masked import masked_form, refuse_masked_arguments
from ..rules.scipy_sparse_ufuncs import sparse_ufunc_form
from ..rules._cached_properties import first_read
from ..rules.bunch_data import is_bunch, is_generated_property
from ..rules.bunch_records import set_attribute
from ..rules.exception_data import as_class_call
from ..rules.single_dispatch import (bound_implementation, is_register, register_followed, registered_value,
                                    singledispatch_implementation)
from ..tangents.deques import is_plain_deque_type
from ..tangents.kinds import MASKED_ARRAYS
from ..tangents.types import _FieldTangent
from .object_array_dispatch import object_array_form
from .structured_dispatch import structured_array_form
from .new_construction import through_type_call, type_call_of

BINARY_DUNDERS = {
    operator.add: ("__add__", "__radd__"), operator.sub: ("__sub__", "__rsub__"),
    operator.mul: ("__mul__", "__rmul__"), operator.truediv: ("__truediv__", "__rtruediv__"),
    operator.floordiv: ("__floordiv__", "__rfloordiv__"), operator.mod: ("__mod__", "__rmod__"),
    operator.pow: ("__pow__", "__rpow__"), operator.matmul: ("__matmul__", "__rmatmul__"),
    operator.lt: ("__lt__", "__gt__"), operator.le: ("__le__", "__ge__"),
    operator.gt: ("__gt__", "__lt__"), operator.ge: ("__ge__", "__le__"),
    operator.eq: ("__eq__", "__eq__"), operator.ne: ("__ne__", "__ne__"),
}
INPLACE_DUNDERS = {
    operator.iadd: ("__iadd__", operator.add), operator.isub: ("__isub__", operator.sub),
    operator.imul: ("__imul__", operator.mul), operator.itruediv: ("__itruediv__", operator.truediv),
    operator.ifloordiv: ("__ifloordiv__", operator.floordiv), operator.imod: ("__imod__", operator.mod),
    operator.ipow: ("__ipow__", operator.pow), operator.imatmul: ("__imatmul__", operator.matmul),
}
UNARY_DUNDERS = {operator.neg: "__neg__", operator.pos: "__pos__", abs: "__abs__",
                 operator.getitem: "__getitem__", operator.setitem: "__setitem__",
                 operator.delitem: "__delitem__", len: "__len__", float: "__float__"}

_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: classes made by a class statement


class UndefinedGlobal:
    """Stands for a global that did not exist when the call started (NameError on use)."""

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return f"<undefined global {self.name!r}>"


def may_be_operator(fn: Any) -> bool:
    """Whether calls of ``fn`` can reach a user class's dunder (a cheap test before resolving)."""
    return isinstance(fn, (types.BuiltinFunctionType, type)) \
        and (fn in BINARY_DUNDERS or fn in INPLACE_DUNDERS or fn in UNARY_DUNDERS)


def python_method(obj: Any, name: str) -> types.FunctionType | None:
    """``type(obj)``'s method ``name`` if it is written in Python (a user class), else None."""
    tp = type(obj)
    if not tp.__flags__ & _HEAP_TYPE:
        return None  # a builtin or C type (float, ndarray...): no Python dunders
    for klass in tp.__mro__:
        attr = klass.__dict__.get(name)
        if attr is not None:
            return attr if isinstance(attr, types.FunctionType) else None
    return None


def find_property(cls: type, name: Any) -> property | None:
    """The property ``name`` of class ``cls``, if that attribute is one."""
    if not isinstance(name, str):
        return None
    for klass in cls.__mro__:
        attr = klass.__dict__.get(name)
        if attr is not None:
            return attr if isinstance(attr, property) else None
    return None


def property_function(fn: Any, primals: list) -> types.FunctionType | None:
    """The Python getter (``getattr(obj, name)``) or setter (``setattr(obj, name, v)``) a call
    reaches through a user class's property, if any."""
    if fn is getattr and is_generated_property(primals[0], primals[1]):
        return None  # (a tuple bunch's extra field: the getattr rule reads it, rules/bunch_data.py)
    if fn is getattr and 2 <= len(primals) <= 3 or fn is setattr and len(primals) == 3:
        prop = find_property(type(primals[0]), primals[1])
        if prop is None and fn is getattr:  # a functools.cached_property read before it is computed, if one
            return first_read(primals[0], primals[1])
        function = None if prop is None else prop.fget if fn is getattr else prop.fset
        return function if isinstance(function, types.FunctionType) else None
    return None


def _found_without_getattr(obj: Any, name: str) -> bool:
    """Whether ``object.__getattribute__`` finds ``name`` on ``obj`` (an instance field, a set
    slot or a class attribute), so that Python never calls the class's ``__getattr__`` for it."""
    for klass in type(obj).__mro__:
        if name in klass.__dict__:
            attr = klass.__dict__[name]
            if isinstance(attr, types.MemberDescriptorType):  # a slot: found only once assigned
                try:
                    attr.__get__(obj, type(obj))
                except AttributeError:
                    return False
            return True
    namespace = getattr(obj, "__dict__", None)
    return isinstance(namespace, dict) and name in namespace


#: per class, whether it defines an attribute dunder (a bounded cache: classes made inside a
#: function are new each call). A dunder added to a class after it was cached is still not a
#: silent error: the getattr and setattr rules refuse what they cannot follow.
_ATTRIBUTE_ACCESS: dict = {}


def _overrides_attribute_access(tp: type) -> bool:
    """Whether a class (below ``object``) defines ``__getattr__``, ``__getattribute__``,
    ``__setattr__`` or ``__delattr__``: every ``obj.name`` of differentiated code asks this."""
    found = _ATTRIBUTE_ACCESS.get(tp)
    if found is None:
        if len(_ATTRIBUTE_ACCESS) > 1024:
            _ATTRIBUTE_ACCESS.clear()
        found = _ATTRIBUTE_ACCESS[tp] = bool(tp.__flags__ & _HEAP_TYPE) and any(  # C types: no Python dunders
            name in klass.__dict__ for klass in tp.__mro__[:-1]
            for name in ("__getattr__", "__getattribute__", "__setattr__", "__delattr__"))
    return found


_READS = {(False, 2): None, (False, 3): attribute_protocol.getattr_or_default,
          (True, 2): attribute_protocol.getattribute_then_getattr,
          (True, 3): attribute_protocol.getattribute_getattr_or_default}


def attribute_method(fn: Any, args: tuple) -> types.FunctionType | None:
    """The Python function ``getattr``/``setattr``/``delattr`` reaches on an instance of a user
    class overriding ``__getattribute__``, ``__getattr__`` (for a name not found otherwise),
    ``__setattr__`` or ``__delattr__``, taking the call's arguments as they are (a definition of
    ``rules/attribute_protocol`` where a default or a fallback is involved); None otherwise."""
    obj = _primal_of_value(args[0])  # args: the call's arguments in the mode's values
    tp = type(obj)
    found = _ATTRIBUTE_ACCESS.get(tp)
    if found is False or found is None and not _overrides_attribute_access(tp):
        return None  # the common case
    primals = [_primal_of_value(a) for a in args]
    if len(primals) < 2 or not isinstance(primals[1], str) or isinstance(obj, type):
        return None
    if fn is getattr and len(primals) == 2 and isinstance(obj, _FieldTangent) and primals[1] in obj.fields:
        return attribute_protocol.tangent_field  # g.w of an object's gradient (api/gradient_objects.py)
    if fn is getattr and len(primals) in (2, 3):
        getattribute = python_method(obj, "__getattribute__")
        if getattribute is None:
            if python_method(obj, "__getattr__") is None or _found_without_getattr(obj, primals[1]) \
                    or isinstance(obj, dict):  # dict subclasses mapping attributes to keys: the getattr rule
                return None
            return _READS[False, len(primals)] or python_method(obj, "__getattr__")
        if python_method(obj, "__getattr__") is None:
            return getattribute if len(primals) == 2 else attribute_protocol.getattribute_or_default
        return _READS[True, len(primals)]
    params = getattr(type(obj), "__dataclass_params__", None)
    if params is not None and params.frozen:
        return None  # the dataclass's own __setattr__ raises FrozenInstanceError: setattr's rule runs it
    if fn is setattr and len(primals) == 3:
        if is_bunch(obj) and primals[1] not in type(obj)._fields:  # res.shifted = v: beside it (rules/bunch_records.py)
            return set_attribute
        return python_method(obj, "__setattr__")
    if fn is delattr and len(primals) == 2:
        return python_method(obj, "__delattr__")
    return None


class Candidate(NamedTuple):
    """A Python method Python's operator protocol would run: with its operands swapped
    (``reflected``), and whether its result stands even if it is ``NotImplemented`` (``final``)."""

    method: types.FunctionType
    reflected: bool
    final: bool


def operator_candidates(fn: Any, primals: list) -> list[Candidate]:
    """The Python methods ``fn(*primals)`` runs on user classes, in the order Python tries them."""
    try:
        if fn in INPLACE_DUNDERS and len(primals) == 2:
            name, plain = INPLACE_DUNDERS[fn]
            method = python_method(primals[0], name)
            return [Candidate(method, False, True)] if method is not None else operator_candidates(plain, primals)
        if fn in BINARY_DUNDERS and len(primals) == 2:
            name, reflected = BINARY_DUNDERS[fn]
            found = []
            method = python_method(primals[0], name)
            if method is not None:
                found.append(Candidate(method, False, False))
            method = python_method(primals[1], reflected)
            if method is not None:
                found.append(Candidate(method, True, True))
            return found
        name = UNARY_DUNDERS.get(fn)
    except TypeError:  # an unhashable callable
        return []
    method = python_method(primals[0], name) if name is not None and primals else None
    return [Candidate(method, False, True)] if method is not None else []


def run_operator(fn: Any, args: tuple, primal_of: Callable[[Any], Any],
                 call: Callable[[Candidate, tuple], Any], result_primal: Callable[[Any], Any]) -> Any:
    """Follow Python's operator protocol in some mode: ``call(candidate, operands)`` runs one
    candidate on the mode's values (operands already swapped when it is reflected); a
    non-final candidate's ``NotImplemented`` passes to the next. None if no method applies."""
    for candidate in operator_candidates(fn, [primal_of(a) for a in args]):
        result = call(candidate, args[::-1] if candidate.reflected else args)
        if candidate.final or result_primal(result) is not NotImplemented:
            return result
    return None


# --------------------------------------------------------------------------------------------
# The call protocol: which kind of callable a call reaches, in the order yuebing tries them
# --------------------------------------------------------------------------------------------


# --------------------------------------------------------------------------------------------
# yuebing's own code is never transformed
# --------------------------------------------------------------------------------------------

_PACKAGE_DIR = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # yuebing/


class NestedDifferentiationError(NotImplementedError):
    """Forward mode reached yuebing's own machinery: differentiation of differentiation."""


_MACHINERY = ("api" + os.sep, "ir" + os.sep, "transform" + os.sep, "tangents" + os.sep,
              os.path.join("rules", "core.py"), os.path.join("rules", "declare.py"),
              os.path.join("rules", "util.py"), "testing" + os.sep)


def _is_machinery(filename: str) -> bool:
    """Files of yuebing's differentiation machinery (rule files and benchmark cases are not:
    their Python helpers are ordinary code to differentiate)."""
    path = os.path.abspath(filename)
    if not path.startswith(_PACKAGE_DIR + os.sep):
        return False
    relative = path[len(_PACKAGE_DIR) + 1:]
    return relative.startswith(_MACHINERY) and relative not in _DIFFERENTIATED


# ordinary code in machinery folders: lazy generators' and the event loop's runtime (differentiated
# like user code)
_DIFFERENTIATED = (os.path.join("testing", "targets.py"), os.path.join("ir", "generators.py"),
                   os.path.join("ir", "event_loop.py"), os.path.join("ir", "event_loop_api.py"),
                   os.path.join("ir", "event_loop_waiting.py"), os.path.join("ir", "event_loop_sync.py"),
                   os.path.join("ir", "async_generators.py"), os.path.join("ir", "lazy_iterators.py"),
                   os.path.join("ir", "globals_view.py"),
                   os.path.join("ir", "lazy_itertools.py"), os.path.join("ir", "class_construction.py"))


def _refuse_yuebing_internals(fn: types.FunctionType, mode: str = "forward mode") -> None:
    """Refuse to transform yuebing's own code (tapes, pullbacks, buffers) rather than follow it
    and risk a wrong answer. Users reach this by nesting differentiation in a way yuebing does not
    support: differentiating a function that calls yb.hvp or yb.jacobian, say."""
    filename = fn.__code__.co_filename
    name = getattr(fn.__code__, "co_qualname", fn.__qualname__)
    # generated code holds the user's nested functions (``..._jvp.<locals>.inner``) too: only its
    # top-level functions are yuebing's own (the generated passes)
    generated_pass = filename.startswith("<yuebing ") and "<locals>" not in name
    if generated_pass or _is_machinery(filename):
        raise NestedDifferentiationError(
            f"yuebing cannot apply {mode} to {name} ({filename}): it is part of yuebing's own "
            "differentiation machinery, so this is nested differentiation of a kind yuebing does "
            "not support (docs/limitations.md, \"Higher order\"). Supported inside a differentiated "
            "function: yb.grad, yb.value_and_grad, yb.vjp and its pullback, yb.jvp, yb.linearize, yb.jacobian, "
            "yb.hessian, yb.hvp"
        )


#: How each mode differentiates a call of a function made by ``yb.grad``/``yb.value_and_grad``
#: (nested differentiation), keyed ``reverse``, ``forward``, ``second`` (a ``CallMode``'s
#: ``gradient`` handler in each mode), and ``gradient_call`` (``grad(g)(*args)`` on 4-tuples, which
#: third order uses for cotangent maps). The public API fills it in when yuebing is imported
#: (``api/nested.py``): transforms never import the API.
GRADIENT_CALLS: dict[str, Callable] = {}


class CallMode(NamedTuple):
    """What one mode does with each kind of callable (``f`` is the callee in the mode's values,
    ``args``/``kwargs`` the arguments). ``property_get``, ``property_set`` and ``operator`` may
    return None to let the call go on to the next kind; ``gradient`` (a ``yb.grad`` function
    called inside differentiated code) is None where the mode has no rule for it."""

    lookup: Callable  # fn -> registered rule or None
    run_rule: Callable  # (found, f, args, kwargs)
    property_get: Callable  # (args) -> result or None
    property_set: Callable
    operator: Callable  # (fn, args, kwargs) -> result or None
    gradient: Callable | None
    function: Callable  # (f, args, kwargs): a Python function, derived from its source
    method: Callable
    construct: Callable
    partial: Callable
    vectorized: Callable
    callable_object: Callable  # (f, call, args, kwargs): call is type(fn).__call__
    missing: Callable  # fn -> the error to raise
    constant: Callable  # fn -> fn in the mode's values, without a tangent


_NDITER = ("numpy.nditer: yuebing does not differentiate iteration by np.nditer (its elements are views "
           "of the operands, written through op_flags); iterate over x.ravel() (or, to write, over "
           "np.ndindex(x.shape) with x[index] = ...)")


def _refuse_numpy_forms(fn: Any) -> None:
    """NumPy forms without rules whose derivation would fail obscurely or, for numpy.ma, be
    wrong (NumPy's array functions ignore the mask): refused by name, with what to write instead."""
    if fn is np.nditer:
        raise RuleArgumentError(_NDITER)
    module = getattr(fn, "__module__", None) or type(fn).__module__
    if isinstance(module, str) and module.startswith("numpy.ma") and type(fn) is not types.MethodType:
        # (a bound method of a masked array: its function is looked up, and refused, when called)
        raise RuleArgumentError(f"{describe_callable(fn)}: {MASKED_ARRAYS}")


_ARRAY_FUNCTION_DISPATCHER = type(np.stack)  # numpy._ArrayFunctionDispatcher (C)
_NDARRAY_ARRAY_FUNCTION = np.ndarray.__array_function__


def _reaches_plain_deque(args: tuple) -> bool:
    """Whether a mode's argument values hold a ``collections.deque`` (a cheap test per call)."""
    for a in args:
        kind = type(a)
        value = a[0] if kind is tuple else a.primal if isinstance(a, (CoDual, Dual)) else a
        if isinstance(value, collections.deque) and is_plain_deque_type(type(value)):  # (no getattr on a primal)
            return True
    return False


def _with_primal(value: Any, primal: Any) -> Any:
    """A mode's value (a CoDual, a Dual, a second-order 4-tuple) with its derivative parts and
    another primal (a singledispatchmethod's implementation bound to the same instance)."""
    if type(value) is tuple:
        return (primal, *value[1:])
    return CoDual(primal, value.fdata) if isinstance(value, CoDual) else Dual(primal, value.tangent)


def _primal_of_value(value: Any) -> Any:
    """The primal of a mode's value: a CoDual's or Dual's ``primal``, a second-order 4-tuple's first."""
    # (``primal`` looked up on the class: on a user object a ``__getattr__`` would run, mid-__init__ too)
    return value[0] if type(value) is tuple else value.primal if hasattr(type(value), "primal") else value


def _overrides_numpy(value: Any) -> bool:
    """Whether ``value`` (or an element of a list or tuple of them) has an ``__array_function__``
    other than ndarray's: NumPy would hand the call to it instead of to its own implementation."""
    if isinstance(value, (list, tuple)):
        return any(_overrides_numpy(v) for v in value)
    override = getattr(type(value), "__array_function__", None)
    return override is not None and override is not _NDARRAY_ARRAY_FUNCTION


_DISPATCHERS: dict = {}


def _dispatcher_of(fn: Any) -> Any:
    """The NumPy dispatcher whose C implementation ``fn`` is (``np.concatenate`` for
    ``numpy._core._multiarray_umath.concatenate``, which NumPy's Python calls directly), if any."""
    if not isinstance(fn, types.BuiltinFunctionType):
        return None
    if not _DISPATCHERS:
        for module in (np, np.linalg, np.fft):
            for value in vars(module).values():
                if type(value) is _ARRAY_FUNCTION_DISPATCHER:
                    implementation = getattr(value, "_implementation", None)
                    if isinstance(implementation, types.BuiltinFunctionType):
                        _DISPATCHERS.setdefault(implementation, value)
        _DISPATCHERS.setdefault(None, None)  # walked once
    try:
        return _DISPATCHERS.get(fn)
    except TypeError:  # unhashable
        return None


def ufunc_keywords(fn: np.ufunc, kwargs: dict) -> Any:
    """A ufunc call with ``out=...`` (NumPy 2: an array, never a scalar) or ``casting=`` (which
    the ufunc rules do not take) as a Python definition the modes derive
    (``rules/numpy_internals``), with the ufunc bound first; None for other calls."""
    if "casting" in kwargs or "subok" in kwargs:  # subok= only concerns array subclasses
        return ufunc_call_definition(fn, "casting")
    if "out" in kwargs and _primal_of_value(kwargs["out"]) is Ellipsis:
        return ufunc_call_definition(fn, "as_array")
    return None


def python_implementation(fn: Any, args: tuple, kwargs: dict) -> types.FunctionType | None:
    """The Python function NumPy runs for ``fn`` when ``fn`` is one of its array-function
    dispatchers (``np.ediff1d``, ``np.cov``: a C object whose ``_implementation`` is Python
    source), so that a function without a rule is derived from NumPy's own code. None when there
    is none, or when an argument overrides the call through ``__array_function__`` (NumPy would
    run that instead)."""
    if type(fn) is not _ARRAY_FUNCTION_DISPATCHER:
        return None
    implementation = getattr(fn, "_implementation", None)
    if not isinstance(implementation, types.FunctionType):
        return None  # a C implementation (np.concatenate's): only a rule differentiates it
    values = [_primal_of_value(a) for a in args] + [_primal_of_value(v) for v in kwargs.values()]
    if any(_overrides_numpy(v) for v in values):
        return None
    return implementation


_OBJECT_SETATTR = object.__setattr__  # (super().__setattr__(name, v) in a class's own __setattr__ too)


def dispatch(mode: CallMode, f: Any, fn: Any, args: tuple, kwargs: dict) -> Any:
    """Run the call ``fn(*args, **kwargs)`` in ``mode`` (``f`` is ``fn`` in the mode's values)."""
    on_objects = object_array_form(mode, f, fn, args, kwargs, dispatch)  # (rules/object_array_calls.py)
    if on_objects is not None:
        return on_objects
    on_records = structured_array_form(mode, f, fn, args, kwargs, dispatch)  # (refused unless followed)
    if on_records is not None:
        return on_records
    if (fn is getattr or fn is setattr or fn is delattr) and args and not kwargs:
        method = attribute_method(fn, args)
        if method is not None:  # __getattr__/__setattr__... of a user class: differentiated as user code
            return dispatch(mode, mode.constant(method), method, args, kwargs)
    if fn is getattr and 2 <= len(args) <= 3 and not kwargs:
        found = mode.property_get(args)
        if found is not None:
            return found
    if (fn is setattr or fn is _OBJECT_SETATTR) and len(args) == 3 and not kwargs:
        found = mode.property_set(args)  # (object.__setattr__ runs a property's setter as setattr does)
        if found is not None:
            return found
    if args and may_be_operator(fn):
        found = mode.operator(fn, args, kwargs)
        if found is not None:
            return found
    if args and _reaches_plain_deque(args):  # a deque made outside: its definitions (deque_arguments.py)
        on_items = plain_deque_call(fn, [_primal_of_value(a) for a in args])
        if on_items is method_on_items:  # xs.extend(d): the bound method passed in, its owner's derivatives with it
            return dispatch(mode, mode.constant(on_items), on_items, (f, *args), kwargs)
        if on_items is not None:
            return dispatch(mode, mode.constant(on_items), on_items, args, kwargs)
    if args and not kwargs and may_compare(fn):
        comparing = comparing_call(fn, [_primal_of_value(a) for a in args])
        if comparing is not None:  # == of tuples, x in items... whose dunders change data: as user code
            return dispatch(mode, mode.constant(comparing), comparing, args, kwargs)
    if isinstance(fn, np.ufunc) and args:
        on_sparse = sparse_ufunc_form(fn, args, kwargs, _primal_of_value)
        if on_sparse is not None:  # np.abs(A) of a sparse matrix: what NumPy calls, abs(A) (rules/scipy_sparse_ufuncs.py)
            return dispatch(mode, mode.constant(on_sparse), on_sparse, args, kwargs)
    if kwargs and isinstance(fn, np.ufunc):
        keywords = ufunc_keywords(fn, kwargs)
        if keywords is not None:  # out=... or casting=, as NumPy's Python passes them: a definition
            return dispatch(mode, mode.constant(keywords), keywords, args, kwargs)
    if args:
        listing = listing_user_iterators(fn, [_primal_of_value(a) for a in args]) if is_consumer(fn) else None
        if listing is call_listed:  # ys.extend(it): the bound method passed in, its owner's derivatives with it
            return dispatch(mode, mode.constant(listing), listing, (f, *args), kwargs)
        if listing is not None:  # sum(it) of a user iterator: listed by its own __next__, differentiated
            return dispatch(mode, mode.constant(listing), listing, args, kwargs)
    built = type_call_of(fn)
    if built is not None:  # super().__call__(...) in a metaclass's own __call__: type's (new_construction.py)
        return mode.construct(mode.constant(through_type_call(built)), args, kwargs)
    rule = mode.lookup(fn)
    if rule is not None:
        on_masked = masked_form(fn, args, kwargs, _primal_of_value)
        if on_masked is not None:  # np.sum(m), np.sin(m), for v in m: what NumPy runs (rules/numpy_masked_forms.py)
            return dispatch(mode, mode.constant(on_masked), on_masked, args, kwargs)
        refuse_masked_arguments(fn, args, kwargs, _primal_of_value)  # a rule that would ignore a mask (rules/numpy_masked.py)
        try:
            return mode.run_rule(rule, f, args, kwargs)
        except Exception as error:  # KeyError(box) of d[box]: the box with its derivative data (exception_data.py)
            carry_handed(error, args)
            raise
    dispatcher = _dispatcher_of(fn)
    if dispatcher is not None and mode.lookup(dispatcher) is not None:  # NumPy's Python calls the C function itself
        return dispatch(mode, mode.constant(dispatcher), dispatcher, args, kwargs)
    _refuse_numpy_forms(fn)
    implementation = python_implementation(fn, args, kwargs)
    if implementation is not None:  # NumPy's Python behind its C dispatcher: derived like user code
        return dispatch(mode, mode.constant(implementation), implementation, args, kwargs)
    kind = type(fn)
    if kind is types.FunctionType:
        if mode.gradient is not None and hasattr(fn, "__yuebing_gradient__"):
            return mode.gradient(f, args, kwargs)
        if is_register(fn):  # f.register(...) of a singledispatch function: what it registers keeps its data
            return dispatch(mode, mode.constant(register_followed), register_followed, (f, *args), kwargs)
        chosen = singledispatch_implementation(fn, _primal_of_value(args[0])) if args else None
        if chosen is not None:  # functools.singledispatch: the registry's pick, differentiated
            if bound_implementation(fn, chosen):  # a singledispatchmethod's: its instance's derivative data
                return dispatch(mode, _with_primal(f, chosen), chosen, args, kwargs)
            kept = registered_value(chosen, f)  # registered in this pass, with its derivative data
            return dispatch(mode, mode.constant(chosen) if kept is None else kept, chosen, args, kwargs)
        return mode.function(f, args, kwargs)
    if kind is types.MethodType:
        return mode.method(f, args, kwargs)
    if isinstance(fn, type):
        if issubclass(fn, BaseException):  # made without derivatives (rules/zero_derivative.py)
            return as_class_call(dispatch(mode, mode.constant(made_exception), made_exception, (f, *args), kwargs))
        return mode.construct(f, args, kwargs)
    if kind is functools.partial:
        return mode.partial(f, args, kwargs)
    if isinstance(fn, UndefinedGlobal):
        raise NameError(f"name {fn.name!r} is not defined")
    if isinstance(fn, np.vectorize):
        return mode.vectorized(f, args, kwargs)
    if isinstance(fn, functools._lru_cache_wrapper):  # functools.cache/lru_cache (rules/cached_calls.py)
        refuse_captured_floats(fn)
        if answered_by_cache(fn, [_primal_of_value(a) for a in args], {k: _primal_of_value(v) for k, v in kwargs.items()}):
            return dispatch(mode, mode.constant(cached_call), cached_call, (f, *args), kwargs)  # its cache answers
        inner = fn.__wrapped__  # a derivative may reach the call: the cache, which would drop it, is bypassed
        return dispatch(mode, mode.constant(inner), inner, args, kwargs)
    if mode.gradient is not None and hasattr(fn, "__yuebing_gradient__"):
        return mode.gradient(f, args, kwargs)  # an object made by yb.grad/yb.value_and_grad
    call = getattr(type(fn), "__call__", None)
    if isinstance(call, types.FunctionType):
        return mode.callable_object(f, call, args, kwargs)
    if is_builtin_key(fn):  # operator.itemgetter(0)(x), attrgetter: the Python code that does the same
        python = python_key(fn)
        return dispatch(mode, mode.constant(python), python, args, kwargs)
    if takes_labels_only(fn, args, kwargs, _primal_of_value):  # keyword.iskeyword(name), zlib.crc32(key) (rules/label_calls.py)
        plain, result = plain_result(fn, [_primal_of_value(a) for a in args], {k: _primal_of_value(v) for k, v in kwargs.items()})
        if plain:
            return dispatch(mode, mode.constant(given), given, (mode.constant(result),), {})
    raise mode.missing(fn)


def bind_call(signature: Any, params: list, name: str, n_args: int, keywords: list) -> list[tuple[str, Any]]:
    """How a call's arguments fill a Python function's parameters (``signature``), listed in the
    order of ``params`` (the generated code's: positional, keyword-only, ``*args``, ``**kwargs``).
    Each entry is ``("arg", key)`` for a call argument (an index among the positional arguments
    or a keyword's name), ``("star", [keys])`` for ``*args``, ``("starstar", {name: key})`` for
    ``**kwargs``, or ``("default", value)``. A call the signature does not accept is a TypeError
    naming the function, as Python's own."""
    marker = object()
    try:
        bound = signature.bind(*[(marker, i) for i in range(n_args)], **{k: (marker, k) for k in keywords})
    except TypeError as error:
        raise TypeError(f"{name}(): {error}") from None
    bound.apply_defaults()
    plan: list[tuple[str, Any]] = []
    for param in map(functools.partial(user_parameter, signature.parameters), params):
        value = bound.arguments[param]
        kind = signature.parameters[param].kind
        if kind is kind.VAR_POSITIONAL:
            plan.append(("star", [v[1] for v in value]))
        elif kind is kind.VAR_KEYWORD:
            plan.append(("starstar", {k: v[1] for k, v in value.items()}))
        elif isinstance(value, tuple) and len(value) == 2 and value[0] is marker:
            plan.append(("arg", value[1]))
        else:
            plan.append(("default", value))
    return plan


class CodeCache:
    """What is generated from a Python function's source, cached per code object *and* module
    globals: Python compares code objects by value, so the same ``def`` text in two modules (or
    two ``exec`` namespaces) gives equal code objects, while the generated code reads the
    globals of the one it was made from."""

    every: list = []  # each cache made (a global found written drops a reader's code from all: ``forget``)

    def __init__(self) -> None:
        self._by_code: dict = {}
        self._by_module: dict = {}
        CodeCache.every.append(self)

    def get(self, fn: types.FunctionType) -> Any:
        entry = self._by_code.get(fn.__code__)
        if entry is not None and entry[0] is fn.__globals__:
            return entry[1]
        return self._by_module.get((fn.__code__, id(fn.__globals__)), (None, None))[1]

    def clear(self) -> None:
        self._by_code.clear()
        self._by_module.clear()

    def forget(self, code: types.CodeType) -> None:
        """Drop what was generated from ``code`` in every module (made again at its next call)."""
        self._by_code.pop(code, None)
        for key in [key for key in self._by_module if key[0] == code]:
            del self._by_module[key]

    def put(self, fn: types.FunctionType, value: Any) -> Any:
        if fn.__code__ not in self._by_code:
            self._by_code[fn.__code__] = (fn.__globals__, value)
        self._by_module[(fn.__code__, id(fn.__globals__))] = (fn.__globals__, value)  # keeps the id in use
        return value


class SourceFunction:
    """What every rule generated from a Python function's source knows of that function: its
    IR, signature, and whether a call can pass its arguments straight to the generated code
    (``simple``: no ``*args``, ``**kwargs`` or keyword-only parameters)."""

    def __init__(self, fn: types.FunctionType) -> None:
        import inspect

        from ..frontend.normalise import normalise
        from ..rules import lazy

        lazy.load_imported()  # the rules of the libraries fn's module imported, before fn is read
        self.name = fn.__qualname__
        self.ir = normalise(fn)
        self.signature = code_signature(fn)
        self._defaults = (fn.__defaults__, fn.__kwdefaults__)
        self.n_params = len(self.ir.params)
        code = fn.__code__
        self.simple = not (code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS)) and code.co_kwonlyargcount == 0

    def plan(self, fn: Any, args: tuple, kwargs: dict) -> list[tuple[str, Any]]:
        """``bind_call`` for a call of ``fn``, one of the functions with this code: functions
        made by one ``def`` or ``lambda`` share a rule but not their defaults
        (``[lambda x, k=k: k * x for k in ks]``)."""
        signature = self.signature
        # by identity: a default may be an array, and a function's defaults are one object
        if fn is not None and (fn.__defaults__ is not self._defaults[0] or fn.__kwdefaults__ is not self._defaults[1]):
            signature = code_signature(fn)
        return bind_call(signature, self.ir.params, self.name, len(args), list(kwargs))


def code_signature(fn: types.FunctionType) -> Any:
    """The signature of ``fn``'s own code and defaults: not a ``functools.wraps`` target's, nor a
    ``__signature__`` set on it (array_api_compat's wrappers declare their target's parameters
    while taking ``*args, **kwargs``: binding by the declared ones failed with a bare KeyError)."""
    import inspect

    if "__signature__" in getattr(fn, "__dict__", {}):
        plain = types.FunctionType(fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__, fn.__closure__)
        plain.__kwdefaults__ = fn.__kwdefaults__
        fn = plain
    return inspect.signature(fn, follow_wrapped=False)
