"""Linear algebra rules, by sub-domain: ``products`` (``dot``, ``matmul``/``@``, ``einsum``,
``tensordot``, ``kron``, ``trace``, ``multi_dot``...), ``solves`` (``inv``, ``solve``,
``matrix_power``, ``lstsq``, ``pinv``), ``decompositions`` (``cholesky``, ``qr``, ``eigh``,
``eigvalsh``, ``svd``), ``eigen`` (``eig``, ``eigvals``), ``determinants_norms`` (``det``,
``slogdet``, ``norm``) and ``array_api`` (``numpy.linalg``'s array-API members, ``cond``,
``tensorsolve``, ``tensorinv``, ``matrix_rank``: derived from plain NumPy definitions); ``common``
holds the derivation frameworks (``linalg_rule``, ``derived``) and the matrix helpers they share.
docs/linalg.md says what is supported, the gauge conventions and the refusals.

This module only imports: ``rules.rule_modules`` finds the rule modules themselves. It names what
other rule files (``scipy_rules``) build on.
"""
from .common import (add, carries_gradient, conj, fit, hermitian_from, hermitian_from_adjoint, linalg_rule, mH, mT,
                     real_only, refuse)
from .decompositions import cholesky_parts, lower_cholesky_cotangent, upper_cholesky_parts
from .determinants_norms import det_parts
from .solves import solve_parts

__all__ = [
    "add", "carries_gradient", "cholesky_parts", "conj", "det_parts", "fit", "hermitian_from",
    "hermitian_from_adjoint", "linalg_rule", "lower_cholesky_cotangent", "mH", "mT", "real_only", "refuse",
    "solve_parts", "upper_cholesky_parts",
]
