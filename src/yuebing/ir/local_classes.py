"""Primitives for classes defined inside a differentiated function (``frontend/local_classes.py``).

A class statement runs as Python runs it; what carries derivatives into the class is told to the
differentiation by two calls the normaliser puts next to it:

* ``class_cells(names, *cells)``, before the class statement: the cells of the function's
  variables the class's methods read. A method is called later through the class (``m(x)``,
  ``m.twice``), where the closure it was made with is not at hand: its rules then find each
  cell's tangent box by the cell (``rules/local_classes.py``), so the method sees the variable's
  current value with its derivative, as a nested ``def`` does. It returns the class decorator
  (applied first) that gives the class's functions those very cells: a variable of a function
  further out is a cell the generated code only holds as an object.
* ``class_level(value)``: a value the class body assigns (``scale = a * 3``), computed by the
  function's own code; the class attribute (or a dataclass field's default) read later through
  the class or an instance carries that value's derivative.

``defer_init_subclass(message, bases)`` hands back the bases of a class whose class keywords the
function hands to ``__init_subclass__`` itself, after the statement: the statement's own call is
skipped for it.
"""
from __future__ import annotations

import abc
import enum
import types
from typing import Any, Callable

from ..tangents.function_copies import function_copy


def class_cells(names: tuple, *cells: types.CellType) -> Callable[[type], type]:
    """Declares the cells a class made here captures; returns the decorator giving the class's
    functions (methods, properties' functions, class and static methods) those cells."""
    shared = dict(zip(names, cells))

    def share(cls: type) -> type:
        for attr, value in list(vars(cls).items()):
            rebuilt = _with_cells(value, shared)
            if rebuilt is not value:
                setattr(cls, attr, rebuilt)
        return cls

    return share


def _with_cells(value: Any, cells: dict) -> Any:
    """``value`` (a function, or a property, class or static method of one) with its closure
    variables named in ``cells`` taking those cells."""
    if isinstance(value, property):
        parts = [_with_cells(f, cells) for f in (value.fget, value.fset, value.fdel)]
        return value if all(p is f for p, f in zip(parts, (value.fget, value.fset, value.fdel))) \
            else type(value)(*parts, value.__doc__)
    if isinstance(value, (classmethod, staticmethod)):
        inner = _with_cells(value.__func__, cells)
        return value if inner is value.__func__ else type(value)(inner)
    if not isinstance(value, types.FunctionType) or not value.__closure__:
        return value
    closure = tuple(cells.get(name, cell) for name, cell in zip(value.__code__.co_freevars, value.__closure__))
    if all(new is old for new, old in zip(closure, value.__closure__)):
        return value
    return function_copy(value, closure=closure)  # (its annotations too)


def class_level(value: Any) -> Any:
    """``value``, which a class body stores (see the module docstring)."""
    return value


def class_stored(names: tuple, message: str, *values: Any) -> Callable[[Any], Any]:
    """The decorator checking that the class stores ``values`` as its attributes ``names`` (or
    a dataclass field's defaults); raises a ``TypeError`` with ``message`` naming the attribute
    (at ``<yb-attribute>``) where it does not."""
    def check(cls: Any) -> Any:
        fields = getattr(cls, "__dataclass_fields__", {}) if isinstance(cls, type) else {}
        defaults = _named_tuple_defaults(cls)
        for name, value in zip(names, values):
            stored = vars(cls).get(name, _ABSENT) if isinstance(cls, type) else _ABSENT
            if stored is not value and not _holds_as_member(stored, value) \
                    and getattr(fields.get(name), "default", _ABSENT) is not value \
                    and defaults.get(name, _ABSENT) is not value:
                raise TypeError(message.replace("<yb-attribute>", repr(name)))
        if any(defaults.get(name, _ABSENT) is value for name, value in zip(names, values)):
            refuse_field_defaults_reads(cls)
        return cls

    return check


def _holds_as_member(stored: Any, value: Any) -> bool:
    """Whether ``stored`` is a plain ``Enum`` member holding ``value`` itself as its value
    (``HIGH = a``): a read of ``.value`` finds it by identity, as a class attribute's read does.
    Not with a mixin type (``class Mode(float, Enum)``): the member is a number of its own."""
    return isinstance(stored, enum.Enum) and type(stored)._member_type_ is object \
        and vars(stored).get("_value_", _ABSENT) is value


def _named_tuple_defaults(cls: Any) -> dict:
    """A named tuple class's defaults by field (its construction reads them with their
    derivatives: ``rules/local_classes.stored_defaults``); empty for another class."""
    if not (isinstance(cls, type) and issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple)):
        return {}
    return dict(getattr(cls, "_field_defaults", {}))


def refuse_field_defaults_reads(cls: type) -> None:
    """Make a read of the named tuple class ``cls``'s ``_field_defaults`` raise (some hold
    derivatives, which such a read would lose; ``_StoredDefaults``)."""
    cls._field_defaults = _StoredDefaults(_named_tuple_defaults(cls))  # type: ignore[attr-defined]


class _StoredDefaults(dict):
    """A named tuple's ``_field_defaults`` holding values its class body computed from the
    function's variables: read directly, they would lose their derivative, so reading them is
    refused (the class's construction reads the defaults themselves, not this)."""

    def _refuse(self, *args: Any, **kwargs: Any) -> Any:
        raise TypeError("yuebing cannot differentiate a read of _field_defaults of a named tuple defined in the "
                        "differentiated function whose defaults are computed from its variables (they would "
                        "lose their derivative). What to do: make an instance (P()) and read its fields")

    __getitem__ = get = items = values = __iter__ = keys = copy = __contains__ = __len__ = __eq__ = _refuse


_ABSENT = object()

#: what a parameter holds when the call gave no value for a default computed elsewhere (a
#: string, so that the definition's defaults stay constants: frontend/closures.py's factories too)
MISSING = "<yuebing: no argument given, the default applies>"

#: the mark of a class whose ``__init_subclass__`` the function calls itself, after the class
#: statement (``frontend/local_classes._defer_init_subclass``)
DEFERRED = "__yb_init_subclass_deferred__"


def defer_init_subclass(message: str, bases: tuple) -> tuple:
    """``bases``, after making the next ``__init_subclass__`` call of the class that defines the
    one a class with these bases inherits skip a class carrying ``DEFERRED`` (once: the call puts
    the original back, and runs it for any other class). Raises a ``TypeError`` with ``message``
    when the metaclass has a ``__new__``, ``__init__`` or ``__prepare__`` of its own, which would
    see the keywords too."""
    meta = max((type(b) for b in bases), key=lambda m: len(m.__mro__), default=type)
    if any(getattr(meta, m) not in (getattr(type, m), getattr(abc.ABCMeta, m)) for m in ("__new__", "__init__", "__prepare__")):
        raise TypeError(message)
    owner = next((c for c in _merged_mro(bases) if "__init_subclass__" in vars(c)), object)
    if owner is object:
        return bases
    original = vars(owner)["__init_subclass__"]

    def once(cls: type, **kwargs: Any) -> None:
        setattr(owner, "__init_subclass__", original)
        if DEFERRED not in vars(cls):
            original.__get__(None, cls)(**kwargs)

    setattr(owner, "__init_subclass__", classmethod(once))
    return bases


def _merged_mro(bases: tuple) -> list:
    """The method resolution order a class with ``bases`` gets, without itself (C3)."""
    pending = [list(b.__mro__) for b in bases] + [list(bases)]
    merged = []
    while any(pending):
        pending = [seq for seq in pending if seq]
        head = next(seq[0] for seq in pending if not any(seq[0] in other[1:] for other in pending))
        merged.append(head)
        pending = [seq[1:] if seq[0] is head else seq for seq in pending]
    return merged
