"""Third derivatives (``yb.hessian``/``yb.hvp`` of a function calling ``yb.grad``) when the function
under ``yb.grad`` builds and reads sets of labels (issue 13): indices already seen, names done.
Such sets carry no derivative (``transform/plain_sets.py``); the Hessians are checked against
central differences of the gradient, and the inner functions in every mode. A set of numbers
carrying derivatives is still refused in third order, by name.
"""
import numpy as np
import pytest

import yuebing as yb

from tests.all_modes import check_all_modes
from tests.test_second_order import _fd_hessian
from tests.test_third_order import check_hessian

X = np.array([0.3, -0.7, 1.1])


def seen_indices(y):
    seen = set()
    total = 0.0
    for i in [0, 1, 0, 2, 1]:
        if i not in seen:
            seen.add(i)
            total = total + y[i] ** 3 * len(seen)
    return total


def set_algebra(y):
    done = {"a", "b"}
    done |= {"c"}
    left = {"a", "b", "c", "d"} - done
    both = frozenset(done) & {"b", "c", "z"}
    order = sorted(both | left)
    weights = {name: k + 1.0 for k, name in enumerate(order)}
    return sum(weights[name] * y[k] ** 2 for k, name in enumerate(order[:3])) * len(left) + y[0] * len(both)


def indices_from_a_set(y):
    picked = {2, 0}
    picked.discard(5)
    picked.update([1])
    return sum(y[i] * y[(i + 1) % 3] for i in sorted(picked)) ** 2 + max(picked) * y[2] ** 3


LABELS = [seen_indices, set_algebra, indices_from_a_set]


@pytest.mark.parametrize("g", LABELS, ids=lambda g: g.__name__)
def test_hessian_through_grad_of_sets_of_labels(g):
    check_hessian(lambda y: np.sum(yb.grad(g)(y) ** 2), X, rtol=1e-5, atol=1e-5)
    F = lambda y: np.sum(np.sin(yb.grad(g)(y)))  # noqa: E731
    v = np.array([0.2, -1.0, 0.4])
    np.testing.assert_allclose(yb.hvp(F, (X,), (v,))[2][0], _fd_hessian(F, X) @ v, rtol=1e-5, atol=1e-5)
    check_all_modes(g, X)


def set_of_numbers(y):
    values = set()
    for v in y:
        values.add(float(v) ** 2)
    return sum(values) * y[0]


def test_a_set_of_numbers_is_refused_by_name():
    F = lambda y: np.sum(yb.grad(set_of_numbers)(y) ** 2)  # noqa: E731
    with pytest.raises(yb.NestedDifferentiationError, match=r"set.add(.|\n)*test_third_order_sets.py\", line \d+"):
        yb.hessian(F)(X)
