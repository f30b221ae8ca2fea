"""Test cases for rules: each rule file ends with ``CASES = [Case(f, *args, ...), ...]``, and
``tests/test_rules.py`` runs every case of every rule module through ``check_rule``.

Input makers draw from one seeded stream, so cases are reproducible:
``randn(3, 4)``, ``randn(3, dtype=np.float32)``, ``randpos(3)`` (in (0.5, 2)), ``randc(3)``
(complex), ``randu(3, low, high)``.
"""
from __future__ import annotations

import dataclasses
from typing import Any, Callable

import numpy as np

from .check_rule import check_rule

_stream = np.random.default_rng(20261129)


def randn(*shape: int, dtype: Any = np.float64) -> Any:
    """Standard normal array (a Python float when ``shape`` is empty and dtype is float64)."""
    if not shape:
        return float(_stream.standard_normal()) if dtype is np.float64 else dtype(_stream.standard_normal())
    return _stream.standard_normal(shape).astype(dtype)


def randu(*shape: int, low: float = 0.0, high: float = 1.0, dtype: Any = np.float64) -> Any:
    if not shape:
        return float(_stream.uniform(low, high))
    return _stream.uniform(low, high, shape).astype(dtype)


def randpos(*shape: int, dtype: Any = np.float64) -> Any:
    """Values in (0.5, 2): safe for log, sqrt, division, powers."""
    return randu(*shape, low=0.5, high=2.0, dtype=dtype)


def randc(*shape: int, dtype: Any = np.complex128) -> Any:
    if not shape:
        return complex(_stream.standard_normal(), _stream.standard_normal())
    return (_stream.standard_normal(shape) + 1j * _stream.standard_normal(shape)).astype(dtype)


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

    def run(self) -> None:
        check_rule(self.f, *self.args, kwargs=self.kwargs, mode=self.mode, **self.options)


def _default_name(f: Callable, args: tuple, kwargs: dict) -> str:
    from ..rules.core import describe_callable

    def show(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"{a.dtype}{list(a.shape)}"
        return type(a).__name__

    parts = [show(a) for a in args] + [f"{k}={v!r}" for k, v in kwargs.items()]
    return f"{describe_callable(f)}({', '.join(parts)})"
