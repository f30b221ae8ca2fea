"""A sparse matrix of ints or bools densified or multiplied (``rules/scipy_sparse._scatter``):
SciPy's kernels add in the matrix's own dtype, and the NumPy definitions summed in float64,
which an int output array refused (``UFuncTypeError`` inside ``csr_todense``: scikit-learn's
``log_loss`` and ``hinge_loss`` densify a label matrix). Every mode against central differences."""
from __future__ import annotations

import numpy as np
import pytest
import scipy.sparse as sp

from tests.all_modes import check_all_modes

LABELS = np.array([[1, 0, 0], [0, 0, 1], [0, 1, 0], [1, 0, 0]])


def densified_labels(x):
    y = sp.csr_matrix(LABELS).toarray()
    return np.sum(np.log1p(x * x) * y) + np.sum(sp.coo_matrix(LABELS.astype(bool)).toarray() * x)


def labels_times_x(x):
    return np.sum(np.sin(sp.csr_matrix(LABELS) @ x[0]))


@pytest.mark.parametrize("f", [densified_labels, labels_times_x])
def test_every_mode_against_differences(f):
    check_all_modes(f, np.linspace(-0.8, 1.1, 12).reshape(4, 3))
