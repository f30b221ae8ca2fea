"""The checks run before any column is timed.

First order (gradients and JVPs): directional derivatives against central finite differences of
the NumPy function, along a few random directions (dot-product form). Second order (HVPs and
dense Hessians): the library's own gradient is checked that way first, then H v against central
differences of that gradient along v.
"""
from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

STEPS = (1e-5, 1e-6, 1e-7)
RTOL = 1e-5


def random_directions(args: tuple, count: int = 3, seed: int = 2) -> list[tuple]:
    """``count`` directions, each a tuple of standard-normal arrays shaped like ``args``."""
    rng = np.random.default_rng(seed)
    return [tuple(rng.standard_normal(np.shape(a)) for a in args) for _ in range(count)]


def _moved(args: tuple, direction: tuple, step: float) -> tuple:
    """``args + step * direction``, keeping Python floats as floats."""
    return tuple(
        float(a + step * d) if isinstance(a, float) else a + step * d for a, d in zip(args, direction)
    )


def central_difference(f: Callable, args: tuple, direction: tuple, step: float) -> float:
    return float(f(*_moved(args, direction, step)) - f(*_moved(args, direction, -step))) / (2 * step)


def _agrees(f: Callable, args: tuple, direction: tuple, derivative: float, scale: float) -> tuple[bool, float]:
    """Whether ``derivative`` matches finite differences at some step size; the closest estimate."""
    best = np.nan
    for step in STEPS:
        estimate = central_difference(f, args, direction, step)
        roundoff = 100 * np.finfo(float).eps * scale / step
        if abs(estimate - derivative) <= RTOL * max(abs(estimate), abs(derivative)) + roundoff:
            return True, estimate
        if np.isnan(best) or abs(estimate - derivative) < abs(best - derivative):
            best = estimate
    return False, best


def check_gradient(f: Callable, args: tuple, directional: Callable[[Sequence[tuple]], list[float]]) -> str | None:
    """``None`` if the directional derivatives given by ``directional`` match finite differences
    of ``f`` at ``args``; otherwise a one-line description of the first mismatch."""
    directions = random_directions(args)
    scale = 1.0 + abs(float(f(*args)))
    for i, (direction, derivative) in enumerate(zip(directions, directional(directions))):
        ok, estimate = _agrees(f, args, direction, float(derivative), scale)
        if not ok:
            return f"direction {i}: gradient gives {derivative:.6g}, finite differences {estimate:.6g}"
    return None


HVP_DIRECTIONS = 2


def flat(parts: Sequence) -> np.ndarray:
    """The arrays and floats of ``parts`` (NumPy or convertible by ``np.asarray``) as one float
    vector, copied."""
    return np.concatenate([np.ravel(np.asarray(p, dtype=float)) for p in parts]) if len(parts) else np.zeros(0)


def check_hvp(f: Callable, args: tuple, gradient: Callable[[tuple], np.ndarray],
              product: Callable[[tuple], np.ndarray]) -> str | None:
    """``None`` if ``gradient(args)`` (a flat vector) passes ``check_gradient`` and ``product(v)``
    (flat H v) matches central differences of ``gradient`` along ``v`` at some step size, for the
    first ``HVP_DIRECTIONS`` of ``random_directions`` (the first is the one columns are timed
    along); otherwise a one-line description of the first mismatch."""
    g = gradient(args)
    problem = check_gradient(f, args, lambda directions: [float(g @ flat(d)) for d in directions])
    if problem is not None:
        return f"its gradient: {problem}"
    scale = 1.0 + float(np.max(np.abs(g), initial=0.0))
    for i, direction in enumerate(random_directions(args)[:HVP_DIRECTIONS]):
        hv = np.asarray(product(direction), dtype=float)
        best, best_error = None, np.inf
        for step in STEPS:
            estimate = (gradient(_moved(args, direction, step)) - gradient(_moved(args, direction, -step))) / (2 * step)
            error = float(np.max(np.abs(estimate - hv), initial=0.0))
            size = max(float(np.max(np.abs(estimate), initial=0.0)), float(np.max(np.abs(hv), initial=0.0)))
            if error <= RTOL * size + 100 * np.finfo(float).eps * scale / step:
                break
            if error < best_error:
                best, best_error = estimate, error
        else:
            if best is None:
                return f"direction {i}: H v or the differences of the gradient are not finite"
            worst = int(np.argmax(np.abs(best - hv)))
            return (f"direction {i}: H v[{worst}] is {hv[worst]:.6g}, central differences of the gradient "
                    f"{best[worst]:.6g}")
    return None


def first_line(error: BaseException, limit: int = 160) -> str:
    """``Type: first line of the message``, shortened to ``limit`` characters."""
    message = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["central_difference", "check_gradient", "check_hvp", "first_line", "flat", "random_directions"]
