"""``scipy.integrate.nquad`` (so ``dblquad`` and ``tplquad``) as nested ``quad`` calls: the
definition second order differentiates (``api/nquad.py`` says why and registers it). It lives
among the rules, as ``_integrate_definitions`` does, because code of ``yuebing.api`` is
differentiation machinery, which second order does not differentiate.
"""
from __future__ import annotations

from typing import Any, Callable

try:
    import scipy.integrate as _integrate
except ImportError:  # the scipy extra is not installed: nothing here is used
    _integrate = None


def scipy_nquad(func: Callable, ranges: Any, args: Any, opts: Any, full_output: bool) -> tuple:
    """SciPy's own nquad: its error estimate and counts (no derivative)."""
    return _integrate.nquad(func, ranges, args=args, opts=opts, full_output=full_output)


def _level(func: Callable, ranges: list, options: list, index: int, outer: tuple) -> Any:
    """The integral over variable ``index`` (``len(ranges) - 1``: the outermost) of the integral
    over the variables inside it; ``outer``: the variables outside it, then ``args``."""
    bounds = ranges[index]
    low, high = bounds(*outer) if callable(bounds) else bounds
    option = options[index]
    option = dict(option(*outer) if callable(option) else option)
    if "points" in option:
        option["points"] = [p for p in option["points"] if low <= p <= high]
    if index == 0:
        return _integrate.quad(func, low, high, args=outer, **option)[0]

    def inner(t: Any, *rest: Any) -> Any:
        return _level(func, ranges, options, index - 1, (t, *rest))
    return _integrate.quad(inner, low, high, args=outer, **option)[0]


def nquad(func: Callable, ranges: Any, args: Any = None, opts: Any = None, full_output: bool = False) -> tuple:
    """``scipy.integrate.nquad`` as nested ``quad`` calls (``api/nquad.py``)."""
    n = len(ranges)
    options = [opts] * n if isinstance(opts, dict) else [{}] * n if opts is None else list(opts)
    value = _level(func, list(ranges), options, n - 1, () if args is None else tuple(args))
    return (value, *scipy_nquad(func, ranges, args, opts, full_output)[1:])
