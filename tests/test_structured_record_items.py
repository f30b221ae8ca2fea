"""A structured array's record or the array itself listed by the user's code: ``list(record)``,
``tuple(record)``, ``f(*record)`` (which lists it), ``list(arr)``, ``f(*arr)``, a for loop's target
unpacking each record. Each item is read by position with its derivative
(``rules/structured_values.listed_items``); before, ``list`` and the star call were refused naming
``list``, a call the user did not write (fuzz_recent struct_tables seeds 96017, 96800-96820).
Reverse, forward and second order against central differences (``check_modes``), third order
against differences of second order."""
from __future__ import annotations

import numpy as np
import pytest

import yuebing as yb
from yuebing.rules import RuleArgumentError
from yuebing.testing.third_order import check_third_order

from .test_deque_arguments import check_modes

LABELLED = [("a", float), ("b", float), ("k", int)]
MIXED = [("m", float), ("n", int), ("v", float, (2,)), ("c", complex)]
X = np.array([0.3, -0.2, 0.5])


def table(x):
    R = np.zeros(3, dtype=LABELLED)
    R["a"] = x * x
    R["b"] = np.sin(x)
    R["k"] = [1, 2, 3]
    return R


def combine(a, b, k):
    return a * b + k * a


def star_record(x):
    return (lambda a, b, k: a * b + k)(*table(x)[2]) + combine(*table(x)[0])


def star_record_after_arguments(x):
    return (lambda s, a, b, k: s * a * b + k)(x[1], *table(x)[2])


def listed_record(x):
    fields = list(table(x)[1])
    return fields[0] * fields[1] + fields[2] * fields[0] ** 2


def tupled_record(x):
    a, b, k = tuple(table(x)[2])
    return np.cos(a) * b * k


def listed_records(x):
    rows = list(table(x))
    return sum(row["a"] * row["b"] for row in rows) + rows[1]["b"] ** 2


def star_records(x):
    return (lambda r, s, t: r["a"] * s["b"] + t["a"] * t["b"])(*table(x))


def loop_unpacked(x):
    return sum(a * b for a, b, k in table(x))


def listed_mixed_record(x):
    R = np.zeros(2, dtype=MIXED)
    R["m"] = x[:2]
    R["v"] = np.stack([x[1:], x[:2] ** 2])
    R["c"] = x[2] * (1 + 2j)
    m, n, v, c = list(R[1])
    return m * v[0] + n * v[1] + (c * c).real


def listed_then_written(x):
    fields = list(table(x)[0])  # (a new list: writing it leaves the table as it was)
    fields[0] = fields[0] * 3.0
    return fields[0] * fields[1]


CASES = [star_record, star_record_after_arguments, listed_record, tupled_record, listed_records,
         star_records, loop_unpacked, listed_mixed_record, listed_then_written]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_items_carry_their_derivatives(f):
    check_modes(f, X.copy())


@pytest.mark.parametrize("f", [star_record, star_records, listed_records, tupled_record], ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X.copy())


@pytest.mark.parametrize("f", [star_record, listed_record], ids=lambda f: f.__name__)
def test_batched_forward_refuses_by_name(f):
    """A batched forward pass does not follow structured arrays (structured_dispatch.py): the
    refusal names the call and says what works; one direction per pass gives the Jacobian."""
    with pytest.raises(RuleArgumentError, match="chunk_size=1"):
        yb.jacobian(f, mode="fwd")(X.copy())
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd", chunk_size=1)(X.copy()), yb.grad(f)(X.copy()), rtol=1e-12)
