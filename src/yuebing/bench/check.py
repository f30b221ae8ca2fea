"""The gradient check run before any column is timed: directional derivatives against central
finite differences of the NumPy function, along a few random directions (dot-product form)."""
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


def first_line(error: BaseException, limit: int = 160) -> str:
    """``Type: first line of the message``, shortened to ``limit`` characters."""
    message = str(error).strip().splitlines()
    text = f"{type(error).__name__}: {message[0]}" if message else type(error).__name__
    return text if len(text) <= limit else text[: limit - 3] + "..."


__all__ = ["central_difference", "check_gradient", "first_line", "random_directions"]
