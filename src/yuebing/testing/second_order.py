"""``check_second_order``: a primitive's second-order (forward-over-reverse) rule against
central differences of its gradient.

The primitive ``f`` is called from a scalar test function
``s(*args) = <w, f(*args)> + 0.1 |f(*args)|^2 + sum_i <u_i, args_i after the call>``
(random ``w``, ``u_i``; the last term sees in-place mutations). Then, for a random direction
``v``, ``yb.hvp(s, args, v)`` must give ``s``'s gradient (as ``yb.grad`` does) and a Hessian-vector
product matching ``(grad s(x + h v) - grad s(x - h v)) / 2h``, and the caller's arguments must be
left as they were.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .. import tangents as T
from .targets import packed, scalar_function, weights


def differentiable_positions(args: tuple) -> list[int]:
    """The arguments ``check_second_order`` differentiates (the others are held fixed)."""
    from ..transform.lifting import _has_float_data

    return [i for i, a in enumerate(args) if T.zero_tangent(a) is not T.NoTangent and _has_float_data(a)]


def scalar_test_function(f: Callable, args: tuple, kwargs: dict | None = None, seed: int = 0) -> Callable:
    """The scalar function of the differentiable ``args`` that ``check_second_order`` uses."""
    at = differentiable_positions(args)
    if not 1 <= len(at) <= 4:
        raise ValueError(f"check_second_order handles 1 to 4 differentiable arguments, got {len(at)}")
    rng = np.random.default_rng(seed)
    y = f(*T.structural_copy(args), **(kwargs or {}))
    after = T.structural_copy(args)
    f(*after, **(kwargs or {}))
    return scalar_function(f, dict(kwargs or {}), weights(rng, y), [weights(rng, after[i]) for i in at],
                           list(args), at)


def check_second_order(f: Callable, *args: Any, kwargs: dict | None = None, rtol: float = 1e-5,
                       atol: float = 1e-6, seed: int = 0) -> None:
    """Raise AssertionError unless the second-order rule of ``f`` at ``args`` is right."""
    from ..api.reverse import grad
    from ..api.second_order import hvp
    from .structural import compare

    s = packed(scalar_test_function(f, args, kwargs, seed))
    args = tuple(args[i] for i in differentiable_positions(args))
    rng = np.random.default_rng(seed + 1)
    direction = tuple(T.randn_tangent(rng, tuple(args)))
    before = T.structural_copy(args)
    _, (gradient,), (product,) = hvp(s, (args,), (direction,))
    problem = compare(before, args)
    if problem is not None:
        raise AssertionError(f"{_name(f)}: hvp changed the caller's arguments: {problem}")
    argnums = 0
    expected_gradient = grad(s, argnums=argnums)(T.structural_copy(args))
    probe = tuple(T.randn_tangent(rng, tuple(args)))
    _close(T.dot(probe, tuple(gradient)), T.dot(probe, expected_gradient), rtol, atol, f, "gradient")
    analytic = T.dot(probe, tuple(product))
    estimates = []
    for h in (1e-3, 1e-4, 1e-5):
        plus = grad(s, argnums=argnums)(T.add_to_primal(T.structural_copy(args), T.scale(direction, h)))
        minus = grad(s, argnums=argnums)(T.add_to_primal(T.structural_copy(args), T.scale(direction, -h)))
        finite = (T.dot(probe, plus) - T.dot(probe, minus)) / (2 * h)
        if abs(finite - analytic) <= atol + rtol * abs(finite):
            return
        estimates.append(finite)
    spread = max(estimates) - min(estimates)
    if not np.isfinite(spread) or spread > 100 * (atol + rtol * max(abs(e) for e in estimates)):
        raise NotTwiceDifferentiable(f"{_name(f)}: central differences of the gradient do not converge "
                                     f"({estimates}): not twice differentiable at this point")
    raise AssertionError(f"{_name(f)}: Hessian-vector product {analytic!r} but central differences of the "
                         f"gradient give {estimates}")


class NotTwiceDifferentiable(Exception):
    """Central differences of the gradient disagree between step sizes: there is no reference."""


def _close(a: float, b: float, rtol: float, atol: float, f: Callable, what: str) -> None:
    if not abs(a - b) <= atol + rtol * abs(b):
        raise AssertionError(f"{_name(f)}: {what} from hvp {a!r} differs from yb.grad's {b!r}")


def _name(f: Callable) -> str:
    from ..rules.core import describe_callable

    return describe_callable(f)
