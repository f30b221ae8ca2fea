"""Test configuration: Hypothesis runs a fixed set of examples under CI (CI=true), so a landing
does not depend on luck; locally it explores new examples every run. Module-level random generators
restart per test from a seed of the test's id, so no test's data depends on test order."""
import os

from hypothesis import settings

settings.register_profile("ci", derandomize=True, deadline=None)
if os.environ.get("CI"):
    settings.load_profile("ci")

# Debug mode (rules/debug.py) checks every rule call of the whole suite: a rule that drops a
# derivative or breaks the tangent model fails the test that reached it.
import yuebing  # noqa: E402

yuebing.config(debug=True)
_SUITE_CONFIG = yuebing.config()


# Test data independent of test order: a module-level random generator (``_rng = default_rng(s)``)
# drawn from inside tests would give each test points that depend on which tests ran before it in
# the same process, which xdist changes from run to run (a test flaked at such a point). Before each
# test, every generator held by the test's module restarts from a seed made of the test's own id.
import zlib  # noqa: E402

import numpy as np  # noqa: E402
import pytest  # noqa: E402


def _seed_of(nodeid: str) -> int:
    return zlib.crc32(nodeid.encode())


@pytest.fixture(autouse=True)
def _module_generators_seeded_per_test(request):
    module = getattr(request, "module", None)
    if module is not None:
        seed = _seed_of(request.node.nodeid)
        for value in list(vars(module).values()):
            if isinstance(value, np.random.Generator):
                value.bit_generator.state = type(value.bit_generator)(seed).state
            elif isinstance(value, np.random.RandomState):
                value.seed(seed)
    yield


@pytest.fixture(autouse=True)
def _config_restored_after_each_test(request):
    """A test that changes ``yuebing.config`` and does not restore it would change every later
    test of its worker (with debug mode off, a rule that drops a derivative passes unseen there):
    the suite's options come back after each test, and the test that left them changed fails."""
    yield
    left = yuebing.config()
    if left != _SUITE_CONFIG:
        yuebing.config(**_SUITE_CONFIG)
        pytest.fail(f"{request.node.nodeid} left yuebing.config() at {left}, not the suite's "
                    f"{_SUITE_CONFIG}: restore it (try/finally) in the test", pytrace=False)
