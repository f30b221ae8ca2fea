"""Tuples of floats inline in the dual program (transform/dual_tuples.py): a helper's multiple
return values, their unpacking and indexing, against central differences of the gradient, per-column
and batched Hessians, and the cases left to the rules (ints, arrays, lengths that do not unpack)."""
import linecache

import numpy as np
import pytest

import yuebing as yb
from yuebing.testing.second_order import check_second_order


def pair(t, s):
    return t * s, np.sin(t) - 0.5


def unpacked(t, s):
    a, b = pair(t, s)
    r = pair(b, a)
    first, *rest = r
    return a * b + r[0] * r[-1] + first * rest[0] + (a, 2.0, b)[2]


def _inline_lines(f, *args):
    return [line.strip() for line in yb.show(f, *args, mode="hvp").splitlines() if "# inline:" in line]


def test_unpacking_and_indexing_inline_against_differences():
    inline = " ".join(_inline_lines(unpacked, 0.7, -1.3))
    for text in ("as_sequence(", "check_unpack(", "operator.getitem(_t", "operator.getitem(r, -1)"):
        assert text in inline, text
    yb.hvp(unpacked, (0.7, -1.3), (1.0, 0.5))
    pair_code = [text for name, (_, _, lines, _) in list(linecache.cache.items()) if "yuebing hvp pair" in name
                 for text in lines]
    assert any("# inline:" in line and "mktuple(" in line for line in pair_code)
    for point in ((0.7, -1.3), (0.0, 2.0), (-2.1, 0.4)):
        check_second_order(unpacked, *point)


def test_hessians_batched_and_per_column():
    f = lambda v: unpacked(v[0], v[1]) * v[2]  # noqa: E731
    x = np.array([0.7, -1.3, 0.4])
    batched = yb.hessian(f)(x)
    column = yb.hessian(f, chunk_size=1)(x)
    np.testing.assert_allclose(batched, column, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(batched, batched.T, rtol=1e-10, atol=1e-12)


def with_others(x, t):
    a, n = t * 2.0, 3  # an int in the tuple
    pieces = (x * t, t)  # an array in the tuple
    return np.sum(pieces[0]) * pieces[1] + a * n


def test_tuples_holding_ints_or_arrays_take_the_rules():
    check_second_order(with_others, np.linspace(-1, 1, 4), 0.6)


def too_many(t):
    a, b = (t, t * t, 1.0)
    return a + b


def test_a_tuple_that_does_not_unpack_raises_as_python():
    with pytest.raises(ValueError, match="too many values to unpack|cannot unpack 3 values into 2"):
        yb.hvp(too_many, (0.5,), (1.0,))
