"""Stage 4 (forward mode): IR -> Python source computing primal and tangent together.

For every variable ``v`` of the function the generated code keeps two locals, ``v`` (the primal)
and ``v_t`` (its tangent: a full tangent, DESIGN.md §3). Each operation ``t = f(a, b)`` becomes
a call of its forward rule on duals::

    _d = _frule(_D(f, f_t), _D(a, a_t), _D(b, b_t))   # line 12: t = f(a, b)
    t, t_t = _d.primal, _d.tangent

Control flow is simply replayed (there is no tape: nothing runs backwards). Mutation needs no
special care: the forward rules update the tangents of mutated data in place exactly as they
update the primals, and tangents of identity-carrying data (arrays, lists, dicts, objects) travel
with their primals, so aliasing in the primals is aliasing in the tangents.

The structure mirrors ``reverse.py``: one generator method per IR statement, and every generated
line carries the user's line (a comment and the line map used for error messages).
"""
from __future__ import annotations

import dataclasses
import itertools
import linecache
import re
import types
from typing import Any

from ..tangents import NoTangent
from ..tangents.ops import zero_tangent
from . import templates
from .codegen import compile_checked
from ..ir import nodes as ir
from .forward_blocks import NAMESPACE as BLOCKS_NAMESPACE, ForwardArrayBlock, ForwardFloatBlock, \
    find_forward_blocks, whole_array_block
from .array_blocks import classify
from .forward_loops import NAMESPACE as LOOPS_NAMESPACE, ForwardFloatLoop
from .forward_templates import Names, forward_templates
from .direct_calls import forward_direct
from .float_blocks import LONG_BLOCK
from .closure_cells import captured_entries, define_closure
from .generated_text import ConstantNames, is_literal, program_text, resolve_path
from .statement_dispatch import StatementDispatch
from .variables import all_var_names, integer_names
from ..frontend.parsing import parse as parse_source

#: builtins that have inline templates (forward_templates.py), read as globals
_INLINE_BUILTINS = {"len": len, "getattr": getattr}


def _is_immutable_tangent(t: Any) -> bool:
    """Whether a zero tangent can be shared by every run (nothing will update it in place)."""
    if t is NoTangent or type(t) in (float, complex):
        return True
    if type(t) is tuple:
        return all(_is_immutable_tangent(x) for x in t)
    return False


@dataclasses.dataclass
class GeneratedForward:
    """Source of the forward-mode function, and the constants it refers to."""

    name: str
    source: str
    constants: dict[str, Any]
    params: list[str]
    line_map: dict[int, int]  # generated line -> user line


class ForwardGenerator(StatementDispatch, ConstantNames):
    def __init__(self, fn: ir.Function, globals_: dict | None = None) -> None:
        self.fn = fn
        self.globals = globals_
        self.vars = sorted(all_var_names(fn.body, set(fn.params)))
        used = set(self.vars) | set(fn.global_names) | {f"_cell_{v}" for v in fn.free_vars} \
            | {f"_cellobj_{v}" for v in fn.cell_backed}
        suffix = "_t"
        while any(n + suffix in used for n in used):
            suffix = "_" + suffix
        self.suffix = suffix
        ConstantNames.__init__(self)
        self.integers = integer_names(fn.body, [*fn.params, *fn.free_vars, *fn.global_names, *fn.cell_backed])

    def _resolve(self, atom: ir.Atom) -> Any:
        """The value of a function atom known at generation (a constant, or a global path)."""
        if isinstance(atom, ir.Const):
            return atom.value
        if isinstance(atom, ir.Global):
            return resolve_path(self.globals, atom.path, self.fn.global_keys)
        return None

    # ------------------------------------------------------------ naming

    def td(self, name: str) -> str:
        """The name of the tangent local of variable ``name``."""
        return name + self.suffix

    def tangent(self, a: ir.Atom) -> str:
        if isinstance(a, ir.Var):
            return self.td(a.name)
        if isinstance(a, ir.Global):
            if "." not in a.path:
                return self.td(a.path)
            return f"_gt({a.path})"  # a module attribute: a constant, with a zero tangent
        try:
            t = zero_tangent(a.value)
        except TypeError:
            t = NoTangent
        if t is NoTangent:
            return "_NT"
        if _is_immutable_tangent(t):
            return repr(t) if is_literal(t) else self.const(t)
        return f"_zt({self.const(a.value)})"  # a fresh zero tangent each time: rules may update it

    def dual(self, a: ir.Atom) -> str:
        return f"_D({self.primal(a)}, {self.tangent(a)})"

    # ------------------------------------------------------------ emission

    def body(self, body: list, out: list, indent: int) -> None:
        start = len(out)
        self.statements(body, out, indent)
        if len(out) == start:
            self.emit(out, indent, "pass")

    def statements(self, body: list, out: list, indent: int) -> None:
        """The statements of ``body``, runs of float or array arithmetic as blocks (forward_blocks.py)."""
        floats, arrays = find_forward_blocks(body, self.integers, self._resolve)
        k = 0
        while k < len(body):
            if k in floats:
                reach = self._array_reach(body, k, floats[k])
                if reach > floats[k]:  # np.sum after elementwise functions: one array block over all
                    self._array_block(body[k:reach], out, indent, float_prefix=floats[k] - k)
                else:
                    self._float_block(body[k:floats[k]], out, indent)
                k = reach
            elif k in arrays:
                self._array_block(body[k:arrays[k]], out, indent)
                k = arrays[k]
            elif isinstance(body[k], ir.ForRange):
                self._float_loop(body[k], out, indent)
                k += 1
            else:
                self.forward_statement(body[k], out, indent)
                k += 1

    loop_writes = True  # float loops may write into arrays (forward_speculative.py: not)
    generic_only = False  # a long block's fallback: rule calls only (inline variants cost more to compile)

    def _block(self, block: Any, out: list, indent: int) -> None:
        for text in block.code(self.td):
            self.emit(out, indent, text, block.first_line)
        self.emit(out, indent, "if not _fb:  # statement by statement", block.first_line)

    def _array_reach(self, body: list, start: int, stop: int) -> int:
        """Where the array form of float run ``body[start:stop]`` ends: past ``stop`` when every
        statement of the run and the next ones can join an array block, else ``stop``."""
        if stop - start > LONG_BLOCK or not whole_array_block(body[start:stop], self.integers, self._resolve):
            return stop
        reach = stop
        while reach < len(body) and classify(body[reach], self.integers, self._resolve) is not None:
            reach += 1
        return reach

    def _float_block(self, stmts: list, out: list, indent: int, arrays: bool = True) -> None:
        self._block(ForwardFloatBlock(stmts, self.integers, self._resolve, self.fresh, self.primal, self.const,
                                      self.fn.body), out, indent)
        long = len(stmts) > LONG_BLOCK
        if arrays and not long and whole_array_block(stmts, self.integers, self._resolve):
            self._array_block(stmts, out, indent + 1)  # the same arithmetic on arrays
            return
        self.generic_only = long
        self.forward_each(stmts, out, indent + 1)
        self.generic_only = False

    def _float_loop(self, s: ir.ForRange, out: list, indent: int) -> None:
        """A ``for`` loop, guarded as a float loop where its body qualifies (forward_loops.py)."""
        plan = ForwardFloatLoop.plan(s, self.integers, self._resolve, self.fresh, self.fn.body)
        if plan is None or plan.loop.written and not self.loop_writes:
            self.fwd_ForRange(s, out, indent)
            return
        for text in plan.code(f"range({self.range_bounds(s)})", self.primal, self.const, self.td):
            self.emit(out, indent, text, s.line)
        self.emit(out, indent, "if not _fb:  # statement by statement", s.line)
        self.fwd_ForRange(s, out, indent + 1)

    def _array_block(self, stmts: list, out: list, indent: int, float_prefix: int = 0) -> None:
        """An array block; its fallback starts with a float block of the first ``float_prefix``
        statements, if any (floats where the block's inputs are not arrays)."""
        self._block(ForwardArrayBlock(stmts, self.integers, self._resolve, self.fresh, self.primal, self.const,
                                      self.fn.body), out, indent)
        if float_prefix:
            self._float_block(stmts[:float_prefix], out, indent + 1, arrays=False)
        self.forward_each(stmts[float_prefix:], out, indent + 1)

    # ------------------------------------------------------------ statements

    def _known_function(self, s: ir.Call) -> Any:
        if isinstance(s.func, ir.Const):
            return s.func.value
        if isinstance(s.func, ir.Global) and self.globals is not None:
            if s.func.path in _INLINE_BUILTINS and s.func.path not in self.globals:
                return _INLINE_BUILTINS[s.func.path]  # (its guard checks the name still holds it)
            return resolve_path(self.globals, s.func.path, self.fn.global_keys)
        return None

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        value = None if self.generic_only else self._known_function(s)
        variants = [] if value is None else forward_templates(
            s, value, Names(self.primal, self.tangent, self.td))
        variants = [v for v in variants if v[0] != "False"]
        if not variants:
            if not forward_direct(self, s, out, indent):  # a Python function: called directly (direct_calls.py)
                self._generic_call(s, out, indent)
            return
        for k, (guard, lines) in enumerate(variants):
            note = f"  # line {s.line}: {ir._call_text(s)} (inline)" if k == 0 else ""
            self.emit(out, indent, f"{'if' if k == 0 else 'elif'} {guard}:{note}", s.line)
            for text in lines:
                self.emit(out, indent + 1, text, s.line)
        self.emit(out, indent, "else:", s.line)
        self._generic_call(s, out, indent + 1)

    def _generic_call(self, s: ir.Call, out: list, indent: int) -> None:
        args = self.call_arguments(s, self.dual)
        call = f"_frule({', '.join([self.dual(s.func)] + args)})"
        comment = f"  # line {s.line}: {ir._call_text(s)}" if s.line else ""
        if s.target:
            self.emit(out, indent, f"_d = {call}{comment}", s.line)
            self.emit(out, indent, f"{s.target}, {self.td(s.target)} = _d.primal, _d.tangent", s.line)
        else:
            self.emit(out, indent, f"{call}{comment}", s.line)

    def fwd_Copy(self, s: ir.Copy, out: list, indent: int) -> None:
        comment = f"  # line {s.line}" if s.line else ""
        self.emit(out, indent, f"{s.target}, {self.td(s.target)} = {self.primal(s.source)}, {self.tangent(s.source)}{comment}", s.line)

    def fwd_If(self, s: ir.If, out: list, indent: int) -> None:
        self.emit(out, indent, f"if {self.primal(s.test)}:  # line {s.line}", s.line)
        self.body(s.body, out, indent + 1)
        if s.orelse:
            self.emit(out, indent, "else:", s.line)
            self.body(s.orelse, out, indent + 1)

    def fwd_While(self, s: ir.While, out: list, indent: int) -> None:
        self.emit(out, indent, f"while True:  # line {s.line}", s.line)
        self.forward_each(s.test_body, out, indent + 1)
        self.emit(out, indent + 1, f"if not {self.primal(s.test)}:", s.line)
        self.emit(out, indent + 2, "break", s.line)
        self.statements(s.body, out, indent + 1)

    def fwd_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        self.emit(out, indent, f"for {s.var} in range({self.range_bounds(s)}):  # line {s.line}", s.line)
        self.emit(out, indent + 1, f"{self.td(s.var)} = _NT", s.line)
        self.statements(s.body, out, indent + 1)

    def fwd_Return(self, s: ir.Return, out: list, indent: int) -> None:
        self.emit(out, indent, f"return {self.primal(s.value)}, {self.tangent(s.value)}  # line {s.line}", s.line)

    def fwd_Opaque(self, s: ir.Opaque, out: list, indent: int) -> None:
        self.emit(out, indent, s.source, s.line)
        for name in s.defines:
            self.emit(out, indent, f"{self.td(name)} = _NT", s.line)

    def _definition_time_globals(self, source: str) -> list[str]:
        """Global names a nested ``def``/``lambda`` evaluates when it is created (decorators and
        default values): they must be locals here, as the generated module is not the user's."""
        import ast

        node = parse_source(source).body[0]
        if isinstance(node, ast.Expr):
            node = node.value
        if isinstance(node, ast.Assign):
            node = node.value
        args = getattr(node, "args", None)
        exprs = list(getattr(node, "decorator_list", []))
        if isinstance(args, ast.arguments):
            exprs += list(args.defaults) + [d for d in args.kw_defaults if d is not None]
        local = set(self.vars) | set(self.fn.params) | set(self.fn.global_names)
        names = {n.id for e in exprs for n in ast.walk(e) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
        return sorted(names - local - {"_G", "_user_globals"})  # (the generated module's: rebound_before_decorators)

    def fwd_MakeClosure(self, s: ir.MakeClosure, out: list, indent: int) -> None:
        for g in self._definition_time_globals(s.source):
            self.emit(out, indent, f"{g} = _global(_G, {ir.global_key(self.fn, g)!r})  # used by the definition below", s.line)
        define_closure(self, s, out, indent)
        boxes = captured_entries(self, s, self.td, set())
        self.emit(out, indent, f"{self.td(s.target)} = _closure_tangent({s.target}, {{{boxes}}})  # line {s.line}: the closure {s.target}", s.line)

    def fwd_With(self, s: ir.With, out: list, indent: int) -> None:
        self.emit(out, indent, f"with {s.items}:  # line {s.line}", s.line)
        for name in s.defines:
            self.emit(out, indent + 1, f"{self.td(name)} = _NT", s.line)
        self.body(s.body, out, indent + 1)

    def fwd_Try(self, s: ir.Try, out: list, indent: int) -> None:
        # Forward mode keeps no tape: the try runs as written, every value with its tangent.
        where = (self.fn.filename, s.line, self.fn.name)
        self.emit(out, indent, f"try:  # line {s.line}", s.line)
        self.body(s.body, out, indent + 1)
        for h in s.handlers:
            name = h.name or self.fresh("error")
            self.emit(out, indent, f"except {h.types or 'BaseException'} as {name}:", h.line)
            self.emit(out, indent + 1, f"_caught(None, 0, {name}, True, {where!r})", h.line)  # ours raised again
            self.emit(out, indent + 1, f"{self.td(name)} = _NT", h.line)
            self.body(h.body, out, indent + 1)
        if s.orelse:
            self.emit(out, indent, "else:", s.line)
            self.body(s.orelse, out, indent + 1)
        if s.finalbody:
            self.emit(out, indent, "finally:", s.line)
            self.body(s.finalbody, out, indent + 1)

    def fwd_Pass(self, s: ir.Pass, out: list, indent: int) -> None:
        self.emit(out, indent, "pass", s.line)

    # ------------------------------------------------------------ the whole function

    def generate(self) -> GeneratedForward:
        fn = self.fn
        name = f"{fn.name}_jvp"
        out: list = []
        params = ", ".join(f"{p}, {self.td(p)}" for p in fn.params)
        self.emit(out, 0, f"def {name}(_fn, _fn_t{', ' + params if params else ''}):", fn.first_line)
        self.emit(out, 1, f'"""Forward mode of {fn.name} ({fn.filename}:{fn.first_line}): primal and tangent together."""')
        body: list = []
        self.body(fn.body, body, 1)
        used = set(re.findall(r"\w+", "\n".join(text for text, _ in body)))
        for g in fn.global_names:  # a global's tangent only where the code reads it (np_t: rarely)
            tangent = f"; {self.td(g)} = _gt({g})" if self.td(g) in used else ""
            self.emit(out, 1, f"{g} = _global(_G, {ir.global_key(fn, g)!r}){tangent}")
        for v in fn.cell_backed:
            # a local that nested functions write (nonlocal): always read and written via its cell
            self.emit(out, 1, f"if False: {v} = None  # makes {v} a local of this function")
            self.emit(out, 1, f"_cellobj_{v} = (lambda: {v}).__closure__[0]; {self.td('_cellobj_' + v)} = _new_cell_box()")
        for k, v in enumerate(fn.free_vars):
            if v in fn.global_names and not _cell_used(fn.body, f"_cell_{v}"):
                # a captured module read as the global of its name (normalise.py checks the cell holds it)
                self.emit(out, 1, f"_cell_{v} = _fn.__closure__[{k}]; {self.td('_cell_' + v)} = _NT")
                continue
            self.emit(out, 1, f"_cell_{v} = _fn.__closure__[{k}]; {self.td('_cell_' + v)} = _cell_tangent(_fn_t, {v!r}, _cell_{v})")
        out += body
        source, line_map = program_text(out)
        return GeneratedForward(name, source, self.constants, fn.params, line_map)


def _cell_used(body: list, cell: str) -> bool:
    """Whether a statement of ``body`` (nested ones too) passes the cell variable ``cell`` to a call
    or reads it otherwise than in source run as is."""
    for s in body:
        atoms = [s.func, *s.args, *(v for _, v in s.kwargs)] if isinstance(s, ir.Call) else \
            [getattr(s, name, None) for name in ("source", "value", "test")]
        if any(isinstance(a, ir.Var) and a.name == cell for a in atoms) \
                or isinstance(s, ir.MakeClosure) and cell in s.source \
                or any(_cell_used(block, cell) for block in ir.child_blocks(s)):
            return True
    return False


def generate_forward(fn: ir.Function, globals_: dict | None = None) -> GeneratedForward:
    """Forward-mode source for normalised function ``fn``."""
    return ForwardGenerator(fn, globals_).generate()


_counter = itertools.count()


def compile_forward(generated: GeneratedForward, fn: types.FunctionType, runtime_names: dict[str, Any],
                    label: str = "yuebing forward", extra: dict[str, Any] | None = None) -> Any:
    """Compile generated forward-mode source, registered in ``linecache`` (tracebacks and
    ``show`` point at real generated lines) under ``<label name #n>``, with the runtime's names
    (``runtime_names``, which the forward runtime gives: this module does not import it) and
    ``extra`` ones in its namespace."""
    filename = f"<{label} {fn.__qualname__} #{next(_counter)}>"
    source = generated.source
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(runtime_names)
    namespace.update(templates.NAMESPACE)
    namespace.update(BLOCKS_NAMESPACE)
    namespace.update(LOOPS_NAMESPACE)
    namespace.update(generated.constants)
    namespace["_G"] = fn.__globals__
    # classes defined in the function belong to its module (their tangent type, their repr)
    namespace["__name__"] = fn.__globals__.get("__name__", "__main__")
    namespace.update(extra or {})
    exec(compile_checked(source, filename, fn, generated.line_map, label), namespace)  # noqa: S102 - our own generated code
    compiled = namespace[generated.name]
    compiled.__yuebing_line_map__ = generated.line_map
    return compiled


__all__ = ["GeneratedForward", "compile_forward", "generate_forward"]
