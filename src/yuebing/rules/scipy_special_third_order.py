"""Third order of ``scipy.special.polygamma`` and ``zeta``: their forward derivatives as NumPy code.

Third order (``transform/third_order.py``) refuses a cotangent map that calls its own primitive
again (``polygamma(n, x)``'s map is ``polygamma(n + 1, x)``, ``zeta``'s a ``zeta``): their third
derivatives would need the map's own again, without end. Each is given here its value and tangent
(``jvp_defined_by``: each argument followed by its tangent, ``NoTangent`` for none), whose second
order third order takes like user code's. ``polygamma``'s order ``n`` is an integer without a
derivative; ``zeta``'s exponent ``x`` has no closed-form derivative: a nonzero tangent there is
refused as in the other modes (``scipy_special.held_parameter``). Loaded when ``scipy.special`` is.
"""
from __future__ import annotations

import numpy as np

from ..tangents import NoTangent
from .second_order import jvp_defined_by

try:
    import scipy.special as sp
except ImportError:  # pragma: no cover - SciPy is optional
    sp = None

if sp is not None:
    from .scipy_special import fixed_message, held_parameter

    _ZETA_EXPONENT = fixed_message("scipy.special.zeta", "x", "no closed form for the derivative in the exponent")


def _polygamma_jvp(n, n_t, x, x_t):
    """``d polygamma(n, x) = polygamma(n + 1, x) dx``."""
    y = sp.polygamma(n, x)
    return y, np.zeros_like(y) if x_t is NoTangent else sp.polygamma(np.asarray(n) + 1, x) * x_t


def _zeta_jvp(x, x_t, q=None, q_t=NoTangent, out=None, out_t=NoTangent):
    """``d zeta(x, q) = -x zeta(x + 1, q) dq``; the exponent's term is ``held_parameter``'s 0."""
    y = sp.zeta(x, q)
    tangent = np.zeros_like(y)
    if x_t is not NoTangent:
        tangent = tangent + held_parameter(x_t, y, _ZETA_EXPONENT)
    if q is not None and q_t is not NoTangent:
        tangent = tangent - q_t * np.asarray(x) * sp.zeta(np.asarray(x) + 1.0, q)
    return y, tangent


if sp is not None:
    jvp_defined_by(sp.polygamma, _polygamma_jvp)
    jvp_defined_by(sp.zeta, _zeta_jvp)

CASES: list = []  # checked by tests/test_third_order_linalg.py (third derivatives against differences)
