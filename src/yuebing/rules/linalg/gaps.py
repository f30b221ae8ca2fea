"""The inverse eigenvalue gaps of the spectral rules and the strong-zero rule at ties:
``eigen_gaps``, ``gap_product``, ``rounding_ties`` and the ``NoDerivativeWarning`` a derivative that
does not exist at a repeated eigenvalue or singular value gets (``warn_no_derivative``). Shared by
``decompositions`` (the first-order maps), ``eigh_second_order`` and SciPy's and third order's
spectral rules.
"""
from __future__ import annotations

import warnings
from typing import Any

import numpy as np

from ..core import NoDerivativeWarning


def eigen_gaps(w: Any, squared: bool = False) -> Any:
    """F[i, j] = 1 / (w_j - w_i) off the diagonal, 0 on it (of ``w**2`` if ``squared``)."""
    v = w * w if squared else w
    diff = v[..., None, :] - v[..., :, None]
    off = ~np.eye(w.shape[-1], dtype=bool) & (diff != 0)  # (an exact tie: gap_product's business)
    return np.where(off, 1.0 / np.where(off, diff, 1.0), 0.0)


def gap_product(w: Any, x: Any, squared: bool = False, reference: Any = None, warn: bool = True) -> Any:
    """``eigen_gaps(w, squared) * x`` by the strong-zero rule: where two eigenvalues tie an entry
    of ``x`` that is zero contributes zero, not NaN (an eigenvector output nobody reads, columns a
    spectral function drops, a perturbation keeping the tie: ``2 I + t t^T``). A nonzero one is
    infinite: the vectors of a repeated eigenvalue have no derivative. Ties and zeros are judged
    to rounding (``rounding_ties``): LAPACK's repeated eigenvalues differ by ~1e-16, where
    1 / gap times an entry at rounding level was O(1) noise (a wrong gradient) or NaN in hvp.
    ``reference``: an array as large as the terms ``x`` was summed from, whose largest entry sets
    that level (default ``x``; where the terms cancel, x's own largest entry is rounding too).
    ``warn=False``: say nothing (a product whose caller warns once for several)."""
    tied, negligible = rounding_ties(w, x, x if reference is None else reference)
    if warn and np.any(tied & ~negligible):
        warn_no_derivative(w, tied & ~negligible)
    gaps = np.where(tied, np.inf, eigen_gaps(w, squared))
    return np.where(tied & negligible, 0.0, gaps) * x


def warn_no_derivative(w: Any, read: Any, values: bool = False) -> None:
    """Say why the derivative about to be made holds inf or NaN: ``read`` marks the tied pairs
    whose entry is not zero (a NaN gradient with no word of its cause sends users hunting).
    ``values``: the second derivative of a function of tied values (``eigh_second_order``)."""
    w_ = np.asarray(getattr(w, "primal", w))
    value = w_[tuple(np.argwhere(read)[0][:-1])].item()  # (read: (..., i, j) pairs of w's (..., n))
    what = (f"a repeated eigenvalue or singular value ({value:.6g}) is read, and the second derivative along a "
            "change that splits the tie needs the curvature of the function of it, which yuebing does not see, "
            "so this derivative holds inf or NaN" if values else
            f"the vectors of a repeated eigenvalue or singular value ({value:.6g}) have no derivative along a "
            "change that splits the tie, so a derivative reading them holds inf or NaN")
    warnings.warn(
        f"yuebing: {what} (as in JAX and PyTorch). A function of the matrix alone needs no eigenvectors: use "
        "np.linalg.solve or cholesky for A^-1 b, scipy.linalg.expm/sqrtm/logm/funm for a matrix function "
        "(docs/linalg.md)", NoDerivativeWarning, stacklevel=3)


def rounding_ties(w: Any, x: Any, reference: Any) -> tuple[Any, Any]:
    """Off-diagonal pairs (i, j) whose values ``w`` agree to LAPACK's accuracy (a few ulps of the
    largest), and the entries of ``x`` at rounding level (per matrix of a stack). That level is
    a few ulps of reference's largest entry times ``1 + |w|max / gap``, the gap from the pair's values to
    the nearest value not tied to them: LAPACK's vectors of a repeated value lean ~eps |w|max / gap
    towards the other vectors, and so does ``x = V^H dA V`` (2 I + c t t^T with |t| ~ 0.2: gap 0.018,
    an entry 8.5e-16 where x's largest is 0.026, which made eigvalsh's hvp NaN; fuzz seed 93356)."""
    w_, x_ = np.asarray(getattr(w, "primal", w)), np.asarray(getattr(x, "primal", x))
    r_ = np.asarray(getattr(reference, "primal", reference))
    slack = 8 * w_.shape[-1] * np.finfo(float).eps
    scale = np.max(np.abs(w_), axis=-1, keepdims=True)[..., None]
    off = ~np.eye(w_.shape[-1], dtype=bool)
    distance = np.abs(w_[..., None, :] - w_[..., :, None])
    tied = off & (distance <= slack * scale)
    gap = np.min(np.where(tied | ~off, np.inf, distance), axis=-1)  # to the nearest untied value
    pair_gap = np.minimum(gap[..., :, None], gap[..., None, :])
    lean = 1.0 + scale / np.where(pair_gap > 0, pair_gap, np.inf)  # (1 where nothing is untied)
    r_scale = np.max(np.abs(r_), axis=(-2, -1), keepdims=True) if r_.ndim >= 2 else np.abs(r_)
    return tied, np.abs(x_) <= slack * r_scale * lean
