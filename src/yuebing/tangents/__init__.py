"""The tangent model: one tangent type per primal type, and the operations on tangents.

See DESIGN.md §3. Public names:

* types: ``NoTangent``, ``NoFData``, ``NoRData``, ``Tangent``, ``MutableTangent``, ``SetTangent``
* classification: ``tangent_type``, ``primal_kind``, ``register_nondifferentiable_type``
* vector space: ``zero_tangent``, ``randn_tangent``, ``add``, ``increment``, ``scale``, ``dot``,
  ``set_to_zero``
* primal side: ``add_to_primal``, ``difference``, ``structural_copy``
* fdata/rdata: ``fdata``, ``rdata``, ``join``, ``zero_rdata``
"""
from .kinds import primal_kind, register_nondifferentiable_type
from .ops import (
    add,
    add_to_primal,
    difference,
    dot,
    increment,
    randn_tangent,
    scale,
    set_to_zero,
    structural_copy,
    tangent_type,
    zero_tangent,
)
from .split import fdata, join, rdata, zero_rdata
from .types import MutableTangent, NoFData, NoRData, NoTangent, SetTangent, Tangent
from .walk import StructureError

__all__ = [
    "MutableTangent", "NoFData", "NoRData", "NoTangent", "StructureError", "Tangent", "add",
    "add_to_primal", "difference", "dot", "fdata", "increment", "join", "primal_kind",
    "randn_tangent", "rdata", "register_nondifferentiable_type", "scale", "SetTangent", "set_to_zero",
    "structural_copy", "tangent_type", "zero_rdata", "zero_tangent",
]
