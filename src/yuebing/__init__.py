"""yuebing: automatic differentiation of ordinary Python and NumPy code by source transformation.

The public API is in ``yuebing.api`` (re-exported here); see DESIGN.md §1.
"""
from . import tangents
from .api import (
    MutableTangent,
    NoTangent,
    Tangent,
    grad,
    prepare_gradient,
    prepare_pullback,
    register_nondifferentiable_type,
    show,
    value_and_grad,
    value_and_pullback,
    vjp,
)
from .flatten import flatten, flatten_tangent
from .forward_api import jacobian, jvp, show_forward
from .second_order_api import hessian, hvp, prepare_hessian, prepare_hvp
from .transform.second_order import SecondOrderError
from .rules import frule, nondifferentiable, rrule
from .transform.forward_runtime import NestedDifferentiationError
from .rules.debug import RuleDebugError, config
from . import testing

__version__ = "0.1.0"

__all__ = [
    "MutableTangent", "NestedDifferentiationError", "RuleDebugError", "config", "NoTangent", "Tangent", "frule", "grad",
    "flatten", "flatten_tangent", "hessian", "hvp", "jacobian", "jvp", "nondifferentiable", "show_forward",
    "prepare_gradient", "prepare_hessian", "prepare_hvp", "prepare_pullback", "SecondOrderError", "register_nondifferentiable_type", "rrule", "show",
    "tangents", "testing", "value_and_grad", "value_and_pullback", "vjp",
]
