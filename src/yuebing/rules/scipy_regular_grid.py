"""``scipy.interpolate.RegularGridInterpolator``'s and ``interpn``'s C helpers written in NumPy, so
their linear and nearest interpolation is differentiated in every mode with respect to the
``values``, the grid's points and the query points.

``RegularGridInterpolator`` is Python (differentiated like user code) around three Cython
functions, each declared ``defined_as`` the NumPy code below:

* ``_interpnd._ndim_coords_from_arrays(points, ndim)``: a tuple of coordinate arrays broadcast and
  stacked on a last axis, or an array (a 1-d one made a column). The tuple reaches it, ``interpn``
  and an interpolator's call as a tuple (``array_like.takes_sequences``: made one array, its rows
  were read as points);
* ``_rgi_cython.find_indices(grid, xi)``: each point's cell in each dimension (``g[i] <= x <
  g[i+1]``, clipped to the first and last cells, so the last grid point is in the last cell and
  points outside extrapolate; -1 for NaN) and its normalised distance ``(x - g[i]) / (g[i+1] -
  g[i])``, differentiable in the points and the grid;
* ``_rgi_cython.evaluate_linear_2d``: the bilinear formula on those cells (the same as SciPy's
  Python ``_evaluate_linear`` for other dimensions).

So ``method="linear"`` is piecewise linear in the points, its gradient the cell's slopes; at a grid
point the cell is the one SciPy picks (the one to the right, the last cell at the end).
``method="nearest"`` has derivative 0 in the points. The spline methods (``"slinear"``,
``"cubic"``, ``"quintic"``: SciPy's ``NdBSpline``) have no rules yet: they raise
``MissingRuleError`` naming the C function.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from .array_like import takes_sequences
from .cases import Case
from .declare import nondifferentiable
from .second_order import defined_as

try:
    from scipy.interpolate import RegularGridInterpolator, _interpnd, _rgi, _rgi_cython
except ImportError:  # pragma: no cover - SciPy is optional
    _rgi_cython = None


def _cells(grid: Any, x: Any) -> np.ndarray:
    """Each point's cell in one dimension, as SciPy's ``find_indices`` gives it (-1 for NaN)."""
    grid, x = np.asarray(grid, dtype=float), np.asarray(x, dtype=float)
    found = np.clip(np.searchsorted(grid, x, side="right") - 1, 0, max(grid.size - 2, 0))
    return np.where(np.isnan(x), -1, found)


nondifferentiable(_cells)


def _ndim_coords_from_arrays(points, ndim=None):
    """``_interpnd._ndim_coords_from_arrays``: the points as one array with the coordinates last."""
    if isinstance(points, tuple) and len(points) == 1:
        points = points[0]
    if isinstance(points, tuple):
        parts = np.broadcast_arrays(*points)
        return np.stack([np.asarray(p, dtype=float) for p in parts], axis=-1)
    points = np.asanyarray(points)
    if points.ndim == 1:
        return np.reshape(points, (-1, 1) if ndim is None else (-1, ndim))
    return points


def _find_indices(grid, xi):
    """``_rgi_cython.find_indices``: the cells (an int array, one row per dimension) and the
    normalised distances in them."""
    indices, distances = [], []
    for g, x in zip(grid, xi):
        cell = _cells(g, x)
        safe = np.where(cell >= 0, cell, 0)
        indices.append(cell)
        distances.append((x - g[safe]) / (g[safe + 1] - g[safe]))
    return np.array(indices, dtype=np.intp), np.stack(distances)


def _evaluate_linear_2d(values, indices, norm_distances, grid, out):
    """``_rgi_cython.evaluate_linear_2d``: bilinear interpolation on the cells, into ``out``."""
    i, j = indices[0], indices[1]
    y, z = norm_distances[0], norm_distances[1]
    out[...] = ((1.0 - y) * (1.0 - z) * values[i, j] + (1.0 - y) * z * values[i, j + 1]
                + y * (1.0 - z) * values[i + 1, j] + y * z * values[i + 1, j + 1])
    return out


if _rgi_cython is not None:
    defined_as(_interpnd._ndim_coords_from_arrays, _ndim_coords_from_arrays)
    defined_as(_rgi_cython.find_indices, _find_indices)
    defined_as(_rgi_cython.evaluate_linear_2d, _evaluate_linear_2d)
    # a tuple of coordinate arrays is not the array it would make (its rows are the coordinates)
    takes_sequences(_interpnd._ndim_coords_from_arrays, _rgi_cython.find_indices, _rgi.interpn,
                    RegularGridInterpolator)


def _cases() -> list:
    if _rgi_cython is None:
        return []
    rng = np.random.default_rng(5)
    grid = (np.array([0.0, 1.0, 2.5, 3.0]), np.array([0.0, 2.0, 3.0]))
    xi = np.array([[0.3, 1.7, 2.6, -0.5, 3.4], [0.5, 2.4, 1.1, 2.9, -0.3]])  # inside cells and outside
    indices = np.array([[0, 1, 2, 0, 2], [0, 1, 0, 1, 0]], dtype=np.intp)
    return [
        Case(_rgi_cython.find_indices, grid, xi),
        # forward mode's output tangent is out's own (the function returns out), which the
        # checker's differences cannot show: forward mode is checked through RegularGridInterpolator
        # (tests/test_scipy_regular_grid.py, every mode), as is a tuple of coordinate arrays
        Case(_rgi_cython.evaluate_linear_2d, rng.standard_normal((4, 3)), indices, rng.uniform(0.1, 0.9, (2, 5)),
             grid, np.zeros(5), mode=("rev",)),
        Case(_interpnd._ndim_coords_from_arrays, rng.standard_normal(4), 2, name="_ndim_coords_from_arrays(flat)"),
    ]


CASES = _cases()
