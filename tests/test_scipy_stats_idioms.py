"""SciPy statistics reached from user code: constructs of SciPy's own source that yuebing met
there first. ``scipy.stats.skew`` walks ``for ...: ... else: break`` inside a ``while`` (the
break of the for loop's else clause leaves the while loop: frontend/loops._jumps); ``kurtosis``
and ``describe`` end with ``vals[()]`` of a NumPy scalar (the scalar itself:
rules/indexing/items._scalar_itself). Each checked in every mode against differences."""
import numpy as np
import pytest
import scipy.stats as st

from .modes import check_every_mode

X = np.array([0.7, 0.35, 1.2, -0.4])


def _scalar_item(x):
    return np.float64(np.sum(x * x))[()] * x[0]


def _else_break_in_while(x):
    s = x[0]
    k = 0
    while k < 5:
        for v in x:
            if v * s > 3.0:
                break
        else:
            break
        s = s * 0.5
        k += 1
    return s * x[1]


@pytest.mark.parametrize("f", [
    st.skew, st.kurtosis, lambda x: st.describe(x).variance, lambda x: st.moment(x, 3),
    lambda x: np.sum(st.zscore(x) ** 3), st.sem, lambda x: st.entropy(x ** 2 + 0.1),
    lambda x: st.gmean(x ** 2 + 0.1), _scalar_item,
], ids=["skew", "kurtosis", "describe", "moment", "zscore", "sem", "entropy", "gmean", "scalar_item"])
def test_statistics(f):
    check_every_mode(f, X)


def test_else_break_leaves_the_enclosing_loop():
    check_every_mode(_else_break_in_while, np.array([2.0, 1.8]))
    check_every_mode(_else_break_in_while, np.array([0.5, 0.4]))
