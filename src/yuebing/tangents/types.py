"""The tangent types that are not plain Python or NumPy values.

DESIGN.md §3 fixes one tangent type per primal type. Most tangents are ordinary values (``float``,
``complex``, ``ndarray``, ``tuple``, ``list``, ``dict``); this module defines the rest:

* ``NoTangent`` -- the tangent of anything that cannot be perturbed (ints, strings, modules...).
* ``NoFData`` / ``NoRData`` -- the empty halves of the fdata/rdata split (see ``split.py``).
* ``Tangent`` -- immutable tangent of an immutable object (frozen dataclass, ``functools.partial``,
  closure, bound method). Fields are read by attribute: ``g.x``.
* ``SetTangent`` -- tangent of a set or frozenset holding floats (or tuples of them): a dict from
  each element (its primal value) to that element's tangent. Identity data (fdata) like a list's tangent, for a
  frozenset too.
* ``MutableTangent`` -- tangent of a mutable object with ``__dict__`` and/or ``__slots__`` (and of a
  closure cell). It is *fdata*: created once per primal object and incremented in place, so two
  references to one primal object share one ``MutableTangent``.

Both record the primal type only for a readable ``repr``; fields whose tangent is ``NoTangent``
are kept (so field sets mirror the primal) but hidden from the ``repr``.
"""
from __future__ import annotations

import reprlib
from typing import Any, Iterator


class _Marker:
    """A named singleton (``NoTangent``, ``NoFData``, ``NoRData``)."""

    __slots__ = ("_name",)

    def __init__(self, name: str) -> None:
        self._name = name

    def __repr__(self) -> str:
        return self._name

    def __reduce__(self) -> str:  # copy/pickle keep the singleton
        return self._name

    def __copy__(self) -> "_Marker":
        return self

    def __deepcopy__(self, memo: dict) -> "_Marker":
        return self

    def __bool__(self) -> bool:
        return False


NoTangent = _Marker("NoTangent")
NoFData = _Marker("NoFData")
NoRData = _Marker("NoRData")


def _field_repr(fields: dict) -> str:
    shown = ", ".join(f"{name}={value!r}" for name, value in fields.items() if value is not NoTangent)
    return shown


class _FieldTangent:
    """Shared behaviour of ``Tangent`` and ``MutableTangent``: named fields read as attributes."""

    __slots__ = ("primal_type", "fields")

    def __init__(self, primal_type: type, fields: dict | None = None) -> None:
        object.__setattr__(self, "primal_type", primal_type)
        object.__setattr__(self, "fields", {} if fields is None else fields)

    def __getattr__(self, name: str) -> Any:
        # Only called when normal lookup fails, i.e. for field names.
        fields = object.__getattribute__(self, "fields")
        try:
            return fields[name]
        except KeyError:
            primal = object.__getattribute__(self, "primal_type").__qualname__
            raise AttributeError(
                f"the tangent of a {primal} has no field {name!r}; its fields are {sorted(fields)}"
            ) from None

    def __dir__(self) -> list[str]:
        return sorted(set(super().__dir__()) | set(self.fields))

    def __iter__(self) -> Iterator[str]:
        return iter(self.fields)

    def __getitem__(self, name: str) -> Any:
        return self.fields[name]

    def __eq__(self, other: object) -> bool:
        # Identity: field values may be arrays, for which == is not a truth value. Use
        # yuebing.testing.structurally_equal to compare values.
        return self is other

    __hash__ = object.__hash__


class Tangent(_FieldTangent):
    """Immutable tangent of an immutable object (frozen dataclass, partial, closure, method)."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(
            f"Tangent of {self.primal_type.__qualname__} is immutable (its primal is); "
            "build a new one with yuebing.tangents.add instead"
        )

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        return f"Tangent[{self.primal_type.__qualname__}]({_field_repr(self.fields)})"


class MutableTangent(_FieldTangent):
    """Mutable tangent (fdata) of a mutable object; attributes can be read and assigned."""

    __slots__ = ()

    def __setattr__(self, name: str, value: Any) -> None:
        self.fields[name] = value

    def __delattr__(self, name: str) -> None:
        del self.fields[name]

    @reprlib.recursive_repr()
    def __repr__(self) -> str:
        return f"MutableTangent[{self.primal_type.__qualname__}]({_field_repr(self.fields)})"


class SetTangent(dict):
    """Tangent of a set (or frozenset) of floats: element value -> that element's tangent (a
    tuple's is a tuple of its numbers' tangents).

    A set's elements are identified by value, so its tangent maps each element to the element's
    tangent (``NoTangent`` for labels such as ints or strings mixed in). It is fdata: one
    ``SetTangent`` per set object, incremented in place. Rules read it by element: the order of
    its entries means nothing.
    """

    __slots__ = ()

    def __repr__(self) -> str:
        return f"SetTangent({dict.__repr__(self)})"

    def copy(self) -> "SetTangent":
        return SetTangent(self)
