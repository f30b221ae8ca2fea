"""Second order (``yb.hvp``, ``yb.hessian``) of ``scipy.integrate.nquad`` -- and so of ``dblquad``
and ``tplquad``, whose SciPy code calls it -- as nested ``quad`` calls, whose second order
``api/quad.py`` defines.

SciPy's nquad integrates a ``functools.partial`` of its ``_NQuad`` object's bound method, whose
tangent second order does not follow (``quad._refuse_nquad``). The definition
(``rules/_nquad_definition.nquad``) makes the same ``quad`` calls SciPy makes, in the same order
with the same options and arguments -- the outermost variable is the last of ``ranges``, a
callable range or option is handed the variables outside it and then ``args``, break ``points``
outside the range are dropped -- so its value is SciPy's, bit for bit. The error estimate SciPy
reports is the largest of every inner call's, kept on the ``_NQuad`` object; it has no
derivative, so it (and ``full_output``'s evaluation count) is taken from SciPy's own nquad,
called once more on the primals (``_scipy_nquad``, zero derivative).
"""
from __future__ import annotations

from ..rules import _nquad_definition as N
from ..rules.declare import nondifferentiable
from ..rules.second_order import defined_by

if N._integrate is not None:
    nondifferentiable(N.scipy_nquad)
    defined_by(N._integrate.nquad, N.nquad)
