"""A callable given to a SciPy solver or integrator (``quad``, ``solve_ivp``, ``odeint``,
``minimize``, ``brentq``...) whose captured variables hold one array that the differentiated code
keeps as different variables.

``yb.grad(g)(x)`` where ``g``'s integrand reads its argument ``y`` and also ``x``, captured from
an enclosing function that is not differentiated, with ``y is x``: the differentiated code gives
the two cells different derivative data (``y``'s is the argument's, ``x``'s is held constant, as
every captured variable of code outside the differentiation is), but a reverse rule
differentiates the callable as one value, in which the two cells hold one array -- within one
value aliasing is real (docs/conventions.md) -- so ``x``'s path was added into ``y``'s gradient
(twice the right gradient, silently). Forward mode and second order push each cell's own tangent
and were right.

``separated`` gives the reverse rules a copy of the callable whose cells follow the derivative
data instead: a cell holding an array that an earlier cell holds too, under derivative data of
its own, gets a copy of the array. The callable computes the same values (it may not write the
float state it captures: ``callback_writes.py`` refuses that), and each cell's cotangent reaches
its own derivative data.
"""
from __future__ import annotations

import types
from typing import Any

import numpy as np

from ..rules.core import CoDual
from ..tangents import MutableTangent, Tangent

_DEPTH = 4  # how deep functions captured by functions are looked into


def _cell_fdata(fdata: Any, name: str) -> Any:
    """The derivative data of a function's captured variable ``name`` (None: none to follow)."""
    if not isinstance(fdata, Tangent):
        return None
    cell = fdata.fields.get(name)
    if isinstance(cell, MutableTangent):
        return cell.fields.get("cell_contents")
    return None


def _split_function(function: types.FunctionType, fdata: Any, seen: list, depth: int = 0) -> types.FunctionType:
    """``function`` itself, or a copy whose cells holding an array seen before, under other
    derivative data, hold copies of it (its other cells are the same cells)."""
    closure = list(function.__closure__ or ())
    changed = False
    for k, (name, cell) in enumerate(zip(function.__code__.co_freevars, closure)):
        try:
            value = cell.cell_contents
        except ValueError:  # not bound yet
            continue
        data = _cell_fdata(fdata, name)
        if type(value) is types.FunctionType and value.__closure__ and depth < _DEPTH:
            split = _split_function(value, data, seen, depth + 1)  # (a helper it calls, SciPy's wrapper of it)
            if split is not value:
                closure[k], changed = types.CellType(split), True
            continue
        if not (isinstance(value, np.ndarray) and isinstance(data, np.ndarray)):
            continue
        if any(np.shares_memory(value, v) and not np.shares_memory(data, d) for v, d in seen):
            value = value.copy()
            closure[k], changed = types.CellType(value), True
        seen.append((value, data))
    if not changed:
        return function
    copy = types.FunctionType(function.__code__, function.__globals__, function.__name__, function.__defaults__,
                              tuple(closure))
    copy.__kwdefaults__, copy.__qualname__ = function.__kwdefaults__, function.__qualname__
    copy.__dict__.update(function.__dict__)
    return copy


def separated(inputs: tuple) -> tuple:
    """The rule's inputs, a function among them copied where its cells alias one array under
    different derivative data (see the module docstring); the inputs themselves otherwise."""
    seen: list = []
    out = []
    for codual in inputs:
        primal = codual.primal if isinstance(codual, CoDual) else None
        if type(primal) is types.FunctionType and primal.__closure__:
            split = _split_function(primal, codual.fdata, seen)
            out.append(codual if split is primal else CoDual(split, codual.fdata))
        else:
            out.append(codual)
    return tuple(out)
