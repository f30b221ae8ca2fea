"""Differential fuzzer: random programs checked five ways (issue 12, "the guard").

``random_program(rng)`` (from ``fuzz_programs``) writes a random Python/NumPy function; this
module runs it and checks yuebing against itself and against finite differences:

1. reverse vs forward: ``<vjp(ybar), xdot> == ybar * jvp(xdot)`` (the dot-product test);
2. both vs central finite differences of ``f`` along ``xdot`` (Richardson-extrapolated);
3. ``hvp`` against central differences of ``yb.grad`` along ``xdot`` (and its gradient against
   the reverse-mode one);
4. every mode's value equals the plain Python call, and the arguments are unchanged afterwards;
5. where every argument is a float or a float array: the batched passes (several directions per
   pass) against the one-direction ones: ``jacobian(mode="fwd")`` of a random ``argnums`` (an int
   or a tuple in any order) against the reverse gradient, and ``hessian(chunk_size=n)`` times
   ``xdot`` against ``hvp``;
6. the API's options: ``grad`` of one random argument (``argnums``) against the reverse gradient,
   and the gradients check 3 differences come from ``value_and_grad(..., has_aux=True)`` of ``f``
   returning ``(value, aux)`` (check 1's ``jvp`` too at half the seeds): each call's value and aux
   against the plain call's.

Each run ends in one outcome: ``right``; ``refused`` (a yuebing error class naming the construct,
listed in ``REFUSALS``, or a ``NoDerivativeWarning`` with a result holding inf or NaN: a derivative
that does not exist at the point, the reason said); ``wrong`` (a number differs, an argument was changed, or an internal crash
such as ``TypeError``/``NameError``/``SyntaxError`` from yuebing's machinery); ``unsmooth`` (finite
differences at two steps disagree: the point sits on a kink, so no derivative is checked) or
``invalid`` (the plain program fails: a generator bug). Sources are written to a temporary module
file and imported, so yuebing finds them like any user code.

``python -m yuebing.testing.fuzz --seeds 0:200`` prints the counts and one shrunk example per
distinct failure mechanism.
"""
from __future__ import annotations

import atexit
import copy
import hashlib
import importlib.util
import os
import random
import re
import shutil
import sys
import tempfile
import traceback
import warnings
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ..api import forward as forward_api, jacobians as jacobian_api, reverse as api, second_order as second_order_api
from ..frontend.fence import UnsupportedSyntaxError
from ..frontend.source import SourceUnavailableError
from ..rules.core import MissingRuleError, NoDerivativeWarning, RuleArgumentError
from ..tangents.walk import StructureError
from ..transform.forward_runtime import NestedDifferentiationError
from ..ir.primitives import NotASequenceError
from ..transform.second_order import SecondOrderError
from .fuzz_programs import DEFAULT_FEATURES, FEATURES, OPT_IN, Block, Program, random_args, random_program

# Errors that mean "yuebing refuses this construct, saying so": never a wrong result.
REFUSALS = (MissingRuleError, RuleArgumentError, SecondOrderError, NestedDifferentiationError,
            UnsupportedSyntaxError, SourceUnavailableError, StructureError, NotASequenceError)

FD_STEP = 1e-3          # central differences at FD_STEP and FD_STEP / 2, Richardson-combined
KINK_TOL = 1e-4         # the two steps disagreeing by more than this (relative): a kink
FD_TOL = 1e-6           # derivative vs finite differences (relative to 1 + |derivative|)
HVP_TOL = 1e-5          # hvp vs differences of the gradient
EXACT_TOL = 1e-9        # values, dot products and gradients computed two ways
FOCUS_PER_SEED = 3      # features each seed's program certainly exercises (fuzz.case)


@dataclass
class Finding:
    """One failed or refused check: the mode, what was checked, and the detail."""
    mode: str      # reverse, forward, hvp, grad
    check: str     # crash, refused, value, arguments, dot, fd, hvp, hvp-gradient, structure
    detail: str

    def mechanism(self) -> str:
        """A key shared by findings of one cause: digits and generated names dropped."""
        detail = re.sub(r"\b[a-z]+\d+\b", "N", self.detail)
        detail = re.sub(r"[-+]?\d[\d.e+-]*", "#", detail)
        if self.check in ("crash", "refused"):
            return f"{self.mode}:{self.check}:{detail[:110]}"
        return f"{self.mode}:{self.check}"


@dataclass
class Outcome:
    """The result of checking one program at one point."""
    status: str                     # right, refused, wrong, unsmooth, invalid
    findings: list[Finding] = field(default_factory=list)
    source: str = ""

    def wrong(self) -> list[Finding]:
        return [f for f in self.findings if f.check != "refused"]

    def __str__(self) -> str:
        lines = [f"outcome: {self.status}"] + [f"  [{f.mode}/{f.check}] {f.detail}" for f in self.findings]
        return "\n".join(lines + ["source:", self.source])


# ---- loading sources as real modules ---------------------------------------------------------
_DIRECTORY: list[str] = []


def load_function(source: str, name: str = "f") -> Callable:
    """Write ``source`` to a module file in a temporary directory, import it, return ``name``."""
    if not _DIRECTORY:
        _DIRECTORY.append(tempfile.mkdtemp(prefix="yuebing_fuzz_"))
        atexit.register(shutil.rmtree, _DIRECTORY[0], True)
    digest = hashlib.sha1(source.encode()).hexdigest()[:16]
    path = os.path.join(_DIRECTORY[0], f"fuzz_{digest}.py")
    if not os.path.exists(path):
        with open(path, "w") as handle:
            handle.write(source)
    spec = importlib.util.spec_from_file_location(f"yuebing_fuzz_{digest}", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # as an imported module is (dataclasses and sys.modules[__name__] look it up)
    spec.loader.exec_module(module)
    return getattr(module, name)


# ---- structures: tangents, shifts, flattening, comparison --------------------------------------
def random_tangent(rng: np.random.Generator, template: Any) -> Any:
    """A random tangent with the structure of ``template`` (floats, arrays, lists, dicts)."""
    if isinstance(template, np.ndarray):
        return rng.standard_normal(template.shape)
    if isinstance(template, (float, np.floating)):
        return float(rng.standard_normal())
    if isinstance(template, (list, tuple)):
        return type(template)(random_tangent(rng, v) for v in template)
    if isinstance(template, dict):
        return {k: random_tangent(rng, v) for k, v in template.items()}
    raise TypeError(f"fuzz: no tangent for {type(template).__name__}")


def shifted(template: Any, tangent: Any, h: float) -> Any:
    """``template + h * tangent``, structure by structure (fresh containers)."""
    if isinstance(template, np.ndarray):
        return template + h * tangent
    if isinstance(template, (float, np.floating)):
        return float(template + h * tangent)
    if isinstance(template, (list, tuple)):
        return type(template)(shifted(v, t, h) for v, t in zip(template, tangent))
    if isinstance(template, dict):
        return {k: shifted(v, tangent[k], h) for k, v in template.items()}
    raise TypeError(f"fuzz: cannot shift {type(template).__name__}")


class _Mismatch(Exception):
    pass


def flat(template: Any, value: Any) -> np.ndarray:
    """``value`` (a tangent or cotangent of ``template``) as one float vector; ``NoTangent`` or
    ``None`` where a float is expected counts as zeros (a dropped derivative then shows as a
    difference, never as a crash of the checker)."""
    if isinstance(template, np.ndarray):
        if value is None or value is api.NoTangent or isinstance(value, type(api.NoTangent)):
            return np.zeros(template.size)
        out = np.asarray(value, dtype=float)
        if out.shape != template.shape:
            raise _Mismatch(f"array cotangent of shape {out.shape} for an argument of shape {template.shape}")
        return out.ravel()
    if isinstance(template, (float, np.floating)):
        if value is None or value is api.NoTangent or isinstance(value, type(api.NoTangent)):
            return np.zeros(1)
        out = np.asarray(value, dtype=float)
        if out.size != 1:
            raise _Mismatch(f"cotangent of shape {out.shape} for a float argument")
        return out.ravel()
    if isinstance(template, (list, tuple)):
        if not isinstance(value, (list, tuple)) or len(value) != len(template):
            raise _Mismatch(f"cotangent {type(value).__name__} for a {type(template).__name__} of {len(template)}")
        return np.concatenate([flat(t, v) for t, v in zip(template, value)] or [np.zeros(0)])
    if isinstance(template, dict):
        if not isinstance(value, dict) or set(value) != set(template):
            raise _Mismatch(f"cotangent {type(value).__name__} for a dict with keys {sorted(template)}")
        return np.concatenate([flat(template[k], value[k]) for k in sorted(template)] or [np.zeros(0)])
    raise TypeError(f"fuzz: cannot flatten {type(template).__name__}")


def same(a: Any, b: Any) -> bool:
    """Exact equality of two argument structures (types, lengths, keys and every number)."""
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.shape == b.shape and a.dtype == b.dtype and np.array_equal(a, b)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return isinstance(b, dict) and set(a) == set(b) and all(same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _close(a: float, b: float, tol: float, scale: float = 0.0) -> bool:
    return bool(abs(a - b) <= tol * (1.0 + max(abs(a), abs(b), scale)))


# ---- the four checks -------------------------------------------------------------------------
def _refused(error: BaseException) -> bool:
    """Whether ``error`` is yuebing declining a construct by name: a refusal class, or the
    read-only ``ValueError`` of a write into a structured array read from a global, which the
    public face explains in a note (``api.common``)."""
    return isinstance(error, REFUSALS) or (
        isinstance(error, ValueError) and "read-only" in str(error)
        and any("writes into a structured array read from a global" in note for note in getattr(error, "__notes__", ())))


def _crash(mode: str, error: BaseException, filename: str = "") -> Finding:
    if _refused(error):
        # a refusal should point at the user's file and line (in its text or the public face's
        # notes); note the ones that do not
        said = " ".join([str(error), *getattr(error, "__notes__", ())])
        unplaced = "" if not filename or os.path.basename(filename) in said else "[names no file] "
        return Finding(mode, "refused", f"{unplaced}{type(error).__name__}: {str(error).splitlines()[0] if str(error) else ''}")
    frames = [fr for fr in traceback.extract_tb(error.__traceback__) if "yuebing" in fr.filename]
    where = ""
    if frames:
        last = frames[-1]
        where = f" at {last.filename.split('yuebing/')[-1]}:{last.lineno}"
    text = str(error).splitlines()[0] if str(error) else ""
    return Finding(mode, "crash", f"{type(error).__name__}: {text}{where}")


def _derivative_fd(f: Callable, args: tuple, tangents: tuple, step: float = FD_STEP) -> tuple[float, bool]:
    """Richardson-combined central difference of ``f`` along ``tangents``, and whether the
    point is smooth (the two steps agree)."""
    def central(h: float) -> float:
        up = f(*shifted(args, tangents, h))
        down = f(*shifted(args, tangents, -h))
        return (float(up) - float(down)) / (2 * h)

    coarse, fine = central(step), central(step / 2)
    smooth = _close(coarse, fine, KINK_TOL) and np.isfinite(coarse) and np.isfinite(fine)
    return (4 * fine - coarse) / 3, smooth


def _gradient_fd(grad: Callable, args: tuple, tangents: tuple) -> tuple[np.ndarray, bool]:
    def central(h: float) -> np.ndarray:
        up = flat(args, grad(*shifted(args, tangents, h)))
        down = flat(args, grad(*shifted(args, tangents, -h)))
        return (up - down) / (2 * h)

    coarse, fine = central(FD_STEP), central(FD_STEP / 2)
    smooth = bool(np.all(np.abs(coarse - fine) <= KINK_TOL * (1 + np.abs(fine))))
    return (4 * fine - coarse) / 3, smooth


def _all_finite(value: Any) -> bool:
    """Whether every number in ``value`` (nested tuples, lists, dicts, arrays) is finite; anything
    else counts as finite (its numbers are then checked like any result's)."""
    if isinstance(value, dict):
        return all(_all_finite(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return all(_all_finite(v) for v in value)
    try:
        return bool(np.all(np.isfinite(np.asarray(value, dtype=complex))))
    except (TypeError, ValueError):
        return True


class _Run:
    """The checks of one program at one point; findings accumulate in ``self.findings``."""

    def __init__(self, f: Callable, args: tuple, tangents: tuple, ybar: float, rng: np.random.Generator) -> None:
        self.f, self.args = f, args
        self.findings: list[Finding] = []
        self.tangents, self.ybar = tangents, ybar
        self.rng = rng  # the argnums of check 6

    def fresh(self) -> tuple:
        return copy.deepcopy(self.args)

    def call(self, mode: str, thunk: Callable[[tuple], Any]) -> Any:
        """Run ``thunk`` on fresh copies of the arguments; record a crash or refusal, and any
        change to the arguments."""
        args = self.fresh()
        try:
            with warnings.catch_warnings(record=True) as said:
                warnings.simplefilter("ignore")
                warnings.simplefilter("always", NoDerivativeWarning)
                result = thunk(args)
        except Exception as error:  # noqa: BLE001 -- every failure is classified
            self.findings.append(_crash(mode, error, getattr(getattr(self.f, "__code__", None), "co_filename", "")))
            return None
        if said and not _all_finite(result):  # a derivative that does not exist here, said: declined by name
            self.findings.append(Finding(mode, "refused", f"NoDerivativeWarning: {str(said[0].message)[:60]}"))
            return None
        if not same(self.args, args):
            self.findings.append(Finding(mode, "arguments", "an argument differs after the call"))
        return result

    def fail(self, mode: str, check: str, detail: str) -> None:
        self.findings.append(Finding(mode, check, detail))

    def check_value(self, mode: str, value: Any, expected: float) -> None:
        try:
            got = float(value)
        except (TypeError, ValueError):
            self.fail(mode, "value", f"value {value!r} is not a float")
            return
        if not _close(got, expected, EXACT_TOL):
            self.fail(mode, "value", f"value {got!r}, plain Python {expected!r}")

    def flat_or_fail(self, mode: str, value: Any) -> np.ndarray | None:
        try:
            return flat(self.args, value)
        except _Mismatch as error:
            self.fail(mode, "structure", str(error))
            return None


def _reverse(run: _Run, value: float) -> np.ndarray | None:
    def thunk(args):
        out, pullback = api.vjp(run.f, *args)
        return out, pullback(run.ybar)

    result = run.call("reverse", thunk)
    if result is None:
        return None
    out, cotangents = result
    run.check_value("reverse", out, value)
    return run.flat_or_fail("reverse", cotangents)


def _forward(run: _Run, value: float) -> float | None:
    """Check 1's forward half; at half the seeds through ``jvp(has_aux=True)`` (check 6)."""
    if run.rng.random() < 0.5:
        result = run.call("forward", lambda args: forward_api.jvp(run.f, args, copy.deepcopy(run.tangents)))
    else:
        result = run.call("forward", lambda args: _jvp_with_aux(run, args, value))
    if result is None:
        return None
    out, tangent_out = result
    run.check_value("forward", out, value)
    try:
        return float(tangent_out)
    except (TypeError, ValueError):
        run.fail("forward", "structure", f"output tangent {tangent_out!r} is not a float")
        return None


class _AuxMismatch(Exception):
    pass


# ``f`` returning ``(value, aux)``: aux holds a label, the value and a float computed from the first
# argument before ``f`` runs (``f`` may write its arguments). User code, so loaded from a module
# file of its own: yuebing refuses to differentiate its own package's functions.
WITH_AUX_SOURCE = """import numpy as np


def with_aux(f):
    def function_with_aux(*args):
        first = float(np.sum(args[0])) if isinstance(args[0], (float, np.ndarray)) else 0.0
        value = f(*args)
        return value, ("aux", value, first)
    return function_with_aux
"""


_WITH_AUX: list[Callable] = []


def _with_aux(f: Callable) -> Callable:
    if not _WITH_AUX:
        _WITH_AUX.append(load_function(WITH_AUX_SOURCE, "with_aux"))
    return _WITH_AUX[0](f)


def _aux_gradient(run: _Run) -> Callable:
    """The gradient (every argument) by ``value_and_grad(has_aux=True)``; each call's value and
    aux are checked against the plain call at the same point (``_AuxMismatch`` otherwise)."""
    nums = tuple(range(len(run.args)))
    value_and_grad = api.value_and_grad(_with_aux(run.f), argnums=nums, has_aux=True)

    def gradient(*args):
        plain, plain_aux = _with_aux(run.f)(*copy.deepcopy(args))
        (value, aux), grads = value_and_grad(*copy.deepcopy(args))
        if not (isinstance(aux, tuple) and len(aux) == 3 and aux[0] == "aux" and type(aux[2]) is float
                and _close(float(value), float(plain), EXACT_TOL) and _close(float(aux[1]), float(plain), EXACT_TOL)
                and _close(aux[2], plain_aux[2], EXACT_TOL)):
            raise _AuxMismatch(f"value_and_grad(has_aux=True) gave value {value!r} and aux {aux!r}; "
                               f"the plain call {plain!r} and {plain_aux!r}")
        return grads
    return gradient


def _jvp_with_aux(run: _Run, args: tuple, value: float) -> tuple:
    """``jvp(has_aux=True)`` of ``f`` returning ``(value, aux)``: the aux checked against the
    plain call's (a finding), the value and tangent returned for check 1."""
    _, plain_aux = _with_aux(run.f)(*copy.deepcopy(run.args))
    out, tangent_out, aux = forward_api.jvp(_with_aux(run.f), args, copy.deepcopy(run.tangents), has_aux=True)
    if not (isinstance(aux, tuple) and len(aux) == 3 and aux[0] == "aux" and type(aux[2]) is float
            and _close(float(aux[1]), value, EXACT_TOL) and _close(aux[2], plain_aux[2], EXACT_TOL)):
        run.fail("forward", "has_aux", f"jvp(has_aux=True) gave aux {aux!r}; the plain call {plain_aux!r}")
    return out, tangent_out


def _slices(args: tuple) -> list[slice]:
    """Where each argument's entries sit in a flat vector of all of them."""
    sizes = [flat(a, a).size for a in args]
    ends = np.cumsum(sizes)
    return [slice(int(end - size), int(end)) for size, end in zip(sizes, ends)]


def _argnums(run: _Run, gradient: np.ndarray | None) -> None:
    """Check 6: ``grad`` of one random argument (an int ``argnums``) against the reverse gradient."""
    if gradient is None or len(run.args) < 2:
        return
    k = int(run.rng.integers(len(run.args)))
    result = run.call("grad-argnums", lambda args: api.grad(run.f, argnums=k)(*args))
    if result is None:
        return
    try:
        got = flat(run.args[k], result)
    except _Mismatch as error:
        run.fail("grad-argnums", "structure", str(error))
        return
    want = gradient[_slices(run.args)[k]]
    if not np.all(np.abs(got - want) <= EXACT_TOL * (1 + np.abs(want))):
        run.fail("grad-argnums", "gradient", f"grad(argnums={k}) {got} vs the slice of the full gradient {want}")


def _random_argnums(run: _Run) -> int | tuple[int, ...]:
    """An int, or a tuple of some arguments' positions in a random order."""
    n = len(run.args)
    if n == 1 or run.rng.random() < 0.3:
        return int(run.rng.integers(n))
    size = int(run.rng.integers(1, n + 1))
    return tuple(int(k) for k in run.rng.permutation(n)[:size])


def _second(run: _Run, value: float, gradient: np.ndarray | None, smooth: bool) -> np.ndarray | None:
    """Check 3; the HVP (flat) for check 5."""
    result = run.call("hvp", lambda args: second_order_api.hvp(run.f, args, copy.deepcopy(run.tangents)))
    if result is None:
        return None
    out, grads, hvps = result
    run.check_value("hvp", out, value)
    g2, hv = run.flat_or_fail("hvp", grads), run.flat_or_fail("hvp", hvps)
    if g2 is None or hv is None:
        return None
    if gradient is not None and not np.all(np.abs(g2 - gradient) <= EXACT_TOL * (1 + np.abs(gradient))):
        run.fail("hvp", "hvp-gradient", f"hvp's gradient {g2} differs from reverse mode's {gradient}")
    try:
        expected, grad_smooth = _gradient_fd(_aux_gradient(run), run.args, run.tangents)
    except _AuxMismatch as error:
        run.fail("grad", "has_aux", str(error))
        return hv
    except Exception as error:  # noqa: BLE001
        run.findings.append(_crash("grad", error))
        return hv
    if smooth and grad_smooth and not np.all(np.abs(hv - expected) <= HVP_TOL * (1 + np.abs(expected))):
        run.fail("hvp", "hvp", f"hvp {hv} vs differences of the gradient {expected}")
    return hv


def _float_arguments(args: tuple) -> bool:
    return bool(args) and all(type(a) is float or isinstance(a, np.ndarray) and a.dtype == np.float64 and a.size
                              for a in args)


def _flat_of(run: _Run, mode: str, picked: tuple[int, ...], values: Any) -> np.ndarray | None:
    """The derivatives with respect to the arguments at ``picked`` as one vector (a finding if
    their structure is not those arguments')."""
    try:
        if not isinstance(values, tuple) or len(values) != len(picked):
            raise _Mismatch(f"{type(values).__name__} of derivatives for argnums {picked}")
        return np.concatenate([flat(run.args[k], v) for k, v in zip(picked, values)])
    except _Mismatch as error:
        run.fail(mode, "structure", str(error))
        return None


def _batched(run: _Run, gradient: np.ndarray | None, hv: np.ndarray | None) -> None:
    """Check 5: batched forward mode and batched Hessians against the one-direction passes."""
    if not _float_arguments(run.args):
        return
    nums = tuple(range(len(run.args)))
    if gradient is not None:
        chosen = _random_argnums(run)
        jac = run.call("batched-forward", lambda args: jacobian_api.jacobian(run.f, argnums=chosen, mode="fwd")(*args))
        picked = (chosen,) if isinstance(chosen, int) else chosen
        flat_jac = None if jac is None else _flat_of(run, "batched-forward", picked,
                                                     (jac,) if isinstance(chosen, int) else jac)
        slices = _slices(run.args)
        want = np.concatenate([gradient[slices[k]] for k in picked])
        if flat_jac is not None and not np.all(np.abs(flat_jac - want) <= EXACT_TOL * (1 + np.abs(want))):
            run.fail("batched-forward", "jacobian", f"jacobian(argnums={chosen}, mode='fwd') {flat_jac} vs reverse mode's {want}")
    if hv is None:
        return
    n = sum(int(np.size(a)) for a in run.args)
    blocks = run.call("batched-hessian",
                      lambda args: second_order_api.hessian(run.f, argnums=nums, chunk_size=min(n, 64))(*args))
    if blocks is None:
        return
    rows = [np.hstack([np.reshape(b, (int(np.size(run.args[i])), -1)) for b in row]) for i, row in enumerate(blocks)]
    expected = np.vstack(rows) @ flat(run.args, run.tangents)
    # an HVP overflowing to inf or NaN (a gradient near 1e214 under a squashing sin: seed 60406)
    # must overflow in both; the finite entries agree
    finite = np.isfinite(hv)
    if np.any(np.isfinite(expected) != finite) or \
            not np.all(np.abs(expected[finite] - hv[finite]) <= 1e-7 * (1 + np.abs(hv[finite]))):
        run.fail("batched-hessian", "hessian", f"hessian(chunk_size={min(n, 64)}) @ xdot {expected} vs hvp {hv}")


def check_function(f: Callable, args: tuple, seed: int = 0) -> Outcome:
    """Check ``f`` at ``args`` six ways (see the module docstring)."""
    rng = np.random.default_rng(seed)
    tangents = tuple(random_tangent(rng, a) for a in args)
    ybar = float(rng.standard_normal()) or 1.0
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            value = float(f(*copy.deepcopy(args)))
            derivative, smooth = _derivative_fd(lambda *a: f(*copy.deepcopy(a)), args, tangents)
        except Exception as error:  # noqa: BLE001 -- the program itself is broken
            return Outcome("invalid", [Finding("plain", "crash", f"{type(error).__name__}: {error}")])
        if not np.isfinite(value) or abs(value) > 1e8:
            return Outcome("invalid", [Finding("plain", "value", f"value {value} is not moderate")])
        run = _Run(f, args, tangents, ybar, rng)
        cotangent = _reverse(run, value)
        tangent_out = _forward(run, value)
        gradient = None if cotangent is None else cotangent / run.ybar
        t = flat(args, run.tangents)
        if smooth and any(d is not None and not _close(d, derivative, FD_TOL)
                          for d in (tangent_out, None if gradient is None else float(gradient @ t))):
            # near a non-analytic spot (|s| ** 1.5 at s near 0: seed 86461) one Richardson step
            # leaves an O(h^4) error over FD_TOL: a tenth of the step decides
            finer, finer_smooth = _derivative_fd(lambda *a: f(*copy.deepcopy(a)), args, tangents, FD_STEP / 10)
            derivative = finer if finer_smooth else derivative
        if cotangent is not None and tangent_out is not None:
            left, right = float(cotangent @ t), run.ybar * tangent_out
            if not _close(left, right, EXACT_TOL, float(np.abs(cotangent * t).sum())):
                run.fail("reverse/forward", "dot", f"<vjp(ybar), xdot> = {left!r} but ybar * jvp(xdot) = {right!r}")
        if smooth and tangent_out is not None and not _close(tangent_out, derivative, FD_TOL):
            run.fail("forward", "fd", f"jvp {tangent_out!r} vs finite differences {derivative!r}")
        if smooth and gradient is not None and not _close(float(gradient @ t), derivative, FD_TOL):
            run.fail("reverse", "fd", f"<grad, xdot> {float(gradient @ t)!r} vs finite differences {derivative!r}")
        hv = _second(run, value, gradient, smooth)
        _batched(run, gradient, hv)
        _argnums(run, gradient)
    findings = run.findings
    if any(f.check != "refused" for f in findings):
        return Outcome("wrong", findings)
    if findings:
        return Outcome("refused", findings)
    return Outcome("right" if smooth else "unsmooth", findings)


def check_program(source: str, args: tuple, seed: int = 0) -> Outcome:
    """Import ``source`` (which defines ``f``) from a temporary module and check ``f(*args)``."""
    try:
        f = load_function(source)
    except Exception as error:  # noqa: BLE001
        return Outcome("invalid", [Finding("plain", "crash", f"{type(error).__name__}: {error}")], source)
    outcome = check_function(f, args, seed)
    outcome.source = source
    return outcome


# ---- cases, runs and shrinking ---------------------------------------------------------------
def case(seed: int, features=DEFAULT_FEATURES) -> tuple[Program, tuple]:
    """The program and point of ``seed`` (deterministic), focused on ``FOCUS_PER_SEED`` of the
    enabled features: the ``seed``-th in turn and those a third and two thirds of the list further
    on (so any run of a third as many consecutive seeds as there are features covers them all).
    Programs whose value at the point is not moderate (powers of powers grow fast) are drawn again,
    from the same random stream."""
    rng = random.Random(seed)
    enabled = [name for name in FEATURES if name in features]
    stride = -(-len(enabled) // FOCUS_PER_SEED)
    focus = tuple(dict.fromkeys(enabled[(seed + k * stride) % len(enabled)] for k in range(FOCUS_PER_SEED))
                  if enabled else ())
    for _ in range(20):
        program = random_program(rng, features, focus=focus)
        args = random_args(rng, program)
        if _moderate(program.source(), args):
            break
    return program, args


def focused_case(feature: str, seed: int, salt: int = 0,
                 features=DEFAULT_FEATURES) -> tuple[Program, tuple, random.Random]:
    """A program focused on ``feature`` and its point, from ``seed`` (the tests' draws: ``salt``
    tells one test file's from another's); drawn again, from the same stream, while its value
    is not moderate. The stream is returned for further points (``check_at_points``)."""
    rng = random.Random(seed * 1009 + sum(map(ord, feature)) + salt)
    for _ in range(20):
        program = random_program(rng, features, focus=feature)
        args = random_args(rng, program)
        if _moderate(program.source(), args):
            break
    return program, args, rng


def _moderate(source: str, args: tuple) -> bool:
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            value = float(load_function(source)(*copy.deepcopy(args)))
        except (ArithmeticError, ValueError):  # overflow or a math domain error: draw again
            return False
        except Exception:  # noqa: BLE001 -- a generator bug: reported by check_program
            return True
    return bool(np.isfinite(value) and abs(value) < 1e4)


def run_seed(seed: int, features=DEFAULT_FEATURES, points: int = 3) -> tuple[Program, tuple, Outcome]:
    """Check seed's program; a point on a kink, or where the plain function's value is not
    moderate (invalid for the checks), is replaced by another (up to ``points``)."""
    program, args = case(seed, features)
    args, outcome = check_at_points(program, args, random.Random(seed + 7919), seed, points)
    return program, args, outcome


def check_at_points(program: Program, args: tuple, rng: random.Random, seed: int = 0,
                    points: int = 3) -> tuple[tuple, Outcome]:
    """Check ``program`` at ``args``; at a kink or where the value is not moderate, at another
    point drawn from ``rng`` (up to ``points`` in all). The last point and its outcome."""
    source = program.source()
    for _ in range(points):
        outcome = check_program(source, args, seed)
        if outcome.status not in ("unsmooth", "invalid"):
            break
        args = random_args(rng, program)
    return args, outcome


def shrink(program: Program, args: tuple, keep: Callable[[Outcome], bool], seed: int = 0) -> Program:
    """A smaller program (fewer blocks, lines, terms and helpers) whose outcome still satisfies
    ``keep``, by greedy removal until nothing more can go."""
    def ok(candidate: Program) -> bool:
        return keep(check_program(candidate.source(), args, seed))

    changed = True
    while changed:
        changed = False
        for attr in ("blocks", "terms", "helpers"):
            items = getattr(program, attr)
            for i in reversed(range(len(items))):
                trial = copy.copy(program)
                setattr(trial, attr, items[:i] + items[i + 1:])
                if ok(trial):
                    program, items, changed = trial, items[:i] + items[i + 1:], True
        for b in reversed(range(len(program.blocks))):
            lines = program.blocks[b].lines
            for j in reversed(range(len(lines))):
                if lines[j].endswith(":") or len(lines) == 1:
                    continue
                trial = copy.copy(program)
                trial.blocks = list(program.blocks)
                trial.blocks[b] = Block(lines[:j] + lines[j + 1:], program.blocks[b].features)
                if ok(trial):
                    program, lines, changed = trial, trial.blocks[b].lines, True
    return program


@dataclass
class Summary:
    """Counts by outcome and the seeds of each distinct failure mechanism."""
    counts: dict[str, int] = field(default_factory=dict)
    mechanisms: dict[str, list[int]] = field(default_factory=dict)   # of wrong outcomes only
    refusals: dict[str, list[int]] = field(default_factory=dict)
    invalid: dict[str, list[int]] = field(default_factory=dict)      # the generator's fault
    outcomes: dict[int, Outcome] = field(default_factory=dict)

    def add(self, seed: int, outcome: Outcome) -> None:
        self.counts[outcome.status] = self.counts.get(outcome.status, 0) + 1
        self.outcomes[seed] = outcome
        for finding in outcome.findings:
            seeds = self._table(outcome, finding).setdefault(finding.mechanism(), [])
            if seed not in seeds:
                seeds.append(seed)

    def _table(self, outcome: Outcome, finding: Finding) -> dict[str, list[int]]:
        # an invalid outcome's findings are about the plain program: never yuebing's "wrong"
        if outcome.status == "invalid":
            return self.invalid
        return self.refusals if finding.check == "refused" else self.mechanisms

    def report(self) -> str:
        lines = [f"programs: {sum(self.counts.values())}  " + "  ".join(f"{k}: {v}" for k, v in sorted(self.counts.items()))]
        for title, table in (("wrong", self.mechanisms), ("refused", self.refusals), ("invalid", self.invalid)):
            for key, seeds in sorted(table.items(), key=lambda kv: -len(kv[1])):
                lines.append(f"  {title} x{len(seeds)} {key}  seeds {seeds[:8]}")
        return "\n".join(lines)


def run_seeds(seeds, features=DEFAULT_FEATURES) -> Summary:
    summary = Summary()
    for seed in seeds:
        _, _, outcome = run_seed(seed, features)
        summary.add(seed, outcome)
    return summary


def _main() -> None:
    import argparse
    import sys
    import time

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="0:100", help="start:stop")
    parser.add_argument("--without", default="", help="comma-separated features to leave out")
    parser.add_argument("--with", dest="also", default="",
                        help="comma-separated opt-in features to add: " + ", ".join(OPT_IN))
    parser.add_argument("--only", default="", help="comma-separated features to use (with arith)")
    parser.add_argument("--shrink", action="store_true", help="print a shrunk program per mechanism")
    parser.add_argument("--debug", action="store_true", help="with yuebing's debug checks on (as in the suite)")
    options = parser.parse_args()
    if options.debug:
        from ..api import config
        config(debug=True)
    start, stop = (int(v) for v in options.seeds.split(":"))
    features = set(options.only.split(",")) | {"arith"} if options.only else set(DEFAULT_FEATURES)
    features |= set(filter(None, options.also.split(",")))
    features -= set(filter(None, options.without.split(",")))
    unknown = features - set(FEATURES)
    if unknown:
        parser.error(f"unknown features {sorted(unknown)}")
    began = time.time()
    summary = run_seeds(range(start, stop), tuple(sorted(features)))
    print(summary.report())
    print(f"{time.time() - began:.1f} s")
    if options.shrink:
        for key, seeds in summary.mechanisms.items():
            seed = seeds[0]
            program, args, _ = run_seed(seed, tuple(sorted(features)))
            small = shrink(program, args, lambda o, key=key: any(f.mechanism() == key for f in o.findings), seed)
            print(f"\n==== {key} (seed {seed}) args={args!r}\n{small.source()}")
            print(check_program(small.source(), args, seed))
            sys.stdout.flush()


if __name__ == "__main__":
    _main()


__all__ = ["FOCUS_PER_SEED", "REFUSALS", "Finding", "Outcome", "Summary", "case", "check_at_points", "check_function", "focused_case", "check_program",
           "load_function", "random_program", "run_seed", "run_seeds", "shrink"]
