"""Globals and closure cells as differentiated code sees them, in every mode: a global's value
(a float array as a read-only view: globals are constants) and its fdata, the tangent boxes of
closure variables (``cell_fdata``, ``closure_fdata``, ``closure_rdata``), a nested function
rebound to the user's module globals. Generated code calls them through the runtimes' namespaces
(``runtime.runtime_namespace``, ``forward_runtime``, ``second_order``)."""
from __future__ import annotations

import builtins
import functools
import types
from typing import Any, Callable

import numpy as np

from ..rules import outside_state
from ..rules.core import CoDual
from ..rules.util import slot_rdata, slot_tangent
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent, fdata, zero_tangent
from ..tangents.function_copies import function_copy
from ..tangents.kinds import NONDIFF, primal_kind
from ..tangents.structured import carries_derivative
from .protocols import UndefinedGlobal


def global_value(namespace: dict, name: str) -> Any:
    """A global read by differentiated code. A float array comes as a read-only view: globals are
    constants (their fdata is ``NoFData``, so no derivative work is spent on them or on what is
    computed from them alone), and writing into one would make that wrong -- NumPy refuses the
    write instead ("assignment destination is read-only"): copy the array to modify it."""
    try:
        value = namespace[name]
    except KeyError:
        return getattr(builtins, name, UndefinedGlobal(name))
    return read_only(value) if type(value) is np.ndarray else value  # (a module: no second call)


def read_only(value: Any) -> Any:
    """A float array read from a global or a module attribute (``mod.W``), as a read-only view:
    such arrays are constants of the differentiation, so a write into one inside the function
    must fail (NumPy: "assignment destination is read-only") rather than be lost."""
    if type(value) is np.ndarray and (value.dtype.kind in "fc" or carries_derivative(value)) and value.flags.writeable:
        value = value.view()
        value.flags.writeable = False
    return value


_CONSTANT_GLOBALS = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc, float, int, str,
                     bool, type(None), UndefinedGlobal, np.ndarray)


def global_fdata(value: Any, role: str = "fdata") -> Any:
    """Globals are constants of the differentiation: a zero fdata (``NoFData`` for arrays: a
    constant array gathers no cotangent, and what is computed from constants only is constant
    too -- the templates skip its derivative work). A mutable global (a list, a dict, an object)
    has one fdata for the whole call (``rules/outside_state.py``): what is appended to it is
    there at the next read."""
    if isinstance(value, _CONSTANT_GLOBALS):
        return NoFData
    return outside_state.shared(role, value, _zero_fdata_or_none)


def _zero_fdata_or_none(value: Any) -> Any:
    try:
        return fdata(zero_tangent(value))
    except TypeError:
        return NoFData


def cell_fdata(fn_f: Any, name: str, cell: Any = None, role: str = "fdata") -> Any:
    """The tangent box of closure variable ``name`` from a function's fdata (``cell_box``)."""
    return cell_box(fn_f, name, cell, role, NoFData, zero_tangent)


def cell_box(fn_part: Any, name: str, cell: Any, role: str, none: Any, zero: Callable) -> Any:
    """The box of closure variable ``name`` in ``fn_part``, a function's fdata or tangent (the
    ``role`` of outside state, ``none`` when there is no box). A closure made outside the
    differentiated code has none: its cell is outside state, with one box for the whole call
    (``rules/outside_state.py``), holding ``zero(contents)``."""
    if cell is not None and (box := outside_state.registered(role, cell)) is not None:
        return box  # a cell a class made inside the differentiated code captures (rules/local_classes.py)
    if isinstance(fn_part, Tangent):
        box = fn_part.fields.get(name, none)
        if isinstance(box, MutableTangent):
            return box
    if cell is None or not outside_state.active() or not holds_mutable(cell):
        return none
    return outside_state.shared(role, cell, lambda c: MutableTangent(types.CellType, {
        "cell_contents": outside_state.shared(role, c.cell_contents, zero)}))


_NO_CELL_TANGENT = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType, np.ufunc, int, str, bool,
                    type(None), bytes, UndefinedGlobal)


def holds_mutable(cell: Any) -> bool:
    """Whether a closure cell made outside holds data with a tangent (numbers, arrays, lists,
    objects...): a ``nonlocal`` write or an in-place change may reach it. (A function in a cell
    has none of its own: its cells are outside state themselves.)"""
    try:
        value = cell.cell_contents
    except ValueError:  # an empty cell
        return False
    return not isinstance(value, _NO_CELL_TANGENT)


def without_tangent(fn: types.FunctionType, shares_cells: bool) -> bool:
    """Whether closure ``fn``, just made by differentiated code, has no tangent, as
    ``zero_tangent`` decides (``tangents/kinds.py``): its cells hold only what carries no
    derivative (modules, plain functions, ints...; generated code keeps a global it reads,
    ``np``, in a local, so a nested function reading it captures a cell where the user's reads a
    global). Both must agree: a tangent given back to ``yb.jvp`` or a rule is checked against
    ``zero_tangent``'s structure. A closure sharing a cell with us (``nonlocal``, late binding,
    recursion: ``shares_cells``) keeps its boxes, as a later write may fill them."""
    return not shares_cells and primal_kind(fn) is NONDIFF


def boxes_by_cell(captured: dict) -> dict[int, MutableTangent]:
    """The tangent boxes of the closures among ``captured``'s values (``(value, tangent)``
    entries), at any depth, by the id of their cell: a closure made next to a helper it captures
    shares the cells of the variables both capture (``resid`` and ``curve`` reading ``p``), and
    one mutable primal must have one tangent object (a tangent handed to ``yb.jvp`` or a rule is
    checked for it), so the closure's box for such a cell is the helper's."""
    found: dict[int, MutableTangent] = {}
    stack = [entry for entry in captured.values() if type(entry) is tuple]
    while stack:
        value, tangent = stack.pop()
        if type(value) is not types.FunctionType or not value.__closure__ or not isinstance(tangent, Tangent):
            continue
        for name, cell in zip(value.__code__.co_freevars, value.__closure__):
            box = tangent.fields.get(name)
            if isinstance(box, MutableTangent) and id(cell) not in found:
                found[id(cell)] = box
                try:
                    stack.append((cell.cell_contents, box.fields.get("cell_contents", NoTangent)))
                except ValueError:  # an empty cell
                    pass
    return found


class SharedBox:
    """Marks a captured variable whose cell (and tangent box) the closure shares with us."""

    __slots__ = ("box",)

    def __init__(self, box: MutableTangent) -> None:
        self.box = box


def new_cell_box() -> MutableTangent:
    return MutableTangent(types.CellType, {"cell_contents": NoTangent})


#: a nested function capturing itself (a recursive ``def`` inside the differentiated function):
#: its box holds the function's own tangent (a cycle, as the cell holds the function)
SELF_REFERENCE = object()


def closure_fdata(fn: Any, captured: dict, role: str = "fdata") -> Any:
    """fdata for a function created inside a differentiated function: one box per captured
    variable, holding the variable's tangent (its fdata object for mutable data; a module's
    dict, list or object kept in a local, its one fdata for the call in ``role``)."""
    if not isinstance(fn, types.FunctionType) or not fn.__closure__ \
            or without_tangent(fn, any(isinstance(e, SharedBox) or e is SELF_REFERENCE for e in captured.values())):
        return NoFData
    boxes = {}
    selves = [name for name, entry in captured.items() if entry is SELF_REFERENCE]
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__):
        if name in selves:
            boxes[name] = MutableTangent(types.CellType, {"cell_contents": NoTangent})
        elif name in captured and isinstance(captured[name], SharedBox):
            boxes[name] = captured[name].box
        elif name in captured:
            value, f = captured[name]
            boxes[name] = MutableTangent(types.CellType, {"cell_contents": slot_tangent(CoDual(value, f))})
        else:
            contents = global_fdata(cell.cell_contents, role) if outside_global(fn, name, cell) else NoTangent
            boxes[name] = MutableTangent(types.CellType, {"cell_contents": contents})
    result = Tangent(types.FunctionType, boxes)
    for name in selves:
        boxes[name].fields["cell_contents"] = result
    return result


def outside_global(fn: types.FunctionType, name: str, cell: Any) -> bool:
    """Whether closure ``fn``'s variable ``name`` is a mutable module global (a dict, a list, an
    object) that generated code keeps in a local (so the closure captures a cell where the
    user's function reads a global): outside state, whose tangent is the call's one for it
    (``rules/outside_state.py``), never a constant -- what the function wrote into it (``STORE["k"]
    = x``) carries ``x``'s derivative to the closure's reads, and to a ``yb.grad`` taken of it."""
    try:
        value = cell.cell_contents
    except ValueError:  # (an empty cell)
        return False
    return outside_state.active() and outside_state.is_mutable(value) and not isinstance(value, np.ndarray) \
        and fn.__globals__.get(name, UndefinedGlobal) is value


def with_user_globals(fn: Any, namespace: dict) -> Any:
    """A function defined inside generated code, rebound to the user's module globals (the code
    it was written in), keeping its closure cells. What a decorator returned in its place (the
    helper of ``contextlib.contextmanager``) keeps the globals of the module that made it."""
    if not isinstance(fn, types.FunctionType) or fn.__globals__ is namespace \
            or fn.__globals__.get("_G") is not namespace:  # (only generated modules bind _G)
        return fn
    return function_copy(fn, globals_=namespace)


def user_globals(namespace: dict) -> Callable:
    """The innermost decorator of a decorated function defined inside generated code: the
    function rebound to the user's globals before the user's decorators see it (what they return
    may be another module's function, which ``with_user_globals`` leaves alone)."""
    return functools.partial(with_user_globals, namespace=namespace)


def closure_rdata(fn_f: Any, name: str) -> Any:
    """The rdata accumulated in a closure variable's box (its value parts)."""
    if not isinstance(fn_f, Tangent):
        return NoRData
    box = fn_f.fields.get(name)
    if not isinstance(box, MutableTangent):
        return NoRData
    return slot_rdata(box.fields.get("cell_contents", NoTangent))
