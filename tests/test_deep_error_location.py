"""A refusal deep in library code still points at the user's line: the notes name the eight
innermost levels, then ``... (outer calls omitted)``, then the outermost level, the line inside the
function given to yuebing (it was left out: numpy-ml's GP regression refused 12 levels down in
``re``'s parser named only the parser's frames, not the line building the model).
"""
from __future__ import annotations

import zlib

import numpy as np
import pytest

from yuebing.rules.core import MissingRuleError, SecondOrderError

from .modes import run_in_mode


def descend(x, depth):
    if depth == 0:
        return np.sum(x) + float(zlib.compressobj() is None)  # no rule: refused here
    return descend(x, depth - 1) * 1.0


def users_function(x):
    y = x * 2.0
    return descend(y, 12)  # the user's line


def shallow_function(x):
    return descend(x, 2)


def _refusal(mode, f):
    x = np.array([0.3, -0.7])
    with pytest.raises((MissingRuleError, SecondOrderError)) as caught:
        run_in_mode(mode, f, x)
    return caught.value.__notes__


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_deep_refusal_names_the_innermost_levels_and_the_users_line(mode):
    notes = "\n".join(_refusal(mode, users_function))
    assert "zlib.compressobj() is None" in notes  # the innermost level
    assert "... (outer calls omitted)" in notes
    assert notes.rstrip().endswith("return descend(y, 12)  # the user's line"), notes


@pytest.mark.parametrize("mode", ["grad", "jvp", "hvp"])
def test_shallow_refusal_names_every_level(mode):
    notes = "\n".join(_refusal(mode, shallow_function))
    assert "outer calls omitted" not in notes
    assert notes.count("return descend(x, depth - 1) * 1.0") == 2 and "return descend(x, 2)" in notes
