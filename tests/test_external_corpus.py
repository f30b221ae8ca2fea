"""The external corpus (issue 12, "the guard"): functions written by others, from packages on PyPI
installed by the ``test`` extra (opfunu, benchmark-functions, pymoo, filterpy, cma; pymoo's problems a
second time with their ``anp`` backend bound to NumPy instead of the lazy backend object they
ship with), differentiated by yuebing and checked against central differences and, where
their code also runs under ``jax.numpy``, against ``jax.grad``/``jax.hessian`` (``tests/external/``).

Every function ends right, refused (a yuebing error class, listed in ``docs/external-corpus.md``)
or wrong. Nothing may be wrong except the entries of ``KNOWN_WRONG``, each with the minimal
reproduction of its mechanism; an entry that is no longer wrong fails the test, so the list only
shrinks. The default run checks a fixed, evenly spaced sample of each package; the whole corpus
runs under ``-m slow``. pycma's hand-written gradients are a third oracle for the functions they
belong to.
"""
from __future__ import annotations

import random
import zlib

import numpy as np
import pytest

import yuebing as yb
from tests.external import oracle
from tests.external.cases import PYMOO_NUMPY, CaseSpec, Problem, all_cases, installed, interior_point
from tests.external.cases_cma import BOX, DIMENSION, GRADIENT_TWINS
from tests.external.classify import Outcome, run_case, usable_problem
from tests.external.repros import FIXED, MECHANISMS, Mechanism
from tests.modes import central, check_every_mode
from tests.external.report import summary_text

# case id -> the mechanism that makes it wrong; its minimal reproduction, in plain NumPy, is the
# named function of tests/external/repros.py (checked below to be still wrong).
KNOWN_WRONG: dict[str, str] = {}  # none at the moment (the mechanisms found are in repros.FIXED)

# The default run takes this many functions of each package, evenly spaced in name order (< 60 s).
DEFAULT_SAMPLE = {"opfunu": 12, "benchmark_functions": 4, "pymoo": 6, PYMOO_NUMPY: 4, "filterpy": 6,
                  "cma": 6}
MINIMUM_CORPUS = 300


def hessian_wanted(spec: CaseSpec, full: bool = False) -> bool:
    """Hessians in the full run; in the default run for half the sample (a fixed hash)."""
    return full or zlib.crc32(spec.case_id.encode()) % 2 == 0


def default_sample(specs: list[CaseSpec]) -> list[CaseSpec]:
    chosen = []
    for package, count in DEFAULT_SAMPLE.items():
        members = [spec for spec in specs if spec.package == package]
        stride = max(1, len(members) // count)
        chosen.extend(members[stride // 2::stride][:count])
    return chosen


ALL_CASES = all_cases()
DEFAULT_CASES = default_sample(ALL_CASES)


def assert_expected(outcome: Outcome) -> None:
    """0 wrong outside KNOWN_WRONG; every KNOWN_WRONG entry still wrong."""
    if outcome.case_id in KNOWN_WRONG:
        assert outcome.status == "wrong", (
            f"{outcome.case_id} is now {outcome.status}: remove it from KNOWN_WRONG "
            f"({KNOWN_WRONG[outcome.case_id]})")
    else:
        assert outcome.status != "wrong", f"{outcome.case_id}: {outcome.stage}: {outcome.detail}"


@pytest.mark.skipif(not ALL_CASES, reason="the external packages (the test extra) are not installed")
@pytest.mark.parametrize("spec", DEFAULT_CASES, ids=[spec.case_id for spec in DEFAULT_CASES])
def test_external_function(spec: CaseSpec) -> None:
    outcome = run_case(spec, hessian_wanted(spec))
    print(f"{outcome.case_id}: {outcome.status} {outcome.stage} {outcome.detail}")
    assert_expected(outcome)


@pytest.mark.parametrize("mechanism", MECHANISMS, ids=[m.name for m in MECHANISMS])
def test_mechanism_reproduction_is_still_wrong(mechanism: Mechanism) -> None:
    """Each failure mechanism the corpus found, reduced to a few lines: once fixed, remove it
    from tests/external/repros.py (and its KNOWN_WRONG entries) and keep a regression test."""
    assert mechanism.still_wrong(), (
        f"'{mechanism.name}' is fixed: remove it from tests/external/repros.py and the KNOWN_WRONG "
        f"entries it explains ({mechanism.seen_in})")


@pytest.mark.parametrize("mechanism", FIXED, ids=[m.name for m in FIXED])
def test_fixed_mechanism_in_every_mode(mechanism: Mechanism) -> None:
    """The mechanisms the corpus found, fixed: grad, jvp, jacobian, hvp and hessian against
    central differences (array blocks writing back loop-carried floats, float loops over constant
    arrays and with no residuals, functools.wraps wrappers, reshapes of int arrays)."""
    assert not mechanism.still_wrong()
    check_every_mode(mechanism.function, mechanism.argument)


def test_known_wrong_entries_name_real_cases() -> None:
    """A stale KNOWN_WRONG id (renamed upstream) must not silently stop being checked."""
    if ALL_CASES:
        ids = {spec.case_id for spec in ALL_CASES}
        assert not set(KNOWN_WRONG) - ids


@pytest.mark.slow
@pytest.mark.skipif(not ALL_CASES, reason="the external packages (the test extra) are not installed")
def test_whole_external_corpus() -> None:
    outcomes = [run_case(spec, hessian_wanted(spec, full=True)) for spec in ALL_CASES]
    print(summary_text(outcomes))
    distinct = {spec.case_id for spec in ALL_CASES if spec.variant_of is None}
    assert sum(1 for o in outcomes if o.status != "unusable" and o.case_id in distinct) >= MINIMUM_CORPUS
    problems = []
    for outcome in outcomes:
        try:
            assert_expected(outcome)
        except AssertionError as error:
            problems.append(str(error))
    assert not problems, "\n".join(problems)


def _smooth(x):
    return np.sum(np.sin(3.0 * x) * x ** 2) + 1e3 * np.exp(0.01 * np.sum(x))


def _smooth_gradient(x):
    return 3.0 * np.cos(3.0 * x) * x ** 2 + 2.0 * x * np.sin(3.0 * x) + 10.0 * np.exp(0.01 * np.sum(x))


@pytest.mark.parametrize("scale", [1e-2, 1.0, 100.0])
def test_differences_convict_a_slightly_wrong_gradient(scale: float) -> None:
    """The oracle itself: an exact gradient passes; one component off by 1e-4 of the gradient's
    size is convicted (stable differences that disagree), not excused as unresolved."""
    x = scale * np.random.default_rng(3).uniform(-1.0, 1.0, size=5)
    exact = _smooth_gradient(x)
    assert oracle.gradient_against_differences(_smooth, x, exact).agrees
    wrong = exact.copy()
    wrong[2] += 1e-4 * np.max(np.abs(exact))
    check = oracle.gradient_against_differences(_smooth, x, wrong)
    assert not check.agrees and check.stable


def _random_pair_sum(x):
    return float(np.sum(x[np.random.permutation(x.size)[:2]] ** 2))


def _python_random_pair_sum(x):
    return float(np.sum(x[random.sample(range(x.size), 2)] ** 2))


@pytest.mark.parametrize("function", [_random_pair_sum, _python_random_pair_sum])
def test_a_function_drawing_random_numbers_is_reseeded_whatever_it_returns(function) -> None:
    """The harness reseeds a function that draws from NumPy's global generator or Python's
    ``random`` even when two plain calls happen to agree (here the same 2 of 5 coordinates,
    about one time in ten, as cma's subspace_sphere after partsphere): otherwise the gradient
    call draws again and its value is compared with a value it need not repeat."""
    x = np.linspace(-1.0, 1.0, 5)
    problem = Problem(function, x)
    spec = CaseSpec("harness", function.__name__, lambda attempt: problem)
    for global_seed in range(30):   # NumPy: 0, 10, 15 and 22 draw the same pair twice; random: 5, 9, ...
        problem.random_seed = None
        np.random.seed(global_seed)
        random.seed(global_seed)
        assert usable_problem(spec)[0].random_seed is not None, global_seed
    assert run_case(spec).status == "right"


@pytest.mark.skipif(not installed("cma"), reason="cma (the test extra) is not installed")
@pytest.mark.parametrize("name", GRADIENT_TWINS)
def test_against_pycmas_own_gradients(name: str) -> None:
    """pycma's hand-written gradients (cma.ff.grad_rosen, ...) as an oracle: yb.grad and yb.jvp
    against them, yb.hessian and yb.hvp against their central differences."""
    import cma
    function, gradient = getattr(cma.ff, name), getattr(cma.ff, "grad_" + name)
    for seed in range(3):
        x = interior_point([BOX[0]] * DIMENSION, [BOX[1]] * DIMENSION, seed)
        direction = np.random.default_rng(seed).standard_normal(DIMENSION)
        expected = gradient(x.copy())
        scale = np.max(np.abs(expected))
        np.testing.assert_allclose(yb.grad(function)(x.copy()), expected, rtol=1e-12, atol=1e-12 * scale)
        _, slope = yb.jvp(function, (x.copy(),), (direction,))
        np.testing.assert_allclose(slope, expected @ direction, rtol=1e-12, atol=1e-12 * scale)
        hessian = central(lambda y: gradient(y.copy()), x, 1e-6)
        atol = 1e-7 * np.max(np.abs(hessian))
        np.testing.assert_allclose(yb.hessian(function)(x.copy()), hessian, rtol=1e-7, atol=atol)
        _, (gradient_again,), (product,) = yb.hvp(function, (x.copy(),), (direction,))
        np.testing.assert_allclose(gradient_again, expected, rtol=1e-12, atol=1e-12 * scale)
        np.testing.assert_allclose(product, hessian @ direction, rtol=1e-7, atol=atol)
