"""Third order of ``numpy.linalg``'s decompositions: their forward derivatives written as NumPy code.

Third order (``transform/third_order.py``) differentiates a primitive inside a function under
``yb.grad`` through the primitive's cotangent map. For ``slogdet``, ``eigh``, ``eigvalsh`` and
``lstsq`` that route fails: their results are tuples (``SlogdetResult``, ``EighResult``, lstsq's
four outputs), and ``eigvalsh``'s map calls ``eigh``. Each is given here its value and tangent as
ordinary NumPy code (``jvp_defined_by``: each argument followed by its tangent, ``NoTangent`` for
none), the formulas of the first-order rules, whose second order third order takes like user
code's. The value is the primitive's own call, so it is exactly what the primitive returns.
"""
from __future__ import annotations

import numpy as np

from ...tangents import NoTangent
from ..second_order import jvp_defined_by
from .common import diag_vector, hermitian_from, mH, phase_turn, real_pivot
from .decompositions import gap_product, singular_values_jvp
from .solves import lstsq_parts


def tangent_or_zeros(t, like):
    """A tangent, zeros like ``like`` for none."""
    return np.zeros(np.shape(like), dtype=np.result_type(like, 0.0)) if t is NoTangent else t


def _slogdet_jvp(a, a_t):
    """``d log|det a| = Re tr(a^-1 da)``; a real sign is piecewise constant, a complex one turns by
    ``i Im tr(a^-1 da)``."""
    y = np.linalg.slogdet(a)
    t = np.einsum("...ij,...ji->...", np.linalg.inv(a), tangent_or_zeros(a_t, a))
    sign_t = y[0] * 1j * np.imag(t) if np.iscomplexobj(y[0]) else np.zeros_like(y[0])
    return y, type(y)(sign_t, np.real(t))


def _eigh_projected(a, a_t, UPLO):
    """``v^H da v`` for the eigenvectors ``v`` of the Hermitian matrix read from one triangle."""
    w, v = np.linalg.eigh(a, UPLO=UPLO)
    return w, v, mH(v) @ hermitian_from(tangent_or_zeros(a_t, a), UPLO.upper() == "L") @ v


def _eigh_jvp(a, a_t, UPLO="L", UPLO_t=NoTangent):
    """``dw = diag(v^H da v)``, ``dv = v (F * v^H da v)`` with ``F`` the inverse eigenvalue gaps
    (and the phase LAPACK fixes, for complex vectors)."""
    y = np.linalg.eigh(a, UPLO=UPLO)
    w, v, x = _eigh_projected(a, a_t, UPLO)
    dv = v @ gap_product(w, x)
    if np.iscomplexobj(v):
        dv = dv + 1j * v * phase_turn(dv, real_pivot(v))
    return y, type(y)(np.real(diag_vector(x)), dv)


def _eigvalsh_jvp(a, a_t, UPLO="L", UPLO_t=NoTangent):
    y = np.linalg.eigvalsh(a, UPLO=UPLO)
    return y, np.real(diag_vector(_eigh_projected(a, a_t, UPLO)[2]))


def _lstsq_jvp(a, a_t, b, b_t, rcond=None, rcond_t=NoTangent):
    """The tangents of lstsq's solution, residuals and singular values (its rank has none):
    ``dx = P (db - da x) + P P^H da^H r + Q da^H P^H x`` with ``r = b - a x`` (``solves.py``)."""
    y = np.linalg.lstsq(a, b, rcond=rcond)
    x, res, s = y[0], y[1], y[3]
    vector = np.ndim(b) == 1
    x2 = x[:, None] if vector else x
    b2 = np.asarray(b)[:, None] if vector else np.asarray(b)
    da = tangent_or_zeros(a_t, a)
    db = tangent_or_zeros(b_t if b_t is NoTangent or not vector else b_t[:, None], b2)
    r = b2 - a @ x2
    p, pph, q = lstsq_parts(a, y[2])
    dr = db - da @ x2
    dx = p @ dr + pph @ (mH(da) @ r)
    if q is not None:
        dx = dx + q @ (mH(da) @ (mH(p) @ x2))
    dres = 2 * np.real(np.sum(np.conj(r) * dr, axis=0)) if np.size(res) > 0 else np.zeros_like(res)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    ds = singular_values_jvp(u, vh, da)
    return y, (dx[:, 0] if vector else dx, dres, NoTangent, np.zeros_like(s) + ds)


jvp_defined_by(np.linalg.slogdet, _slogdet_jvp)
jvp_defined_by(np.linalg.eigh, _eigh_jvp)
jvp_defined_by(np.linalg.eigvalsh, _eigvalsh_jvp)
jvp_defined_by(np.linalg.lstsq, _lstsq_jvp)

CASES: list = []  # checked by tests/test_third_order_linalg.py (third derivatives against differences)
