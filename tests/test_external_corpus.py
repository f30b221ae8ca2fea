"""The external corpus (issue 12, "the guard"): functions written by others, from packages on PyPI
installed by the ``test`` extra (opfunu, benchmark-functions, pymoo, filterpy), differentiated by
yuebing and checked against central differences and, where their code also runs under
``jax.numpy``, against ``jax.grad``/``jax.hessian`` (``tests/external/``).

Every function ends right, refused (a yuebing error class, listed in ``docs/external-corpus.md``)
or wrong. Nothing may be wrong except the entries of ``KNOWN_WRONG``, each with the minimal
reproduction of its mechanism; an entry that is no longer wrong fails the test, so the list only
shrinks. The default run checks a fixed, evenly spaced sample of each package; the whole corpus
runs under ``-m slow``.
"""
from __future__ import annotations

import zlib

import pytest

from tests.external.cases import CaseSpec, all_cases
from tests.external.classify import Outcome, run_case
from tests.external.report import summary_text, tried

# Minimal reproductions, one per mechanism (each line runs as printed after
# ``import functools, numpy as np, yuebing as yb``, with the defs in a file).
WRAPS_DECORATOR = (
    "functools.wraps decorator: a wrapper(*args, **kwargs) decorated with @functools.wraps(f) "
    "crashes with KeyError: 'args' (its arguments seem bound by the wrapped function's signature, "
    "inspect.signature follows __wrapped__). Repro: def deco(f):\n    @functools.wraps(f)\n"
    "    def wrapper(*args, **kwargs):\n        return f(*args, **kwargs)\n    return wrapper\n"
    "@deco\ndef scale(a, k=2.0):\n    return a * k\nyb.grad(lambda x: scale(x))(1.5)  # KeyError: 'args'. "
    "Here through scipy.linalg.eigh (scipy's _apply_over_batch) in scipy.stats.multivariate_normal.")
FLOAT_LOOP_CONSTANT_ARRAY = (
    "a loop reading floats from a module-level (constant) array crashes in the pullback with "
    "TypeError: '_Marker' object is not subscriptable. Repro: ZS = np.array([0.3, 0.9])\n"
    "def f(t):\n    s = t[0]\n    for z in ZS:\n        s = s + z * s\n    return s\n"
    "yb.grad(f)(np.array([0.3, -0.5]))  # same with `for i in range(2): s = s + ZS[i] * s`")

# case id -> the mechanism that makes it wrong and its minimal reproduction
KNOWN_WRONG: dict[str, str] = {
    "benchmark_functions:PitsAndHoles": WRAPS_DECORATOR,
    "filterpy:log_likelihood": WRAPS_DECORATOR,
    "filterpy:gh_filter": FLOAT_LOOP_CONSTANT_ARRAY,
    "filterpy:ghk_filter": FLOAT_LOOP_CONSTANT_ARRAY,
}

# The default run takes this many functions of each package, evenly spaced in name order (< 60 s).
DEFAULT_SAMPLE = {"opfunu": 12, "benchmark_functions": 4, "pymoo": 6, "filterpy": 6}
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
    assert sum(1 for o in outcomes if o.status != "unusable") >= MINIMUM_CORPUS
    problems = []
    for outcome in outcomes:
        try:
            assert_expected(outcome)
        except AssertionError as error:
            problems.append(str(error))
    assert not problems, "\n".join(problems)
