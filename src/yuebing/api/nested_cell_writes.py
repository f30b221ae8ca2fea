"""What the function under an inner ``yb.grad`` writes (``nonlocal``) into the variables it
captures, kept after its gradient is taken in forward over reverse and in third order.

The inner pass runs the function forward, then its reverse pass, which undoes the state the
forward pass changed; in plain Python ``yb.grad(g)(x)`` runs ``g`` once and leaves its writes.
A write of a value without derivatives (a call counter, a flag) is put back as the forward pass
left it; one carrying derivatives is refused by name, as its derivative would be lost.
"""
from __future__ import annotations

import types
from typing import Any

from ..transform.forward_runtime import NestedDifferentiationError
from ..transform.lifting import _has_float_data
from .implicit_stationary import _where as where

_EMPTY = object()


def _contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # (a variable not bound yet)
        return _EMPTY


def captured_state(g: Any) -> list[tuple[str, types.CellType, Any]]:
    """``(name, cell, contents)`` of each variable ``g`` (a Python function) captures."""
    if not (isinstance(g, types.FunctionType) and g.__closure__):
        return []
    return [(name, cell, _contents(cell)) for name, cell in zip(g.__code__.co_freevars, g.__closure__)]


def keep_writes(g: Any, after_forward: list[tuple[str, types.CellType, Any]], orders: str) -> None:
    """Put back into ``g``'s cells what its forward pass left there (``after_forward``) and its
    reverse pass undid; refuse a written value carrying derivatives (``orders``: who asks)."""
    for name, cell, value in after_forward:
        if _contents(cell) is value or value is _EMPTY:
            continue
        if _has_float_data(value):
            raise _refusal(g, name, orders)
        cell.cell_contents = value


def refuse_float_writes(g: Any, before: list[tuple[str, types.CellType, Any]], orders: str) -> None:
    """Refuse what ``g``, run plainly for its gradient (reverse over ``yb.grad``), wrote into a
    variable it captures that holds numbers: its derivative would not reach the later reads."""
    for name, cell, value in before:
        now = _contents(cell)
        if now is not value and _has_float_data(now):
            raise _refusal(g, name, orders)


def _refusal(g: Any, name: str, orders: str) -> NestedDifferentiationError:
    return NestedDifferentiationError(
        f"{orders}: {g.__name__}{where(g)}, whose gradient is taken, writes (nonlocal) {name}, a variable it "
        f"captures, a value carrying derivatives, which would be lost; pass {name} to {g.__name__} as an argument "
        "and return its new value as aux (yb.grad(..., has_aux=True))")


__all__ = ["captured_state", "keep_writes", "refuse_float_writes"]
