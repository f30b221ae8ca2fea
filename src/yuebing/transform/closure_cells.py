"""Closure cells in generated code: a nested function defined by generated code given the cells
it shares with the function being differentiated (``share_cells``, ``MakeClosure.shared``), and
the refusal of a ``nonlocal`` write into a cell that has no tangent box (``untracked_cell_guard``)."""
from __future__ import annotations

import types
from typing import Any, Callable

from ..ir import nodes as ir
from ..ir.primitives import cell_set
from ..tangents.function_copies import function_copy
from .generated_text import ConstantNames


def share_cells(fn: Any, cells: dict) -> Any:
    """``fn`` (a nested function just defined by generated code) rebuilt so that its closure
    variables named in ``cells`` are those cell objects: the generated code's own cells for
    them are stand-ins, the real variables live in the cells of the function being
    differentiated (``MakeClosure.shared``)."""
    if not isinstance(fn, types.FunctionType) or not fn.__closure__:
        return fn
    closure = tuple(cells.get(name, cell) for name, cell in zip(fn.__code__.co_freevars, fn.__closure__))
    return function_copy(fn, closure=closure)  # (its annotations too)


def refuse_untracked_cell_write(value: Any, message: str) -> None:
    """A ``nonlocal`` write into a cell that has no tangent box (a closure created outside the
    differentiated code): its cotangent could not reach later reads, so a value that may carry a
    derivative is refused; None, bools, ints and strings (counters, flags) are fine."""
    if value is None or type(value) in (bool, int, str, bytes):
        return
    raise TypeError(message)


def share_cells_line(gen: ConstantNames, s: ir.MakeClosure) -> str | None:
    """The generated line giving closure ``s.target`` the cells it shares with us, if any."""
    if not s.shared:
        return None
    cells = ", ".join(f"{name!r}: _cell_{name}" for name in s.shared)
    return f"{s.target} = {gen.const(share_cells)}({s.target}, {{{cells}}})"


def define_closure(gen: ConstantNames, s: ir.MakeClosure, out: list, indent: int) -> None:
    """The nested function's definition (``def``/``lambda`` as the user wrote it), rebound to the
    user's module globals and given the cells it shares with us: alike in every mode."""
    gen.emit(out, indent, s.source, s.source_lines or s.line)
    gen.emit(out, indent, f"{s.target} = _with_user_globals({s.target}, _G)", s.line)
    shared = share_cells_line(gen, s)
    if shared:
        gen.emit(out, indent, shared, s.line)


def captured_entries(gen: ConstantNames, s: ir.MakeClosure, part: Callable[[str], str], integers: set) -> str:
    """The entries ``{name: ...}`` of closure ``s.target``'s fdata (``part`` the fdata's name, or
    its tangent's, ...): a variable it writes or shares, the box of our cell (``_SHARED``); itself
    (recursion), ``_SELF``; another captured value, ``(value, part(name))``, ``_NF`` for one of
    ``integers``."""
    def entry(name: str) -> str:
        if name in gen.fn.cell_backed:  # type: ignore[attr-defined]
            return f"{name!r}: _SHARED({part('_cellobj_' + name)})"
        if name in s.shared:
            return f"{name!r}: _SHARED({part('_cell_' + name)})"
        if name == s.target:  # the function captures itself (recursion)
            return f"{name!r}: _SELF"
        return f"{name!r}: ({name}, {'_NF' if name in integers else part(name)})"

    return ", ".join(entry(name) for name in s.free_vars)


def untracked_cell_guard(gen: ConstantNames, s: ir.Call) -> str | None:
    """For ``nonlocal x = v`` (``s``) into a cell of an enclosing function: the line that
    refuses, when the cell has no tangent box, a value that may carry a derivative; else None."""
    if not (isinstance(s.func, ir.Const) and s.func.value is cell_set and len(s.args) == 2
            and isinstance(s.args[0], ir.Var) and s.args[0].name.startswith("_cell_")):
        return None
    name = s.args[0].name[len("_cell_"):]
    fn = gen.fn  # type: ignore[attr-defined]
    message = (
        f"yuebing cannot follow derivatives through `nonlocal {name}` in {fn.name} "
        f"({fn.filename}, line {s.line}): this closure was created outside the differentiated "
        f"code, so the value written to {name!r} would lose its derivative before it is read again. "
        "Call the function that creates the closure inside the differentiated function, or pass "
        f"{name!r} in and return its new value")
    return (f"if {gen.fd(s.args[0].name)} is _NF: "  # type: ignore[attr-defined]
            f"{gen.const(refuse_untracked_cell_write)}({gen.primal(s.args[1])}, {message!r})")
