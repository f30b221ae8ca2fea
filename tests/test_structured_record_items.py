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


@pytest.mark.parametrize("f", [star_record, listed_record], ids=lambda f: f.__name__)
def test_batched_forward_refuses_by_name(f):
    """A batched forward pass does not follow structured arrays (structured_dispatch.py): the
    refusal names the call and says what works; one direction per pass gives the Jacobian."""
    with pytest.raises(RuleArgumentError, match="chunk_size=1"):
        yb.jacobian(f, mode="fwd")(X.copy())
    np.testing.assert_allclose(yb.jacobian(f, mode="fwd", chunk_size=1)(X.copy()), yb.grad(f)(X.copy()), rtol=1e-12)


def zipped_with_itself(x):
    T = table(x)
    pairs = list(zip(T, T))
    return pairs[1][0]["a"] * pairs[2][1]["b"] + sum(p["b"] * q["a"] for p, q in zip(*[T, T]))


def zipped_with_floats(x):
    pairs = list(zip(table(x), x, strict=True))
    return pairs[1][0]["a"] * pairs[2][1] + pairs[0][0]["b"] * pairs[0][1]


def enumerated_records(x):
    return sum(i * row["a"] * row["b"] for i, row in list(enumerate(table(x), 1)))


def row_product(row):
    return row["a"] * row["b"]


def mapped_records(x):
    return sum(map(row_product, table(x))) + list(reversed(table(x)))[0]["a"]


def kept_lazy_walks(x):
    walks = [map(row_product, table(x)), zip(table(x), x), filter(lambda row: row["k"] > 1, table(x))]
    return sum(walks[0]) + sum(row["b"] * v for row, v in walks[1]) + sum(row["a"] for row in walks[2])


class Holder:
    def __init__(self, rows, scale):
        self.rows = rows
        self.scale = scale

    def total(self):
        return np.sum(self.rows["a"] * self.rows["b"]) * self.scale


def held_by_an_object(x):
    holder = Holder(table(x), x[0])
    holder.rows = table(x * 2.0)
    return holder.total()


WALKED = [zipped_with_itself, zipped_with_floats, enumerated_records, mapped_records, kept_lazy_walks,
          held_by_an_object]


@pytest.mark.parametrize("f", WALKED, ids=lambda f: f.__name__)
def test_walks_take_the_records(f):
    """zip's, enumerate's, reversed's and map's rules split an array's tangent into numbers: a
    structured array's records came out with no derivative (a zero gradient, 0.0 for -0.19 at
    x[1]; forward mode crashed). They now walk its records listed (``walked_listing``); a lazy
    walk kept in a variable, or an object's attribute, holds the array with its tangent (its
    ``setattr`` was refused by name)."""
    check_modes(f, X.copy())


def test_sorted_is_still_refused_by_name():
    with pytest.raises(RuleArgumentError, match="sorted: yuebing does not differentiate this call on a structured"):
        yb.grad(lambda x: sorted(table(x), key=row_product)[0]["b"])(X.copy())


@pytest.mark.parametrize("f", [star_record, star_records, listed_records, tupled_record, zipped_with_itself,
                               mapped_records], ids=lambda f: f.__name__)
def test_third_order(f):
    check_third_order(f, X.copy())
