"""str.maketrans and bytes.maketrans (static methods, which the text methods' zero declarations
did not reach: they were refused in every mode): a translation table carries no derivative, the
text it translates beside differentiated floats. Every mode against central differences."""
from __future__ import annotations

import numpy as np
import pytest

from .modes import check_every_mode


def translated_count(x):
    table = str.maketrans("ab", "ba")
    word = "abba".translate(table) + "x".maketrans({"x": "ab"}).__class__.__name__
    return np.sum(x ** 2) * len(word) + x[0] * word.count("b")


def translated_bytes(x):
    table = bytes.maketrans(b"0", b"1")
    return np.sin(x[1]) * b"1001".translate(table).count(b"1") + x[0] * x[1]


@pytest.mark.parametrize("f", [translated_count, translated_bytes])
def test_every_mode(f):
    check_every_mode(f, np.array([0.7, -0.4]))
