"""yuebing: automatic differentiation of ordinary Python and NumPy code by source transformation."""
from . import tangents
from .tangents import NoTangent, register_nondifferentiable_type

__version__ = "0.1.0"
