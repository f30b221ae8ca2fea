"""Float blocks: straight-line runs of float arithmetic compiled as one unit (an optimisation of
the reverse generator, DESIGN §5-6).

Scalar code -- a written-out polynomial, a physics formula, the body of an unrolled update --
is a run of ``+ - * / **`` on floats. Statement by statement, each operation pays a type guard,
tape pushes and pops and a branch on the marker in the reverse pass. A run of at least
``MIN_BLOCK`` such statements is instead guarded once: when its inputs are floats, everything it
computes is a float, so the forward pass runs the arithmetic alone (each assignment to a fresh
local, SSA style), pushes one tuple of the values the reverse pass needs, and the reverse pass is
the straight-line adjoint code, with the adjoint of every intermediate in a local. Otherwise the
statement-by-statement code runs as before. Generated code reads like this:

    if type(y) in _FT and type(a) in _FT:  # float block: lines 3-402
        _b1 = y * a
        ...
        _push((y, a, _b1, ...)); _push(_FASTB)
    else:
        <statement by statement>
        _push(_SLOWB)
"""
from __future__ import annotations

import operator
import re

from . import ir

MIN_BLOCK = 6
LONG_BLOCK = 50  # longer blocks fall back to the generic rules when their inputs are not floats

_BINARY = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/"}


def _is_float_op(s: object, integers: set) -> bool:
    """A statement the block can hold: ``t = a op b`` (``+ - * /``), ``t = -a`` or ``t = a ** n``
    (integer constant ``n``), with float-or-constant operands."""
    if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None \
            or s.star_kwargs is not None or not isinstance(s.func, ir.Const) or s.target in integers:
        return False
    f = s.func.value
    for a in s.args:
        if isinstance(a, ir.Var):
            if a.name in integers:
                return False
        elif not (isinstance(a, ir.Const) and type(a.value) in (int, float) and not isinstance(a.value, bool)):
            return False
    if f in _BINARY:
        return len(s.args) == 2 and any(isinstance(a, ir.Var) for a in s.args)
    if f is operator.neg:
        return len(s.args) == 1 and isinstance(s.args[0], ir.Var)
    if f is operator.pow:
        return len(s.args) == 2 and isinstance(s.args[0], ir.Var) and isinstance(s.args[1], ir.Const) \
            and type(s.args[1].value) is int
    return False


def find_blocks(body: list, integers: set) -> list[tuple[int, int]]:
    """``(start, stop)`` index ranges of ``body`` that form float blocks."""
    blocks, start = [], None
    for k, s in enumerate(body + [None]):
        if s is not None and _is_float_op(s, integers):
            start = k if start is None else start
            continue
        if start is not None and k - start >= MIN_BLOCK:
            blocks.append((start, k))
        start = None
    return blocks


_TEMP = re.compile(r"\b_t\d+\b")


def names_read(body: list, skip: set, found: set | None = None) -> set:
    """Variables read by the statements of ``body`` (recursively), except those with ids in
    ``skip``; for source run as is (``Opaque``, ``with`` headers, nested ``def``), every
    normaliser temporary it mentions."""
    found = set() if found is None else found

    def atoms(*items: object) -> None:
        for a in items:
            if isinstance(a, ir.Var):
                found.add(a.name)

    for s in body:
        if id(s) in skip:
            continue
        if isinstance(s, ir.Call):
            atoms(s.func, *s.args, *(v for _, v in s.kwargs), s.star_args, s.star_kwargs)
        elif isinstance(s, ir.Copy):
            atoms(s.source)
        elif isinstance(s, ir.If):
            atoms(s.test)
            names_read(s.body, skip, found)
            names_read(s.orelse, skip, found)
        elif isinstance(s, ir.While):
            atoms(s.test)
            names_read(s.test_body, skip, found)
            names_read(s.body, skip, found)
        elif isinstance(s, ir.ForRange):
            atoms(s.start, s.stop, s.step)
            names_read(s.body, skip, found)
        elif isinstance(s, ir.Return):
            atoms(s.value)
        elif isinstance(s, ir.With):
            found.update(_TEMP.findall(s.items))
            names_read(s.body, skip, found)
        elif isinstance(s, (ir.Opaque, ir.MakeClosure)):
            found.update(_TEMP.findall(s.source))
            found.update(getattr(s, "free_vars", ()))
    return found


class FloatBlock:
    """The SSA form of one block: its input variables, the fresh local of every value, and what
    the reverse pass needs."""

    def __init__(self, stmts: list, fresh: "callable", function_body: list | None = None) -> None:
        self.stmts = stmts
        self.inputs: list[str] = []  # variables read before the block assigns them
        current: dict[str, str] = {}  # variable -> the local holding its current value
        self.ops = []  # (result local, function, operand locals-or-literals)
        for s in stmts:
            operands = []
            for a in s.args:
                if isinstance(a, ir.Var):
                    if a.name not in current:
                        current[a.name] = a.name  # its value on entry
                        self.inputs.append(a.name)
                    operands.append(current[a.name])
                else:
                    operands.append(repr(a.value))
            local = fresh("b")
            self.ops.append((local, s.func.value, operands))
            current[s.target] = local
        self.final = {v: loc for v, loc in current.items() if loc != v}  # assigned variables
        if function_body is not None:  # temporaries read nowhere else are not written back
            read = names_read(function_body, {id(s) for s in stmts})
            self.final = {v: loc for v, loc in self.final.items() if not _TEMP.fullmatch(v) or v in read}
        self.first_line, self.last_line = stmts[0].line, stmts[-1].line
        locals_ = {loc for loc, _, _ in self.ops} | set(self.inputs)
        needed = []
        for _, f, operands in self.ops:
            if f in (operator.mul, operator.truediv):
                needed += operands
            elif f is operator.pow:
                needed.append(operands[0])
        order = {name: k for k, name in enumerate(self.inputs + [loc for loc, _, _ in self.ops])}
        self.residuals = sorted({n for n in needed if n in locals_}, key=order.__getitem__)
        self.values = locals_  # names that carry a derivative (the others are literals)

    # ------------------------------------------------------------------ forward

    def forward(self, fd: "callable") -> tuple[str, list[str]]:
        guard = " and ".join(f"type({v}) in _FT" for v in self.inputs) or "True"
        lines = []
        for local, f, operands in self.ops:
            if f in _BINARY:
                lines.append(f"{local} = {operands[0]} {_BINARY[f]} {operands[1]}")
            elif f is operator.neg:
                lines.append(f"{local} = -{operands[0]}")
            else:
                lines.append(f"{local} = {operands[0]} ** {operands[1]}")
        residuals = ", ".join(self.residuals)  # pushed before the entry values are overwritten
        lines.append(f"_push(({residuals}{',' if len(self.residuals) == 1 else ''})); _push(_FASTB)")
        for var, local in self.final.items():
            lines.append(f"{var} = {local}; {fd(var)} = _NF")
        return guard, lines

    # ------------------------------------------------------------------ reverse

    def reverse(self, rd: "callable", fresh: "callable") -> list[str]:
        lines = []
        if self.residuals:
            lines.append(f"{', '.join(self.residuals)}{',' if len(self.residuals) == 1 else ''} = _pop()")
        adjoint: dict[str, str] = {}
        for var, local in self.final.items():  # the incoming cotangents of the block's results
            g = adjoint[local] = fresh("g")
            lines.append(f"{g} = 0.0 if {rd(var)} is _NR else {rd(var)}; {rd(var)} = _NR")

        def add(target: str, expr: str) -> None:
            if target not in self.values:
                return  # a literal
            if target in adjoint:
                lines.append(f"{adjoint[target]} += {expr}")
            else:
                g = adjoint[target] = fresh("g")
                lines.append(f"{g} = {expr}")

        for local, f, operands in reversed(self.ops):
            g = adjoint.get(local)
            if g is None:
                continue  # its value reaches nothing differentiable
            if f is operator.add:
                add(operands[0], g), add(operands[1], g)
            elif f is operator.sub:
                add(operands[0], g), add(operands[1], f"-{g}")
            elif f is operator.mul:
                add(operands[0], f"{g} * {operands[1]}"), add(operands[1], f"{g} * {operands[0]}")
            elif f is operator.truediv:
                a, b = operands
                add(a, f"{g} / {b}"), add(b, f"-{g} * {a} / ({b} * {b})")
            elif f is operator.neg:
                add(operands[0], f"-{g}")
            else:  # a ** n, n an integer literal (a ** 0 is constant: nothing to add)
                a, n = operands
                if n == "1":
                    add(a, g)
                elif n != "0":
                    add(a, f"{g} * {n} * {a} ** ({n} - 1)")
        for var in self.inputs:  # the cotangents of the block's inputs
            g = adjoint.get(var)
            if g is None:
                continue
            r = rd(var)
            lines.append(f"{r} = {g} if {r} is _NR else {r} + {g}")
        return lines
