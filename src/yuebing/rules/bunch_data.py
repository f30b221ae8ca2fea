"""Float data a SciPy result tuple keeps in attributes beside its items: a "tuple bunch"
(``scipy._lib._bunch._make_tuple_bunch``: ``LinregressResult.intercept_stderr``,
``TtestResult.df`` and the ``_standard_error``/``_estimate`` its ``confidence_interval()`` reads).

A tuple's tangent holds its items only, so the attributes' derivatives are kept beside the result,
per differentiation pass and role, as an exception's arguments are (``exception_data.py``, whose
record this module reuses under its own kind): the construction of a tuple bunch in
differentiated code (``transform/runtime.py``, ``forward_runtime.py``, ``lifting_objects.py``)
records each keyword argument that is not a field with its fdata (reverse), its tangent (forward),
or both and the fdata tangent (second order). An attribute read of the result (``rules/objects.py``,
``transform/lifting_objects.py``) whose value *is* one of those arguments (by identity: the
subclass ``TtestResult`` keeps ``standard_error`` as ``self._standard_error``) hands out that
argument's data; a float's cotangent gathers in the record and the construction's pullback returns
it to the argument. An attribute set later (``res.shifted = v``) joins the record
(``bunch_records.set_attribute``). Any other float attribute (one its ``__init__`` computed, one a
result made outside holds) is refused by name (``objects._refuse_carried_floats``).

The properties the bunch class generates for its extra fields are read by the getattr rule
itself (``transform/protocols.property_function``), not derived: they read ``self.__dict__``,
which holds no derivatives.
"""
from __future__ import annotations

from typing import Any

KIND = "tuple bunch"


def is_bunch(o: Any) -> bool:
    """Whether ``o`` is an instance of a SciPy tuple bunch class (a tuple with extra fields)."""
    return isinstance(o, tuple) and isinstance(getattr(type(o), "_extra_fields", None), tuple)


def carrier_kind(o: Any) -> str | None:
    """The kind of record that follows float data ``o`` keeps outside its tangent: an exception's
    (``exception_data.py``), a tuple bunch's (this module), or None."""
    if isinstance(o, BaseException):
        return "exception"
    return KIND if is_bunch(o) else None


def is_generated_property(o: Any, name: Any) -> bool:
    """Whether ``o.name`` is a property the tuple bunch class generated for an extra field: the
    getattr rule reads it in every mode (an item's, ``self[i]``, is derived as before)."""
    return is_bunch(o) and name in type(o)._extra_fields


def reads_attribute(o: Any, name: Any) -> bool:
    """Whether ``o.name`` reads an instance attribute of a tuple bunch (batched forward mode runs
    the getattr rule once on the batched tangents: it hands out the recorded one, or refuses)."""
    return is_bunch(o) and isinstance(name, str) and name in vars(o)


def routed_rdata(field_rdata: list, positions: list, keys: list, extra_rdata: dict) -> tuple:
    """The rdata of a bunch construction's arguments in call order: an item's from the result's
    rdata, an extra keyword's from what its reads gathered (``keys``: None for a positional)."""
    return tuple(extra_rdata[k] if k in extra_rdata else field_rdata[i] for k, i in zip(keys, positions))
