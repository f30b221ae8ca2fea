"""``yb.show``: the derivative program yuebing generates for a function, as Python to read.

``show(f)`` prints the whole generated code: for each operation, a fast path per type it knows
(floats, float64 arrays, ...) behind ``if type(x) is ...:`` guards, and the generic rule call
as the last resort. That is the program, but most of it is cases a given call never takes.

``show(f, *example_args)`` prints the program *specialised to the example arguments*: it runs the
derivative once on copies of them (never on the caller's objects), records which instructions
of the generated code ran, and prints the generated code with every branch yuebing made
(type guards, tape dispatch, activity and zero checks, size switches, retries) replaced by the
way it went. The user's own control flow stays: the ifs, whiles and fors that come from ``f``
keep both their branches and their loops, with their comments naming ``f``'s lines; a branch of
``f`` the examples never reached is shown as ``pass  # not reached``. ``guards=True`` prints
the whole program even with examples; ``stage="ir"`` prints the normal form it is made from.

How the lines that ran are found: ``sys.settrace`` with per-opcode events, restricted to the
frames of the generated code (its file name), counts each instruction; ``dis`` gives every
instruction's source span, so an AST node of the generated source ran if an instruction inside
its span did, and a branch's entry count is the count of its first instruction. The rewriting is
done on the ``ast`` of the generated source; what it left unchanged keeps its generated text,
what it rewrote is printed by ``ast.unparse``, and the generated comments come back by line.

``api.reverse`` and ``api.forward`` re-export ``show`` and ``show_forward`` from here, so this
module imports them only inside functions.
"""
from __future__ import annotations

import ast
import bisect
import copy
import dis
import io
import sys
import textwrap
import tokenize
import types
from collections import Counter
from typing import Any, Callable

import numpy as np
from ..frontend.parsing import parse as parse_source

__all__ = ["show", "show_forward", "specialise_source"]

_MODES = ("reverse", "forward", "hvp")
_NOT_REACHED = "not reached with the example arguments"


def show(f: Callable, *example_args: Any, mode: str = "reverse", stage: str = "generated",
         guards: bool = False) -> str:
    """The code yuebing generates for ``f``: ``stage="ir"`` for the normal form,
    ``"generated"`` for the derivative program (readable Python). ``mode`` is ``"reverse"``
    (the forward and reverse passes), ``"forward"`` (the JVP code) or ``"hvp"`` (the
    forward-over-reverse code).

    With ``example_args`` the program is specialised to them: the derivative runs once on
    copies of the arguments (the caller's are not touched) and only the paths that run took
    are printed, without the type guards for other types; the branches and loops of ``f``
    itself stay. ``guards=True``, or no examples, prints the whole program."""
    try:
        return _show(f, example_args, mode, stage, guards)
    except Exception as error:  # as every entry point: the user's frames, not yuebing's
        from .common import hide_internal_frames

        raise hide_internal_frames(error) from error.__cause__


def _show(f: Callable, example_args: tuple, mode: str, stage: str, guards: bool) -> str:
    from ..ir.nodes import format_function

    if mode not in _MODES:
        raise ValueError("mode must be 'reverse', 'forward' or 'hvp'")
    if stage not in ("ir", "generated"):
        raise ValueError("stage must be 'ir' or 'generated'")
    rule = _rule(f, mode)
    if stage == "ir":
        return format_function(rule.ir)
    source = rule.generated.source
    if guards or not example_args:
        return source
    if sys.version_info < (3, 11):  # instructions have no column spans before 3.11
        return "# (specialising to examples needs Python 3.11 or later: the whole program follows)\n" + source
    codes = [fn.__code__ for fn in (getattr(rule, "forward", None), getattr(rule, "reverse", None))
             if isinstance(fn, types.FunctionType)]
    counts = _count_instructions(codes[0].co_filename, lambda: _run_example(f, example_args, mode))
    executed = _Executed(codes, counts)
    text = specialise_source(source, executed, _user_control(rule.ir, rule.generated.line_map))
    return f"# {_describe(example_args)}\n{text}"


def show_forward(f: Callable, *example_args: Any, stage: str = "generated", guards: bool = False) -> str:
    """The forward-mode code yuebing generates for Python function ``f`` (``stage="ir"``: the
    normal form it is generated from); with ``example_args``, specialised to them as in
    ``show``."""
    return show(f, *example_args, mode="forward", stage=stage, guards=guards)


# ------------------------------------------------------------------ the rule and one example run

def _rule(f: Callable, mode: str) -> Any:
    if mode == "reverse":
        from ..transform.runtime import derived_rule

        return derived_rule(f)
    if mode == "forward":
        from ..transform.forward_runtime import derived_frule

        return derived_frule(f)
    from ..transform.second_order import dual_rule

    return dual_rule(f)


def _run_example(f: Callable, args: tuple, mode: str) -> None:
    """The derivative of ``f`` at ``args`` once, as ``value_and_grad``/``jvp``/``hvp`` would run
    it, on structural copies of ``args`` (one copy of them all: aliasing between arguments is
    kept) with random non-zero tangents, so no zero-cotangent shortcut hides the usual path."""
    from ..tangents import NoTangent, randn_tangent, structural_copy

    rng = np.random.default_rng(0)
    copies = tuple(structural_copy(tuple(args)))
    if mode == "reverse":
        from .reverse import vjp

        value, pullback = vjp(f, *copies)
        pullback(randn_tangent(rng, value))
        return
    tangents = randn_tangent(rng, copies)  # of the tuple: arguments sharing data share tangents
    if not isinstance(tangents, tuple):  # no argument carries a derivative
        tangents = (NoTangent,) * len(copies)
    if mode == "forward":
        from .forward import jvp

        jvp(f, copies, tangents)
    else:
        from .second_order import hvp

        hvp(f, copies, tangents)


def _describe(args: tuple) -> str:
    def one(a: Any) -> str:
        if isinstance(a, np.ndarray):
            return f"ndarray {a.dtype} {a.shape}"
        return type(a).__name__

    kinds = ", ".join(one(a) for a in args)
    return (f"specialised to the example arguments ({kinds}): only the paths they took; "
            "show(..., guards=True) prints every case")


# ------------------------------------------------------------------ which instructions ran

def _count_instructions(filename: str, run: Callable[[], None]) -> dict[types.CodeType, Counter]:
    """Run ``run()`` counting, per code object of generated file ``filename``, how often each
    instruction (by offset) executed. Other frames are not traced. The tracer that was
    installed before (a debugger, coverage) is put back afterwards."""
    counts: dict[types.CodeType, Counter] = {}

    def local(frame: types.FrameType, event: str, arg: Any) -> Any:
        if event == "opcode":
            counts[frame.f_code][frame.f_lasti] += 1
        return local

    def global_(frame: types.FrameType, event: str, arg: Any) -> Any:
        if frame.f_code.co_filename != filename:
            return None
        counts.setdefault(frame.f_code, Counter())
        frame.f_trace_lines = False
        frame.f_trace_opcodes = True
        return local

    previous = sys.gettrace()
    sys.settrace(global_)
    try:
        run()
    finally:
        sys.settrace(previous)
    return counts


class _Executed:
    """Execution counts of the generated functions' instructions, looked up by source span."""

    def __init__(self, codes: list[types.CodeType], counts: dict[types.CodeType, Counter]) -> None:
        self.by_function: dict[tuple[str, int], list] = {}
        self.any_ran = any(counts.get(code) for code in codes)
        for code in codes:
            ran = counts.get(code, Counter())
            rows = []
            for ins in dis.get_instructions(code):
                p = ins.positions
                if p is None or None in (p.lineno, p.end_lineno, p.col_offset, p.end_col_offset):
                    continue
                rows.append(((p.lineno, p.col_offset), (p.end_lineno, p.end_col_offset), ins.offset, ran[ins.offset]))
            rows.sort()
            self.by_function[(code.co_name, code.co_firstlineno)] = rows
        self.rows: list = []
        self.starts: list = []

    def enter(self, function: ast.FunctionDef) -> bool:
        """Look up spans in ``function`` from now on; False if it is not one of ours."""
        self.rows = self.by_function.get((function.name, function.lineno), [])
        self.starts = [row[0] for row in self.rows]
        return bool(self.rows)

    def _inside(self, first: ast.AST, last: ast.AST) -> list:
        start = (first.lineno, first.col_offset)
        end = (last.end_lineno, last.end_col_offset)
        lo = bisect.bisect_left(self.starts, start)
        hi = bisect.bisect_right(self.starts, end)
        return [row for row in self.rows[lo:hi] if row[1] <= end]

    def entries(self, nodes: list) -> int | None:
        """How often the code of ``nodes`` (consecutive nodes) was entered: the count of its
        first instruction. None when it compiled to no instruction."""
        inside = self._inside(nodes[0], nodes[-1]) if nodes else []
        if not inside:
            return None
        return min(inside, key=lambda row: row[2])[3]

    def ran(self, nodes: list) -> bool:
        """Whether any instruction of ``nodes`` ran."""
        return any(row[3] for row in self._inside(nodes[0], nodes[-1])) if nodes else False


# ------------------------------------------------------------------ the user's control flow

def _user_control(function_ir: Any, line_map: dict[int, int]) -> "_UserControl":
    """What in the generated code is ``f``'s own control flow: the tests of its ifs and
    whiles (by the user's line they come from), and the statements copied from ``f`` as they
    are (``ir.Opaque``: loop bookkeeping for break and continue)."""
    from ..ir import nodes as ir

    tests: set[tuple[int, str]] = set()
    opaque: set[str] = set()

    def atom(a: Any) -> str | None:
        if isinstance(a, ir.Var):
            return a.name
        if isinstance(a, ir.Global):
            return a.path
        if isinstance(a, ir.Const):
            return repr(a.value)
        return None

    def walk(body: list) -> None:
        for s in body:
            if isinstance(s, (ir.If, ir.While)) and atom(s.test) is not None:
                tests.add((s.line, atom(s.test)))
            if isinstance(s, ir.Opaque):
                try:
                    tree = parse_source(textwrap.dedent(s.source))
                except SyntaxError:
                    continue
                opaque.update(ast.dump(node) for node in ast.walk(tree) if isinstance(node, ast.stmt))
            for block in ir.child_blocks(s):
                walk(block)

    walk(function_ir.body)
    return _UserControl(tests, opaque, line_map)


class _UserControl:
    """Tells ``f``'s own ifs (kept with both branches) and copied statements (kept as they
    are) from the branches yuebing generated (replaced by the way they went)."""

    def __init__(self, tests: set, opaque: set, line_map: dict[int, int]) -> None:
        self.tests, self.opaque, self.line_map = tests, opaque, line_map

    def is_users_if(self, node: ast.If) -> bool:
        test = node.test
        if isinstance(test, ast.Call) and isinstance(test.func, ast.Name) and test.func.id == "_pop" and not test.args:
            return True  # the reverse pass replaying one of f's branches
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test = test.operand  # a while loop's exit: ``if not <test>: break``
        return (self.line_map.get(node.lineno), ast.unparse(test)) in self.tests

    def is_copied(self, node: ast.stmt) -> bool:
        return ast.dump(node) in self.opaque


# ------------------------------------------------------------------ specialising the source

def specialise_source(source: str, executed: _Executed, user: _UserControl) -> str:
    """``source`` with every branch of yuebing's own that went one way in ``executed``
    replaced by that way (see the module docstring); the result is valid Python."""
    if not executed.any_ran:
        return "# (the example arguments ran none of this code: all of it follows)\n" + source
    tree = parse_source(source)
    comments = _comments(source)
    keep: set[tuple] = set()  # the ifs that must stay whole: a walrus target they set is read later
    while True:
        specialiser = _Specialiser(executed, user, keep, set(comments))
        result = copy.deepcopy(tree)
        specialiser.module(result)
        unsafe = specialiser.unsafe_drops(result)
        if not unsafe:
            break
        keep |= unsafe
    printer = _Printer(source, comments, specialiser.notes)
    return printer.module(result)


class _Specialiser:
    """One pass over the module's AST (a copy), replacing branches by the way they went."""

    def __init__(self, executed: _Executed, user: _UserControl, keep: set[tuple], comment_lines: set[int]) -> None:
        self.executed, self.user, self.keep, self.comment_lines = executed, user, keep, comment_lines
        self.notes: dict[int, tuple[list[str], str | None]] = {}  # id(stmt) -> comments above, comment after
        self.dropped: list[tuple[tuple, str, set[str]]] = []  # (the if's place, its function, walrus names lost)
        self.function = ""

    def body(self, stmts: list) -> list:
        out: list = []
        for s in stmts:
            out.extend(self.statement(s))
        return out

    def module(self, tree: ast.Module) -> None:
        for s in tree.body:  # the generated functions: forward and reverse passes, or the JVP
            if isinstance(s, ast.FunctionDef) and self.executed.enter(s):
                self.function = s.name
                s.body = self.body(s.body)

    def statement(self, s: ast.stmt) -> list:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) or self.user.is_copied(s):
            s.yuebing_verbatim = True  # a nested definition, or f's own code copied: printed as it was
            return [s]
        if isinstance(s, ast.If):
            return self.if_(s)
        if isinstance(s, ast.Try) and not s.finalbody and s.handlers:
            if self.executed.entries(s.body) and not any(self.executed.ran(h.body) for h in s.handlers):
                return self.body(s.body) + self.body(s.orelse)
        loop_never_entered = isinstance(s, (ast.For, ast.While)) and self.executed.entries(s.body) == 0
        _fold_expressions(s, self.executed)
        if _assigns_itself(s):
            return []  # `_g = 0.0 if _g is _NR else _g` that went the second way
        for field in ("body", "orelse", "finalbody"):
            if getattr(s, field, None):
                setattr(s, field, self.body(getattr(s, field)) or [ast.Pass()])
        for handler in getattr(s, "handlers", []):
            handler.body = self.body(handler.body) or [ast.Pass()]
        if loop_never_entered:
            s.body = [self._not_reached()]
        return [s]

    def _not_reached(self) -> ast.stmt:
        stub = ast.Pass()
        self.notes[id(stub)] = ([], _NOT_REACHED)
        return stub

    def if_(self, s: ast.If, inherited: int | None = None) -> list:
        """``inherited``: the line of the comment heading the chain of ifs ``s`` is an ``elif``
        of (``# inline: ...`` names the operation every fast path of the chain computes)."""
        run = self.executed
        if self.user.is_users_if(s) or _place(s) in self.keep:
            _fold_expressions(s, run, ("test",))
            for field in ("body", "orelse"):
                branch = getattr(s, field)
                if branch and run.entries(branch) == 0 and run.entries([s.test]):
                    setattr(s, field, [self._not_reached()])
                else:
                    setattr(s, field, self.body(branch) or ([ast.Pass()] if field == "body" else []))
            return [s]
        tests = run.entries([s.test])
        into_body = run.entries(s.body)
        into_else = run.entries(s.orelse) if s.orelse else (None if tests is None or into_body is None else tests - into_body)
        if not tests or into_body is None or into_else is None or (into_body and into_else):
            # not run, no instruction to tell, or both ways: the if stays, its branches specialised
            _fold_expressions(s, run, ("test",))
            s.body = self.body(s.body) or [ast.Pass()]
            s.orelse = self.body(s.orelse)
            return [s]
        taken = s.body if into_body else s.orelse
        hoisted, lost = _walrus_effects(s.test, test_was_true=bool(into_body))
        if lost:
            self.dropped.append((_place(s), self.function, lost))
        comment = self._header_comment(s) or inherited
        if into_body:
            result = hoisted + self.body(taken)
        elif len(taken) == 1 and isinstance(taken[0], ast.If) and not self.user.is_users_if(taken[0]):
            result = hoisted + self.if_(taken[0], comment)  # an elif: the next fast path of the chain
            comment = None
        else:  # the fallback: the comment described the fast path (an array block, ...) not taken
            result = hoisted + self.body(taken)
            comment = None
        if comment is not None and result:
            above, after = self.notes.get(id(result[0]), ([], None))
            self.notes[id(result[0])] = ([comment] + above, after)
        return result

    def _header_comment(self, s: ast.If) -> int | None:
        """The line of the comment on an if's header, which is to head the code replacing the
        if; None when there is none, or the body follows on the same line (the comment is then
        the body's)."""
        line = s.test.end_lineno
        return line if line in self.comment_lines and s.body and s.body[0].lineno > line else None

    def unsafe_drops(self, module: ast.Module) -> set[tuple]:
        """The ifs whose pruning lost a walrus assignment that later code reads."""
        bodies = {getattr(f, "name", None): f.body for f in module.body if isinstance(f, ast.FunctionDef)}
        return {place for place, function, names in self.dropped
                if _reads_unassigned(bodies.get(function, []), names, set())}


def _assigns_itself(s: ast.stmt) -> bool:
    return (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and isinstance(s.value, ast.Name) and s.value.id == s.targets[0].id)


def _place(s: ast.stmt) -> tuple:
    return (s.lineno, s.col_offset)


def _walrus_effects(test: ast.expr, test_was_true: bool) -> tuple[list[ast.stmt], set[str]]:
    """The walrus assignments of an if's ``test`` that certainly ran, as statements in order,
    and the names of those that may or may not have run (dropped with the test)."""
    certain: list[ast.NamedExpr] = []

    def visit(node: ast.AST, outcome: bool | None) -> None:
        if isinstance(node, ast.BoolOp):
            is_and = isinstance(node.op, ast.And)
            if outcome is None:  # its value is not known: only the first operand surely ran
                visit(node.values[0], None)
            elif outcome == is_and:  # a true `and` / false `or`: every operand ran, with that outcome
                for value in node.values:
                    visit(value, outcome)
            else:
                visit(node.values[0], None)
            return
        if isinstance(node, (ast.IfExp, ast.Lambda, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)):
            if isinstance(node, ast.IfExp):
                visit(node.test, None)
            return
        if isinstance(node, ast.NamedExpr):
            visit(node.value, None)
            certain.append(node)
            return
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            visit(node.operand, None if outcome is None else not outcome)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, None)

    visit(test, test_was_true)
    every = {n.target.id for n in ast.walk(test) if isinstance(n, ast.NamedExpr)}
    surely = {n.target.id for n in certain}
    statements = [ast.Assign(targets=[ast.Name(n.target.id, ast.Store())], value=n.value, lineno=None) for n in certain]
    return statements, every - surely


def _reads_unassigned(body: list, names: set[str], assigned: set[str]) -> bool:
    """Whether a statement of ``body`` reads one of ``names`` that no earlier statement of the
    same block (or of an enclosing one) assigned."""
    assigned = set(assigned)
    for s in body:
        inner = [getattr(s, f) for f in ("body", "orelse", "finalbody") if isinstance(getattr(s, f, None), list)]
        inner += [h.body for h in getattr(s, "handlers", [])]
        heads = [child for child in ast.iter_child_nodes(s) if not isinstance(child, (ast.stmt, ast.excepthandler))]
        for head in heads:
            nodes = list(ast.walk(head))
            own = {n.target.id for n in nodes if isinstance(n, ast.NamedExpr)}  # `(_s := x) != _s`
            if any(isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load) and n.id in names - assigned - own for n in nodes):
                return True
        if any(_reads_unassigned(block, names, assigned) for block in inner):
            return True
        if isinstance(s, ast.Assign):
            assigned.update(n.id for t in s.targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return False


def _fold_expressions(node: ast.stmt, executed: _Executed, fields: tuple[str, ...] | None = None) -> None:
    """Replace, in the expressions of statement ``node`` (``fields`` of it, or all; not in
    nested statements), each conditional expression that went one way by that way. One whose
    test has a walrus is kept: its assignment matters. What changed is marked, for the printer."""

    class Fold(ast.NodeTransformer):
        changed = False

        def visit_IfExp(self, e: ast.IfExp) -> ast.AST:
            if executed.entries([e.test]) and not any(isinstance(n, ast.NamedExpr) for n in ast.walk(e.test)):
                body, orelse = executed.ran([e.body]), executed.ran([e.orelse])
                known = executed.entries([e.body]) is not None and executed.entries([e.orelse]) is not None
                if body != orelse and known:
                    self.changed = True
                    return self.visit(e.body if body else e.orelse)
            return self.generic_visit(e)

    for field, value in ast.iter_fields(node):
        if fields is not None and field not in fields:
            continue
        values = value if isinstance(value, list) else [value]
        for k, v in enumerate(values):
            if not isinstance(v, ast.expr):
                continue
            fold = Fold()
            new = fold.visit(v)
            if fold.changed:
                new.yuebing_rewritten = node.yuebing_rewritten = True  # printed by ast.unparse
            if isinstance(value, list):
                value[k] = new
            else:
                setattr(node, field, new)


# ------------------------------------------------------------------ printing with the comments

def _comments(source: str) -> dict[int, str]:
    """The comment of each line of ``source`` that has one."""
    return {token.start[0]: token.string for token in tokenize.generate_tokens(io.StringIO(source).readline)
            if token.type == tokenize.COMMENT}


class _Printer:
    """``ast.unparse`` statement by statement, keeping what the generated text had: simple
    statements that shared a line share it again, and each line's comment comes back after the
    statement it followed (or above the code that replaced the if it headed)."""

    def __init__(self, source: str, comments: dict[int, str], notes: dict) -> None:
        self.source_lines = source.splitlines()
        self.comments = comments
        self.notes = notes
        self.used: set[int] = set()
        self.lines: list[str] = []

    def module(self, tree: ast.Module) -> str:
        for k, s in enumerate(tree.body):
            if k and isinstance(s, ast.FunctionDef):
                self.lines.append("")
            self.block([s], 0)
        return "\n".join(self.lines) + "\n"

    def comment(self, line: int | None) -> str:
        if line is None or line in self.used or line not in self.comments:
            return ""
        self.used.add(line)
        return "  " + self.comments[line]

    def block(self, stmts: list, indent: int) -> None:
        pad = "    " * indent
        k = 0
        while k < len(stmts):
            s = stmts[k]
            above, after = self.notes.get(id(s), ([], None))
            for line in above:
                text = self.comment(line)
                if text:
                    self.lines.append(pad + text.strip())
            if _is_compound(s) and getattr(s, "yuebing_verbatim", False):
                self.verbatim(s, indent)
                k += 1
                continue
            if _is_compound(s):
                self.compound(s, indent)
                k += 1
                continue
            group = [s]  # simple statements that were on one line stay on one line
            while (k + len(group) < len(stmts) and not _is_compound(stmts[k + len(group)])
                   and _same_line(group[-1], stmts[k + len(group)])
                   and not self.notes.get(id(stmts[k + len(group)]), ([], None))[0]):
                group.append(stmts[k + len(group)])
            text = "; ".join(self.text(g) for g in group)
            tail = self.comment(getattr(group[-1], "end_lineno", None))
            if after:
                tail = tail or f"  # {after}"
            self.lines.append(pad + text + tail)
            k += len(group)

    def text(self, s: ast.stmt) -> str:
        """A simple statement: its generated text when it is unchanged, else ``ast.unparse``."""
        if getattr(s, "lineno", None) is None or s.end_lineno != s.lineno or getattr(s, "yuebing_rewritten", False):
            return ast.unparse(s)
        return self.source_lines[s.lineno - 1][s.col_offset:s.end_col_offset]

    def verbatim(self, s: ast.stmt, indent: int) -> None:
        """The generated lines of ``s`` (decorators and comments too), re-indented."""
        first = min([s.lineno] + [d.lineno for d in getattr(s, "decorator_list", [])])
        lines = self.source_lines[first - 1:s.end_lineno]
        self.used.update(range(first, s.end_lineno + 1))
        self.lines.extend("    " * indent + line[s.col_offset:] for line in lines)

    def expression(self, e: ast.expr) -> str:
        """An expression: its generated text when it is unchanged, else ``ast.unparse``."""
        if getattr(e, "lineno", None) is None or e.end_lineno != e.lineno or getattr(e, "yuebing_rewritten", False):
            return ast.unparse(e)
        return self.source_lines[e.lineno - 1][e.col_offset:e.end_col_offset]

    def header(self, s: ast.stmt) -> str:
        if isinstance(s, ast.If):
            return f"if {self.expression(s.test)}:"
        if isinstance(s, ast.While):
            return f"while {self.expression(s.test)}:"
        if isinstance(s, ast.For):
            return f"for {self.expression(s.target)} in {self.expression(s.iter)}:"
        return _header(s)

    def compound(self, s: ast.stmt, indent: int) -> None:
        pad = "    " * indent
        if isinstance(s, ast.If) and not s.orelse and _one_line_if(s):
            body = "; ".join(self.text(b) for b in s.body)
            self.lines.append(f"{pad}if {self.expression(s.test)}: {body}{self.comment(s.body[-1].end_lineno)}")
            return
        self.lines.append(pad + self.header(s) + self.comment(_header_line(s)))
        self.block(s.body, indent + 1)
        for handler in getattr(s, "handlers", []):
            self.lines.append(pad + _header(handler) + self.comment(_header_line(handler)))
            self.block(handler.body, indent + 1)
        orelse = getattr(s, "orelse", [])
        if isinstance(s, ast.If) and len(orelse) == 1 and isinstance(orelse[0], ast.If) and id(orelse[0]) not in self.notes:
            self.lines.append(pad + "el" + self.header(orelse[0]) + self.comment(_header_line(orelse[0])))
            self.block(orelse[0].body, indent + 1)
            rest = orelse[0].orelse
            while len(rest) == 1 and isinstance(rest[0], ast.If) and id(rest[0]) not in self.notes:
                self.lines.append(pad + "el" + self.header(rest[0]) + self.comment(_header_line(rest[0])))
                self.block(rest[0].body, indent + 1)
                rest = rest[0].orelse
            orelse = rest
        if orelse:
            self.lines.append(pad + "else:")
            self.block(orelse, indent + 1)
        if getattr(s, "finalbody", None):
            self.lines.append(pad + "finally:")
            self.block(s.finalbody, indent + 1)


def _is_compound(s: ast.stmt) -> bool:
    return any(isinstance(getattr(s, f, None), list) and getattr(s, f) for f in ("body", "orelse", "handlers", "finalbody"))


def _same_line(a: ast.stmt, b: ast.stmt) -> bool:
    return getattr(a, "end_lineno", None) is not None and a.end_lineno == getattr(b, "lineno", None)


def _one_line_if(s: ast.If) -> bool:
    return all(not _is_compound(b) and getattr(b, "lineno", None) == s.lineno for b in s.body)


def _header_line(s: ast.AST) -> int | None:
    """The line a compound statement's header ends on (its colon's), where its comment is."""
    if getattr(s, "lineno", None) is None:
        return None
    heads = [c for c in ast.iter_child_nodes(s) if not isinstance(c, (ast.stmt, ast.excepthandler))]
    return max([s.lineno] + [getattr(c, "end_lineno", None) or s.lineno for c in heads])


def _header(s: ast.AST) -> str:
    """The first line of a compound statement (``if x:``, ``for a in b:``, ``except E:``)."""
    shell = copy.copy(s)
    shell.body = [ast.Pass()]
    if hasattr(shell, "orelse"):
        shell.orelse = []
    if isinstance(shell, ast.Try):
        shell.handlers, shell.finalbody = [], []
        return "try:"
    return ast.unparse(shell).splitlines()[0]
