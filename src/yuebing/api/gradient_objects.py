"""The gradient of an object, as a value in differentiated code.

``yb.grad(loss, argnums=1)(x, model)`` returns a tangent object: ``MutableTangent[Model]`` (a
``Tangent`` for a frozen one) whose ``fields`` map each attribute to its gradient. Called inside
a function being differentiated, that gradient is itself a value with derivatives. As a value it
is an object whose one differentiated attribute is ``fields``, so its tangent (or cotangent) is
``MutableTangent[MutableTangent]`` with ``fields == {"fields": {...}}``, one level above the
*argument's* tangent ``MutableTangent[Model]`` with ``fields == {...}``, in which the inner pass
takes its directions and gives its Hessian-vector products.

Passed across unchanged, the outer pass read the attributes' tangents under the wrong keys and
took them for zero: ``yb.grad``/``yb.jvp`` of ``sum(g.fields["w"] ** 2)`` dropped the gradient's
derivative, silently. ``as_value_tangent`` and ``as_argument_tangent`` move between the levels,
through tuples, lists and dicts, by the structure of the gradient value.
"""
from __future__ import annotations

from typing import Any

from ..tangents import MutableTangent
from ..tangents.types import _FieldTangent


def as_value_tangent(tangent: Any, gradient: Any) -> Any:
    """An argument-level tangent (the inner pass's Hessian-vector product) as the tangent of the
    ``gradient`` value it goes with."""
    if isinstance(gradient, _FieldTangent) and isinstance(tangent, _FieldTangent):
        fields = {name: as_value_tangent(t, gradient.fields.get(name)) for name, t in tangent.fields.items()}
        return MutableTangent(type(gradient), {"fields": fields})
    return _mapped(as_value_tangent, tangent, gradient)


def as_argument_tangent(tangent: Any, gradient: Any) -> Any:
    """The tangent (or cotangent) of the ``gradient`` value as one of the argument it is the
    gradient of (a direction of the inner pass)."""
    if isinstance(gradient, _FieldTangent):
        inner = tangent.fields.get("fields", {}) if isinstance(tangent, _FieldTangent) else {}
        fields = {name: as_argument_tangent(t, gradient.fields.get(name)) for name, t in inner.items()}
        return type(gradient)(gradient.primal_type, fields)
    return _mapped(as_argument_tangent, tangent, gradient)


def _mapped(convert: Any, tangent: Any, gradient: Any) -> Any:
    """``convert`` applied to the items of a tuple (a namedtuple too), list or dict tangent and
    gradient."""
    if type(gradient) is dict and type(tangent) is dict:
        return {key: convert(t, gradient.get(key)) for key, t in tangent.items()}
    if isinstance(gradient, (tuple, list)) and isinstance(tangent, (tuple, list)) and len(tangent) == len(gradient):
        items = [convert(t, g) for t, g in zip(tangent, gradient)]
        return type(tangent)._make(items) if hasattr(type(tangent), "_make") else type(tangent)(items)
    return tangent


def holds_objects(gradient: Any) -> bool:
    """Whether a gradient holds a tangent object (the conversions are needed)."""
    if isinstance(gradient, _FieldTangent):
        return True
    if type(gradient) is dict:
        return any(holds_objects(g) for g in gradient.values())
    return isinstance(gradient, (tuple, list)) and any(holds_objects(g) for g in gradient)


__all__ = ["as_argument_tangent", "as_value_tangent", "holds_objects"]
