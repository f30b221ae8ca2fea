"""Third order of an in-place write into data without derivatives kept in a container: an int
array in a tuple or list (np.histogramdd's ``Ncount[i][on_edge] -= 1``), a list of ints in a
list. A linear call's tangent passes such data as itself, so the container's tangent holds the
very array, and the tangent call of the write wrote it a second time (the bins moved: a wrong
Hessian, which had np.histogram2d refused as "a try statement whose handler runs"). Reverse,
forward, second and third order against differences (``testing/every_order.py``)."""
import numpy as np
import pytest

from yuebing.testing.every_order import check_every_order

EDGES = np.linspace(0.1, 0.9, 3)
SAMPLE = np.array([0.1, 0.5, 0.7, 0.9])
WEIGHTS = np.arange(4.0)


def in_a_tuple(w):
    bins = (np.searchsorted(EDGES, SAMPLE, side="right"),)
    bins[0][SAMPLE == 0.9] -= 1
    return np.sum(np.bincount(bins[0], w ** 2, minlength=4) ** 2 * WEIGHTS)


def in_a_tuple_from_a_generator(w):
    bins = tuple(np.searchsorted(EDGES, SAMPLE, side="right") for _ in range(1))
    bins[0][SAMPLE == 0.9] -= 1
    return np.sum(np.bincount(bins[0], w ** 2, minlength=4) ** 2 * WEIGHTS)


def in_a_list(w):
    bins = [np.searchsorted(EDGES, SAMPLE, side="right")]
    bins[0][SAMPLE == 0.9] = bins[0][SAMPLE == 0.9] - 1
    return np.sum(np.bincount(bins[0], w ** 2, minlength=4) ** 2 * WEIGHTS)


def list_of_ints(w):
    rows = [[0, 1]]
    rows[0].append(3)
    rows[0][0] += 2
    return np.sum(w[rows[0]] ** 3)


def histogramdd(w):
    counts, _ = np.histogramdd(np.stack([SAMPLE, SAMPLE[::-1]], 1), bins=[2, 2], weights=w ** 2)
    return np.sum(counts ** 2 * np.array([[1.0, 2.0], [3.0, 4.0]]))


CASES = {"an int array in a tuple": in_a_tuple, "made by tuple(generator)": in_a_tuple_from_a_generator,
         "an int array in a list": in_a_list, "a list of ints in a list": list_of_ints,
         "np.histogramdd": histogramdd}
X = np.array([0.3, -0.7, 1.1, 0.5])
V = np.array([0.5, -0.25, 1.0, 0.75])


@pytest.mark.parametrize("g", CASES.values(), ids=CASES.keys())
def test_every_order(g):
    check_every_order(g, X, V)
