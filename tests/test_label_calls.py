"""C functions without a rule, called with labels only, run as plain calls (rules/label_calls.py):
library code checking a name (``keyword.iskeyword``), hashing a key (``zlib.crc32``), naming a
character. A C call that hands back float data is still refused by name, in every mode."""
import keyword
import sys
import unicodedata
import zlib

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules.core import MissingRuleError

from .restored_arguments import check_restored

X = np.array([0.3, -1.2, 0.8])
DIRECTION = np.array([0.5, -0.4, 1.1])


def weights_chosen_by_labels(x):
    names = ["alpha", "for", "beta"]
    out = 0.0
    for i, name in enumerate(names):
        weight = 2.0 if keyword.iskeyword(name) else 1.0 + (zlib.crc32(name.encode()) % 7) / 7.0
        weight += len(unicodedata.name("a")) / 20.0
        out = out + weight * np.sin(x[i]) * x[i]
    return out


def test_c_calls_on_labels_in_every_mode():
    check_restored(weights_chosen_by_labels, X.copy())  # check_all_modes, then the arguments kept


def frame_locals_read(x):
    y = x * 2.0
    return np.sum(sys._getframe().f_locals["y"])  # a C call handed no floats that hands some back


@pytest.mark.parametrize("run", [lambda f: yb.grad(f)(X.copy()), lambda f: yb.jvp(f, (X.copy(),), (DIRECTION,))],
                         ids=["grad", "jvp"])
def test_a_c_call_handing_back_float_data_is_still_refused(run):
    with pytest.raises(MissingRuleError, match="_getframe"):
        run(frame_locals_read)
