"""The tangent laws on generated nested data with shared references, cycles and views."""
import numpy as np
from hypothesis import given, settings

import yuebing.tangents as T
from yuebing.testing import check_tangent_interface, structural_copy, structurally_equal, validate_tangent
from yuebing.testing.strategies import values


@settings(max_examples=150, deadline=None)
@given(values())
def test_tangent_interface_on_generated_data(x):
    check_tangent_interface(x)


@settings(max_examples=75, deadline=None)
@given(values())
def test_structural_copy_is_faithful_and_independent(x):
    y = structural_copy(x)
    assert structurally_equal(x, y)
    validate_tangent(y, T.zero_tangent(y))


@settings(max_examples=75, deadline=None)
@given(values())
def test_split_round_trip_and_zero_rdata(x):
    t = T.randn_tangent(np.random.default_rng(3), x)
    assert structurally_equal(t, T.join(T.fdata(t), T.rdata(t)))
    zr = T.zero_rdata(x)
    assert zr is T.NoRData or T.dot(T.join(T.NoFData, zr), T.join(T.NoFData, zr)) == 0.0
