"""Constructing a class whose ``__new__`` is Python code, in every mode.

``type.__call__`` runs ``cls.__new__(cls, *args, **kwargs)``, then ``__init__`` on the result
when it is an instance of ``cls``. Written out as Python (``ir.class_construction.made_by_new``),
that is differentiated like user code: scikit-learn's ``Hyperparameter`` (a namedtuple subclass
whose ``__new__`` fills defaults before ``super().__new__``), a ``__new__`` building the object
with ``object.__new__(cls)`` and attribute writes, one returning an object of another class. Each
runtime's construction (``runtime._construct``, ``forward_runtime._construct``,
``lifting_objects.construct``, third order's ``plain_objects._construct``) calls the function
here for such a class (``built_by_new``): the class is a constant argument of
``made_by_new``, its rdata dropped from the pullback. A frozen dataclass with a ``__new__`` of
its own is built by ``made_frozen_by_new`` (``ir/class_construction.py``): ``object.__new__``
gives it the tangent of a finished frozen object, into which its ``__init__``'s field writes
could not go, so it gets a mutable one while ``__init__`` runs (``frozen_new.py``).
"""
from __future__ import annotations

import dataclasses
import threading
import types
from typing import Any, Callable

from ..ir.class_construction import made_by_new, made_frozen_by_new
from ..rules._partial_work import reroute
from ..rules.core import CoDual, Dual, MissingRuleError, describe_callable
from ..rules.numpy_coverage import REFUSED as NUMPY_REFUSED
from ..tangents import NoFData, NoRData, NoTangent
from .class_calls import has_python_new, metaclass_call
from . import frozen_new  # noqa: F401  (registers the rules of made_frozen_by_new's steps)

_CONSTANT_SECOND = (NoFData, NoTangent, NoFData)  # a constant's fdata, tangent and fdata tangent


#: ``.classes``: those whose next construction (in this thread) is ``type.__call__``'s, reached
#: from their metaclass's own ``__call__`` (``super().__call__(...)``): built as if the metaclass
#: had none (``through_type_call``)
_THROUGH_TYPE_CALL = threading.local()


def type_call_of(fn: Any) -> type | None:
    """The class ``C`` when ``fn`` is ``type.__call__`` bound to it (what ``super().__call__``
    gives in a metaclass's own ``__call__``), else None. The runtimes then construct
    ``through_type_call(C)``."""
    if type(fn) is not _METHOD_WRAPPER or fn.__name__ != "__call__" or not isinstance(fn.__self__, type):
        return None
    return fn.__self__ if getattr(fn, "__objclass__", None) is type else None


def through_type_call(cls: type) -> type:
    """``cls``, whose next construction (``builder``, the first thing each runtime's asks) is
    then ``type.__call__``'s, as for a class whose metaclass has no ``__call__`` of its own: the
    metaclass's own is the caller."""
    _pending().append(cls)
    return cls


def _pending() -> list:
    if not hasattr(_THROUGH_TYPE_CALL, "classes"):
        _THROUGH_TYPE_CALL.classes = []
    return _THROUGH_TYPE_CALL.classes


_METHOD_WRAPPER = type(type.__call__.__get__(type))


def _metaclass_builder(cls: type, mode: str) -> Callable | None:
    """The Python ``__call__`` of ``cls``'s metaclass when it has one of its own (a singleton's,
    ``Enum``'s by value), which every mode then differentiates in place of ``type.__call__``;
    None when ``type.__call__`` builds ``cls``. A ``__call__`` that is not Python is refused."""
    pending = _pending()
    if pending and pending[-1] is cls:
        pending.pop()
        return None
    meta = metaclass_call(cls)
    if meta is None:
        return None
    call = vars(meta)["__call__"]
    if not isinstance(call, types.FunctionType):
        raise MissingRuleError(cls, mode, reason=f"its metaclass {meta.__qualname__} has a __call__ of its own "
                               "without Python source (make the instance outside the differentiated function "
                               "and pass it in)")
    return call


def builder(cls: type, mode: str) -> Callable | None:
    """What builds ``cls(...)`` as user code, called with the class then the call's arguments:
    its metaclass's own ``__call__``, or ``made_by_new`` for a ``__new__`` written in Python; None
    when the runtime's own construction does (``__init__``, a dataclass's, a named tuple's)."""
    call = _metaclass_builder(cls, mode)
    if call is not None:
        return call
    return _by_new(cls, mode) if built_by_new(cls, mode) else None


def built_by_new(cls: type, mode: str) -> bool:
    """Whether ``cls(...)`` is built by ``made_by_new`` (its ``__new__`` is Python code). Refused
    by name: a NumPy class the coverage table refuses."""
    if not has_python_new(cls):
        return False
    refused = _refused_by_numpy(cls)  # (np.matrix: its * is a matrix product no array rule would see)
    if refused is not None:
        raise MissingRuleError(cls, mode, reason=refused)
    return True


def _is_frozen_dataclass(cls: type) -> bool:
    return dataclasses.is_dataclass(cls) and cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def _by_new(cls: type, mode: str) -> Callable:
    """``made_by_new``, or for a frozen dataclass ``made_frozen_by_new`` (its tangent mutable while
    ``__init__`` writes the fields: ``frozen_new.py``), which third order does not run."""
    if not _is_frozen_dataclass(cls):
        return made_by_new
    if mode == "third-order":
        raise MissingRuleError(cls, mode, reason="it is a frozen dataclass with a __new__ of its own, which "
                               "yuebing builds in first and second order only (move its work into a classmethod "
                               "that then calls the class without it)")
    return made_frozen_by_new


def _refused_by_numpy(cls: type) -> str | None:
    """Why the NumPy coverage table refuses constructing ``cls`` (``np.matrix``, ``np.memmap``,
    ``np.recarray``: listed by public name), or None. (``MissingRuleError`` adds the table's
    reason itself when the name it prints is the listed one.)"""
    if cls.__module__.partition(".")[0] != "numpy":
        return None
    name, public = describe_callable(cls), f"numpy.{cls.__qualname__}"
    if name in NUMPY_REFUSED or f"numpy.{name}" in NUMPY_REFUSED:
        return "yuebing does not construct it"
    return f"yuebing does not construct it: {NUMPY_REFUSED[public]}" if public in NUMPY_REFUSED else None


def by_new_reverse(cls: type, args: tuple, kwargs: dict, dispatch: Callable,
                   build: Callable = made_by_new) -> tuple[CoDual, Callable]:
    """Reverse mode: ``dispatch(f, args, kwargs)`` is the runtime's call of a codual function;
    ``build`` is ``builder(cls)``."""
    try:
        out, pullback = dispatch(CoDual(build, NoFData), (CoDual(cls, NoFData),) + args, kwargs)
    except Exception as error:  # a __new__ or __init__ that raised after partial work (issue 13)
        reroute(error, _class_dropped)
        raise
    return out, _class_dropped(pullback)


def _class_dropped(pullback: Callable) -> Callable:
    """The class call's pullback from ``made_by_new``'s: no rdata for ``made_by_new`` and the class."""
    def by_new_pullback(dy: Any) -> tuple:
        rs = pullback(dy)
        return (NoRData, *rs[2:])

    return by_new_pullback


def by_new_forward(cls: type, args: tuple, kwargs: dict, dispatch: Callable, build: Callable = made_by_new) -> Dual:
    """Forward mode: ``dispatch(f, args, kwargs)`` is the runtime's call of a dual function."""
    return dispatch(Dual(build, NoTangent), (Dual(cls, NoTangent),) + args, kwargs)


def by_new_second(cls: type, args: tuple, kwargs: dict, dual_rule: Callable,
                  build: Callable = made_by_new) -> tuple[tuple, Callable]:
    """Second order: ``dual_rule(fn)`` is the dual rule of a Python function (``lifting.DUAL_RULE``)."""
    try:
        out, pullback = dual_rule(build)((build, *_CONSTANT_SECOND), (cls, *_CONSTANT_SECOND), *args, **kwargs)
    except Exception as error:  # a __new__ or __init__ that raised after partial work (issue 13)
        reroute(error, _class_dropped_second)
        raise
    return out, _class_dropped_second(pullback)


def _class_dropped_second(pullback: Callable) -> Callable:
    def by_new_pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, *rs[2:]), (NoRData, *rsd[2:])

    return by_new_pullback


__all__ = ["builder", "by_new_forward", "by_new_reverse", "by_new_second", "built_by_new", "made_by_new",
           "through_type_call", "type_call_of"]
