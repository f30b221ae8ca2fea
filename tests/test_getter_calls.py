"""``operator.itemgetter``/``attrgetter`` objects called directly (not as a sort key), which
were refused (MissingRuleError: implemented in C): called as the Python code that does the same
(rules/_comparisons.python_key, transform/protocols.dispatch), in every mode against differences."""
import functools
import operator

import numpy as np
import pytest

from .modes import check_every_mode


class Holder:
    def __init__(self, a):
        self.a = a


@pytest.mark.parametrize("f", [
    lambda x: operator.itemgetter(0, 2)(x)[1] * x[0],
    lambda x: operator.itemgetter(1)(list(x)) ** 2,
    lambda x: operator.attrgetter("a")(Holder(x[0] * x[1])) * x[2],
    lambda x: functools.reduce(operator.mul, x) + operator.itemgetter(0)(x) ** 2,
    lambda x: sum(map(operator.itemgetter(0), [(x[0], 1), (x[2], 2)])) * x[1],
], ids=["two_items", "list_item", "attribute", "with_reduce", "mapped"])
def test_getter_called_directly(f):
    check_every_mode(f, np.array([0.7, 0.35, 1.2]))
