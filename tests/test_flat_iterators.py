"""``x.flat`` of an array that is not C-contiguous, held in a variable (``rules/flat_iterators.py``).

NumPy's ``flatiter`` reads and writes its array live. It was a read-only C-order copy: a write
through it was refused, and a read after the array was written gave the old value and its
derivative, silently (1.05 with gradient [0.6, 0, ...] where NumPy gives 1.05 and [3.5, 1.5, ...]
is right). Every mode against central differences; an argument written through it is restored."""
import numpy as np
import pytest

import yuebing as yb

from yuebing.testing import check_rule
from yuebing.testing.second_order import check_second_order

from .modes import check_every_mode

X = np.array([0.3, 0.7, 1.1, 1.3, 0.2, 0.9])


def _transposed(x):
    return x.reshape(2, 3).T.copy().T  # a (2, 3) array that is not C-contiguous


def reads_after_the_array_is_written(x):
    a = _transposed(x)
    elements = a.flat
    a[0, 1] = x[1] * 5.0
    return elements[1] * x[0] + elements[4]


def writes_through_the_held_elements(x):
    a = _transposed(x)
    elements = a.flat
    elements[0] = np.sin(x[2])
    elements[2:5] = x[4] * x[5]  # one value repeated, as NumPy repeats it
    elements[[1, 5]] += x[:2] ** 2
    return np.sum(a * a * x.reshape(2, 3))


def loops_over_the_held_elements_while_writing(x):
    a = _transposed(x)
    total = 0.0
    for k, v in enumerate(a.flat):
        total = total * 0.5 + v * v
        if k + 1 < a.size:
            a.flat[k + 1] = a.flat[k + 1] * v  # read live by the next step
    return total


def converts_the_held_elements(x):
    elements = _transposed(x).flat
    return (np.sum(np.sin(elements)) + np.sum(np.array(elements) * x) + np.sum(elements[1:4] ** 2)
            + np.sum(elements.copy() * x) + len(elements) + sum(elements) * x[0])


def steps_the_held_elements(x):
    """NumPy's flatiter is its own iterator: ``sum`` leaves nothing for ``list``; an index read
    sets it back to the start."""
    elements = _transposed(x).flat
    first = next(elements) * next(elements)
    rest = sum(elements)
    left = list(elements)
    again = elements[2] * x[2]  # back at the start
    return first + rest * len(left) + again + next(elements) * elements.index + sum(elements.coords)


@pytest.mark.parametrize("f", [reads_after_the_array_is_written, writes_through_the_held_elements,
                               loops_over_the_held_elements_while_writing, converts_the_held_elements,
                               steps_the_held_elements],
                         ids=lambda f: f.__name__)
def test_every_mode(f):
    check_every_mode(f, X)


def test_what_numpy_gives():
    a = _transposed(X)
    assert not a.flags.c_contiguous
    assert reads_after_the_array_is_written(X) == pytest.approx(X[1] * 5.0 * X[0] + a.ravel()[4])


def writes_an_argument_through_its_elements(x, v):
    elements = x.flat
    elements[1] = v * elements[0]
    elements[3:] = np.cos(v)
    return np.sum(x ** 3) + elements[4] * v


def test_an_argument_written_through_its_elements_is_restored():
    x = np.asfortranarray(np.arange(1.0, 7.0).reshape(2, 3) / 7.0)
    assert not x.flags.c_contiguous
    check_rule(writes_an_argument_through_its_elements, x, 0.8)
    check_second_order(writes_an_argument_through_its_elements, x, 0.8)


def test_third_order_refuses_it_by_name_and_the_advice_works():
    from yuebing.testing.third_order import check_third_order

    with pytest.raises(yb.NestedDifferentiationError, match="x.flat of an array that is not C-contiguous"):
        check_third_order(reads_after_the_array_is_written, X.copy())

    def as_advised(x):  # np.ravel(x) read after the write
        a = _transposed(x)
        a[0, 1] = x[1] * 5.0
        elements = np.ravel(a)
        return elements[1] * x[0] + elements[4]

    check_third_order(as_advised, X.copy())
