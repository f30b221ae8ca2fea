"""Test cases for rules, as data: each rule file ends with ``CASES = [Case(f, *args, ...), ...]``,
and ``tests/test_rules.py`` runs every case of every rule module (``testing.cases.run_case``:
``check_rule`` for a ``Case``, the convention check for a ``ConventionCase``).

Input makers draw from a seeded stream per rule module, so cases are reproducible and
independent of other modules' cases:
``randn(3, 4)``, ``randn(3, dtype=np.float32)``, ``randpos(3)`` (in (0.5, 2)), ``randc(3)``
(complex), ``randu(3, low, high)``.
"""
from __future__ import annotations

import contextlib
import dataclasses
import sys
import zlib
from typing import Any, Callable, Iterator

import numpy as np


_streams: dict[str, np.random.Generator] = {}


def _stream_of_caller() -> np.random.Generator:
    """The stream of the module whose code draws (one seeded stream per module, so a case added
    to one rule module never changes the inputs of another's)."""
    module = sys._getframe(2).f_globals.get("__name__", "")
    stream = _streams.get(module)
    if stream is None:
        stream = _streams[module] = np.random.default_rng([20261129, zlib.crc32(module.encode())])
    return stream


def randn(*shape: int, dtype: Any = np.float64) -> Any:
    """Standard normal array (a Python float when ``shape`` is empty and dtype is float64)."""
    stream = _stream_of_caller()
    if not shape:
        return float(stream.standard_normal()) if dtype is np.float64 else dtype(stream.standard_normal())
    return stream.standard_normal(shape).astype(dtype)


def _uniform(stream: np.random.Generator, shape: tuple, low: float, high: float, dtype: Any) -> Any:
    if not shape:
        return float(stream.uniform(low, high))
    return stream.uniform(low, high, shape).astype(dtype)


def randu(*shape: int, low: float = 0.0, high: float = 1.0, dtype: Any = np.float64) -> Any:
    return _uniform(_stream_of_caller(), shape, low, high, dtype)


def randpos(*shape: int, dtype: Any = np.float64) -> Any:
    """Values in (0.5, 2): safe for log, sqrt, division, powers."""
    return _uniform(_stream_of_caller(), shape, 0.5, 2.0, dtype)


def randc(*shape: int, dtype: Any = np.complex128) -> Any:
    stream = _stream_of_caller()
    if not shape:
        return complex(stream.standard_normal(), stream.standard_normal())
    return (stream.standard_normal(shape) + 1j * stream.standard_normal(shape)).astype(dtype)


@dataclasses.dataclass
class Case:
    """One ``check_rule`` call: ``check_rule(f, *args, kwargs=kwargs, mode=mode, **options)``."""

    f: Callable
    args: tuple
    kwargs: dict
    mode: tuple
    name: str
    options: dict

    def __init__(self, f: Callable, *args: Any, kwargs: dict | None = None, mode: tuple = ("rev", "fwd"),
                 name: str | None = None, **options: Any) -> None:
        self.f, self.args, self.kwargs, self.mode, self.options = f, args, dict(kwargs or {}), tuple(mode), options
        self.name = name or _default_name(f, args, self.kwargs)

    def context(self) -> contextlib.AbstractContextManager:
        """What the check runs inside (a case may register temporary rules)."""
        return contextlib.nullcontext()


def _default_name(f: Callable, args: tuple, kwargs: dict) -> str:
    from .core import describe_callable

    def show(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"{a.dtype}{list(a.shape)}"
        return type(a).__name__

    parts = [show(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{describe_callable(f)}({', '.join(parts)})"


class ConventionCase(Case):
    """A documented convention at a non-smooth point, where finite differences cannot decide.

    The reverse rule's gradient for output cotangent 1 (ones for an array output) must equal
    ``expected`` (one full tangent per argument), and the forward rule must agree with it: its
    output tangent along a random direction ``dx``, summed, is ``<expected, dx>``.
    """

    def __init__(self, f: Callable, *args: Any, expected: tuple, name: str, kwargs: dict | None = None) -> None:
        super().__init__(f, *args, kwargs=kwargs, name=name)
        self.expected = expected


class Expect(Case):
    """A convention case (reverse mode only): at a non-smooth point, or with NaN in the input,
    finite differences say nothing, so the gradient of the first argument for output cotangent
    ``ybar`` (default: ones) is compared with the documented ``expected`` value instead."""

    def __init__(self, f: Callable, *args: Any, expected: Any, ybar: Any = None, kwargs: dict | None = None,
                 name: str | None = None) -> None:
        super().__init__(f, *args, kwargs=kwargs, mode=("rev",), name=name)
        self.expected, self.ybar = expected, ybar


class ListedCase(Case):
    """A case for an iterator-returning builtin ``f``, checked as ``list(f(...))`` with ``f``'s own
    rules: check_rule compares the rules' list with that reference and its finite differences (the
    builtin itself returns an iterator, which has no tangent). The rules are registered on the
    wrapper only while the check runs, so the rule table stays clean."""

    def __init__(self, f: Callable, *args: Any, **options: Any) -> None:
        def listed(*a, **k):
            return list(f(*a, **k))

        listed.__qualname__ = listed.__name__ = f"list∘{f.__name__}"
        self.builtin = f
        super().__init__(listed, *args, **options)

    @contextlib.contextmanager
    def context(self) -> Iterator[None]:
        from .core import FRULES, RRULES, register_frule, register_rrule

        register_rrule(self.f, RRULES.by_function[self.builtin][0])
        register_frule(self.f, FRULES.by_function[self.builtin][0])
        try:
            yield
        finally:
            RRULES.by_function.pop(self.f, None)
            FRULES.by_function.pop(self.f, None)
