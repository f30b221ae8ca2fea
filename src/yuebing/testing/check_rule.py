"""``check_rule(f, *args)``: prove a rule correct, to Mooncake's ``test_rule`` standard.

A function that may mutate its arguments is treated as the map
``args_before -> (output, args_after)``. ``check_rule`` verifies, for the registered rule of ``f``:

1. central finite differences (several step sizes) of that map along a random direction ``dx``
   agree with forward mode's output tangent and mutated-argument tangents;
2. reverse mode agrees with the same finite differences by the dot-product identity
   ``<x̄, dx> = <(ȳ, post-call cotangent), J dx>``;
3. accumulation: the argument fdata is preloaded with a random cotangent of the post-call state
   (this is also the gradient's identity part), so a pullback that overwrites instead of
   incrementing breaks identity 2;
4. the pullback restores every argument exactly (cycle-safe structural equality with a copy);
5. tangents mirror primal aliasing: inputs and outputs (an output that is an input, or a view of
   one, must carry that input's fdata);
6. the rule's primal output and post-call state equal running ``f`` directly, and two runs give
   identical gradients;
7. forward and reverse agree with each other by the dot-product identity (tight tolerance).

Failures raise ``RuleCheckError`` saying which property failed, with numbers or a path.
Keyword arguments are passed to ``f`` and the rules unchanged and are not differentiated.
With ``through_runtime=True`` the forward rule runs as a traced call would (the runtime's
dispatch, its array_like boundary included: lists given where NumPy takes arrays); the reverse
rule always does.
"""
from __future__ import annotations

import math
from typing import Any, Callable, Iterable

import numpy as np

from .. import tangents as T
from ..rules.core import CoDual, Dual, frule
from ..tangents.validate import validate_tangent
from .structural import compare


class RuleCheckError(AssertionError):
    """A rule failed one of ``check_rule``'s properties."""


def _lowest_precision(args: Any) -> str:
    """``"single"`` if any float32/complex64 array or scalar is reachable from ``args``."""
    from ..tangents.ops import _collect_arrays, _primal_children

    for a in _collect_arrays(args, _primal_children):
        if a.dtype in (np.float32, np.complex64, np.float16):
            return "single"
    stack, seen = [args], set()
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (np.float32, np.complex64, np.float16)):
            return "single"
        try:
            stack.extend(_primal_children(v))
        except TypeError:
            pass
    return "double"


_DEFAULTS = {
    "double": dict(steps=(1e-3, 3e-4, 1e-4, 1e-5, 1e-6), rtol=1e-5, atol=1e-7),
    "single": dict(steps=(3e-2, 1e-2, 3e-3, 1e-3), rtol=3e-2, atol=1e-3),
}


def _fail(name: str, message: str) -> None:
    raise RuleCheckError(f"check_rule({name}): {message}")


def _name(f: Any) -> str:
    from ..rules.core import describe_callable

    return describe_callable(f)


def _run_primal(f: Callable, args: tuple, kwargs: dict) -> tuple[Any, tuple]:
    """Run ``f`` on a copy of ``args``; return ``(output, args_after)``."""
    copied = T.structural_copy(args)
    y = f(*copied, **T.structural_copy(kwargs))  # kwargs may hold out= arrays: fresh each call
    return y, copied


def _finite_differences(f: Callable, args: tuple, kwargs: dict, dx: Any, steps: Iterable[float]) -> list:
    """``(h, J dx)`` estimates: tangents of ``(output, args_after, objects_before)`` by central
    differences (``objects_before``: the mutable objects reachable from the arguments before the
    call, as they are after it)."""
    estimates = []
    for h in steps:
        plus = T.add_to_primal(args, dx, h)
        minus = T.add_to_primal(args, dx, -h)
        # The state is every object reachable from the arguments before *or* after the call:
        # objects the call drops from the arguments keep their (pass-through) derivative.
        plus_objects, minus_objects = _mutable_objects(plus), _mutable_objects(minus)
        y_plus = f(*plus, **T.structural_copy(kwargs))
        y_minus = f(*minus, **T.structural_copy(kwargs))
        try:
            delta = T.scale(T.difference((y_plus, plus, plus_objects), (y_minus, minus, minus_objects)), 1.0 / (2.0 * h))
        except TypeError as error:
            raise RuleCheckError(f"finite differences: output structure changed under perturbation: {error}")
        estimates.append((h, delta))
    return estimates


def _mutable_objects(x: Any) -> list:
    """Every mutable object (list, dict, object, cell, float array) reachable from ``x``, in a
    deterministic order: two structural copies give aligned lists."""
    from ..tangents import kinds as K

    found, seen, stack = [], set(), [x]
    while stack:
        v = stack.pop()
        if id(v) in seen:
            continue
        seen.add(id(v))
        kind = K.primal_kind(v)
        if kind in K.MUTABLE_KINDS or kind is K.ARRAY:
            found.append(v)
        if kind in (K.FLOAT, K.COMPLEX, K.ARRAY, K.NONDIFF):
            continue
        stack.extend(reversed(K.parts(v, kind)[1]))
    return found


def _tangent_map(x: Any, t: Any) -> dict:
    """``id(mutable primal object) -> its tangent object`` for a primal and a full tangent."""
    from ..tangents import kinds as K
    from ..tangents.ops import _aligned_children

    mapping, stack = {}, [(x, t)]
    while stack:
        v, tv = stack.pop()
        kind = K.primal_kind(v)
        if kind in K.MUTABLE_KINDS or kind is K.ARRAY:
            if id(v) in mapping:
                continue
            mapping[id(v)] = tv
        if kind in (K.FLOAT, K.COMPLEX, K.ARRAY, K.NONDIFF):
            continue
        keys, children, _ = K.parts(v, kind)
        stack.extend(zip(children, _aligned_children(kind, keys, tv)))
    return mapping


def _norm(t: Any) -> float:
    return math.sqrt(max(T.dot(t, t), 0.0))


def _full_tangent(primal_value: Any, f: Any, r: Any = T.NoRData) -> Any:
    """Join fdata with rdata, filling value-typed positions with zeros when ``r`` is NoRData."""
    if r is T.NoRData:
        r = T.rdata(T.zero_tangent(primal_value))
    return T.join(f, r)


def _per_arg(f: Any, n: int, empty: Any) -> list:
    return [empty] * n if f is empty else list(f)


def check_rule(
    f: Callable,
    *args: Any,
    kwargs: dict | None = None,
    mode: Iterable[str] = ("rev", "fwd"),
    rtol: float | None = None,
    atol: float | None = None,
    steps: Iterable[float] | None = None,
    seed: int = 0,
    through_runtime: bool = False,
) -> None:
    """Check the reverse and/or forward rule of ``f`` at ``args`` (see the module docstring)."""
    kwargs = dict(kwargs or {})
    mode = tuple(mode)
    name = _name(f)
    y_ref, after_ref = _run_primal(f, args, kwargs)
    defaults = _DEFAULTS[_lowest_precision((args, y_ref))]
    rtol = defaults["rtol"] if rtol is None else rtol
    atol = defaults["atol"] if atol is None else atol
    steps = defaults["steps"] if steps is None else tuple(steps)
    args = tuple(args)
    untouched = T.structural_copy(args)
    rng = np.random.default_rng(seed)
    dx = T.randn_tangent(rng, args)
    estimates = _finite_differences(f, args, kwargs, dx, steps)
    problem = compare(untouched, args)
    if problem:
        _fail(name, f"running f on copies changed the caller's arguments: {problem}")

    forward = _runtime_frule if through_runtime else frule
    fwd = _check_forward(forward, f, args, kwargs, dx, estimates, y_ref, after_ref, name, rtol, atol) \
        if "fwd" in mode else None
    if "rev" in mode:
        rev = _check_reverse(f, args, kwargs, dx, estimates, y_ref, after_ref, name, rtol, atol, seed)
        again = _check_reverse(f, args, kwargs, dx, estimates, y_ref, after_ref, name, rtol, atol, seed)
        problem = compare(rev["gradient"], again["gradient"])
        if problem:
            _fail(name, f"reverse mode is not repeatable: two runs gave different gradients at {problem}")
        if fwd is not None:
            lhs = T.dot(rev["gradient"], dx)
            rhs = T.dot(rev["cotangent"], fwd)
            scale = _norm(rev["gradient"]) * _norm(dx) + _norm(rev["cotangent"]) * _norm(fwd)
            # both sides are exact up to rounding: far tighter than the finite-difference tolerance
            if abs(lhs - rhs) > 1e-2 * rtol * max(1.0, scale):
                _fail(name, f"forward and reverse mode disagree: <x̄, dx> = {lhs!r} but <ȳ, J dx> = {rhs!r}")
    problem = compare(untouched, args)
    if problem:
        _fail(name, f"the check changed the caller's arguments: {problem}")


def _runtime_frule(f: Callable, *duals: Dual, **kwargs: Any) -> Dual:
    """``f``'s forward rule as the runtime dispatches a traced call to it."""
    from ..transform.forward_runtime import call_frule, zero_tangent_of

    return call_frule(Dual(f, T.NoTangent), *duals, **{k: Dual(v, zero_tangent_of(v)) for k, v in kwargs.items()})


def _check_forward(forward, f, args, kwargs, dx, estimates, y_ref, after_ref, name, rtol, atol) -> Any:
    results = []
    for _ in range(2):
        x = T.structural_copy(args)
        t = T.scale(dx, 1.0)  # a fresh tangent with dx's aliasing, mutated by the rule
        objects = _mutable_objects(x)
        tangents_of = _tangent_map(x, t)
        duals = [Dual(xi, ti) for xi, ti in zip(x, _per_arg(t, len(x), T.NoTangent))]
        out = forward(f, *duals, **T.structural_copy(kwargs))
        if not isinstance(out, Dual):
            _fail(name, f"the forward rule returned {type(out).__qualname__}, not a Dual")
        _check_primal(name, "forward", out.primal, x, y_ref, after_ref)
        combined = (out.tangent, t, [tangents_of[id(o)] for o in objects])
        try:
            validate_tangent((out.primal, x, objects), combined)
        except TypeError as error:
            _fail(name, f"forward rule's tangents do not mirror the primal (output, arguments): {error}")
        results.append(combined)
    problem = compare(results[0], results[1])
    if problem:
        _fail(name, f"forward mode is not repeatable: {problem}")
    tangent = results[0]
    diffs = []
    for h, delta in estimates:
        problem = compare(delta, tangent, rtol=rtol, atol=atol * max(1.0, _norm(delta)))
        if problem is None:
            return tangent
        diffs.append(f"step {h:g}: {problem}")
    _fail(
        name,
        "forward mode disagrees with finite differences of (output, arguments after the call) "
        "[x[0] is the output tangent, x[1] the argument tangents; left is finite differences]:\n  "
        + "\n  ".join(diffs),
    )


def _check_primal(name, which, y, x_after, y_ref, after_ref) -> None:
    problem = compare(y_ref, y, rtol=1e-12, atol=1e-12)
    if problem:
        _fail(name, f"the {which} rule's primal output differs from f's: {problem}")
    problem = compare(after_ref, x_after, rtol=1e-12, atol=1e-12)
    if problem:
        _fail(name, f"the {which} rule leaves the arguments in a different state than f does: {problem}")


def _check_reverse(f, args, kwargs, dx, estimates, y_ref, after_ref, name, rtol, atol, seed) -> dict:
    rng = np.random.default_rng(seed + 1)
    x = T.structural_copy(args)
    before = T.structural_copy(args)
    preload = T.randn_tangent(rng, x)
    objects = _mutable_objects(x)
    tangents_of = _tangent_map(x, preload)
    x_fdata = _per_arg(T.fdata(preload), len(x), T.NoFData)
    coduals = [CoDual(xi, fi) for xi, fi in zip(x, x_fdata)]
    from ..transform.runtime import call_rrule  # registered rules, or derived from source

    out, pullback = call_rrule(CoDual(f, T.NoFData), *coduals, **{k: CoDual(v, T.fdata(T.zero_tangent(v))) for k, v in T.structural_copy(kwargs).items()})
    if not isinstance(out, CoDual):
        _fail(name, f"the reverse rule returned {type(out).__qualname__}, not a CoDual")
    _check_primal(name, "reverse", out.primal, x, y_ref, after_ref)
    # The preloaded fdata moved with the primal through the forward pass (a list that grew has a
    # zero slot more): what it holds now is the cotangent of the post-call state.
    # Slots the call created hold zero: add fresh random values to every slot of the post-call
    # state so that a pullback dropping their cotangent (list.append, a new key) is caught too.
    T.increment(_full_tangent(x, tuple(x_fdata)), _full_tangent(x, T.fdata(T.randn_tangent(rng, x))))
    post_cotangent = T.scale((_full_tangent(x, tuple(x_fdata)), [tangents_of[id(o)] for o in objects]), 1.0)
    try:
        validate_tangent(
            (out.primal, x),
            (_full_tangent(out.primal, out.fdata), _full_tangent(x, tuple(x_fdata))),
        )
    except TypeError as error:
        _fail(name, f"fdata does not mirror the primal aliasing of (output, arguments): {error}")

    ybar = T.randn_tangent(rng, out.primal)
    T.increment(_full_tangent(out.primal, out.fdata), _full_tangent(out.primal, T.fdata(ybar)))
    rdatas = pullback(T.rdata(ybar))
    if not isinstance(rdatas, tuple) or len(rdatas) != len(x) + 1 + len(kwargs):
        _fail(name, f"the pullback must return a tuple of {len(x) + 1 + len(kwargs)} rdata (f, then each "
                    f"argument), got {rdatas!r:.100}")
    problem = compare(before, x)
    if problem:
        _fail(name, f"the pullback did not restore the arguments to their state before the call: {problem}")
    gradient = tuple(T.join(fi, ri) for fi, ri in zip(x_fdata, rdatas[1:1 + len(x)]))
    cotangent = (ybar, *post_cotangent)
    lhs = T.dot(gradient, dx)
    scale_lhs = _norm(gradient) * _norm(dx)
    attempts = []
    for h, delta in estimates:
        rhs = T.dot(cotangent, delta)
        scale = max(scale_lhs, _norm(ybar) * _norm(delta) + _norm(post_cotangent) * _norm(delta))
        if abs(lhs - rhs) <= atol * max(1.0, scale) + rtol * scale:
            return {"gradient": gradient, "cotangent": cotangent}
        attempts.append(f"step {h:g}: {rhs!r}")
    _fail(
        name,
        f"reverse mode disagrees with finite differences: <x̄, dx> = {lhs!r} but finite differences "
        f"give <ȳ, J dx> = " + ", ".join(attempts)
        + ". (A pullback that overwrites fdata instead of incrementing it fails here too.)",
    )
