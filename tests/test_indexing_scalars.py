"""Indexing a number as a 0-d array with new axes only (``v[..., np.newaxis]``: SciPy's multivariate
normal does it to its log-determinant and rank, which may be NumPy scalars): the result is the
0-d array's view, differentiated in every mode against central differences; an int's carries no
derivative."""
import numpy as np

from .modes import check_every_mode


def _new_axes_of_numbers(x):
    det = np.float64(x[0] * x[1])  # a NumPy scalar
    rank = np.int64(3)
    return np.sum(det[..., np.newaxis] * x) * rank[..., None][0] + np.sum(np.float64(x[2] ** 2)[None, ..., None])


def test_new_axes_of_a_number():
    check_every_mode(_new_axes_of_numbers, np.array([0.7, 0.35, 1.2]))
