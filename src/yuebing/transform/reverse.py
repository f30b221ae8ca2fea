"""Stage 4 (reverse mode): IR -> Python source of a forward pass and a reverse pass.

For every variable ``v`` of the function the forward pass keeps two locals, ``v`` (the primal)
and ``v_f`` (its fdata); the reverse pass keeps ``v_r`` (its rdata accumulator). Each operation
``t = f(a, b)`` becomes, forward, a call of its rule on coduals, pushing the pullback on a tape::

    _o, _pb = rrule(CoDual(f), CoDual(a, a_f), CoDual(b, b_f))
    t, t_f = _o.primal, _o.fdata
    push(_pb)

and, in reverse (statements in reverse order)::

    _rs = pop()(t_r); t_r = NoRData          # the cotangent of t, consumed
    a_r = acc(a_r, _rs[1]); b_r = acc(b_r, _rs[2])

Branch decisions and trip counts are pushed on the same tape *after* the code they describe, so
the structured reverse code pops them first and replays the branch or loop backwards. Every
reverse line carries a comment naming the primal line it undoes.
"""
from __future__ import annotations

import collections
import re
from typing import Any

from . import templates
from ..ir import nodes as ir
from .closure_cells import captured_entries, define_closure, untracked_cell_guard
from .generated_text import ConstantNames, Generated, program_text, resolve_path
from .statement_dispatch import StatementDispatch
from .variables import INT_OPS, all_var_names, integer_names, integer_operands
from .try_statements import TryStatements, has_reverse_work as _has_reverse_work
from .direct_calls import DirectCalls
from .array_blocks import ArrayBlock, find_array_blocks, hoist_for_blocks
from .deferred_fallbacks import DeferredFallbacks
from .float_blocks import LONG_BLOCK, FloatBlock, FloatLoop, find_blocks
from .float_while import FloatWhileLoop


class _Names:
    """Suffixes for fdata/rdata locals that collide with nothing in the function."""

    def __init__(self, used: set[str]) -> None:
        suffix = "_f"
        while any(n + suffix in used or n + suffix.replace("f", "r") in used for n in used):
            suffix = "_" + suffix
        self.f, self.r = suffix, suffix.replace("f", "r")




class ReverseGenerator(TryStatements, DirectCalls, DeferredFallbacks, StatementDispatch, ConstantNames):
    def __init__(self, fn: ir.Function, globals_: dict | None = None) -> None:
        self.fn = fn
        self.globals = globals_
        self.vars = sorted(all_var_names(fn.body, set(fn.params)) - {"_returned"})
        self.integers = integer_names(fn.body, [*fn.params, *fn.free_vars, *fn.global_names, *fn.cell_backed])
        used = set(self.vars) | set(fn.global_names) | {f"_cell_{v}" for v in fn.free_vars} \
            | {f"_cellobj_{v}" for v in fn.cell_backed}
        self.names = _Names(used)
        ConstantNames.__init__(self)
        self.lines: list[str] = []
        self.line_map: dict[int, int] = {}

    # ------------------------------------------------------------ naming

    def fd(self, name: str) -> str:
        return name + self.names.f

    def rd(self, name: str) -> str:
        return name + self.names.r

    def fdata(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Var):
            return "_NF" if a.name in self.integers else self.fd(a.name)
        if isinstance(a, ir.Global) and "." not in a.path:
            return self.fd(a.path)
        return "_NF"

    def codual(self, a: ir.Atom) -> str:
        return f"_CD({self.primal(a)}, {self.fdata(a)})"

    # ------------------------------------------------------------ emission

    # ------------------------------------------------------------ forward

    float_blocks = True  # straight-line float arithmetic as one unit (transform/float_blocks.py)

    def _blocks(self, body: list) -> tuple[dict, dict]:
        """Float blocks and array blocks of ``body``: ``{start: stop}`` each."""
        if not self.float_blocks:
            return {}, {}
        hoist_for_blocks(body, self.integers, self._resolve)  # (first: both passes see one order)
        floats = dict(find_blocks(body, self.integers))
        taken = {k for start, stop in floats.items() for k in range(start, stop)}
        return floats, dict(find_array_blocks(body, self.integers, self._resolve, taken))

    def forward(self, body: list, out: list, indent: int) -> None:
        blocks, array_blocks = self._blocks(body)
        k = 0
        while k < len(body):
            if k in blocks:
                k += self._forward_block(body[k:blocks[k]], out, indent)
                continue
            if k in array_blocks:
                k += self._forward_array_block(body[k:array_blocks[k]], out, indent)
                continue
            self.forward_statement(body[k], out, indent)
            k += 1

    def _forward_block(self, stmts: list, out: list, indent: int) -> int:
        block = stmts[0].float_block = FloatBlock(stmts, self.fresh, self.fn.body)  # type: ignore[attr-defined]
        guard, lines = block.forward(self.fd)
        self.emit(out, indent, f"if {guard}:  # float block: lines {block.first_line}-{block.last_line}", block.first_line)
        for text in lines:
            self.emit(out, indent + 1, text, block.first_line)
        self.emit(out, indent, "else:", block.first_line)
        if len(stmts) > LONG_BLOCK:  # its fallback is called out of line, compiled when first needed
            self.defer_forward(block, stmts, out, indent + 1)
        elif find_array_blocks(stmts, self.integers, self._resolve, set()) == [(0, len(stmts))]:
            self._forward_array_block(stmts, out, indent + 1)  # the same arithmetic on arrays
        else:
            self.forward_each(stmts, out, indent + 1)
        self.emit(out, indent + 1, "_push(_SLOWB)", block.last_line)
        return len(stmts)

    def _reverse_block(self, stmts: list, out: list, indent: int) -> None:
        block = stmts[0].float_block
        defer = self.deferred_strong_zero(block) if hasattr(block, "fallback") else None  # a long block
        self._undo_guarded("float block", "_FASTB", block, block.reverse(self.rd, self.fresh, defer), out, indent)
        if hasattr(block, "fallback"):
            self.defer_reverse(block, stmts, out, indent + 1)
            return
        if hasattr(stmts[0], "array_block"):
            self._reverse_array_block(stmts, out, indent + 1)
            return
        self.reverse_each(stmts, out, indent + 1)

    def _undo_guarded(self, what: str, marker: str, block: Any, fast: list, out: list, indent: int) -> None:
        """The reverse of a guarded unit, up to its fallback: pop the marker its forward pushed,
        run ``fast`` if the unit ran, and open the ``else:`` the caller fills with the fallback."""
        line = block.last_line
        self.emit(out, indent, f"_e = _pop()  # undo the {what} at lines {block.first_line}-{line}", line)
        self.emit(out, indent, f"if _e is {marker}:", line)
        for text in fast:
            self.emit(out, indent + 1, text, line)
        self.emit(out, indent, "else:", line)

    def _forward_array_block(self, stmts: list, out: list, indent: int) -> int:
        block = stmts[0].array_block = ArrayBlock(  # type: ignore[attr-defined]
            stmts, self.integers, self._resolve, self.fresh, self.primal, self.const, self.fn.body)
        guard, lines = block.forward(self.fd)
        self.emit(out, indent, f"if {guard}:  # array block: lines {block.first_line}-{block.last_line}", block.first_line)
        for text in lines:
            self.emit(out, indent + 1, text, block.first_line)
        self.emit(out, indent, "else:", block.first_line)
        self.forward_each(stmts, out, indent + 1)
        self.emit(out, indent + 1, "_push(_SLOWAB)", block.last_line)
        return len(stmts)

    def _reverse_array_block(self, stmts: list, out: list, indent: int) -> None:
        block = stmts[0].array_block
        self._undo_guarded("array block", "_FASTAB", block, block.reverse(self.fd, self.rd), out, indent)
        self.reverse_each(stmts, out, indent + 1)

    generic_only = False

    def _templates(self, s: ir.Call) -> list:
        """The inline variants for ``s``, if its function is known now and has any."""
        if self.generic_only:
            return []
        if isinstance(s.func, ir.Const):
            value = s.func.value
        elif isinstance(s.func, ir.Global) and self.globals is not None:
            value = resolve_path(self.globals, s.func.path, self.fn.global_keys)
            if value is None and s.func.path == "len" and (self.fn.global_keys or {}).get("len", "len") == "len":
                value = len  # the builtin (the template checks, when it runs, that the name still is)
            if value is None:
                return []
        else:
            return []
        emit = templates.Emit(self.primal, self.fdata, self.rd, self.const)
        return templates.template_for(s, value, emit)

    def _untracked_cell_guard(self, s: ir.Call, out: list, indent: int) -> None:
        guard = untracked_cell_guard(self, s)
        if guard is not None:
            self.emit(out, indent, guard, s.line)

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        if self._integer_call(s):  # i += 1 on an integer: the arithmetic alone
            a, b = (self.primal(x) for x in s.args)
            self.emit(out, indent, f"{s.target} = {a} {INT_OPS[s.func.value]} {b}", s.line)
            return
        self._untracked_cell_guard(s, out, indent)
        variants = self._templates(s)
        s.templates = variants  # type: ignore[attr-defined]
        if not variants:
            if not self.direct_forward(s, out, indent):  # a Python function: called directly (direct_calls.py)
                self._generic_call(s, out, indent)
            return
        for k, variant in enumerate(variants):
            keyword = "if" if k == 0 else "elif"
            note = f"  # inline: {ir._call_text(s)}" if k == 0 else ""
            self.emit(out, indent, f"{keyword} {variant.guard}:{note}", s.line)
            for text in variant.forward:
                self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self._generic_call(s, out, indent + 1)

    def _generic_call(self, s: ir.Call, out: list, indent: int) -> None:
        args = self.call_arguments(s, self.codual)
        call = f"_rrule({', '.join([self.codual(s.func)] + args)})"
        line = s.line
        if s.target:
            self.emit(out, indent, f"_o, _pb = {call}", line)
            self.emit(out, indent, f"{s.target}, {self.fd(s.target)} = _o.primal, _o.fdata", line)
        else:
            self.emit(out, indent, f"_o, _pb = {call}", line)
        self.emit(out, indent, "_push(_pb)", line)

    def fwd_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        if s.target in self.integers:  # an index: no fdata to carry
            self.emit(out, indent, f"{s.target} = {self.primal(s.source)}", s.line)
            return
        self.emit(out, indent, f"{s.target}, {self.fd(s.target)} = {self.primal(s.source)}, {self.fdata(s.source)}", s.line)

    def fwd_If(self, s: ir.If, out: list, indent: int) -> None:
        record = _has_reverse_work(s.body) or _has_reverse_work(s.orelse)
        self.emit(out, indent, f"if {self.primal(s.test)}:", s.line)
        self.forward(s.body, out, indent + 1)
        if record:
            self.emit(out, indent + 1, "_push(True)", s.line)
        elif not s.body:
            self.emit(out, indent + 1, "pass", s.line)
        if s.orelse or record:
            self.emit(out, indent, "else:", s.line)
            self.forward(s.orelse, out, indent + 1)
            if record:
                self.emit(out, indent + 1, "_push(False)", s.line)

    def fwd_While(self, s: ir.While, out: list, indent: int) -> None:
        record = _has_reverse_work(s.body) or _has_reverse_work(s.test_body)
        plan = FloatWhileLoop.plan_while(s, self.integers, templates._UNARY, self._resolve, self.fresh, self.fn.body,
                                         self._plain_integer) if self.float_blocks and record else None
        if plan is not None:  # float_while.py
            s.float_loop = plan  # type: ignore[attr-defined]
            self.emit(out, indent, f"if {plan.guard(self.const, self.primal, self.fd)}:  # float loop: line {s.line}", s.line)
            for text in plan.forward(self.fresh("range"), self.primal, self.fd):
                self.emit(out, indent + 1, text, s.line)
            self.emit(out, indent, "else:", s.line)
            indent += 1
        trips = self.fresh("trips")
        s.trips = trips  # type: ignore[attr-defined]
        if record:
            self.emit(out, indent, f"{trips} = 0", s.line)
        self.emit(out, indent, "while True:", s.line)
        self.forward(s.test_body, out, indent + 1)
        self.emit(out, indent + 1, f"if not {self.primal(s.test)}:", s.line)
        self.emit(out, indent + 2, "break", s.line)
        self.forward(s.body, out, indent + 1)
        if record:
            self.emit(out, indent + 1, f"{trips} += 1", s.line)
            self.emit(out, indent, f"_push({trips})", s.line)

    def _plain_integer(self, s: Any) -> str | None:
        """The source of integer arithmetic or an integer copy (``i += 1``), as ``fwd_Call`` and
        ``fwd_Copy`` emit it, or None."""
        if isinstance(s, ir.Call) and self._integer_call(s):
            a, b = (self.primal(x) for x in s.args)
            return f"{s.target} = {a} {INT_OPS[s.func.value]} {b}"
        if isinstance(s, ir.Copy) and s.target in self.integers and s.target not in self.fn.cell_backed:
            return f"{s.target} = {self.primal(s.source)}"
        return None

    def _resolve(self, atom: ir.Atom) -> Any:
        """The value of a function atom known at generation (a constant, or a global path)."""
        if isinstance(atom, ir.Const):
            return atom.value
        if isinstance(atom, ir.Global) and self.globals is not None:
            return resolve_path(self.globals, atom.path, self.fn.global_keys)
        return None

    def fwd_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        record = _has_reverse_work(s.body)
        bounds = self.range_bounds(s)
        loop_range = self.fresh("range")
        self.emit(out, indent, f"{loop_range} = range({bounds})", s.line)
        plan = FloatLoop.plan(s, self.integers, templates._UNARY, self._resolve, self.fresh, self.fn.body) \
            if self.float_blocks and record else None
        if plan is not None:
            s.float_loop = plan  # type: ignore[attr-defined]
            self.emit(out, indent, f"if {plan.guard(self.const, self.primal, self.fd)}:  # float loop: line {s.line}", s.line)
            for text in plan.forward(loop_range, self.primal, self.fd):
                self.emit(out, indent + 1, text, s.line)
            self.emit(out, indent, "else:", s.line)
            self._range_loop(s, loop_range, record, out, indent + 1)
            self.emit(out, indent + 1, "_push(_SLOWLOOP)", s.line)
            return
        self._range_loop(s, loop_range, record, out, indent)

    def _range_loop(self, s: ir.ForRange, loop_range: str, record: bool, out: list, indent: int) -> None:
        self.emit(out, indent, f"for {s.var} in {loop_range}:", s.line)
        if s.var not in self.integers:
            self.emit(out, indent + 1, f"{self.fd(s.var)} = _NF", s.line)
        self.forward(s.body, out, indent + 1)
        if record:
            self.emit(out, indent, f"_push(len({loop_range}))", s.line)

    def fwd_Return(self, s: ir.Return, out: list, indent: int) -> None:
        self.emit(out, indent, f"return {self.primal(s.value)}, {self.fdata(s.value)}", s.line)

    def fwd_Opaque(self, s: ir.Opaque, out: list, indent: int) -> None:
        self.emit(out, indent, s.source, s.line)
        for name in s.defines:
            self.emit(out, indent, f"{self.fd(name)} = _NF", s.line)

    def fwd_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        define_closure(self, s, out, indent)
        boxes = captured_entries(self, s, self.fd, self.integers)
        self.emit(out, indent, f"{self.fd(s.target)} = _closure_fdata({s.target}, {{{boxes}}})", s.line)
        self.emit(out, indent, f"_push({self.fd(s.target)})  # the reverse pass reads the captured cotangents", s.line)

    def fwd_With(self, s: ir.With, out: list, indent: int) -> None:
        self.emit(out, indent, f"with {s.items}:", s.line)
        for name in s.defines:
            self.emit(out, indent + 1, f"{self.fd(name)} = _NF", s.line)
        self.forward(s.body, out, indent + 1)
        if not s.body and not s.defines:
            self.emit(out, indent + 1, "pass", s.line)

    def rev_With(self, s: ir.With, out: list, indent: int) -> None:
        self.reverse(s.body, out, indent)

    def fwd_Pass(self, s: ir.Pass, out: list, indent: int) -> None:
        self.emit(out, indent, "pass", s.line)

    # ------------------------------------------------------------ reverse

    def reverse(self, body: list, out: list, indent: int) -> None:
        start = len(out)
        blocks, array_blocks = self._blocks(body)
        ends = {stop - 1: first for first, stop in blocks.items()}
        array_ends = {stop - 1: first for first, stop in array_blocks.items()}
        k = len(body) - 1
        while k >= 0:
            if k in ends and hasattr(body[ends[k]], "float_block"):
                self._reverse_block(body[ends[k]:k + 1], out, indent)
                k = ends[k] - 1
                continue
            if k in array_ends and hasattr(body[array_ends[k]], "array_block"):
                self._reverse_array_block(body[array_ends[k]:k + 1], out, indent)
                k = array_ends[k] - 1
                continue
            self.reverse_statement(body[k], out, indent)
            k -= 1
        if len(out) == start:
            self.emit(out, indent, "pass")

    def _accumulate(self, atom: Any, source: str, out: list, indent: int, line: int) -> None:
        if isinstance(atom, ir.Var) and atom.name not in self.integers:
            r = self.rd(atom.name)
            self.emit(out, indent, f"{r} = _acc({r}, {source})", line)

    def _integer_call(self, s: ir.Call) -> bool:
        """Integer arithmetic on integer variables (``integer_names``), none of them in a cell
        (a nested function could rebind it)."""
        return s.target in self.integers and s.target not in self.fn.cell_backed \
            and integer_operands(s) is not None \
            and not any(isinstance(a, ir.Var) and a.name in self.fn.cell_backed for a in s.args)

    def rev_Call(self, s: ir.Call, out: list, indent: int) -> None:
        if self._integer_call(s):
            return  # no derivative, nothing recorded
        line = s.line
        comment = f"  # undo line {line}: {ir._call_text(s)}"
        variants = getattr(s, "templates", [])
        if not variants:
            if not self.direct_reverse(s, out, indent):
                self._generic_reverse(s, "_pop()", comment, out, indent)
            return
        self.emit(out, indent, f"_e = _pop(){comment}", line)
        r = self.rd(s.target) if s.target else None
        for k, variant in enumerate(variants):
            self.emit(out, indent, f"{'if' if k == 0 else 'elif'} {variant.test}:", line)
            if variant.pops:
                self.emit(out, indent + 1, variant.pops, line)
            if variant.uses_rdata:
                self.emit(out, indent + 1, f"_g = {r}; {r} = _NR", line)
                if variant.reverse:
                    self.emit(out, indent + 1, "if _g is not _NR:", line)
                    for text in variant.reverse:
                        self.emit(out, indent + 2, text, line)
            else:
                if r is not None:
                    self.emit(out, indent + 1, f"{r} = _NR", line)
                for text in variant.reverse:
                    self.emit(out, indent + 1, text, line)
        self.emit(out, indent, "else:", line)
        self._generic_reverse(s, "_e", "", out, indent + 1)

    def _generic_reverse(self, s: ir.Call, pullback: str, comment: str, out: list, indent: int) -> None:
        line = s.line
        if s.target:
            self.emit(out, indent, f"_rs = {pullback}({self.rd(s.target)}); {self.rd(s.target)} = _NR{comment}", line)
        else:
            self.emit(out, indent, f"_rs = {pullback}(_NR){comment}", line)
        self._accumulate(s.func, "_rs[0]", out, indent, line)
        position = 1
        for a in s.args:
            self._accumulate(a, f"_rs[{position}]", out, indent, line)
            position += 1
        if s.star_args is not None:
            self._accumulate(s.star_args, f"_rs[{position}]", out, indent, line)
            position += 1
        for _, a in s.kwargs:
            self._accumulate(a, f"_rs[{position}]", out, indent, line)
            position += 1
        if s.star_kwargs is not None:
            self._accumulate(s.star_kwargs, f"_rs[{position}]", out, indent, line)

    def rev_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        if isinstance(s.source, ir.Var) and s.source.name == s.target or s.target in self.integers:
            return
        target_r = self.rd(s.target)
        comment = f"  # undo line {s.line}: {s.target} = {s.source}"
        if isinstance(s.source, ir.Var):
            source_r = self.rd(s.source.name)
            self.emit(out, indent, f"{source_r} = _acc({source_r}, {target_r}); {target_r} = _NR{comment}", s.line)
        else:
            self.emit(out, indent, f"{target_r} = _NR{comment}", s.line)

    def rev_If(self, s: ir.If, out: list, indent: int) -> None:
        if not (_has_reverse_work(s.body) or _has_reverse_work(s.orelse)):
            return
        self.emit(out, indent, f"if _pop():  # undo the branch at line {s.line}", s.line)
        self.reverse(s.body, out, indent + 1)
        self.emit(out, indent, "else:", s.line)
        self.reverse(s.orelse, out, indent + 1)

    def rev_While(self, s: ir.While, out: list, indent: int) -> None:
        # Forward ran: test, then (body, test) once per trip. Undo in the opposite order.
        if not (_has_reverse_work(s.body) or _has_reverse_work(s.test_body)):
            return
        trips = self.fresh("trips")
        plan = getattr(s, "float_loop", None)
        if plan is not None:
            self.emit(out, indent, f"{trips} = _pop()  # undo the loop at line {s.line}", s.line)
            self.emit(out, indent, f"if {trips} is _FASTLOOP:", s.line)
            for text in plan.reverse(self.rd):
                self.emit(out, indent + 1, text, s.line)
            self.emit(out, indent, "else:", s.line)
            indent += 1
        else:
            self.emit(out, indent, f"{trips} = _pop()  # undo the loop at line {s.line}", s.line)
        if _has_reverse_work(s.test_body):
            self.reverse(s.test_body, out, indent)
        self.emit(out, indent, f"for _ in range({trips}):", s.line)
        self.reverse(s.body, out, indent + 1)
        if _has_reverse_work(s.test_body):
            self.reverse(s.test_body, out, indent + 1)

    def rev_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        if not _has_reverse_work(s.body):
            return
        plan = getattr(s, "float_loop", None)
        if plan is not None:
            self.emit(out, indent, f"_e = _pop()  # undo the float loop at line {s.line}", s.line)
            self.emit(out, indent, "if _e is _FASTLOOP:", s.line)
            for text in plan.reverse(self.rd):
                self.emit(out, indent + 1, text, s.line)
            self.emit(out, indent, "else:", s.line)
            indent += 1
        self.emit(out, indent, f"for _ in range(_pop()):  # undo the loop at line {s.line}", s.line)
        self.reverse(s.body, out, indent + 1)

    def rev_Return(self, s: ir.Return, out: list, indent: int) -> None:
        pass  # handled by the reverse function's preamble

    def rev_Opaque(self, s: ir.Opaque, out: list, indent: int) -> None:
        pass

    def rev_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        self.emit(out, indent, f"_closure = _pop()  # undo line {s.line}: the closure {s.target}", s.line)
        for name in s.free_vars:
            if name in self.fn.cell_backed or name in s.shared or name in self.integers:
                continue  # its cotangent lives in the shared cell box, or it has none (an int)
            r = self.rd(name)
            self.emit(out, indent, f"{r} = _acc({r}, _closure_rdata(_closure, {name!r}))", s.line)

    def rev_Pass(self, s: ir.Pass, out: list, indent: int) -> None:
        pass

    # ------------------------------------------------------------ whole functions

    def generate(self) -> Generated:
        fn = self.fn
        fwd_name, rev_name = f"{fn.name}_forward", f"{fn.name}_reverse"
        out: list = []
        params = ", ".join(f"{p}, {self.fd(p)}" for p in fn.params)
        self.emit(out, 0, f"def {fwd_name}(_tape, _fn, _fn_f{', ' + params if params else ''}):", fn.first_line)
        self.emit(out, 1, f'"""Forward pass of {fn.name} ({fn.filename}:{fn.first_line})."""')
        self.emit(out, 1, "_push = _tape.append")
        global_lines = {}
        for name in fn.global_names:
            global_lines[name] = len(out)
            self.emit(out, 1, f"{name} = _global(_G, {ir.global_key(fn, name)!r}); {self.fd(name)} = _global_fdata({name})")
        for name in fn.cell_backed:
            # a local that nested functions write (nonlocal): always read and written via its cell
            self.emit(out, 1, f"if False: {name} = None  # makes {name} a local of this function")
            self.emit(out, 1, f"_cellobj_{name} = (lambda: {name}).__closure__[0]; {self.fd('_cellobj_' + name)} = _new_cell_box()")
        for k, name in enumerate(fn.free_vars):
            self.emit(out, 1, f"_cell_{name} = _fn.__closure__[{k}]; {self.fd('_cell_' + name)} = _cell_fdata(_fn_f, {name!r}, _cell_{name})")
        self.forward(fn.body, out, 1)
        _drop_unread_global_fdata(out, global_lines, self.fd)
        self.emit(out, 0, "")
        self.emit(out, 0, f"def {rev_name}(_tape, _out_r):", fn.first_line)
        self.emit(out, 1, f'"""Reverse pass of {fn.name}: returns the rdata of each parameter."""')
        self.emit(out, 1, "_pop = _tape.pop")
        self.emit_no_rdata(out, 1, [self.rd(v) for v in self.vars])
        last = fn.body[-1]
        if isinstance(last, ir.Return) and isinstance(last.value, ir.Var):
            self.emit(out, 1, f"{self.rd(last.value.name)} = _out_r", last.line)
        self.reverse(fn.body, out, 1)
        results = ", ".join(self.rd(p) for p in fn.params)
        self.emit(out, 1, f"return ({results}{',' if len(fn.params) == 1 else ''})")
        deferred_from = self.append_deferred(out)
        source, line_map = program_text(out)
        return Generated(fwd_name, rev_name, source, self.constants, fn.params, line_map,
                         deferred_from, tuple(self.deferred_names or ()))


def _drop_unread_global_fdata(out: list, global_lines: dict, fd: Any) -> None:
    """A global's fdata that no line of the forward pass reads (``np_f`` where ``np`` only
    serves ``np.sin``) is not computed: one call fewer per call of the function."""
    if not global_lines:
        return
    start = min(global_lines.values())
    text = "\n".join(line for line, _ in out[start:])
    fdata = {fd(name): k for name, k in global_lines.items()}
    names = "|".join(sorted(map(re.escape, fdata), key=len, reverse=True))
    uses = collections.Counter(re.findall(rf"(?<![\w.])(?:{names})\b", text))  # one pass for all
    for name, k in fdata.items():
        if uses[name] == 1:  # its definition only
            line, number = out[k]
            out[k] = (line.split(";")[0], number)


def generate_reverse(fn: ir.Function, globals_: dict | None = None) -> Generated:
    """Forward and reverse source for ``fn``; with the function's ``globals_``, calls through
    global paths (``np.sin``) can use inline templates too."""
    return ReverseGenerator(fn, globals_).generate()
