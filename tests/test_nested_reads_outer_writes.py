"""A nested differentiation reading outside state the pass around it wrote with derivatives."""
import pytest

import yuebing as yb

STORE: dict = {}


def writes_then_nests(x):
    STORE["k"] = x  # written by the outer pass, with x's derivative
    return x * yb.hvp(lambda y: STORE["k"] * y * y, (1.0,), (1.0,))[2][0]  # 2 x^2


@pytest.mark.xfail(strict=True, reason="known silent (docs/limitations.md): the nested yb.hvp reads STORE['k'] "
                   "as a constant; yb.grad gives 2.0 where 4.0 is right")
def test_a_dict_the_outer_pass_wrote_read_by_a_nested_pass():
    h = 1e-5
    expected = (writes_then_nests(1.0 + h) - writes_then_nests(1.0 - h)) / (2 * h)
    STORE.clear()
    assert yb.grad(writes_then_nests)(1.0) == pytest.approx(expected, rel=1e-6)
