"""The public surface of yuebing (DESIGN.md §1).

The differentiation entry points (``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``jacobian``,
``hessian``...) land here as the transforms are built; today it re-exports the tangent model.
"""
from .tangents import (
    MutableTangent,
    NoTangent,
    Tangent,
    register_nondifferentiable_type,
)

__all__ = ["MutableTangent", "NoTangent", "Tangent", "register_nondifferentiable_type"]
