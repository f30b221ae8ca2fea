"""``check_tangent_interface(x)``: the laws every tangent type must satisfy (Mooncake's
``test_data``), checked on one primal value of any structure."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from .. import tangents as T
from ..tangents.validate import validate_tangent
from .structural import assert_structurally_equal, compare


def _is_mutable_tangent(t: Any) -> bool:
    return isinstance(t, (list, dict, np.ndarray, T.MutableTangent))


def _close(a: float, b: float, scale: float) -> bool:
    # float32 leaves round each sum to ~1e-7 relative; scale is the size of the terms involved.
    return math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-5 * max(1.0, scale))


def check_tangent_interface(x: Any, rng: np.random.Generator | None = None) -> None:
    """Raise ``AssertionError`` unless every tangent operation behaves lawfully on ``x``.

    Checks: tangents made by ``zero_tangent``/``randn_tangent`` are valid tangents of ``x`` and
    mirror its aliasing (``validate_tangent``); zero is the identity of ``add``; ``scale(a, 2)``
    equals ``add(a, a)``; ``dot`` is symmetric, bilinear and positive; ``increment`` mutates
    mutable tangents in place, returns them and equals ``add``; ``set_to_zero`` zeroes in place;
    ``add_to_primal``/``difference`` round-trip, reproduce ``x``'s aliasing and leave ``x`` alone;
    ``join(fdata(t), rdata(t))`` rebuilds ``t``.
    """
    rng = np.random.default_rng(0) if rng is None else rng
    original = T.structural_copy(x)
    assert_structurally_equal(x, original, what="structural_copy(x) is not a faithful copy")

    zero = T.zero_tangent(x)
    validate_tangent(x, zero)
    assert T.dot(zero, zero) == 0.0, "dot(zero, zero) must be 0"
    a, b, c = (T.randn_tangent(rng, x) for _ in range(3))
    for t in (a, b, c):
        validate_tangent(x, t)

    # Vector-space laws.
    assert_structurally_equal(a, T.add(a, zero), what="add(a, zero) != a")
    assert_structurally_equal(T.add(a, a), T.scale(a, 2.0), what="scale(a, 2) != add(a, a)")
    validate_tangent(x, T.add(a, b))
    validate_tangent(x, T.scale(a, 3.0))
    ab, ba = T.dot(a, b), T.dot(b, a)
    aa = T.dot(a, a)
    assert _close(ab, ba, aa), f"dot is not symmetric: {ab} vs {ba}"
    lhs = T.dot(T.add(a, T.scale(b, 2.0)), c)
    rhs = T.dot(a, c) + 2.0 * T.dot(b, c)
    assert _close(lhs, rhs, aa + T.dot(b, b) + T.dot(c, c)), f"dot is not bilinear: {lhs} vs {rhs}"
    has_leaves = T.dot(T.scale(a, 0.0), a) == 0.0 and aa > 0.0
    assert aa >= 0.0, f"dot(a, a) = {aa} < 0"
    if not has_leaves:
        assert aa == 0.0

    # increment mutates in place and agrees with add.
    expected = T.add(a, b)
    result = T.increment(a, b)
    assert_structurally_equal(expected, result, rtol=1e-12, atol=1e-12, what="increment(a, b) != add(a, b)")
    if _is_mutable_tangent(a):
        assert result is a, "increment must return the mutable tangent it was given"
    validate_tangent(x, result)
    _assert_same_mutables(a, result)

    # set_to_zero works in place.
    zeroed = T.set_to_zero(result)
    assert_structurally_equal(zero, zeroed, what="set_to_zero(a) != zero_tangent(x)")
    if _is_mutable_tangent(result):
        assert zeroed is result, "set_to_zero must return the mutable tangent it was given"
    _assert_same_mutables(result, zeroed)

    # add_to_primal / difference round trip, aliasing reproduced, x untouched.
    moved = T.add_to_primal(x, b, 0.5)
    recovered = T.scale(T.difference(moved, x), 2.0)
    assert_structurally_equal(b, recovered, rtol=1e-6, atol=1e-6, what="difference(add_to_primal(x, t), x) != t")
    problem = compare(x, moved, check_values=False)
    assert problem is None, f"add_to_primal changed the structure or aliasing of x: {problem}"
    same = T.add_to_primal(x, zero)
    assert_structurally_equal(x, same, what="add_to_primal(x, zero) != x")
    assert_structurally_equal(original, x, what="a tangent operation modified the primal")

    # fdata / rdata split.
    assert_structurally_equal(b, T.join(T.fdata(b), T.rdata(b)), what="join(fdata(t), rdata(t)) != t")
    _assert_split_disjoint(T.fdata(b), T.rdata(b))


def _assert_same_mutables(before: Any, after: Any) -> None:
    """Every mutable object of ``before`` is still the same object at the same place in ``after``."""
    stack = [(before, after)]
    seen: set[int] = set()
    while stack:
        u, v = stack.pop()
        if _is_mutable_tangent(u):
            assert u is v, "an in-place tangent operation replaced a mutable tangent object"
            if id(u) in seen:
                continue
            seen.add(id(u))
        if isinstance(u, np.ndarray) or u is T.NoTangent:
            continue
        if isinstance(u, (list, tuple)):
            stack.extend(zip(u, v))
        elif isinstance(u, dict):
            stack.extend((u[k], v[k]) for k in u)
        elif isinstance(u, (T.Tangent, T.MutableTangent)):
            stack.extend((u.fields[k], v.fields[k]) for k in u.fields)


def _assert_split_disjoint(f: Any, r: Any) -> None:
    """fdata holds no floats; rdata holds no mutable tangents."""
    stack = [(f, True), (r, False)]
    seen: set[int] = set()
    while stack:
        v, is_f = stack.pop()
        if is_f and _is_mutable_tangent(v):
            continue
        if id(v) in seen:
            continue
        seen.add(id(v))
        if isinstance(v, (float, complex)):
            assert not is_f, f"fdata contains a value-typed number {v!r}"
        elif _is_mutable_tangent(v):
            assert is_f, f"rdata contains a mutable tangent {type(v).__qualname__}"
        elif isinstance(v, tuple):
            stack.extend((e, is_f) for e in v)
        elif isinstance(v, T.Tangent):
            stack.extend((e, is_f) for e in v.fields.values())
