"""The public face: every function a user calls, re-exported as ``yuebing.*``.

``reverse`` (``grad``, ``value_and_grad``, ``vjp``, prepared gradients and pullbacks),
``forward`` (``jvp``), ``jacobians`` (``jacobian``), ``show`` (``show``, ``show_forward``),
``second_order`` (``hvp``, ``hessian`` and their prepared forms), ``flatten`` (flat vectors for
optimisers), ``argument_checks`` (the checks every entry point makes of its arguments). This
package is the top of the library's layers: it may import everything below it, and nothing
below imports it.
"""
from ..rules import lazy
from ..rules.debug import RuleDebugError, config
from ..transform.forward_runtime import NestedDifferentiationError
from ..transform.second_order import SecondOrderError
from .custom import checkpoint, custom_jvp, custom_vjp, linearize, stop_gradient
from .flatten import flatten, flatten_tangent
from .forward import jvp
from .jacobians import jacobian
from .implicit import custom_root
from .reverse import (
    MutableTangent,
    NoTangent,
    Tangent,
    grad,
    prepare_gradient,
    prepare_pullback,
    register_nondifferentiable_type,
    value_and_grad,
    value_and_pullback,
    vjp,
)
from .scale import map_grad
from .second_order import hessian, hvp, prepare_hessian, prepare_hvp
from .show import show, show_forward
from . import nested as _nested  # noqa: F401, E402 - differentiation through yb.grad-made functions
from . import composed_transforms as _composed  # noqa: F401, E402 - yb.jacobian/hessian/hvp inside

# The rules for SciPy's solvers, loaded when their part of SciPy is imported (rules/lazy.py):
# scipy.optimize's implicit rules; scipy.integrate's ODE solvers, their second order, quad and quad_vec.
lazy.defer("scipy.optimize", f"{__name__}.implicit_scipy")
lazy.defer("scipy.integrate", f"{__name__}.ode", f"{__name__}.ode_second_order", f"{__name__}.quad",
           f"{__name__}.quad_vec")

__all__ = [
    "MutableTangent", "NestedDifferentiationError", "NoTangent", "RuleDebugError", "SecondOrderError", "Tangent",
    "checkpoint", "config", "custom_jvp", "custom_root", "custom_vjp", "flatten", "flatten_tangent", "grad", "hessian", "hvp", "jacobian", "jvp", "linearize", "map_grad", "prepare_gradient",
    "prepare_hessian", "prepare_hvp", "prepare_pullback", "register_nondifferentiable_type", "show",
    "show_forward", "stop_gradient", "value_and_grad", "value_and_pullback", "vjp",
]
