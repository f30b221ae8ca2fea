"""Tools that prove derivatives and tangent types correct.

* ``check_tangent_interface(x)`` -- the laws of DESIGN.md §3 on any value.
* ``structural_copy``, ``compare``, ``structurally_equal``, ``assert_structurally_equal`` -- copies
  and comparisons that respect cycles, shared sub-objects and views.
* ``validate_tangent(x, t)`` -- is ``t`` a well-formed tangent of ``x`` with mirrored aliasing?
* ``strategies`` (needs ``hypothesis``) -- generators of nested, aliased, cyclic data.
"""
from ..tangents.ops import structural_copy
from ..tangents.validate import validate_tangent
from .interface import check_tangent_interface
from .structural import assert_structurally_equal, compare, structurally_equal

__all__ = [
    "assert_structurally_equal", "check_tangent_interface", "compare", "structural_copy",
    "structurally_equal", "validate_tangent",
]
from .check_rule import RuleCheckError, check_rule  # noqa: E402

__all__ += ["RuleCheckError", "check_rule"]
