"""Stage 5c, code generation: the dual reverse program of a function (forward-over-reverse).

``DualReverseGenerator`` emits the reverse-mode program of a function (the generic, template-free
form of ``transform/reverse.py``) in which every value carries the tangent the forward transform
would give it. Each variable ``v`` of the reverse program becomes four locals -- ``v`` (primal),
``v_f`` (its fdata), ``v_d`` (the tangent of ``v``) and ``v_fd`` (the tangent of ``v_f``) -- and
each rdata ``v_r`` gets its tangent ``v_rd``. Call sites pass 4-tuples
``(primal, fdata, tangent, fdata_tangent)``. The runtime the generated code calls
(``call_rrule2`` and the namespace) and the compiled rule per function (``DualRule``) are in
``transform/second_order.py``.
"""
from __future__ import annotations

import types
from typing import Any, Callable

from ..ir import nodes as ir
from .direct_calls import DualDirectCalls
from .dual_block_forms import DualBlockForms, drop_unread_global_parts
from .dual_float_loops import DualFloatLoops
from .dual_templates import dual_template, dual_write, reverse_lines
from .closure_cells import captured_entries, define_closure
from .generated_text import Generated, is_literal, program_text
from .reverse import ReverseGenerator


def _has_float(value: tuple) -> bool:
    return any(isinstance(v, (float, complex)) or isinstance(v, tuple) and _has_float(v) for v in value)


# --------------------------------------------------------------------------------------------
# Generator
# --------------------------------------------------------------------------------------------


class DualReverseGenerator(DualDirectCalls, DualBlockForms, DualFloatLoops, ReverseGenerator):
    """The reverse-mode program of a function with forward-mode tangents on every value."""

    float_blocks = False  # float arithmetic runs inline (dual_templates.py); arrays in dual blocks

    def __init__(self, fn: ir.Function, globals_: dict | None = None) -> None:
        super().__init__(fn, globals_)  # globals resolve functions for dual_templates.py
        self._dual_blocks: dict = {}  # id of a block's first statement -> its DualArrayBlock
        used = set(self.vars) | set(fn.global_names) | {f"_cell_{v}" for v in fn.free_vars} \
            | {f"_cellobj_{v}" for v in fn.cell_backed}
        suffix = self.names.f  # "_f" unless that collides
        while any(n + s in used for n in used for s in (suffix, suffix[:-1] + "d", suffix + "d", suffix[:-1] + "rd")):
            suffix = "_" + suffix
        self.d_suffix, self.fd_suffix, self.rd_suffix = suffix[:-1] + "d", suffix + "d", suffix[:-1] + "rd"

    # ------------------------------------------------------------ naming

    def dd(self, name: str) -> str:
        return name + self.d_suffix

    def fdd(self, name: str) -> str:
        return name + self.fd_suffix

    def rdd(self, name: str) -> str:
        return name + self.rd_suffix

    def tangent(self, a: ir.Atom) -> str:
        """The tangent expression of an atom."""
        if isinstance(a, ir.Var):
            return "_NT" if a.name in self.integers else self.dd(a.name)
        if isinstance(a, ir.Global) and "." not in a.path:
            return self.dd(a.path)
        if isinstance(a, ir.Global):
            return f"_zt({a.path})"
        value = a.value
        if type(value) is float:
            return "0.0"
        if type(value) is complex:
            return "0j"
        if is_literal(value) and not (isinstance(value, tuple) and _has_float(value)):
            return "_NT"
        if isinstance(value, (types.FunctionType, types.BuiltinFunctionType, type, types.ModuleType)) \
                and not getattr(value, "__closure__", None) or callable(value) and type(value).__module__ == "numpy":
            return "_NT"  # functions and classes known now carry no tangent
        return f"_zt({self.const(value)})"

    def fdata_tangent(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Var):
            return "_NF" if a.name in self.integers else self.fdd(a.name)
        if isinstance(a, ir.Global) and "." not in a.path:
            return self.fdd(a.path)
        return "_NF"

    def codual(self, a: ir.Atom) -> str:
        return f"({self.primal(a)}, {self.fdata(a)}, {self.tangent(a)}, {self.fdata_tangent(a)})"

    def _four(self, name: str) -> str:
        return f"{name}, {self.fd(name)}, {self.dd(name)}, {self.fdd(name)}"

    def _templates(self, s: ir.Call) -> list:
        return []

    # ------------------------------------------------------------ forward

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        template = s.dual_template = dual_template(self, s) or dual_write(self, s)  # type: ignore[attr-defined]
        if template is None:
            super().fwd_Call(s, out, indent)
            return
        self.emit(out, indent, f"if {template.guard}:  # inline: {ir._call_text(s)}", s.line)
        for text in template.forward:
            self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self._generic_call(s, out, indent + 1)

    def _generic_call(self, s: ir.Call, out: list, indent: int) -> None:
        args = [self.codual(a) for a in s.args]
        args += [f"{k}={self.codual(v)}" for k, v in s.kwargs]
        if s.star_args is not None:
            args.append(f"_STAR={self.codual(s.star_args)}")
        if s.star_kwargs is not None:
            args.append(f"_STARSTAR={self.codual(s.star_kwargs)}")
        self.emit(out, indent, f"_o, _pb = _rrule2({', '.join([self.codual(s.func)] + args)})", s.line)
        if s.target:
            self.emit(out, indent, f"{self._four(s.target)} = _o", s.line)
        self.emit(out, indent, "_push(_pb)", s.line)

    def fwd_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        if s.target in self.integers:
            self.emit(out, indent, f"{s.target} = {self.primal(s.source)}", s.line)
            return
        self.emit(out, indent, f"{self._four(s.target)} = {self.codual(s.source)}", s.line)

    def fwd_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        start = len(out)
        super().fwd_ForRange(s, out, indent)
        if s.var not in self.integers:  # the loop variable holds ints: no tangent
            for k in range(start, len(out)):
                text, line = out[k]
                if text.strip() == f"{self.fd(s.var)} = _NF":
                    out[k] = (f"{text}; {self.dd(s.var)} = _NT; {self.fdd(s.var)} = _NF", line)
                    break

    def fwd_Return(self, s: ir.Return, out: list, indent: int) -> None:
        self.emit(out, indent, f"return {self.codual(s.value)}", s.line)

    def fwd_Opaque(self, s: ir.Opaque, out: list, indent: int) -> None:
        self.emit(out, indent, s.source, s.line)
        for name in s.defines:
            self.emit(out, indent, f"{self.fd(name)} = {self.fdd(name)} = _NF; {self.dd(name)} = _zt({name})", s.line)

    def fwd_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        # the closure's fdata and fdata tangent hold one box per captured variable (where its
        # cotangents accumulate), its tangent the captured values' tangents
        define_closure(self, s, out, indent)
        shared = self.fn.cell_backed  # variables the closure writes (nonlocal): shared boxes

        def tangent(name: str) -> str:
            if name == s.target and name not in shared and name not in s.shared:
                return "_SELF"
            if name in shared:
                return self.dd("_cellobj_" + name)
            if name in s.shared:
                return self.dd("_cell_" + name)
            return "_NT" if name in self.integers else self.dd(name)

        pairs = {part: captured_entries(self, s, part, self.integers) for part in (self.fd, self.fdd)}
        tangents = ", ".join(f"{name!r}: {tangent(name)}" for name in s.free_vars)
        t = s.target
        self.emit(out, indent, f"{self.fd(t)} = _closure_fdata({t}, {{{pairs[self.fd]}}}); "
                               f"{self.fdd(t)} = _closure_fdata({t}, {{{pairs[self.fdd]}}}, 'fdata_tangent')", s.line)
        self.emit(out, indent, f"{self.dd(t)} = _closure_tangent({t}, {{{tangents}}})", s.line)
        self.emit(out, indent, f"_push({self.fd(t)}); _push({self.fdd(t)})  # the reverse pass reads the captured cotangents", s.line)

    def rev_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        self.emit(out, indent, f"_closure_fd = _pop(); _closure = _pop()  # undo line {s.line}: the closure {s.target}", s.line)
        for name in s.free_vars:
            if name in self.fn.cell_backed or name in s.shared or name in self.integers:
                continue  # its cotangent lives in the shared cell box, or it has none (an int)
            r, rd = self.rd(name), self.rdd(name)
            self.emit(out, indent, f"{r} = _acc({r}, _closure_rdata(_closure, {name!r})); "
                                   f"{rd} = _acc({rd}, _closure_rdata(_closure_fd, {name!r}))", s.line)

    def init_defined(self, name: str) -> str:
        return f"{self.fd(name)} = {self.fdd(name)} = _NF; {self.dd(name)} = _zt({name})"

    def fwd_With(self, s: ir.With, out: list, indent: int) -> None:
        self.emit(out, indent, f"with {s.items}:", s.line)
        for name in s.defines:
            self.emit(out, indent + 1, self.init_defined(name), s.line)
        self.forward(s.body, out, indent + 1)
        if not s.body and not s.defines:
            self.emit(out, indent + 1, "pass", s.line)

    # ------------------------------------------------------------ reverse

    def _accumulate(self, atom: Any, source: str, out: list, indent: int, line: int) -> None:
        if isinstance(atom, ir.Var) and atom.name not in self.integers:
            r, rd = self.rd(atom.name), self.rdd(atom.name)
            self.emit(out, indent, f"{r} = _acc({r}, _rs[{source}]); {rd} = _acc({rd}, _rsd[{source}])", line)

    def _generic_reverse(self, s: ir.Call, pullback: str, comment: str, out: list, indent: int) -> None:
        line = s.line
        if s.target:
            r, rd = self.rd(s.target), self.rdd(s.target)
            self.emit(out, indent, f"_rs, _rsd = {pullback}({r}, {rd}); {r} = {rd} = _NR{comment}", line)
        else:
            self.emit(out, indent, f"_rs, _rsd = {pullback}(_NR, _NR){comment}", line)
        self._accumulate(s.func, "0", out, indent, line)
        atoms = [*s.args, *(v for _, v in s.kwargs)] + ([s.star_args] if s.star_args is not None else []) \
            + ([s.star_kwargs] if s.star_kwargs is not None else [])
        for position, a in enumerate(atoms, start=1):
            self._accumulate(a, str(position), out, indent, line)

    def rev_Call(self, s: ir.Call, out: list, indent: int) -> None:
        template = getattr(s, "dual_template", None)
        if template is None:
            super().rev_Call(s, out, indent)
            return
        self.emit(out, indent, f"_e = _pop()  # undo line {s.line}: {ir._call_text(s)}", s.line)
        self.emit(out, indent, f"if _e is {template.marker}:", s.line)
        for text in reverse_lines(self, s, template):
            self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self._generic_reverse(s, "_e", "", out, indent + 1)

    def rev_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        if isinstance(s.source, ir.Var) and s.source.name == s.target or s.target in self.integers:
            return
        target_r, target_rd = self.rd(s.target), self.rdd(s.target)
        comment = f"  # undo line {s.line}: {s.target} = {s.source}"
        if isinstance(s.source, ir.Var) and s.source.name not in self.integers:
            source_r, source_rd = self.rd(s.source.name), self.rdd(s.source.name)
            self.emit(out, indent, f"{source_r} = _acc({source_r}, {target_r}); {source_rd} = _acc({source_rd}, {target_rd})", s.line)
        self.emit(out, indent, f"{target_r} = {target_rd} = _NR{comment}", s.line)

    # ------------------------------------------------------------ whole functions

    def generate(self) -> Generated:
        fn = self.fn
        fwd_name, rev_name = f"{fn.name}_dual_forward", f"{fn.name}_dual_reverse"
        out: list = []
        params = "".join(f", {self._four(p)}" for p in fn.params)
        self.emit(out, 0, f"def {fwd_name}(_tape, _fn, _fn_f, _fn_d, _fn_fd{params}):", fn.first_line)
        self.emit(out, 1, f'"""Forward pass of {fn.name} ({fn.filename}:{fn.first_line}) with tangents."""')
        self.emit(out, 1, "_push = _tape.append")
        global_lines = {}
        for name in fn.global_names:
            global_lines[name] = len(out)
            self.emit(out, 1, f"{name} = _global(_G, {ir.global_key(fn, name)!r}); {self.fd(name)} = _global_fdata({name}); "
                              f"{self.dd(name)} = _zt({name}); {self.fdd(name)} = _global_fdata({name}, 'fdata_tangent')")
        for name in fn.cell_backed:
            # a local that nested functions write (nonlocal): read and written through its cell,
            # with cell boxes for its fdata and fdata tangent and a shared holder for its tangent
            obj = f"_cellobj_{name}"
            self.emit(out, 1, f"if False: {name} = None  # makes {name} a local of this function")
            self.emit(out, 1, f"{obj} = (lambda: {name}).__closure__[0]; {self.fd(obj)} = _new_cell_box(); "
                              f"{self.fdd(obj)} = _new_cell_box(); {self.dd(obj)} = _CellTangent(_NT)")
        for k, name in enumerate(fn.free_vars):
            # a closure made by differentiated code carries its captured values' tangents;
            # values captured from outside are constants (no tangent)
            cell = f"_cell_{name}"
            self.emit(out, 1, f"{cell} = _fn.__closure__[{k}]; {self.fd(cell)} = _cell_fdata(_fn_f, {name!r}, {cell}); "
                              f"{self.dd(cell)} = _cell_tangent(_fn_d, {name!r}, {cell}); "
                              f"{self.fdd(cell)} = _cell_fdata(_fn_fd, {name!r}, {cell}, 'fdata_tangent')")
        self.forward(fn.body, out, 1)
        drop_unread_global_parts(out, global_lines)
        self.emit(out, 0, "")
        self.emit(out, 0, f"def {rev_name}(_tape, _out_r, _out_rd):", fn.first_line)
        self.emit(out, 1, f'"""Reverse pass of {fn.name} with tangents: (rdata, rdata tangent) of each parameter."""')
        self.emit(out, 1, "_pop = _tape.pop")
        names = [n for v in self.vars for n in (self.rd(v), self.rdd(v))]
        self.emit_no_rdata(out, 1, names)
        last = fn.body[-1]
        if isinstance(last, ir.Return) and isinstance(last.value, ir.Var):
            name = last.value.name
            self.emit(out, 1, f"{self.rd(name)}, {self.rdd(name)} = _out_r, _out_rd", last.line)
        self.reverse(fn.body, out, 1)
        comma = "," if len(fn.params) == 1 else ""
        results = ", ".join(self.rd(p) for p in fn.params)
        tangents = ", ".join(self.rdd(p) for p in fn.params)
        self.emit(out, 1, f"return ({results}{comma}), ({tangents}{comma})")
        deferred_from = self.append_dual_deferred(out)  # long float blocks' other forms (dual_deferred.py)
        source, line_map = program_text(out)
        return Generated(fwd_name, rev_name, source, self.constants, fn.params, line_map,
                         deferred_from, tuple(self.dual_deferred_names or ()))
