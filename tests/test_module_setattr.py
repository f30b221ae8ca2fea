"""``setattr(mod, "G", x)`` is ``mod.G = x``: a write of module ``mod``'s global ``G``, followed as
``global G`` in ``mod`` writes it (``frontend/setattr_statements.py`` rewrites the statement;
``frontend/global_writes.py`` lowers the assignment). Before, it was refused ("yuebing follows
attribute assignment on instances of user classes only, not on module"). Each case against central
differences in reverse, forward and second order, the module's global put back afterwards; a
module reached through a variable bound in a branch, or a name computed when it runs, stays
refused by name.
"""
from __future__ import annotations

import sys

import numpy as np
import pytest

import yuebing as yb
from tests.corpus import module_state

from .all_modes import check_all_modes

LEVEL = 0.5


def read_level():
    return LEVEL ** 2


def setattr_on_an_imported_module(x):
    setattr(module_state, "SCALE", x * x)  # read by name in module_state.scaled
    return module_state.scaled(x) + module_state.SCALE * x


def setattr_on_this_module(x):
    setattr(sys.modules[__name__], "LEVEL", np.sin(x) * 3.0)
    return LEVEL * x + read_level()


def setattr_through_a_variable_holding_this_module(x):
    module = sys.modules[__name__]
    setattr(module, "LEVEL", x * 2.0)
    return module.LEVEL * x + read_level()


@pytest.fixture
def globals_put_back():
    """The module globals the cases write, as they were before the test."""
    saved = module_state.SCALE, LEVEL
    yield
    module_state.SCALE, globals()["LEVEL"] = saved


@pytest.mark.parametrize("f", [setattr_on_an_imported_module, setattr_on_this_module,
                               setattr_through_a_variable_holding_this_module], ids=lambda f: f.__name__)
def test_setattr_on_a_module_in_every_mode(f, globals_put_back):
    check_all_modes(f, 0.7)


def module_chosen_in_a_branch(x):
    module = module_state if x > 0 else sys.modules[__name__]
    module.SCALE = x * x
    return module_state.scaled(x)


def setattr_with_a_computed_name(x):
    setattr(module_state, "SC" + "ALE", x * x)
    return module_state.scaled(x)


@pytest.mark.parametrize("f", [module_chosen_in_a_branch, setattr_with_a_computed_name], ids=lambda f: f.__name__)
def test_a_module_write_the_lowering_cannot_see_is_followed_when_it_runs(f, globals_put_back):
    """Written as ``global_set`` writes when it runs (``transform/global_writes.py``: ``MODULE_SETATTR``;
    more in ``tests/test_module_setattr_runtime.py``)."""
    check_all_modes(f, 0.7)
