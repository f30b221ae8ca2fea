"""Each test's random data is its own (tests/conftest.py): a module-level generator restarts
before every test from a seed of the test's id, so the data does not depend on which tests ran
before in the same process (xdist changes that from run to run)."""
import zlib

import numpy as np
import pytest

_rng = np.random.default_rng(5)
_legacy = np.random.RandomState(5)


@pytest.mark.parametrize("run", range(3))  # each run would see later draws of a shared stream
def test_a_module_generator_starts_each_test_from_the_tests_own_seed(request, run):
    seed = zlib.crc32(request.node.nodeid.encode())
    np.testing.assert_array_equal(_rng.standard_normal(4), np.random.default_rng(seed).standard_normal(4))
    np.testing.assert_array_equal(_legacy.standard_normal(4), np.random.RandomState(seed).standard_normal(4))
    _rng.standard_normal(100)  # consumed: the next test must not see the difference
    _legacy.standard_normal(100)
