"""Run one external function through yuebing and sort it into right / refused / wrong.

* right: yuebing's value equals the plain call, its gradient (and, when asked, its Hessian)
  agrees with central differences, or, where differences cannot resolve it, with the jax twin
  (within the function's own rounding sensitivity) or complex step.
* refused: yuebing raised one of its own error classes (``MissingRuleError``,
  ``SecondOrderError``, ...): the type and the first line of the message are kept; or its gradient
  holds NaN (reverse mode's answer for an argument without a derivative formula) and forward mode
  refuses the same function cleanly.
* wrong: different numbers, or any other exception escaping yuebing (an internal crash such as
  ``TypeError`` or ``NameError`` is a bug, not a refusal; so are yuebing's ``InternalError``
  and the debug check's ``RuleDebugError``).
* unverified: no oracle resolves the derivative (differences disagree among their own steps,
  no jax twin, complex step unavailable or disagreeing) while forward and reverse mode agree;
  listed with the reason, never counted as right.
* unusable: the plain function itself fails or is not finite at three points (the harness's
  problem, not yuebing's; listed, never counted as tried).

A case whose spec asks for ``all_modes`` (scikit-learn's) is also checked in forward mode (``yb.jvp``
against the verified gradient) and by ``yb.hvp`` (against differences of the verified gradient), and
no mode may change its argument.
"""
from __future__ import annotations

import math
import random
import re
import warnings
from dataclasses import dataclass, field
from typing import Callable, Optional

import numpy as np

import yuebing as yb

from . import oracle
from .cases import CaseSpec, Problem

ATTEMPTS = 3
HESSIAN_DIRECTIONS = 2
# Hessians are checked for functions of at most this many variables (forward-over-reverse takes
# one Hessian-vector product per variable); larger ones have their gradient checked only.
HESSIAN_MAX_VARIABLES = 20


@dataclass
class Outcome:
    case_id: str
    package: str
    status: str                     # right | refused | wrong | unverified | unusable
    stage: str = ""                 # value | gradient | hessian (where it was decided)
    detail: str = ""
    oracles: list[str] = field(default_factory=list)   # what confirmed a right result

    @property
    def error_class(self) -> str:
        return self.detail.split(":", 1)[0] if self.status == "refused" else ""


def _first_line(error: BaseException) -> str:
    text = str(error).strip().splitlines()
    return text[0][:200] if text else ""


# yuebing's own classes that report a bug in yuebing rather than refuse the user's code
BUG_REPORTS = ("InternalError", "RuleDebugError", "RuleCheckError")


# the API's own checks of its contract, raised as TypeError with the entry point's name
API_CONTRACT = re.compile(r"^(grad|value_and_grad|hessian|hvp|jvp|vjp): .* must return a real scalar")
# refusals docs/limitations.md lists with a plain TypeError (a with header handing its manager float
# data, globals(), a global written in a nested differentiation...): they name the construct
REFUSED_AS_TYPE_ERROR = re.compile(r"^yuebing cannot (differentiate|follow) ")


def is_clean_refusal(error: BaseException) -> bool:
    """One of yuebing's own error classes refusing the code (or the API's check of what the
    function returns, or one of the TypeErrors by which yuebing refuses a construct by name),
    not a crash passing through it."""
    if type(error).__module__.split(".")[0] == "yuebing":
        return type(error).__name__ not in BUG_REPORTS
    text = str(error)
    return isinstance(error, TypeError) and bool(API_CONTRACT.match(text) or REFUSED_AS_TYPE_ERROR.match(text))


def _from_error(spec: CaseSpec, stage: str, error: BaseException) -> Outcome:
    summary = f"{type(error).__name__}: {_first_line(error)}"
    if is_clean_refusal(error):
        return Outcome(spec.case_id, spec.package, "refused", stage, summary)
    return Outcome(spec.case_id, spec.package, "wrong", stage, "internal error " + summary)


class Evaluator:
    """Calls a problem's function the same way each time (the random term reseeded)."""

    def __init__(self, problem: Problem):
        self.problem = problem

    def reseed(self) -> None:
        if self.problem.random_seed is not None:
            np.random.seed(self.problem.random_seed)
            random.seed(self.problem.random_seed)

    def plain(self, x: np.ndarray) -> float:
        self.reseed()
        return float(self.problem.function(x.copy()))

    def value_and_grad(self, x: np.ndarray):
        self.reseed()
        return yb.value_and_grad(self.problem.function)(x.copy())

    def grad(self, x: np.ndarray) -> np.ndarray:
        self.reseed()
        return np.asarray(yb.grad(self.problem.function)(x.copy()), float)

    def complex_call(self, z: np.ndarray):
        self.reseed()
        return self.problem.function(z)

    def jvp(self, x: np.ndarray, direction: np.ndarray) -> float:
        self.reseed()
        return yb.jvp(self.problem.function, (x.copy(),), (direction,))[1]

    def hessian(self, x: np.ndarray) -> np.ndarray:
        self.reseed()
        return np.asarray(yb.hessian(self.problem.function)(x.copy()), float)

    def twin(self) -> Optional[oracle.JaxTwin]:
        if self.problem.jax_prefixes is None or not oracle.jax_available():
            return None
        return oracle.JaxTwin(self.problem.function, self.problem.jax_prefixes, self.reseed, self.problem.jax_eager)


def usable_problem(spec: CaseSpec) -> tuple[Optional[Problem], float, str]:
    """The first of a few points where the plain function runs, is finite and repeats itself
    (a function drawing from NumPy's legacy global generator or Python's ``random`` without
    saying so gets both reseeded before every call; one that still varies is unusable)."""
    reason = ""
    for attempt in range(ATTEMPTS):
        try:
            problem = spec.build(attempt)
            value = _repeatable_value(problem)
        except Exception as error:  # the package's own failure, e.g. removed NumPy names
            reason = f"plain call fails: {type(error).__name__}: {_first_line(error)}"
            continue
        if value is None:
            return None, math.nan, "plain value differs from call to call, even reseeded"
        if math.isfinite(value):
            return problem, value, ""
        reason = f"plain value is {value}"
    return None, math.nan, reason


def _repeatable_value(problem: Problem) -> Optional[float]:
    evaluator = Evaluator(problem)
    if problem.random_seed is None and _draws_from_global_generators(evaluator, problem.point):
        problem.random_seed = 0
    first, second = evaluator.plain(problem.point), evaluator.plain(problem.point)
    if first == second or (math.isnan(first) and math.isnan(second)):
        return first
    if problem.random_seed is None:
        problem.random_seed = 0
        return _repeatable_value(problem)
    return None


def _draws_from_global_generators(evaluator: Evaluator, x: np.ndarray) -> bool:
    """Whether a plain call advances NumPy's global generator or Python's ``random``. Two equal
    values do not show a function is deterministic: cma's subspace_sphere sums 2 of 5
    coordinates chosen at random, and two unseeded calls pick the same pair one time in ten
    (then the gradient call, drawing again, was compared with a value it need not repeat)."""
    before, python_before = np.random.get_state(), random.getstate()
    evaluator.plain(x)
    after = np.random.get_state()
    moved = after[2] != before[2] or not np.array_equal(after[1], before[1])
    return moved or random.getstate() != python_before


def run_case(spec: CaseSpec, hessian: bool = True) -> Outcome:
    with warnings.catch_warnings(), spec.setting():
        warnings.simplefilter("ignore")
        return _run_case(spec, hessian)


def _run_case(spec: CaseSpec, hessian: bool) -> Outcome:
    problem, plain_value, reason = usable_problem(spec)
    if problem is None:
        return Outcome(spec.case_id, spec.package, "unusable", "", reason)
    evaluator, x = Evaluator(problem), problem.point
    try:
        value, gradient = evaluator.value_and_grad(x)
    except Exception as error:
        return _from_error(spec, "gradient", error)
    if not np.isclose(float(value), plain_value, rtol=1e-9, atol=1e-12):
        return Outcome(spec.case_id, spec.package, "wrong", "value",
                       f"value {float(value)!r} but the plain call gives {plain_value!r}")
    hessian = hessian and x.size <= HESSIAN_MAX_VARIABLES
    twin = _twin_results(evaluator, x, plain_value, hessian)
    gradient = np.asarray(gradient, float)
    verdict = _check_gradient(spec, evaluator, x, gradient, twin)
    if verdict.status == "right" and spec.all_modes:
        verdict = _check_forward(spec, evaluator, x, gradient, verdict)
    if verdict.status != "right" or not hessian:
        return verdict
    verdict = _check_hessian(spec, evaluator, x, twin, verdict)
    if verdict.status == "right" and spec.all_modes:
        verdict = _check_hvp(spec, evaluator, x, gradient, verdict)
    return verdict


@dataclass
class TwinResults:
    """The jax twin's gradient and Hessian, and how much each moves when x moves by a few ulps."""
    gradient: np.ndarray
    hessian: Optional[np.ndarray]
    gradient_floor: np.ndarray
    hessian_floor: Optional[np.ndarray]


def _twin_results(evaluator: Evaluator, x: np.ndarray, plain_value: float,
                  hessian: bool) -> Optional[TwinResults]:
    """The jax twin's results, kept only if its value is the plain function's value."""
    twin = evaluator.twin()
    results = None if twin is None else twin.derivatives(x, hessian)
    if results is None or not np.isclose(results[0], plain_value, rtol=1e-10, atol=1e-12):
        return None
    nearby = twin.derivatives(x * (1.0 + 8 * oracle.EPS * _signs(x)), hessian)
    if nearby is None:
        return TwinResults(results[1], results[2], np.zeros_like(results[1]),
                           None if results[2] is None else np.zeros_like(results[2]))
    return TwinResults(results[1], results[2], np.abs(nearby[1] - results[1]),
                       None if results[2] is None else np.abs(nearby[2] - results[2]))


def _signs(x: np.ndarray) -> np.ndarray:
    return np.random.default_rng(0).choice([-1.0, 1.0], size=x.shape)


def _check_gradient(spec: CaseSpec, evaluator: Evaluator, x: np.ndarray, gradient: np.ndarray,
                    twin: TwinResults) -> Outcome:
    if gradient.shape != x.shape:
        return Outcome(spec.case_id, spec.package, "wrong", "gradient",
                       f"gradient shape {gradient.shape}, argument shape {x.shape}")
    if not np.all(np.isfinite(gradient)):
        refusal = _refused_forward(spec, evaluator, x)
        if refusal is not None:
            return refusal
    differences = oracle.gradient_against_differences(evaluator.plain, x, gradient)
    jax = None if twin is None else (twin.gradient, twin.gradient_floor)
    verdict = _verdict(spec, "gradient", gradient, differences, jax,
                       lambda: oracle.complex_step_gradient(evaluator.complex_call, x))
    if verdict.status != "unverified":
        return verdict
    return _forward_reverse_consistency(spec, evaluator, x, gradient, verdict)


def _refused_forward(spec: CaseSpec, evaluator: Evaluator, x: np.ndarray) -> Optional[Outcome]:
    """A NaN gradient is reverse mode's refusal where it cannot tell a constant from a variable
    (a shape parameter without a derivative formula, ``gammaincinv(2 * n, 0.5)`` in ``n``;
    docs/limitations.md): refused when forward mode, which can tell, refuses cleanly; else None."""
    direction = np.random.default_rng(spec.seed(7)).standard_normal(x.shape)
    try:
        evaluator.jvp(x, direction)
    except Exception as error:
        if is_clean_refusal(error):
            return Outcome(spec.case_id, spec.package, "refused", "gradient",
                           f"NaN gradient; forward: {type(error).__name__}: {_first_line(error)}")
    return None


def _forward_reverse_consistency(spec: CaseSpec, evaluator: Evaluator, x: np.ndarray,
                                 gradient: np.ndarray, verdict: Outcome) -> Outcome:
    """With no oracle, forward mode must at least agree with reverse mode (g . v = jvp v)."""
    direction = np.random.default_rng(spec.seed(7)).standard_normal(x.shape)
    try:
        tangent = float(evaluator.jvp(x, direction))
    except Exception as error:
        if not is_clean_refusal(error):
            return _from_error(spec, "gradient", error)
        return verdict
    expected = float(np.sum(gradient * direction))
    if not np.isclose(tangent, expected, rtol=1e-8, atol=1e-12 * np.max(np.abs(gradient))):
        return Outcome(spec.case_id, spec.package, "wrong", "gradient",
                       f"forward mode {tangent!r} disagrees with reverse g.v {expected!r} "
                       f"(and differences are unresolved)")
    verdict.detail += "; forward and reverse modes agree"
    return verdict


# Complex step overrides stable differences only when they disagree by less than this: high
# frequencies (Weierstrass sums to 3**20) bias every step alike, but by little.
COMPLEX_STEP_OVERRIDE = 1e-3


def _verdict(spec: CaseSpec, stage: str, ours: np.ndarray, differences: oracle.DifferenceCheck,
             jax: Optional[tuple[np.ndarray, np.ndarray]],
             complex_step: Callable[[], Optional[np.ndarray]] = lambda: None) -> Outcome:
    """Combine the oracles. Agreeing differences decide right (a jax twin that disagrees is
    noted: it is not quite the same function there). Otherwise the jax twin, then complex step,
    may confirm; failing that, stable differences or a disagreeing twin mean wrong, and with
    neither the result is unverified."""
    def outcome(status: str, detail: str, oracles: list[str]) -> Outcome:
        return Outcome(spec.case_id, spec.package, status, stage, detail, oracles)

    jax_result, jax_floor = (None, 0.0) if jax is None else jax
    # agreement with jax allows for the function's own rounding sensitivity (4 times the floor)
    jax_ok = jax_result is not None and oracle.agrees(ours, jax_result, 4 * jax_floor, oracle.JAX_RTOL)
    jax_error = None if jax_result is None else oracle.relative_error(ours, jax_result)
    fd_note = f"differences {'disagree' if differences.stable else 'unresolved'} (rel {differences.error:.1e})"
    if differences.agrees:
        note = "" if jax_result is None or jax_ok else f"jax twin differs (rel {jax_error:.1e})"
        return outcome("right", note, ["fd"] + (["jax"] if jax_ok else []))
    if jax_ok:
        return outcome("right", f"{fd_note}; jax agrees", ["jax"])
    if not differences.stable or differences.error < COMPLEX_STEP_OVERRIDE:
        estimate = complex_step()
        if estimate is not None and oracle.agrees(ours, estimate, 0.0, oracle.JAX_RTOL):
            return outcome("right", f"{fd_note}; complex step agrees", ["complex-step"])
    if differences.stable or jax_result is not None:
        jax_note = "" if jax_error is None else f", jax twin rel {jax_error:.1e}"
        return outcome("wrong", f"{stage}: {fd_note}{jax_note}", [])
    return outcome("unverified", f"no oracle resolves it: {fd_note}, no jax twin, complex step "
                   "unavailable or disagreeing", [])


def _check_hessian(spec: CaseSpec, evaluator: Evaluator, x: np.ndarray, twin: TwinResults,
                   gradient_verdict: Outcome) -> Outcome:
    try:
        matrix = evaluator.hessian(x)
    except Exception as error:
        return _from_error(spec, "hessian", error)
    if matrix.size != x.size * x.size:
        return Outcome(spec.case_id, spec.package, "wrong", "hessian", f"Hessian shape {matrix.shape}")
    directions = np.random.default_rng(spec.seed(99)).standard_normal((HESSIAN_DIRECTIONS, x.size))
    directions /= np.linalg.norm(directions, axis=1, keepdims=True)
    try:
        differences = oracle.hessian_against_differences(evaluator.grad, x, matrix, directions)
    except Exception as error:  # the gradient was fine at x; failing next to it is a finding too
        return _from_error(spec, "hessian", error)
    use_twin = twin is not None and twin.hessian is not None and "jax" in gradient_verdict.oracles
    jax = (twin.hessian.reshape(x.size, x.size), twin.hessian_floor.reshape(x.size, x.size)) if use_twin else None
    verdict = _verdict(spec, "hessian", matrix.reshape(x.size, x.size), differences, jax)
    verdict.oracles = sorted(set(verdict.oracles) | {f"grad:{o}" for o in gradient_verdict.oracles})
    return verdict


def run_cases(specs: list[CaseSpec], hessian: Callable[[CaseSpec], bool]) -> list[Outcome]:
    return [run_case(spec, hessian(spec)) for spec in specs]


def _check_forward(spec: CaseSpec, evaluator: Evaluator, x: np.ndarray, gradient: np.ndarray,
                   verdict: Outcome) -> Outcome:
    """Forward mode along a random direction against the verified gradient (g . v), and the
    argument left as it was by both modes."""
    direction = np.random.default_rng(spec.seed(11)).standard_normal(x.shape)
    argument = x.copy()
    try:
        evaluator.reseed()
        value, tangent = yb.jvp(evaluator.problem.function, (argument,), (direction,))
    except Exception as error:
        return _from_error(spec, "forward", error)
    expected = float(np.sum(gradient * direction))
    scale = float(np.sum(np.abs(gradient * direction)))
    if not np.isclose(float(tangent), expected, rtol=1e-8, atol=1e-10 * scale + 1e-300):
        return Outcome(spec.case_id, spec.package, "wrong", "forward",
                       f"jvp {float(tangent)!r} but the verified gradient gives g.v = {expected!r}")
    if not np.array_equal(argument, x):
        return Outcome(spec.case_id, spec.package, "wrong", "forward", "jvp changed its argument")
    verdict.oracles = verdict.oracles + ["jvp"]
    return verdict


def _check_hvp(spec: CaseSpec, evaluator: Evaluator, x: np.ndarray, gradient: np.ndarray,
               verdict: Outcome) -> Outcome:
    """``yb.hvp`` (one forward-over-reverse pass; ``yb.hessian`` runs batched ones) along a
    random direction against central differences of the verified gradient, its gradient
    against the verified one, and the argument left as it was."""
    direction = np.random.default_rng(spec.seed(13)).standard_normal(x.shape)
    direction /= np.linalg.norm(direction)
    argument = x.copy()
    try:
        evaluator.reseed()
        _, (gradient_again,), (product,) = yb.hvp(evaluator.problem.function, (argument,), (direction,))
    except Exception as error:
        return _from_error(spec, "hvp", error)
    if not np.array_equal(argument, x):
        return Outcome(spec.case_id, spec.package, "wrong", "hvp", "hvp changed its argument")
    if not oracle.agrees(np.asarray(gradient_again, float), gradient, 0.0, 1e-9):
        return Outcome(spec.case_id, spec.package, "wrong", "hvp", "hvp's gradient differs from yb.grad's")
    check = oracle.product_against_differences(evaluator.grad, x, np.asarray(product, float), direction)
    if not check.agrees and check.stable:
        return Outcome(spec.case_id, spec.package, "wrong", "hvp",
                       f"hvp: differences of the gradient disagree (rel {check.error:.1e})")
    verdict.oracles = sorted(set(verdict.oracles) | {"hvp" if check.agrees else "hvp:unresolved"})
    return verdict
