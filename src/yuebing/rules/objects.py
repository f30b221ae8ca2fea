"""Rules for attribute access: ``getattr`` (2 and 3 arguments), ``setattr``,
``object.__getattribute__`` and ``object.__setattr__`` (``delattr``: ``object_deletes.py``).

The normaliser turns ``obj.name`` into ``getattr(obj, "name")`` and ``obj.name = v`` into
``setattr(obj, "name", v)``, so these rules see every attribute access of differentiated code.
``hasattr`` is in ``nondifferentiable.py``.

What ``getattr`` returns, by owner:

* mutable object (``MutableTangent`` fdata, one field per attribute): a float field's value, whose
  cotangent the pullback adds to the object's field slot; an array/list/object field's own fdata
  object (aliasing);
* frozen dataclass (``Tangent``, split into fdata and rdata): the field's fdata part; the pullback
  returns the object's rdata as a ``Tangent`` holding only that field; namedtuples likewise, by
  position;
* ndarray: ``.T``, ``.mT``, ``.real``, ``.imag`` are views, with the same view of the tangent as
  fdata (``.imag`` of a real array is a read-only zero array: zero derivative); ``.shape``,
  ``.ndim``, ``.size``, ``.dtype``, ``.strides``, ``.flags``, ``.itemsize``, ``.nbytes`` carry none;
* float / complex: ``.real`` and ``.imag``;
* a method: bound builtin methods (``x.sum``, ``lst.append``) get the tangent
  ``Tangent(type(m), {"__self__": owner's fdata})`` that dispatch reads; Python methods of user
  classes get ``Tangent(MethodType, {"__self__": ..., "__func__": ...})``;
* anything else (module and class attributes, class-level constants): the value with a fresh zero
  tangent. Classes and modules are not differentiated, so derivatives with respect to
  class-level or module-level data are not tracked (a known limitation: mutating a class-level
  array through an instance is not seen by other reads).

Properties, ``__getattr__``/``__getattribute__`` overrides and other data descriptors of user
classes are user code for the source transform, not for these rules: they raise
``RuleArgumentError``. ``setattr`` follows the mutation convention (docs/writing-rules.md): the
object's tangent field is replaced by the new value's slot, and the pullback restores the old
value and old slot, or deletes the attribute if it did not exist before (slots included).
"""
from __future__ import annotations

import _thread
import collections
import functools
import types
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, SetTangent, Tangent
from ..tangents import kinds as K
from .local_classes import (class_level_read, class_level_tangent, class_write_frule, class_write_rrule, field_default,
                            writes_on_class)
from .containers import (
    _NOT_PASSED, _counted, _element_fdata, _overwriting_slot, _restored, _slot,
)
from .containers.dict_subclasses import factory_read_frule, factory_read_rrule
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from ._float_reach import holds_floats
from .function_wrappers import held_function_tangent, refuse_wrapped_closure
from ._dispatch_methods import dispatch_method_owner
from .bunch_data import carrier_kind
from . import exception_tangents
from .exception_data import carried_read, carried_tangent
from .functools_rules import PARTIAL_PARTS, part_tangent, read_part
from .declare import nondifferentiable
from .second_order import defined_as
from .util import add_rdata_to, output, zero_fdata
from .numpy_iterators import flat_frule, flat_rrule
from .numpy_vectorize import pyfunc_fdata, pyfunc_tangent
from . import outside_state

_MISSING = object()

_ARRAY_VIEWS = ("T", "mT", "real", "imag")
_ARRAY_NONDIFF = frozenset({"shape", "ndim", "size", "dtype", "strides", "flags", "itemsize", "nbytes", "__class__"})
# threading.local's own dunders only pick the calling thread's __dict__, then act as object's
_PLAIN_GETATTRIBUTE = (object.__getattribute__, _thread._local.__getattribute__)
_PLAIN_SETATTR = (object.__setattr__, _thread._local.__setattr__)
_PLAIN_DELATTR = (object.__delattr__, _thread._local.__delattr__)


def _raw_setattr(o: Any, name: str, value: Any) -> None:
    """``object.__setattr__``, or a thread-local's own (object's refuses a thread-local): how
    restoring and plain writes set a field without running a user ``__setattr__``."""
    (_thread._local.__setattr__ if isinstance(o, _thread._local) else object.__setattr__)(o, name, value)


def _raw_delattr(o: Any, name: str) -> None:
    (_thread._local.__delattr__ if isinstance(o, _thread._local) else object.__delattr__)(o, name)


_ATOMIC_NONDIFF = (types.ModuleType, type, types.BuiltinFunctionType, np.ufunc, int, str, bool, type(None))

# ------------------------------------------------------------------------------------------------
# Classifying an attribute of a user class
# ------------------------------------------------------------------------------------------------


def _class_attribute(tp: type, name: str) -> Any:
    for cls in tp.__mro__:
        if name in cls.__dict__:
            return cls.__dict__[name]
    return _MISSING


def _check_user_read(o: Any, name: str, who: str, plain: bool) -> None:
    """Refuse accesses that would run user code (properties, __getattr__, ...)."""
    tp = type(o)
    if not plain and tp.__getattribute__ not in _PLAIN_GETATTRIBUTE:
        raise RuleArgumentError(f"{who}: {tp.__qualname__} overrides __getattribute__; yuebing's rule "
                                "covers plain attribute access only")
    attr = _class_attribute(tp, name)
    if isinstance(attr, property) or isinstance(attr, functools.cached_property) and not _cached(o, name):
        raise RuleArgumentError(
            f"{who}: {tp.__qualname__}.{name} is a property: properties of user classes are "
            "differentiated by the source transform (from their getter's source), not by the "
            "getattr rule"
        )
    if attr is not _MISSING and _is_custom_data_descriptor(attr):
        raise RuleArgumentError(f"{who}: {tp.__qualname__}.{name} is a descriptor ({type(attr).__qualname__}); "
                                "yuebing's rule covers plain attributes and methods only")


def _cached(o: Any, name: str) -> bool:
    """Whether ``o.name``, a ``functools.cached_property``, is computed: an instance field then
    (its first read runs the getter: ``rules/_cached_properties.py``)."""
    namespace = getattr(o, "__dict__", None)
    return isinstance(namespace, dict) and name in namespace


def _is_custom_data_descriptor(attr: Any) -> bool:
    if isinstance(attr, (types.MemberDescriptorType, types.GetSetDescriptorType)):
        return False  # __slots__ members and __dict__/__weakref__
    tp = type(attr)
    return hasattr(tp, "__set__") or hasattr(tp, "__delete__")


def _instance_value(o: Any, name: str) -> tuple[bool, Any]:
    """``(True, value)`` if ``name`` is an instance field of ``o`` (a set slot or a ``__dict__``
    entry), else ``(False, None)``."""
    attr = _class_attribute(type(o), name)
    if isinstance(attr, types.MemberDescriptorType):
        try:
            return True, attr.__get__(o, type(o))
        except AttributeError:  # slot never assigned
            return False, None
    d = getattr(o, "__dict__", None)
    if d is not None and name in d:
        return True, d[name]
    return False, None


# ------------------------------------------------------------------------------------------------
# Reading: (output codual, rdata of the owner from the output's rdata)
# ------------------------------------------------------------------------------------------------

Read = tuple[CoDual, Callable[[Any], Any]]


def _no_owner_rdata(dy: Any) -> Any:
    return NoRData


def _constant(v: Any) -> CoDual:
    """A value read from a module or class: not differentiated (a zero tangent; one for the whole
    call when it can be changed in place, ``outside_state.py``)."""
    if isinstance(v, _ATOMIC_NONDIFF) or type(v) is types.FunctionType and not v.__closure__:
        return CoDual(v, NoFData)
    try:
        return CoDual(v, outside_state.shared("fdata", v, zero_fdata) if outside_state.is_mutable(v) else zero_fdata(v))
    except T.StructureError:  # metadata without a tangent type (mappingproxy, dataclass Field...)
        return CoDual(v, NoFData)


def _outside_tangent(v: Any) -> Any:
    """Forward mode's ``_constant``: the zero tangent of a value read from a module or class."""
    return outside_state.shared("tangent", v, T.zero_tangent) if outside_state.is_mutable(v) else T.zero_tangent(v)


def _method_fdata(v: Any, owner_fdata: Any) -> Any:
    if isinstance(v, types.MethodType):
        func_fdata = _constant(v.__func__).fdata
        if owner_fdata is NoFData and func_fdata is NoFData:
            return NoFData
        return Tangent(types.MethodType, {"__self__": owner_fdata, "__func__": func_fdata})
    return NoFData if owner_fdata is NoFData else Tangent(type(v), {"__self__": owner_fdata})


def _method_owner_rdata(dy: Any) -> Any:
    return dy.fields.get("__self__", NoRData) if isinstance(dy, Tangent) else NoRData


def _is_bound_to(v: Any, o: Any) -> bool:
    return isinstance(v, (types.MethodType, types.BuiltinMethodType, types.MethodWrapperType)) \
        and getattr(v, "__self__", None) is o


def _read_object_field(obj: CoDual, name: str, v: Any) -> Read:
    fields = obj.fdata.fields
    slot = fields.get(name, _MISSING)
    if slot is _MISSING:  # a field set behind yuebing's back: give it a zero slot now
        slot = fields[name] = _slot(v, NoFData)

    def owner_rdata(dy: Any) -> Any:
        if dy is not NoRData:
            current = fields[name]
            fields[name] = current + dy if type(current) is float else T.increment(current, T.join(NoFData, dy))
        return NoRData

    return CoDual(v, _element_fdata(slot)), owner_rdata


def _read_frozen_field(obj: CoDual, name: str, v: Any) -> Read:
    fd = obj.fdata
    v_fd = fd.fields.get(name, NoFData) if isinstance(fd, Tangent) else NoFData
    tp = type(obj.primal)
    return CoDual(v, v_fd), lambda dy: NoRData if dy is NoRData else Tangent(tp, {name: dy})


def _read_namedtuple_field(obj: CoDual, index: int, v: Any) -> Read:
    fd, x = obj.fdata, obj.primal
    v_fd = fd[index] if fd is not NoFData else NoFData

    def owner_rdata(dy: Any) -> Any:
        if dy is NoRData:
            return NoRData
        parts = [NoRData] * len(x)
        parts[index] = dy
        return tuple.__new__(type(x), parts)

    return CoDual(v, v_fd), owner_rdata


def _read_array_attribute(obj: CoDual, name: str, v: Any) -> Read:
    x, fd = obj.primal, obj.fdata
    if name in _ARRAY_NONDIFF:
        return CoDual(v, NoFData), _no_owner_rdata
    if name in _ARRAY_VIEWS:
        if fd is NoFData or not isinstance(v, np.ndarray):
            return CoDual(v, zero_fdata(v)), _no_owner_rdata
        if name == "imag" and x.dtype.kind != "c":  # a new read-only zero array
            return output(v), _no_owner_rdata
        return CoDual(v, getattr(fd, name)), _no_owner_rdata  # a view: the gradient flows through memory
    if _is_bound_to(v, x):
        return CoDual(v, _method_fdata(v, fd)), _method_owner_rdata
    if name == "flat":  # the C-order ravel (numpy_iterators.py)
        return flat_rrule(obj)
    if name == "base":  # its gradient is read and written through the memory it shares
        return CoDual(v, _base_derivative(v, fd, NoFData)), _no_owner_rdata
    raise RuleArgumentError(
        f"getattr: yuebing does not differentiate the ndarray attribute {name!r}; supported are "
        f"{', '.join(_ARRAY_VIEWS)}, methods, and the non-differentiable {', '.join(sorted(_ARRAY_NONDIFF))}"
    )


def _base_derivative(base: Any, derivative: Any, none: Any) -> Any:
    """The derivative of ``a.base`` (read by SciPy to see whether an array owns its memory), from
    ``a``'s derivative ``derivative`` (``none`` where it has none): the view's gradient or tangent
    is the same view of its base's, so the base's is the derivative's own base. Where that cannot
    be read, handing the base out would drop its derivatives: refused."""
    if base is None or derivative is none:
        return none
    owner = getattr(derivative, "base", None)
    if isinstance(base, np.ndarray) and isinstance(owner, np.ndarray) and owner.shape == base.shape:
        return owner
    raise RuleArgumentError("getattr: yuebing gives an array's 'base' when it is None or the array is a view of "
                            "an array whose derivatives it tracks; this one's are not known. Copy it "
                            "(a = a.copy()) before the code that reads a.base, or use the base array itself")


def _read_number_attribute(obj: CoDual, name: str, v: Any) -> Read:
    x = obj.primal
    is_complex = isinstance(x, (complex, np.complexfloating))
    if name == "real":
        return CoDual(v, NoFData), lambda dy: NoRData if dy is NoRData else (complex(dy) if is_complex else float(dy))
    if name == "imag":
        if not is_complex:
            return CoDual(v, NoFData), _no_owner_rdata  # always 0: zero derivative
        return CoDual(v, NoFData), lambda dy: NoRData if dy is NoRData else complex(0.0, dy)
    if _is_bound_to(v, x):
        return CoDual(v, NoFData), _method_owner_rdata
    return CoDual(v, zero_fdata(v)), _no_owner_rdata


def aliased_item(o: tuple, name: str, v: Any) -> int | None:
    """The index of the item a tuple's instance attribute is (the same object: SciPy's
    ``SignificanceResult.__init__`` sets ``self.correlation = statistic``), or None."""
    if name not in getattr(o, "__dict__", ()):
        return None
    return next((i for i, item in enumerate(o) if item is v and not isinstance(v, (bool, int, str))), None)


def _refuse_carried_floats(o: Any, name: str, v: Any) -> None:
    """An exception's attribute holding float data that is not one of the arguments it was made
    from in differentiated code (``exception_data.py`` follows those) is refused: exceptions
    have no tangent, so the value would reach the handler with a zero derivative. So is a nested
    function read back from a function's attribute (``function_wrappers.py``). (A defaultdict's
    ``default_factory`` is read with the tangent kept for it: ``containers/dict_subclasses.py``.)"""
    refuse_wrapped_closure(o, name, v)
    # (its properties read self.__dict__[name]: LinregressResult.intercept_stderr)
    if isinstance(o, tuple) and (name == "__dict__" or name in getattr(o, "__dict__", ())) and holds_floats([v]):
        fields = ", ".join(f"r.{field}" for field in getattr(type(o), "_fields", ()))
        raise RuleArgumentError(
            f"getattr: yuebing cannot differentiate the attribute {name!r} of a {type(o).__qualname__}, a tuple "
            "keeping float data in attributes beside its items (a SciPy result: LinregressResult.intercept_stderr): "
            "a tuple's derivative holds its items only, so the attribute's would be lost. What to do: read its "
            f"fields ({fields}), or compute the value with NumPy and scipy.special in your function (for a t test: "
            "t = (np.mean(x) - m) / (np.std(x, ddof=1) / np.sqrt(n)), p = 2 * scipy.special.stdtr(n - 1, -abs(t)))")
    if isinstance(o, BaseException) and holds_floats([v]):  # (a user object's floats too, at any depth)
        kind = type(o).__qualname__
        advice = ("catch StopIteration in the function that holds the generator in a variable and calls "
                  "next()/send()/throw() on it (`except StopIteration as e: r = e.value` is then read from the "
                  "generator), or take the value with `r = yield from g()` inside another generator"
                  if isinstance(o, StopIteration) else
                  "pass the value itself to the exception in the differentiated code (`raise E(v)`, and "
                  "`self.value = v` in its __init__), or keep it in a variable assigned before the raise and "
                  "read that variable in the except clause (`bad = x * 2.0; raise ValueError(bad)`, then "
                  "`except ValueError: use(bad)`)")
        raise RuleArgumentError(
            f"getattr: yuebing cannot differentiate the float data the {kind} exception carries in {name!r}: "
            "yuebing follows what an exception is made from in differentiated code (its arguments, in e.args "
            "or an attribute set to one), and this value is not one of them (its __init__ computed it, or "
            f"the exception was made outside), so its derivative would be lost. What to do: {advice}.")


def _read(obj: CoDual, name: str, plain: bool, who: str) -> Read | None:
    """The read of attribute ``name``; None when ``obj`` has no such attribute."""
    o = obj.primal
    if type(o) is types.ModuleType:  # the common case: np.sum, math.pi
        try:
            return _constant(getattr(o, name)), _no_owner_rdata
        except AttributeError:
            return None
    if type(o) is np.vectorize and name == "pyfunc":  # its fdata is pyfunc's (numpy_vectorize.py)
        return CoDual(o.pyfunc, pyfunc_fdata(obj.fdata)), _no_owner_rdata
    kind = K.primal_kind(o)
    if kind is K.OBJECT or kind is K.FROZEN:
        _check_user_read(o, name, who, plain)
        present, v = _instance_value(o, name)
        found = class_level_read(v) if present and field_default(o, name) else None
        if found is not None:  # a dataclass Field's default the class body computed (local_classes.py)
            return found
        if present:
            if kind is K.OBJECT or isinstance(obj.fdata, MutableTangent):  # (a frozen one under construction)
                if obj.fdata is NoFData:  # a constant object (a method's undifferentiated self)
                    return _constant(v), _no_owner_rdata
                return _read_object_field(obj, name, v)
            return _read_frozen_field(obj, name, v)
        if not plain and hasattr(type(o), "__getattr__") and _class_attribute(type(o), name) is _MISSING:
            raise RuleArgumentError(f"{who}: {type(o).__qualname__}.__getattr__ would compute {name!r}; "
                                    "yuebing's rule covers plain attributes only")
    if name == "__dict__" and kind is K.OBJECT and isinstance(obj.fdata, MutableTangent):
        # the instance dict's fdata is the object's own fields: self.__dict__.update(kw),
        # vars(self)[k] = v write the attributes' derivatives where reads of them look
        return CoDual(o.__dict__, obj.fdata.fields), _no_owner_rdata
    if not plain and _mapped_item(o, name):
        return _read_mapped_item(obj, name)
    try:
        v = object.__getattribute__(o, name) if plain else getattr(o, name)
    except AttributeError:
        return None
    carrier = carrier_kind(o)
    if carrier is not None:  # what an exception or a tuple bunch was made from, with its derivative (exception_data.py)
        found = carried_read(o, v, carrier, name)
        if found is not None:
            return found
    if type(o) is functools.partial and name in PARTIAL_PARTS:  # what it stored, with its derivatives
        return read_part(obj, name)
    if kind is K.TUPLE and aliased_item(o, name, v) is not None:  # res.correlation, set to res.statistic
        return _read_namedtuple_field(obj, aliased_item(o, name, v), v)
    held = held_function_tangent(o, obj.fdata, v)  # g.__wrapped__, a function the wrapper's closure holds too
    if held is not None:
        return CoDual(v, held), _no_owner_rdata  # (a closure's derivative data is its cells': identity data)
    if name == "__self__" and getattr(o, "__self__", None) is v:  # m = a.sum; m.__self__ is a
        owner = _bound_owner_data(o, obj.fdata, v)
        if owner is not None:
            return CoDual(v, owner), _self_read_rdata(type(o))
        if K.primal_kind(v) is K.FLOAT or K.primal_kind(v) is K.COMPLEX:  # a number's: its rdata, through m's
            return CoDual(v, NoFData), _self_read_rdata(type(o))
    if dispatch_method_owner(v) is o and obj.fdata is not NoFData:  # a singledispatchmethod: bound to o
        return CoDual(v, Tangent(types.MethodType, {"__self__": obj.fdata, "__func__": NoFData})), _method_owner_rdata
    _refuse_carried_floats(o, name, v)
    if kind is K.ARRAY or isinstance(o, np.ndarray):
        return _read_array_attribute(obj, name, v)
    if kind is K.FLOAT or kind is K.COMPLEX:
        return _read_number_attribute(obj, name, v)
    if kind is K.TUPLE and name in getattr(type(o), "_fields", ()):
        return _read_namedtuple_field(obj, type(o)._fields.index(name), v)
    if _is_bound_to(v, o):
        # (a set of labels built inside the function has a SetTangent: floats may join it)
        owner_fdata = obj.fdata if kind is not K.NONDIFF or isinstance(obj.fdata, SetTangent) else NoFData
        return CoDual(v, _method_fdata(v, owner_fdata)), _method_owner_rdata
    return class_level_read(v) or (_constant(v), _no_owner_rdata)  # (a class made in the function: its value's derivative)


def _bound_owner_data(method: Any, data: Any, owner: Any) -> Any:
    """The derivative data of the object ``method`` (a bound method, builtin or Python) is bound
    to, which ``data`` (the method's) holds, when ``owner`` is that object; None otherwise."""
    if not isinstance(data, Tangent) or getattr(method, "__self__", None) is not owner:
        return None
    return data.fields.get("__self__")


def _self_read_rdata(method_type: type) -> Callable:
    """The pullback of ``m.__self__`` into ``m``'s rdata: a method's rdata carries its owner's."""
    def owner_rdata(dy: Any) -> Any:
        return NoRData if dy is NoRData else Tangent(method_type, {"__self__": dy})
    return owner_rdata


def _mapped_item(o: Any, name: str) -> bool:
    """Whether ``o.name`` is the item ``o[name]`` of a dict subclass whose ``__getattr__`` maps
    attributes to keys (SciPy's ``OptimizeResult``: ``res.x`` is ``res["x"]``)."""
    if not isinstance(o, dict) or type(o) is dict or not hasattr(type(o), "__getattr__"):
        return False
    if name not in o or _class_attribute(type(o), name) is not _MISSING or name in getattr(o, "__dict__", {}):
        return False
    return getattr(o, name) is dict.__getitem__(o, name)


def _read_mapped_item(obj: CoDual, name: str) -> Read:
    """``o.name`` read as ``o[name]`` (its derivative is the item's, as ``dict.get``'s rule)."""
    o, fd = obj.primal, obj.fdata
    v = dict.__getitem__(o, name)
    if not isinstance(fd, dict):  # a constant result
        return _constant(v), _no_owner_rdata

    def owner_rdata(dy: Any) -> Any:
        if dy is not NoRData:
            fd[name] = add_rdata_to(fd[name], dy)
        return NoRData

    return CoDual(v, _element_fdata(fd[name])), owner_rdata


def _getattr_rrule_impl(obj: Any, name: Any, default: Any, plain: bool, who: str):
    n = primal(name)
    if not isinstance(obj, CoDual):
        obj = CoDual(obj, zero_fdata(obj))
    if n == "default_factory" and isinstance(obj.primal, collections.defaultdict):  # with the tangent kept for it
        out, gather = factory_read_rrule(obj)
        return out, lambda dy: (gather(dy), _counted(NoRData, NoRData, NoRData, default if default is _NOT_PASSED else NoRData))[1]
    found = _read(obj, n, plain, who)
    if found is None:
        if default is _NOT_PASSED:
            raise AttributeError(f"{type(obj.primal).__qualname__!r} object has no attribute {n!r}", name=n, obj=obj.primal)
        if isinstance(default, CoDual):
            return CoDual(default.primal, default.fdata), lambda dy: (NoRData, NoRData, NoRData, dy)
        return output(default), lambda dy: (NoRData,) * 4
    out, owner_rdata = found

    def pullback(dy):
        return _counted(NoRData, owner_rdata(dy), NoRData, default if default is _NOT_PASSED else NoRData)

    pullback.changes_nothing = True  # a read (transform/exceptions.py)
    return out, pullback


@rrule_for(getattr)
def _getattr_rrule(obj, name, default=_NOT_PASSED):
    if isinstance(primal(obj), types.ModuleType) and MODULE_SETATTR and default is _NOT_PASSED:
        written = MODULE_SETATTR["read_rrule"](obj, name)  # a global this call wrote: its derivative
        if written is not None:
            return written
    return _getattr_rrule_impl(obj, name, default, plain=False, who="getattr")


@rrule_for(object.__getattribute__, (object, "__getattribute__"))  # (object, name): super().__getattribute__ bound to self
def _getattribute_rrule(self, name):
    return _getattr_rrule_impl(self, name, _NOT_PASSED, plain=True, who="object.__getattribute__")


# ------------------------------------------------------------------------------------------------
# Reading, forward mode
# ------------------------------------------------------------------------------------------------


def _getattr_frule_impl(obj: Any, name: Any, default: Any, plain: bool, who: str) -> Dual:
    n = primal(name)
    o = primal(obj)
    if n == "default_factory" and isinstance(o, collections.defaultdict):  # with the tangent kept for it
        return factory_read_frule(obj)
    t = obj.tangent if isinstance(obj, Dual) else T.zero_tangent(o)
    # reuse the reverse rule's classification on a codual whose fdata is the full tangent: for
    # the owners below the forward tangent is read exactly where the reverse rule reads fdata
    if type(o) is np.vectorize and n == "pyfunc":  # its tangent is pyfunc's (numpy_vectorize.py)
        return Dual(o.pyfunc, pyfunc_tangent(t))
    if type(o) is not types.ModuleType:
        kind = K.primal_kind(o)
        if kind is K.OBJECT or kind is K.FROZEN:
            _check_user_read(o, n, who, plain)
            present, v = _instance_value(o, n)
            if present:
                fields = t.fields if isinstance(t, (Tangent, MutableTangent)) else {}
                field_t = class_level_tangent(v) if field_default(o, n) else None  # (local_classes.py)
                field_t = fields.get(n, _MISSING) if field_t is None else field_t
                return Dual(v, T.zero_tangent(v) if field_t is _MISSING else field_t)
    if n == "__dict__" and type(o) is not types.ModuleType and K.primal_kind(o) is K.OBJECT \
            and isinstance(t, MutableTangent):  # the instance dict's tangent: the fields (see _read)
        return Dual(o.__dict__, t.fields)
    if not plain and _mapped_item(o, n):  # res.x of an OptimizeResult: the item res["x"]
        v = dict.__getitem__(o, n)
        return Dual(v, t[n] if isinstance(t, dict) else T.zero_tangent(v))
    try:
        v = object.__getattribute__(o, n) if plain else getattr(o, n)
    except AttributeError:
        if default is _NOT_PASSED:
            raise
        return Dual(primal(default), default.tangent if isinstance(default, Dual) else T.zero_tangent(default))
    if carrier_kind(o) is not None:  # what an exception or a tuple bunch was made from, with its tangent
        carried = carried_tangent(o, v, carrier_kind(o), n)
        if carried is not None:
            return Dual(v, carried)
    if type(o) is functools.partial and n in PARTIAL_PARTS:
        return part_tangent(Dual(o, t), n)
    held = held_function_tangent(o, t, v)  # g.__wrapped__, a function the wrapper's closure holds too
    if held is not None:
        return Dual(v, held)
    if n == "__self__" and _bound_owner_data(o, t, v) is not None:  # m = a.sum; m.__self__ is a, with a's tangent
        return Dual(v, t.fields["__self__"])
    if dispatch_method_owner(v) is o and t is not NoTangent:  # a singledispatchmethod: bound to o
        return Dual(v, Tangent(types.MethodType, {"__self__": t, "__func__": NoTangent}))
    if isinstance(o, tuple) and aliased_item(o, n, v) is not None:  # res.correlation, set to res.statistic
        return Dual(v, NoTangent if t is NoTangent else t[aliased_item(o, n, v)])
    _refuse_carried_floats(o, n, v)
    if type(o) is types.ModuleType:
        return Dual(v, _outside_tangent(v))
    kind = K.primal_kind(o)
    if isinstance(o, np.ndarray):
        if n in _ARRAY_NONDIFF:
            return Dual(v, NoTangent)
        if n in _ARRAY_VIEWS:
            if not isinstance(t, np.ndarray) or (n == "imag" and o.dtype.kind != "c"):
                return Dual(v, T.zero_tangent(v))
            return Dual(v, getattr(t, n))
        if _is_bound_to(v, o):
            return Dual(v, Tangent(type(v), {"__self__": t}))
        if n == "flat":
            return flat_frule(Dual(o, t))
        if n == "base":
            return Dual(v, _base_derivative(v, t, NoTangent))
        _read_array_attribute(CoDual(o, NoFData), n, v)  # raises the unsupported-attribute error
    if kind is K.FLOAT or kind is K.COMPLEX:
        if n == "real":
            return Dual(v, float(np.real(t)))
        if n == "imag":
            return Dual(v, float(np.imag(t)))
    if kind is K.TUPLE and n in getattr(type(o), "_fields", ()):
        return Dual(v, NoTangent if t is NoTangent else t[type(o)._fields.index(n)])
    if _is_bound_to(v, o):
        if isinstance(v, types.MethodType):
            return Dual(v, Tangent(types.MethodType, {"__self__": t, "__func__": T.zero_tangent(v.__func__)}))
        return Dual(v, Tangent(type(v), {"__self__": t}))
    t = class_level_tangent(v)  # a class made in the function: its value's tangent
    return Dual(v, _outside_tangent(v) if t is None else t)


@frule_for(getattr)
def _getattr_frule(obj, name, default=_NOT_PASSED):
    if isinstance(primal(obj), types.ModuleType) and MODULE_SETATTR and default is _NOT_PASSED:
        written = MODULE_SETATTR["read_frule"](obj, name)  # a global this call wrote: its tangent
        if written is not None:
            return written
    return _getattr_frule_impl(obj, name, default, plain=False, who="getattr")


@frule_for(object.__getattribute__, (object, "__getattribute__"))  # (object, name): super().__getattribute__ bound to self
def _getattribute_frule(self, name):
    return _getattr_frule_impl(self, name, _NOT_PASSED, plain=True, who="object.__getattribute__")


# A C descriptor read directly (``type(o).__dict__["x"].__get__(o)``: inspect.getattr_static reads
# ``type.__dict__["__mro__"].__get__(klass)`` so, which scikit-learn reaches through narwhals): on a
# value with a tangent, the attribute is read as object.__getattribute__ reads it, in every mode;
# on a value without one (a class), or one the descriptor does not apply to (C's TypeError), C's.
def _reads_data(descriptor: Any, obj: Any) -> bool:
    if not isinstance(obj, descriptor.__objclass__) or K.primal_kind(obj) is K.NONDIFF:
        return False
    if _class_attribute(type(obj), descriptor.__name__) is not descriptor:
        raise RuleArgumentError(
            f"{type(descriptor).__name__}.__get__: {type(obj).__qualname__} shadows the descriptor of "
            f"{descriptor.__objclass__.__qualname__}.{descriptor.__name__} it is called on; yuebing reads "
            "attributes as the instance resolves them: use getattr(obj, name)")
    return True


def _descriptor_read(descriptor: Any, obj: Any, owner: Any = None) -> Any:
    if _reads_data(descriptor, obj):
        return object.__getattribute__(obj, descriptor.__name__)
    return _constant_descriptor_read(descriptor, obj, owner)


def _constant_descriptor_read(descriptor: Any, obj: Any, owner: Any) -> Any:
    return descriptor.__get__(obj, owner)


nondifferentiable(_reads_data, _constant_descriptor_read)
for _descriptor_type in (types.MemberDescriptorType, types.GetSetDescriptorType):
    defined_as((_descriptor_type, "__get__"), _descriptor_read)


# ------------------------------------------------------------------------------------------------
# Writing: setattr, delattr (and object.__setattr__ / object.__delattr__)
# ------------------------------------------------------------------------------------------------


def _check_user_write(o: Any, name: str, who: str, plain: bool, building: bool = False) -> None:
    """Refuse writes the rules cannot follow. ``building``: the object has a mutable tangent, as a
    frozen dataclass has while its ``__post_init__`` runs (``object.__setattr__`` is then allowed)."""
    tp = type(o)
    kind = K.primal_kind(o)
    if kind is K.FROZEN:
        if plain and not building:
            raise RuleArgumentError(f"{who}: {tp.__qualname__} is frozen; yuebing differentiates frozen "
                                    "objects built by their constructor, not mutated in place")
        return  # setattr raises FrozenInstanceError itself
    if building and isinstance(o, BaseException):
        return  # its __init__'s self, with a tangent (exception_tangents.py)
    if kind is not K.OBJECT:
        raise RuleArgumentError(
            f"{who}: yuebing follows attribute assignment on instances of user classes only, not on "
            f"{tp.__qualname__} (classes and modules are not differentiated)"
        )
    if not plain and (tp.__setattr__ not in _PLAIN_SETATTR or tp.__delattr__ not in _PLAIN_DELATTR):
        raise RuleArgumentError(f"{who}: {tp.__qualname__} overrides __setattr__/__delattr__; that is user "
                                "code for the source transform, not for this rule")
    attr = _class_attribute(tp, name)
    if attr is not _MISSING and _is_custom_data_descriptor(attr):
        raise RuleArgumentError(f"{who}: {tp.__qualname__}.{name} is a property or descriptor; yuebing runs "
                                "its setter for setattr(o, name, v) and object.__setattr__(o, name, v), not for a "
                                "bound o.__setattr__ or super().__setattr__. What to do: write "
                                f"object.__setattr__(self, {name!r}, value) (in a class's own __setattr__ too)")


def _dict_position(o: Any, name: str) -> int | None:
    d = getattr(o, "__dict__", None)
    if d is None or name not in d:
        return None
    return list(d).index(name)


def _function_metadata(o: Any, value: Any) -> bool:
    """A derivative-free attribute written on a function (``f.__qualname__ = ...``, as decorators
    do; ``func.typecode = ...`` on a Fortran routine): written and restored like any attribute,
    with no tangent to follow."""
    return (isinstance(o, types.FunctionType) or _is_fortran_routine(o) or _is_user_class(o)) \
        and T.zero_tangent(value) is NoTangent


def _is_user_class(o: Any) -> bool:
    """A class made by a class statement (an instance counter ``Particle.count += 1``, a registry
    of labels): a derivative-free value written on it is written and restored like a function's
    metadata; one carrying floats is refused by ``_check_user_write``."""
    return isinstance(o, type) and bool(o.__flags__ & _HEAP_TYPE)


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: a class made by a class statement, not a builtin or C type


def _is_fortran_routine(o: Any) -> bool:
    """f2py's wrapper of a Fortran routine (scipy.linalg's get_lapack_funcs tags it), recognised by
    its type's name: importing SciPy to get the type would load it with yuebing."""
    return type(o).__name__ == "fortran" and type(o).__module__ == "builtins"


def _function_metadata_write(o: Any, n: str, v: Any) -> tuple:
    old = getattr(o, n, _MISSING)
    setattr(o, n, v)
    if _is_user_class(o):  # outside state: written once per gradient call, as a plain call does
        outside_state.note_reached(o)

    def pullback(dy):
        if old is _MISSING:
            delattr(o, n)
        else:
            setattr(o, n, old)
        return NoRData, NoRData, NoRData, NoRData

    return output(None), pullback


def _setattr_rrule_impl(obj: CoDual, name: Any, value: Any, plain: bool, who: str):
    o, n = obj.primal, primal(name)
    if _function_metadata(o, primal(value)):
        return _function_metadata_write(o, n, primal(value))
    if writes_on_class(o, plain):  # a value with a tangent type written on a class (local_classes.py)
        return class_write_rrule(o, n, value)
    _check_user_write(o, n, who, plain, building=isinstance(obj.fdata, MutableTangent))
    v = primal(value)
    v_fd = value.fdata if isinstance(value, CoDual) else NoFData
    # a constant object (no fdata) is restored like any other; its tangent is not tracked
    fields = obj.fdata.fields if isinstance(obj.fdata, MutableTangent) else {}
    existed, old = _instance_value(o, n)
    old_slot = fields.get(n, _MISSING)
    (_raw_setattr if plain else setattr)(o, n, v)
    fields[n] = _slot(v, v_fd) if old_slot is _MISSING else _overwriting_slot(old_slot, v, v_fd)

    def pullback(dy):
        slot = fields[n]
        if existed:
            _raw_setattr(o, n, old)
            fields[n] = _slot(old, NoFData) if old_slot is _MISSING else _restored(old_slot, old)
            return NoRData, NoRData, NoRData, T.rdata(slot)
        # absent before: code run without derivatives (a with statement's manager) may have
        # deleted it since, so it is deleted only if present; the tangent gets back what it had
        if _instance_value(o, n)[0]:
            _raw_delattr(o, n)
        if old_slot is _MISSING:
            del fields[n]
        else:
            fields[n] = old_slot
        return NoRData, NoRData, NoRData, T.rdata(slot)

    return output(None), pullback


def _setattr_frule_impl(obj: Dual, name: Any, value: Any, plain: bool, who: str) -> Dual:
    o, n = obj.primal, primal(name)
    if not _function_metadata(o, primal(value)) and writes_on_class(o, plain):
        return class_write_frule(o, n, value)
    if not _function_metadata(o, primal(value)):
        _check_user_write(o, n, who, plain, building=isinstance(obj.tangent, MutableTangent))
    (_raw_setattr if plain else setattr)(o, n, primal(value))
    if isinstance(obj.tangent, MutableTangent):
        obj.tangent.fields[n] = value.tangent if isinstance(value, Dual) else T.zero_tangent(value)
    return Dual(None, NoTangent)


#: rules of an attribute write on a module found only when it runs (``setattr(mod, name, x)``, ``m.G = x``
#: with ``m`` bound in a branch): the module's global is written as ``global G`` writes it, and of a
#: read through a variable or ``getattr`` of a global this call wrote (``read_rrule``, ``read_frule``:
#: None for any other); set by ``transform/global_writes.py`` ("rrule", "frule")
MODULE_SETATTR: dict = {}


@rrule_for(setattr)
def _setattr_rrule(obj, name, value):
    if isinstance(primal(obj), types.ModuleType) and MODULE_SETATTR:
        return MODULE_SETATTR["rrule"](obj, name, value)
    return _setattr_rrule_impl(obj, name, value, plain=False, who="setattr")


@rrule_for(object.__setattr__, (object, "__setattr__"))  # (object, name): super().__setattr__ bound to self
def _object_setattr_rrule(self, name, value):
    return _setattr_rrule_impl(self, name, value, plain=True, who="object.__setattr__")


@frule_for(setattr)
def _setattr_frule(obj, name, value):
    if isinstance(primal(obj), types.ModuleType) and MODULE_SETATTR:
        return MODULE_SETATTR["frule"](obj, name, value)
    return _setattr_frule_impl(obj, name, value, plain=False, who="setattr")


@frule_for(object.__setattr__, (object, "__setattr__"))  # (object, name): super().__setattr__ bound to self
def _object_setattr_frule(self, name, value):
    return _setattr_frule_impl(self, name, value, plain=True, who="object.__setattr__")


exception_tangents.use_object_field_reader(_read_object_field)  # (exception attributes read as fields)

from ._object_cases import CASES  # noqa: E402,F401 - check_rule's cases, kept in a file of their own
