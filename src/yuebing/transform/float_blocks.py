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

import inspect
import math
import operator
import re
import types
from array import array

from typing import Any

from ..frontend.normalise import normalise
from ..ir import nodes as ir
from ..rules.core import is_hashable

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
        elif not (isinstance(a, ir.Const) and type(a.value) in (int, float) and math.isfinite(a.value)):
            return False  # a literal operand is written by its repr: finite numbers only
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
    return runs(body, lambda s: _is_float_op(s, integers), MIN_BLOCK)


def runs(body: list, fits: "callable", shortest: int) -> list[tuple[int, int]]:
    """``(start, stop)`` ranges of consecutive statements of ``body`` that ``fits``, at least
    ``shortest`` long."""
    found, start = [], None
    for k, s in enumerate(body + [None]):
        if s is not None and fits(s):
            start = k if start is None else start
            continue
        if start is not None and k - start >= shortest:
            found.append((start, k))
        start = None
    return found


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
        elif isinstance(s, ir.Try):
            for h in s.handlers:
                found.update(_TEMP.findall(h.types))
            for block in ir.child_blocks(s):
                names_read(block, skip, found)
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
        self.originals = {v: fresh("o") for v in self.inputs}  # the inputs as given (NumPy floats)
        self.numpy = {v: fresh("n") for v in self.inputs}  # is the input a NumPy float?
        self.depends: dict[str, set] = {v: {v} for v in self.inputs}  # the inputs each value reads
        for local, _, operands in self.ops:
            self.depends[local] = set().union(*(self.depends.get(o, set()) for o in operands))

    # ------------------------------------------------------------------ forward

    def forward(self, fd: "callable") -> tuple[str, list[str]]:
        """The block's code. NumPy floats (``x[i]`` of a float64 array) are converted to Python
        floats first: the same IEEE arithmetic at a third of the cost, in this pass and in the
        reverse one. Python floats raise where NumPy's return inf or nan (``1.0 / 0.0``): then the
        block runs again on the NumPy values, as the function itself would. A result that depends
        on a NumPy float is one again."""
        guard = " and ".join(f"type({v}) in _FT" for v in self.inputs) or "True"
        ops = [f"{local} = {_expression(f, operands)}" for local, f, operands in self.ops]
        residuals = ", ".join(self.residuals)  # pushed before the entry values are overwritten
        if not self.inputs:
            lines = ops
        else:
            inputs = ", ".join(self.inputs)
            originals = ", ".join(self.originals.values())
            flags = self.numpy
            lines = [f"{originals}, = {inputs},",
                     "; ".join(f"{flags[v]} = type({v}) is not float" for v in self.inputs),
                     f"if {' or '.join(flags.values())}: {inputs}, = {', '.join(f'float({v})' for v in self.inputs)},",
                     "for _k in range(2):",
                     "    try:"]
            lines += ["        " + op for op in ops]
            lines += ["        break",
                      "    except (ZeroDivisionError, OverflowError):  # NumPy floats give inf or nan here",
                      f"        if _k or not ({' or '.join(flags.values())}):",
                      "            raise",
                      f"        {inputs}, = {originals},"]
        # no residuals (a block of + and - only): nothing to push, and the reverse pops nothing
        pushed = f"_push(({residuals}{',' if len(self.residuals) == 1 else ''})); " if self.residuals else ""
        lines.append(f"{pushed}_push(_FASTB)")
        if self.inputs:
            lines.append(f"{', '.join(self.inputs)}, = {', '.join(self.originals.values())},")
        for var, local in self.final.items():
            numpy = " or ".join(self.numpy[v] for v in sorted(self.depends[local]))
            value = f"(_f64({local}) if {numpy} else {local})" if numpy else local
            lines.append(f"{var} = {value}; {fd(var)} = _NF")
        return guard, lines

    # ------------------------------------------------------------------ reverse

    def reverse(self, rd: "callable", fresh: "callable", defer: "callable | None" = None) -> list[str]:
        """The adjoint code. Its residuals may be Python floats standing for NumPy floats (see
        ``forward``): where Python floats raise (a derivative that overflows), it runs again on
        NumPy floats, which give inf as NumPy would. Strong zero (docs/conventions.md): when an
        input's adjoint comes out NaN (``0 * inf``), the adjoint code runs once more with every
        product skipped where its cotangent is exactly 0; the common case pays one check.
        ``defer(params, body, results)``: the call of a function made of ``body`` (compiled when
        first called, ``deferred_fallbacks.py``), for that second run."""
        lines, body, strong, incoming_names = [], [], [], []
        residuals = f"{', '.join(self.residuals)}{',' if len(self.residuals) == 1 else ''}"
        if self.residuals:
            lines.append(f"{residuals} = _pop()")
        adjoint: dict[str, str] = {}
        # an operation's adjoint takes its name, when first assigned, from the adjoints already
        # read for the last time, so each float dies when its name is next assigned (hundreds
        # alive till the function returns overflow CPython's float free list, and each then costs
        # an allocator call to make and to free); the results' adjoints keep names of their own
        free: list[str] = []
        for var, local in self.final.items():  # the incoming cotangents of the block's results
            g = adjoint[local] = fresh("g")
            incoming = fresh("gi")
            incoming_names.append(incoming)
            lines.append(f"{incoming} = 0.0 if {rd(var)} is _NR else {rd(var)}; {rd(var)} = _NR")
            body.append(f"{g} = {incoming}")
            strong.append(f"{g} = {incoming}")

        def add(target: str, expr: str, g: str) -> None:
            if target not in self.values:
                return  # a literal
            safe = expr if expr in (g, f"-{g}") else f"({expr} if {g} else 0.0)"  # strong zero
            if target in adjoint:
                body.append(f"{adjoint[target]} += {expr}")
                strong.append(f"{adjoint[target]} += {safe}")
            else:
                a = adjoint[target] = free.pop() if free else fresh("g")
                body.append(f"{a} = {expr}")
                strong.append(f"{a} = {safe}")

        results = set(self.final.values())
        for local, f, operands in reversed(self.ops):
            g = adjoint.get(local)
            if g is None:
                continue  # its value reaches nothing differentiable
            for target, expr in _adjoints(f, operands, g):
                add(target, expr, g)
            if local not in results and local not in self.inputs:
                free.append(g)  # read for the last time (the operations are in reverse order)
        if self.residuals:  # products, quotients and powers of floats can raise
            lines += ["for _k in range(2):", "    try:"] + ["        " + b for b in body] + [
                "        break",
                "    except (ZeroDivisionError, OverflowError):  # NumPy floats give inf or nan here",
                "        if _k:",
                "            raise",
                f"        {residuals} = {', '.join(f'_f64({n})' for n in self.residuals)},"]
        else:
            lines += body
        checked = [adjoint[v] for v in self.inputs if v in adjoint]
        if checked and strong != body:
            total = fresh("s")
            lines.append(f"{total} = {' + '.join(checked)}")
            lines.append(f"if {total} != {total}:  # a NaN (0 * inf?): again, by the strong-zero rule")
            if defer is None:
                lines += ["    " + b for b in strong]
            else:
                call = defer([*self.residuals, *incoming_names], strong, checked)
                lines.append(f"    {', '.join(checked)}, = {call}")
        for var in self.inputs:  # the cotangents of the block's inputs
            g = adjoint.get(var)
            if g is None:
                continue
            r = rd(var)
            lines.append(f"{r} = {g} if {r} is _NR else {r} + {g}")
        return lines


# --------------------------------------------------------------------------------------------
# Float loops: a ``for`` over a range whose body reads floats out of 1-D float64 arrays at the
# loop index and does float arithmetic (``y += x[i]``, ``s = s + np.sin(x[i]) * w``)
# --------------------------------------------------------------------------------------------

_IN_PLACE = {operator.iadd: operator.add, operator.isub: operator.sub, operator.imul: operator.mul,
             operator.itruediv: operator.truediv}


class FloatLoop:
    """A loop run as plain Python when its arrays are float64 and its other inputs floats: each
    iteration writes its residuals into float64 columns made before the loop (8 bytes a float),
    and the reverse pass walks the columns backwards with straight-line adjoint code. ``None`` from ``plan`` when the body has anything
    else (the loop is then generated as usual)."""

    @staticmethod
    def plan(loop: ir.ForRange, integers: set, unary: dict, resolve: "callable", fresh: "callable",
             function_body: list, plain: "callable | None" = None, self: "FloatLoop | None" = None) -> "FloatLoop | None":
        """``plain(s)``: the source of a statement run as is, recording nothing (a ``while`` loop's
        integer counter: ``float_while.py``), or None."""
        self = FloatLoop() if self is None else self
        self.loop, self.fresh = loop, fresh
        indices = {loop.var} if isinstance(loop, ir.ForRange) else set()
        current: dict[str, str] = {}  # variable -> the local holding its value in this iteration
        self.entry_reads: list[str] = []  # variables read before the body assigns them
        self.arrays: list[str] = []
        self.steps: list[tuple] = []  # (kind, local, payload)
        self.unary_guards: dict[str, Any] = {}
        self.helpers: list[tuple] = []  # (atom, function) of each helper inlined (x = helper(x, a))
        self.copies: list[tuple[str, str]] = []
        self.indices = indices  # the loop variable and the indices made from it (recomputed in reverse)
        self.outer_integers: list[str] = []  # integers from before the loop that build indices
        made_here = set(indices)

        def index_source(name: str) -> None:
            if name not in made_here and name not in self.outer_integers:
                self.outer_integers.append(name)

        def operand(a: ir.Atom) -> str | None:
            if isinstance(a, ir.Const):  # a literal (finite: repr(inf) is not a Python literal)
                finite = type(a.value) in (int, float) and math.isfinite(a.value)
                return repr(a.value) if finite else None
            if a.name in indices or a.name in integers:
                return None
            if a.name not in current:
                current[a.name] = a.name
                self.entry_reads.append(a.name)
            return current[a.name]

        step_locals: set[str] = set()  # the locals holding values computed in the body
        self.ndim: dict[str, int] = {}  # array -> the number of indices it is read or written with
        self.written: list[str] = []
        arity = {v: 1 for v in indices}

        def index_atom(a: ir.Atom) -> bool:
            return isinstance(a, ir.Var) and (a.name in indices or a.name in integers) \
                or isinstance(a, ir.Const) and type(a.value) is int

        def use_array(array: str, n: int, written: bool) -> bool:
            if self.ndim.setdefault(array, n) != n:
                return False
            target = self.written if written else self.arrays
            if array not in target:
                target.append(array)
            return True

        for s in loop.body:
            text = plain(s) if plain is not None else None
            if text is not None:
                self.steps.append(("plain", None, text))
                continue
            if isinstance(s, ir.Copy) and isinstance(s.source, ir.Var) and s.source.name in indices \
                    and s.target in integers:
                indices.add(s.target)
                arity[s.target] = arity[s.source.name]
                index_source(s.source.name)
                made_here.add(s.target)
                self.copies.append((s.target, s.source.name))
                continue
            if isinstance(s, ir.Copy) and isinstance(s.source, ir.Var) and s.target not in integers \
                    and s.target not in indices and current.get(s.source.name) in step_locals:
                current[s.target] = current[s.source.name]  # s = _t3: s names this iteration's value
                continue
            if isinstance(s, ir.Call) and not s.target and not s.kwargs and isinstance(s.func, ir.Const) \
                    and s.func.value is operator.setitem and len(s.args) == 3 and isinstance(s.args[0], ir.Var) \
                    and isinstance(s.args[1], ir.Var) and s.args[1].name in indices:
                value = operand(s.args[2])  # y[i, j] = v: a float written into a float64 array
                if value is None or not use_array(s.args[0].name, arity[s.args[1].name], True):
                    return None
                self.steps.append(("write", fresh("old"), (s.args[0].name, s.args[1].name, value)))
                continue
            if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None \
                    or s.star_kwargs is not None or s.target in integers or s.target in indices:
                return None
            func = s.func.value if isinstance(s.func, ir.Const) else resolve(s.func)
            if func is _mktuple() and s.args and all(index_atom(a) for a in s.args):
                indices.add(s.target)  # (i, j): an index, built again each iteration
                arity[s.target] = len(s.args)
                for a in s.args:
                    if isinstance(a, ir.Var):
                        index_source(a.name)
                made_here.add(s.target)
                built = "(" + ", ".join(a.name if isinstance(a, ir.Var) else repr(a.value) for a in s.args) + ",)"
                # the copies run first in each iteration, in order: the same tuple built again
                # (y[i, j] = f(x[i, j]) indexes twice) is the first one's value
                earlier = next((target for target, source in self.copies if source == built), None)
                self.copies.append((s.target, earlier or built))
                continue
            if isinstance(func, types.FunctionType) and not isinstance(s.func, ir.Const):
                result = self._inline(func, [operand(a) for a in s.args], step_locals)
                if result is None:
                    return None
                self.helpers.append((s.func, func))
                current[s.target] = result
                continue
            local = fresh("b")
            step_locals.add(local)
            if func is operator.getitem and len(s.args) == 2 and isinstance(s.args[0], ir.Var) \
                    and isinstance(s.args[1], ir.Var) and s.args[1].name in indices:
                array = s.args[0].name
                if not use_array(array, arity[s.args[1].name], False):
                    return None
                self.steps.append(("read", local, (array, s.args[1].name)))
            elif isinstance(s.func, ir.Const) and _is_float_op(s, integers | indices) \
                    or isinstance(s.func, ir.Const) and func in _IN_PLACE and len(s.args) == 2:
                ops = [operand(a) for a in s.args]
                if any(o is None for o in ops):
                    return None
                self.steps.append(("op", local, (_IN_PLACE.get(func, func), ops)))
            elif is_hashable(func) and func in unary and func is not operator.neg and len(s.args) == 1:
                (x,) = [operand(a) for a in s.args]
                if x is None:
                    return None
                name = fresh("f")
                self.unary_guards[name] = (s.func, func)
                self.steps.append(("unary", local, (name, func, x)))
            else:
                return None
            current[s.target] = local
        assigned = self.assigned = {v for v, loc in current.items() if loc != v}
        arrays = set(self.arrays) | set(self.written)
        if not self.steps or arrays & assigned or arrays & set(current) or set(self.arrays) & set(self.written):
            return None  # arrays must stay the same objects, and not be read where they are written
        self.carried = [v for v in self.entry_reads if v in assigned]
        self.invariant = [v for v in self.entry_reads if v not in assigned]
        read_after = names_read(function_body, {id(s) for s in loop.body + getattr(loop, "test_body", [])})
        self.final = {v: current[v] for v in assigned if not _TEMP.fullmatch(v) or v in read_after}
        self.final.update({v: current[v] for v in self.carried})
        if len(set(self.final.values())) != len(self.final):
            return None  # two variables leave the loop with one value (t = s): one adjoint each
        self.unary = unary
        return self

    # ------------------------------------------------------------------ forward

    def guard(self, const: "callable", primal: "callable", fd: "callable") -> str:
        parts = [f"type({a}) is _ND and {a}.dtype is _F64 and {a}.ndim == {self.ndim[a]}"
                 for a in self.arrays + self.written]
        parts += [f"type({fd(w)}) is _ND" for w in self.written]  # where the written values' cotangents are
        parts += [f"{w} is not {r}" for w in self.written for r in self.arrays]  # no aliasing
        parts += [f"type({v}) in _FT" for v in self.carried + self.invariant]
        parts += [f"{primal(atom)} is {const(func)}" for atom, func in self.unary_guards.values()]
        parts += [f"{primal(atom)} is {const(func)} and {primal(atom)}.__code__ is {const(func.__code__)}"
                  for atom, func in self.helpers]  # the function inlined, its code unchanged
        return " and ".join(parts) or "True"

    def _inline(self, func: types.FunctionType, args: list, step_locals: set) -> str | None:
        """The steps of a call of a helper that is one float formula (``return x * a + b``: only
        ``+ - * / ** -x`` on its parameters and literals) appended as this loop's own, so a step
        records its residuals and no call; the local holding its value, or None (not inlined: the
        loop is generated as usual)."""
        code = func.__code__
        if code.co_freevars or func.__defaults__ or func.__kwdefaults__ or code.co_kwonlyargcount \
                or code.co_flags & _NOT_PLAIN or code.co_argcount != len(args) or None in args:
            return None
        try:
            helper = normalise(func)
        except Exception:  # noqa: BLE001 - anything it cannot normalise is simply not inlined
            return None
        *formula, result = helper.body or [None]
        user_params = [helper.user_names.get(p, p) for p in helper.params]  # (``_a`` is lowered as ``u_a``)
        if not isinstance(result, ir.Return) or not isinstance(result.value, ir.Var) or user_params != list(code.co_varnames[:len(args)]):
            return None
        names = dict(zip(helper.params, args))  # the helper's names -> this loop's locals and literals
        computed = set()
        for st in formula:
            if not _is_float_op(st, set()) or any(isinstance(a, ir.Var) and a.name not in names for a in st.args):
                return None  # other statements, or a global read
            local = self.fresh("b")
            step_locals.add(local)
            ops = [names[a.name] if isinstance(a, ir.Var) else repr(a.value) for a in st.args]
            self.steps.append(("op", local, (st.func.value, ops)))
            names[st.target] = local
            computed.add(local)
        value = names.get(result.value.name)
        return value if value in computed else None

    def residual_names(self) -> list[str]:
        """The floats each iteration records for the reverse pass (indices are not recorded: the
        reverse pass walks the range backwards and builds them again)."""
        needed: list[str] = []
        for kind, local, payload in self.steps:
            if kind == "write":
                needed.append(local)  # the overwritten value
            elif kind == "op":
                f, ops = payload
                if f in (operator.mul, operator.truediv):
                    needed += [o for o in ops if not _literal(o)]
                elif f is operator.pow:
                    needed.append(ops[0])
            elif kind == "unary":  # its partial's operands: sin's needs x, exp's its value
                partial = self.unary[payload[1]]("\0x", "\0t")
                needed += [n for n, mark in ((payload[2], "\0x"), (local, "\0t")) if mark in partial]
        seen: list[str] = []
        for n in needed:  # names only: a literal operand (math.cos(-1.48)) is no residual
            if n not in seen and n not in self.invariant and not _literal(n):
                seen.append(n)
        return seen

    def _numpy_values(self) -> str:
        """An expression true when some value of the loop may be a NumPy float: the reverse pass
        then takes quotients' and powers' partials in NumPy's arithmetic (inf where Python's would
        raise), as the forward pass did."""
        if self.arrays or self.written or any(not _keeps_python_floats(func) for _, func in self.unary_guards.values()):
            return "True"
        return " or ".join(f"type({v}) is not float" for v in self.carried + self.invariant) or "False"

    def columns(self) -> dict[str, str]:
        """The recorded floats: residual name -> its column (a float64 ``memoryview`` with one
        entry per iteration)."""
        return {r: f"{self.res}_{r.lstrip('_')}" for r in self.residual_names()}

    def forward(self, loop_range: str, primal: "callable", fd: "callable") -> list[str]:
        self.res, self.range = self.fresh("res"), loop_range
        columns = self.columns()
        logs = {w: self.fresh("log") for w in self.written}  # (index, old value) per write, for unwind
        # what every iteration shares: the recorded floats (one float64 each, in columns made to
        # the range's length before the loop), the range, the arrays' fdata, the written arrays
        # themselves, the invariants; pushed before the loop so a failing iteration can be undone
        # (runtime.unwind)
        saved = list(columns.values()) + [loop_range, f"({self._numpy_values()})"] + self.outer_integers \
            + [fd(a) for a in self.arrays] + [p for w in self.written for p in (w, fd(w))] + self.invariant
        spec = "".join(f"({w}, {logs[w]}), " for w in self.written)
        lines = [f"{column} = _float64s({loop_range})" for column in columns.values()]
        lines += [f"{log} = []" for log in logs.values()]
        lines.append(f"_push(({', '.join(saved)}, ({spec}))); _push(_FASTLOOP)")
        position = self.loop.var  # the iteration's number: over range(n), the loop variable itself
        if columns and not (self.loop.start == ir.Const(0) and self.loop.step == ir.Const(1)):
            position = self.fresh("n")
            lines.append(f"for {position}, {self.loop.var} in enumerate({loop_range}):")
        else:
            lines.append(f"for {self.loop.var} in {loop_range}:")
        body = [f"{target} = {source}" for target, source in self.copies] + self._step_lines(primal, logs)
        if columns:
            body.append("; ".join(f"{column}[{position}] = {r}" for r, column in columns.items()))
        body += [f"{v} = {loc}" for v, loc in self.final.items()]
        lines += ["    " + b for b in body]
        lines += [f"{fd(v)} = _NF" for v in self.final]
        return lines

    def _step_lines(self, primal: "callable", logs: dict) -> list[str]:
        """One iteration's computation, as plain Python lines."""
        body: list[str] = []
        for kind, local, payload in self.steps:
            if kind == "read":
                body.append(f"{local} = {payload[0]}[{payload[1]}]")
            elif kind == "write":
                array, index, value = payload
                body.append(f"{local} = {array}[{index}]; {logs[array]}.append(({index}, {local})); "
                            f"{array}[{index}] = {value}")
            elif kind == "op":
                f, ops = payload
                body.append(f"{local} = {_expression(f, ops)}")
            elif kind == "plain":
                body.append(payload)
            else:
                name, func, x = payload
                atom = self.unary_guards[name][0]
                body.append(f"{local} = {primal(atom)}({x})")
        return body

    # ------------------------------------------------------------------ reverse

    def reverse(self, rd: "callable") -> list[str]:
        columns = self.columns()
        xfs = [f"_xf_{k}" for k in range(len(self.arrays))]
        wrs = {w: (f"_w_{k}", f"_wf_{k}") for k, w in enumerate(self.written)}
        loop_range, numpy_values = self.fresh("range"), self.fresh("np")
        unpacked = list(columns.values()) + [loop_range, numpy_values] + self.outer_integers + xfs \
            + [p for pair in wrs.values() for p in pair] + self.invariant
        lines = [f"{', '.join(unpacked)}, _ = _pop()"]
        if self.needs_index():  # the arrays' elements as Python floats (NumPy's scalars cost more)
            lines += [f"{a} = _cells({a})" for a in xfs + [p for pair in wrs.values() for p in pair]]
        carry = {v: self.fresh("g") for v in self.carried}
        invariant = {v: self.fresh("g") for v in self.invariant}
        for v, g in carry.items():
            lines.append(f"{g} = 0.0 if {rd(v)} is _NR else {rd(v)}; {rd(v)} = _NR")
        outputs = {v: self.fresh("g") for v in self.final if v not in carry}
        for v, g in outputs.items():  # values assigned in the loop and read after it (last iteration)
            lines.append(f"{g} = 0.0 if {rd(v)} is _NR else {rd(v)}; {rd(v)} = _NR")
        for g in invariant.values():
            lines.append(f"{g} = 0.0")
        convert = self.fresh("float")
        if any(kind == "op" and payload[0] in (operator.truediv, operator.pow) for kind, _, payload in self.steps):
            lines.append(f"{convert} = _f64 if {numpy_values} else float")  # the arithmetic of partials
        lines += self._reverse_header(columns, loop_range)
        body: list[str] = []
        adjoint: dict[str, str] = {}
        for v, loc in self.final.items():
            adjoint[loc] = carry.get(v) or outputs[v]
        first_iteration_outputs = set(outputs.values())
        values = {loc for _, loc, _ in self.steps} | set(self.entry_reads)

        def add(target: str, expr: str) -> None:
            if target not in values:
                return  # a literal
            if target in invariant:
                body.append(f"{invariant[target]} += {expr}")
            elif target in adjoint:
                body.append(f"{adjoint[target]} += {expr}")
            else:
                g = adjoint[target] = self.fresh("g")
                body.append(f"{g} = {expr}")

        for kind, local, payload in reversed(self.steps):
            g = adjoint.get(local)
            if g is None and kind != "write":
                continue
            if kind == "write":  # restore the overwritten value; what it gathered goes to the value
                array, index, value = payload
                w, wf = wrs[array]
                gathered = self.fresh("g")
                body.append(f"{gathered} = float({wf}[{index}]); {wf}[{index}] = 0.0; {w}[{index}] = {local}")
                add(value, gathered)
                continue
            if kind == "read":
                array, index = payload
                k = self.arrays.index(array)
                body.append(f"if {xfs[k]} is not _NF: {xfs[k]}[{index}] += {g}")
            elif kind == "op":
                f, ops = payload
                # a quotient's or power's partial is taken in NumPy's arithmetic when the loop had
                # NumPy values (inf where Python's would raise); the floats are read back as Python's
                exact = [o if _literal(o) or f not in (operator.truediv, operator.pow) else f"{convert}({o})" for o in ops]
                for (target, _), (_, expr) in zip(_adjoints(f, ops, g), _adjoints(f, exact, g)):
                    add(target, _strong(expr, g))
            else:
                name, func, x = payload
                add(x, _strong(f"{g} * ({self.unary[func](x, local)})", g))
        for v, g in carry.items():  # the entry value's adjoint is the previous iteration's
            entry = adjoint.get(v)
            if entry is None:
                body.append(f"{g} = 0.0")
            elif entry != g:
                body.append(f"{g} = {entry}")
        for g in first_iteration_outputs:  # only the last iteration's value was read after the loop
            body.append(f"{g} = 0.0")
        if self.needs_index():
            body[:0] = [f"{target} = {source}" for target, source in self.copies]
        lines += ["    " + b for b in (body or ["pass"])]
        for v, g in carry.items():
            lines.append(f"{rd(v)} = {g}")
        for v, g in outputs.items():  # no iteration ran: the value read after is the one before
            lines.append(f"if not {loop_range}: {rd(v)} = {g}")
        for v, g in invariant.items():
            lines.append(f"{rd(v)} = {g} if {rd(v)} is _NR else {rd(v)} + {g}")
        return lines

    def needs_index(self) -> bool:
        """Whether the reverse pass reads or writes the arrays: it then needs each iteration's index."""
        return any(kind in ("read", "write") for kind, _, _ in self.steps)

    def _reverse_header(self, columns: dict[str, str], loop_range: str) -> list[str]:
        """The reverse loop's header: the range backwards (when the indices are needed) beside each
        recorded float's column backwards."""
        walks = [f"reversed({loop_range})"] if self.needs_index() else []
        targets = [self.loop.var] if walks else []
        walks += [f"{column}[::-1]" for column in columns.values()]
        targets += list(columns)
        if not walks:
            return [f"for _ in {loop_range}:"]
        if len(walks) == 1:
            return [f"for {targets[0]} in {walks[0]}:"]
        return [f"for {', '.join(targets)} in zip({', '.join(walks)}):"]


def _strong(expr: str, g: str) -> str:
    """A contribution ``expr`` of adjoint ``g``, exactly 0 when ``g`` is (strong zero: a product
    with an inf or NaN partial would give NaN)."""
    return expr if expr in (g, f"-{g}") else f"({expr} if {g} else 0.0)"


def _keeps_python_floats(func: Any) -> bool:
    """A function of one float (``math.sin``) whose value is a Python float for a Python float."""
    return getattr(func, "__module__", None) == "math"


# the names the generated loops use (transform/codegen.py adds them to the generated code's namespace)
def _float64s(loop_range: range) -> memoryview:
    """A column of float64 entries, one per iteration of ``loop_range``, zeroed: 8 bytes a float,
    each written and read as a Python float (``memoryview`` converts by the item's C type;
    ``array('d')`` parses a format string per item, twice the instructions)."""
    return memoryview(bytearray(8 * len(loop_range))).cast("d")


def _cells(array: Any) -> Any:
    """A float64 array's elements as a ``memoryview`` (read and written as Python floats, at a
    fraction of the cost of NumPy's scalar indexing), or the array itself where NumPy exports no
    writable native-double buffer, or it is no array (``_NF``)."""
    try:
        view = memoryview(array)
    except (TypeError, ValueError, BufferError):
        return array
    return view if view.format == "d" and not view.readonly else array


def _array_d() -> array:
    """An empty growable column of float64 (8 bytes a float): a ``while`` loop's (``float_while.py``)."""
    return array("d")


NAMESPACE = {"_float64s": _float64s, "_cells": _cells, "_array_d": _array_d}


# a generator, coroutine or *args/**kwargs function is never inlined
_NOT_PLAIN = inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR | inspect.CO_COROUTINE \
    | inspect.CO_ASYNC_GENERATOR | inspect.CO_ITERABLE_COROUTINE


def _mktuple() -> Any:
    from ..ir.primitives import mktuple

    return mktuple


def _literal(name: str) -> bool:
    return not (name[:1].isalpha() or name[:1] == "_")


def _expression(f: Any, ops: list) -> str:
    if f in _BINARY:
        return f"{ops[0]} {_BINARY[f]} {ops[1]}"
    if f is operator.neg:
        return f"-{ops[0]}"
    return f"{ops[0]} ** {ops[1]}"


def _adjoints(f: Any, ops: list, g: str) -> list[tuple[str, str]]:
    """``(operand, contribution)`` pairs of the adjoint of ``f(*ops)`` with output adjoint ``g``."""
    if f is operator.add:
        return [(ops[0], g), (ops[1], g)]
    if f is operator.sub:
        return [(ops[0], g), (ops[1], f"-{g}")]
    if f is operator.mul:
        return [(ops[0], f"{g} * {ops[1]}"), (ops[1], f"{g} * {ops[0]}")]
    if f is operator.truediv:
        return [(ops[0], f"{g} / {ops[1]}"), (ops[1], f"-{g} * {ops[0]} / ({ops[1]} * {ops[1]})")]
    if f is operator.neg:
        return [(ops[0], f"-{g}")]
    n = ops[1]  # a ** n, an integer literal
    if n == "0":
        return []
    return [(ops[0], g if n == "1" else f"{g} * {n} * {ops[0]} ** ({n} - 1)")]
