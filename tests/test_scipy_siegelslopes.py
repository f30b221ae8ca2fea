"""``scipy.stats.siegelslopes`` (its repeated medians are a Pythran kernel, which
``rules/scipy_stats.py`` defines in NumPy): the kernel's values on ties and both methods, and
derivatives in y and in x against differences in reverse, forward and second order."""
import numpy as np
import pytest

from yuebing.rules.scipy_stats import _siegelslopes_of

from .all_modes import check_all_modes

st = pytest.importorskip("scipy.stats")
pythran = pytest.importorskip("scipy.stats._stats_pythran")

X0 = np.array([0.7, 0.35, 1.2, 0.4, 0.9])
W = np.array([1.0, 2.0, 3.5, 3.9, 5.2])


@pytest.mark.parametrize("method", ["hierarchical", "separate"])
@pytest.mark.parametrize("seed", range(4))
def test_definition_gives_the_kernels_values(method, seed):
    rng = np.random.default_rng(seed)
    x = rng.integers(0, 4, 9).astype(float) if seed % 2 else rng.normal(size=9)  # ties in x, or none
    y = rng.normal(size=9)
    np.testing.assert_allclose(_siegelslopes_of(y, x, method), pythran.siegelslopes(y, x, method), rtol=1e-14)


def slope_in_y(x):
    return st.siegelslopes(x, W).slope


def separate_intercept_in_y(x):
    return st.siegelslopes(x, W, method="separate").intercept


def intercept_in_x(x):
    return st.siegelslopes(W, x).intercept


@pytest.mark.parametrize("f", [slope_in_y, separate_intercept_in_y, intercept_in_x])
def test_every_mode_against_differences(f):
    check_all_modes(f, X0.copy())
