"""A ``@contextlib.contextmanager`` function of Python code handed float data (``with
scaled(model, k) as m:``) is entered as PEP 343 spells the statement out, contextlib's
``__enter__``/``__exit__`` stepping the generator under differentiation (was refused: a with
header handing its manager float data). Checked in every mode against differences; the
manager's side effects happen once per call, as in a plain call."""
import numpy as np
import pytest

import yuebing as yb

from . import generator_managers as gm
from .modes import check_every_mode


@pytest.mark.parametrize("f", [gm.f, gm.g, gm.imported_inside, gm.second_item],
                         ids=["kept_and_restored", "constant_factor", "imported_inside", "second_item"])
def test_generator_manager_handed_floats(f):
    check_every_mode(f, np.array([0.7, 0.35, 1.2]))


def test_side_effects_once_per_gradient():
    del gm.LOG[:]
    yb.grad(gm.f)(np.array([0.7, 0.35, 1.2]))
    assert gm.LOG == ["in", "out"]
