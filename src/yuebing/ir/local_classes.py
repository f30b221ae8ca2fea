"""Primitives for classes defined inside a differentiated function (``frontend/local_classes.py``).

A class statement runs as Python runs it; what carries derivatives into the class is told to the
differentiation by two calls the normaliser puts next to it:

* ``class_cells(*cells)``, before the class statement: the cells of the function's variables the
  class's methods read. A method is called later through the class (``m(x)``, ``m.twice``), where
  the closure it was made with is not at hand: its rules then find each cell's tangent box by
  the cell (``rules/local_classes.py``), so the method sees the variable's current value with
  its derivative, as a nested ``def`` does.
* ``class_level(value)``: a value the class body assigns (``scale = a * 3``), computed by the
  function's own code; the class attribute (or a dataclass field's default) read later through
  the class or an instance carries that value's derivative.
"""
from __future__ import annotations

import types
from typing import Any


def class_cells(*cells: types.CellType) -> None:
    """Declares the cells a class made here captures (see the module docstring)."""


def class_level(value: Any) -> Any:
    """``value``, which a class body stores (see the module docstring)."""
    return value
