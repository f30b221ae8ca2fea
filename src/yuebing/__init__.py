"""yuebing: automatic differentiation of ordinary Python and NumPy code by source transformation.

The public API is the ``yuebing.api`` package (re-exported here); see DESIGN.md §1.
"""
from . import tangents
from .api import (
    MutableTangent,
    NestedDifferentiationError,
    NoTangent,
    RuleDebugError,
    SecondOrderError,
    Tangent,
    checkpoint,
    config,
    custom_jvp,
    custom_root,
    custom_vjp,
    flatten,
    flatten_tangent,
    grad,
    hessian,
    hvp,
    jacobian,
    jvp,
    linearize,
    map_grad,
    prepare_gradient,
    prepare_hessian,
    prepare_hvp,
    prepare_pullback,
    register_nondifferentiable_type,
    show,
    show_forward,
    stop_gradient,
    value_and_grad,
    value_and_pullback,
    vjp,
)
from .rules import NoDerivativeWarning, frule, nondifferentiable, register_frule, register_rrule, rrule
from . import testing

__version__ = "0.1.0"

__all__ = [
    "MutableTangent", "NestedDifferentiationError", "NoDerivativeWarning", "RuleDebugError", "checkpoint", "config", "custom_jvp", "custom_root", "custom_vjp", "linearize", "stop_gradient", "NoTangent", "Tangent", "frule", "grad",
    "flatten", "flatten_tangent", "hessian", "hvp", "jacobian", "jvp", "map_grad", "nondifferentiable", "register_frule", "register_rrule", "show_forward",
    "prepare_gradient", "prepare_hessian", "prepare_hvp", "prepare_pullback", "SecondOrderError", "register_nondifferentiable_type", "rrule", "show",
    "tangents", "testing", "value_and_grad", "value_and_pullback", "vjp",
]
