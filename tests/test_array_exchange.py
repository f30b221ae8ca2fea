"""``np.from_dlpack`` of NumPy arrays (``rules/numpy_dlpack.py``): the same memory as a view,
or a copy with ``copy=True``, as scikit-learn's array API helpers exchange arrays between two
NumPy namespaces (its ``log_loss`` and ``hinge_loss`` were refused). A write through the view
reaches the array it came from. Every mode against central differences, and third order."""
from __future__ import annotations

import numpy as np
import pytest

from yuebing.testing.third_order import check_third_order

from tests.all_modes import check_all_modes


def exchanged(x):
    y = np.from_dlpack(x)
    z = np.from_dlpack(x * 2.0, copy=True)
    return np.sum(np.sin(y) * z)


def written_through(x):
    buf = x * 1.5
    view = np.from_dlpack(buf)
    view[0] = x[1] ** 2
    return np.sum(buf * x)


@pytest.mark.parametrize("f", [exchanged, written_through])
def test_every_mode_against_differences(f):
    check_all_modes(f, np.array([0.3, -0.7, 1.2]))


@pytest.mark.parametrize("f", [exchanged, written_through])
def test_third_order(f):
    check_third_order(f, np.array([0.3, -0.7, 1.2]))
