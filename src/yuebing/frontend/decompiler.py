"""CPython 3.11 bytecode (and 3.12/3.13's, rewritten into it by ``decompiler_312.py``) ->
standard-library ``ast``: the decompiler behind ``frontend/bytecode.py``.

It rebuilds a function's ``def``/``lambda`` from its code object alone, for functions that have
no source text (the interactive prompt, ``python -c``, ``exec`` of a string, cloudpickle by
value). It simulates the value stack with ``ast`` expressions and recognises the control-flow
shapes CPython 3.11's compiler emits: ``if``/``elif``/``else`` and conditional expressions
(short-circuit conditions rebuilt from their jump graph), ``while`` (both loop shapes), ``for``
with ``break``/``continue``, ``and``/``or`` values, chained comparisons, walrus, multiple and
tuple assignment, augmented assignment on names, attributes and subscripts, calls with
keywords/``*``/``**``, f-strings, nested ``def``/``lambda`` with defaults and closures,
decorators, comprehensions and generator expressions, classes (annotations, methods,
``super()``), ``with``, ``assert``, ``import``, ``del``, ``yield``, ``global``/``nonlocal``, and
``async def`` with ``await``, ``async with``, ``async for`` and asynchronous comprehensions
(``decompiler_312.py`` drops the awaits' ``SEND`` loops around them, leaving the synchronous shape).

Construct families live in mixins: ``decompiler_stores.py`` (assignments, ``del``, ``import``,
``pass``), ``decompiler_loops.py`` (``for``/``while`` with ``else``),
``decompiler_try.py`` (``try``/``except``/``else``/``finally`` from the exception table),
``decompiler_trystar.py`` (``except*``),
``decompiler_match.py`` (``match``), ``decompiler_bool.py`` (mixed ``and``/``or`` values) and
``decompiler_ops.py`` (expressions, ``yield from``); ``decompiler_312.py`` rewrites 3.12/3.13
instructions into 3.11's and rebuilds what changed in substance (inlined comprehensions, handlers
out of line, ``return`` blocks copied into each path that reaches them).

It is allowed to fail or to guess: ``bytecode.py`` compiles every reconstruction and compares it
with the live code (bytecode, names, constants, flags, nested code, exception tables); whatever
does not match is refused. Anything it does not know (patterns whose captures the compiler
shuffles, other CPython versions' instructions) raises ``DecompileError``.
"""
from __future__ import annotations

import ast
import dis
import inspect
import types
from typing import Any

from .decompiler_ops import ExpressionOps, Mark, DecompileError, negate, merge_and, NULL, COND_JUMPS
from .decompiler_stores import Ctx, StoreStatements
from .decompiler_bool import BoolValues
from .decompiler_loops import LoopStatements
from .decompiler_match import MatchStatements
from .decompiler_try import TryStatements
from .decompiler_trystar import TryStarStatements
from .decompiler_312 import NEW, NewOps, hoisted_tails, instructions


_ASYNC = inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR
_COMPREHENSIONS = {"<listcomp>": ast.ListComp, "<setcomp>": ast.SetComp, "<dictcomp>": ast.DictComp,
                   "<genexpr>": ast.GeneratorExp}


class Decompiler(StoreStatements, NewOps, LoopStatements, TryStatements, TryStarStatements, MatchStatements,
                 BoolValues, ExpressionOps):
    """Decompiles one code object (nested code objects get their own ``Decompiler``)."""

    def __init__(self, code: types.CodeType) -> None:
        self.code = code
        index_of: dict[int, int] = {}
        self.ins: list = []
        for instruction, offsets in instructions(code):  # 3.12/3.13 code in 3.11's instructions
            for offset in offsets:
                index_of[offset] = len(self.ins)
            self.ins.append(instruction)
        self.index_of = index_of
        self.targets = [index_of.get(i.argval) if i.opcode in dis.hasjrel or i.opcode in dis.hasjabs else None
                        for i in self.ins]
        self.jump_targets = {t for t in self.targets if t is not None}
        self.back_jumps: dict[int, list[int]] = {}
        for n, t in enumerate(self.targets):
            if t is not None and t <= n and not self.leaves_handler_backward(n):
                self.back_jumps.setdefault(t, []).append(n)
        self.lines = []
        line = code.co_firstlineno
        for instruction in self.ins:
            line = instruction.positions.lineno or line if instruction.positions else line
            self.lines.append(line)
        self.kwnames: tuple = ()
        self.pending_stores: list = []
        self.captured: ast.expr | None = None
        self.stored_cells: set[str] = set()
        self.stored_globals: set[str] = set()
        self.dead_names: set[str] = set()  # names read only by code the compiler dropped
        self.copied_returns: set[int] = set()  # ``return`` blocks CPython 3.12 copied where they are reached

    # ------------------------------------------------------------------ statements

    def emit(self, out: list, stmt: ast.stmt, i: int) -> None:
        stmt.lineno = stmt.end_lineno = getattr(stmt, "first_line", None) or self.lines[min(i, len(self.lines) - 1)]
        stmt.col_offset = stmt.end_col_offset = 0
        out.append(stmt)

    def run(self, start: int, end: int, stack: list, ctx: Ctx, out: list) -> list:
        """Decompile instructions ``[start, end)`` into ``out``; ``stack`` is changed in place."""
        i = start
        while i < end:
            if ctx.finallies:
                i = self.skip_finally_copies(i, ctx)
            loop = self.ins[i].opname != "FOR_ITER" and i not in ctx.heads and \
                any(i <= j < ctx.end for j in self.back_jumps.get(i, ()))
            handler = self.try_at(i, ctx)
            if handler is not None and (not loop or any(handler in self.handler_chain(j) for j in self.back_jumps[i])):
                i = self.try_statement(i, handler, stack, ctx, out)
            elif loop:
                i = self.while_loop(i, stack, ctx, out)
            else:
                matched = self.try_match(i, stack, ctx, out)
                i = self.step(i, stack, ctx, out) if matched is None else matched
        return out

    def step(self, i: int, stack: list, ctx: Ctx, out: list) -> int:
        name = self.ins[i].opname
        handler = getattr(self, f"op_{name}", None)
        if handler is None:
            raise DecompileError(f"the instruction {name}")
        result = handler(i, stack, ctx, out)
        return i + 1 if result is None else result

    def region(self, start: int, end: int, stack: list, ctx: Ctx) -> list:
        """The statements of a block; the value stack must be as it was after them."""
        work = list(stack)
        body = self.run(start, end, work, ctx, [])
        leaves = body and isinstance(body[-1], (ast.Return, ast.Raise, ast.Break, ast.Continue))
        if not leaves and (len(work) != len(stack) or any(a is not b for a, b in zip(work, stack))):
            raise DecompileError("a value left on the stack by a block")
        return body or [ast.Pass()]

    def after_exit(self, i: int, ctx: Ctx) -> int:
        """Where decompiling goes on after an unconditional transfer at ``i``: code right after
        it is reached only if something jumps there."""
        return i + 1 if i + 1 < ctx.end and i + 1 in self.jump_targets else ctx.end

    def op_RETURN_VALUE(self, i, stack, ctx, out):
        self.emit(out, ast.Return(self.expr(stack.pop())), i)
        out[-1].copied = i in self.copied_returns
        return self.after_exit(i, ctx)

    def op_RAISE_VARARGS(self, i, stack, ctx, out):
        n = self.ins[i].arg
        cause = self.expr(stack.pop()) if n == 2 else None
        exc = self.expr(stack.pop()) if n >= 1 else None
        self.emit(out, ast.Raise(exc, cause), i)
        return self.after_exit(i, ctx)

    def op_JUMP_FORWARD(self, i, stack, ctx, out):
        target = self.targets[i]
        if target in ctx.heads:
            self.emit(out, ast.Continue(), i)
        elif target == ctx.exit or (NEW and self.threaded_break(target, ctx)):
            self.emit(out, ast.Break(), i)
        elif target != ctx.follow:
            raise DecompileError("a jump out of its block")
        return self.after_exit(i, ctx)

    op_JUMP_BACKWARD = op_JUMP_FORWARD
    op_JUMP_BACKWARD_NO_INTERRUPT = op_JUMP_FORWARD

    # ------------------------------------------------------------------ conditions

    def node_expression(self, j: int, stack: list, ctx: Ctx) -> int:
        """Simulate pure expression code from ``j`` up to the next conditional jump (its index)."""
        pending = list(self.pending_stores)
        try:
            return self.pure_expression(j, stack, ctx)
        finally:  # a store tried as part of a condition must leave nothing behind
            self.pending_stores = pending

    def pure_expression(self, j: int, stack: list, ctx: Ctx) -> int:
        out: list = []
        while True:
            if j >= ctx.end or j >= len(self.ins):
                raise DecompileError("a condition")
            name = self.ins[j].opname
            if name in COND_JUMPS:
                return j
            inline = name == "FOR_ITER" and self.inline_comprehension_at(stack)
            if name.startswith(("JUMP", "RETURN", "RAISE", "FOR_ITER", "STORE_ATTR", "STORE_SUBSCR")) and not inline:
                raise DecompileError("a condition")
            j = self.step(j, stack, ctx, out)
            if out or self.pending_stores:
                raise DecompileError("a condition")

    def resolve(self, target: int) -> int:
        """A jump to a chained comparison's clean-up (``POP_TOP``; jump) goes where that jumps."""
        ins = self.ins
        if ins[target].opname == "POP_TOP" and target + 1 < len(ins) and ins[target + 1].opname in (
                "JUMP_FORWARD", "JUMP_BACKWARD"):
            return self.targets[target + 1]
        return target

    def fallthrough(self, j: int) -> int:
        """Where a condition's true path goes after its last jump at ``j - 1``."""
        ins = self.ins
        if j < len(ins) and ins[j].opname == "JUMP_FORWARD":
            target, k = self.targets[j], j + 1
            while k < target and ins[k].opname == "POP_TOP" and ins[k + 1].opname.startswith("JUMP"):
                k += 2
            if k == target and k > j + 1:
                return target
        return j

    def chain(self, i: int, value: Any, stack: list, ctx: Ctx) -> tuple:
        """The whole short-circuit condition whose first jump is at ``i``: (expression, true
        label, false label, stack after it, index after it)."""
        nodes = [self.cond_node(value, i)]
        starts: list = [None]
        work, j, best = list(stack), i + 1, None
        while True:
            nodes = self.unified_exits(nodes)
            true_label = self.fallthrough(j)
            false_label = self.false_exit(nodes, starts, true_label)
            residual = isinstance(nodes[-1][0], ast.Compare) and work and work[-1] is nodes[-1][0].comparators[-1]
            if false_label is not None and not residual:
                best = (len(nodes), true_label, false_label, list(work))
            try:
                trial = list(work)
                k = self.node_expression(j, trial, ctx)
            except DecompileError:
                break
            nodes.append(self.cond_node(trial.pop(), k))
            starts.append(j)
            work, j = trial, k + 1
        if best is None:
            raise DecompileError("a condition's jumps")
        n, true_label, false_label, work = best
        nodes, starts = nodes[:n], starts[:n]
        expression = self.build(nodes, starts, 0, n, true_label, false_label, true_label)
        return expression, true_label, false_label, work

    def unified_exits(self, nodes: list) -> list:
        """Targets meaning the same place as one: a chained comparison's clean-up resolved to a
        loop's head, and the jump back to that head that the other tests go to."""
        targets = {target for _, _, target in nodes}
        same = {self.targets[u]: u for u in targets if self.ins[u].opname in ("JUMP_FORWARD", "JUMP_BACKWARD")
                and self.targets[u] in targets}
        return [(test, when_true, same.get(target, target)) for test, when_true, target in nodes]

    def cond_node(self, value: Any, i: int) -> tuple:
        """(test, jumps when the test is true, resolved target)."""
        name = self.ins[i].opname
        value = self.expr(value)
        target = self.resolve(self.targets[i])
        if name.endswith("NOT_NONE"):
            return ast.Compare(value, [ast.Is()], [ast.Constant(None)]), False, target
        if name.endswith("_NONE"):
            return ast.Compare(value, [ast.IsNot()], [ast.Constant(None)]), False, target
        return value, COND_JUMPS[name], target

    @staticmethod
    def dests(nodes, starts, k, last_next) -> tuple:
        test, when_true, target = nodes[k]
        nxt = starts[k + 1] if k + 1 < len(nodes) else last_next
        return (target, nxt) if when_true else (nxt, target)

    def false_exit(self, nodes, starts, true_label) -> int | None:
        inside = set(starts[1:])
        exits = set()
        for k, (_, _, target) in enumerate(nodes):
            if target in inside and target not in starts[k + 1:]:
                return None
            if target not in inside:
                exits.add(target)
        exits.discard(true_label)
        return exits.pop() if len(exits) == 1 else None

    def build(self, nodes, starts, s, e, t_label, f_label, last_next) -> ast.expr:
        if e - s == 1:
            test = nodes[s][0]
            true, false = self.dests(nodes, starts, s, last_next)
            if (true, false) == (t_label, f_label):
                return test
            if (true, false) == (f_label, t_label):
                return negate(test)
            raise DecompileError("a condition's jumps")
        for m in range(s + 1, e):
            label = starts[m]
            inner = set(starts[s + 1:m])
            dests = {d for k in range(s, m) for d in self.dests(nodes, starts, k, last_next)} - inner
            for op, left_t, left_f in ((ast.And, label, f_label), (ast.Or, t_label, label)):
                if dests <= {left_t, left_f}:
                    try:
                        left = self.build(nodes, starts, s, m, left_t, left_f, last_next)
                        right = self.build(nodes, starts, m, e, t_label, f_label, last_next)
                    except DecompileError:
                        continue
                    return merge_and([left, right]) if op is ast.And else ast.BoolOp(ast.Or(), flat(ast.Or, [left, right]))
        raise DecompileError("a condition's jumps")

    def conditional(self, i, stack, ctx, out):
        """A conditional jump: ``if``/``elif``/``else``, a conditional expression, a ``while``
        loop of the inverted shape, or ``if not c: continue/break``; or ``(a and b) or c``."""
        end = self.bool_value(i, stack, ctx)
        if end is not None:
            return end
        cond, true_label, false_label, work = self.chain(i, stack.pop(), stack, ctx)
        stack[:] = work
        copied_tail = self.ternary_with_copied_tail(cond, true_label, false_label, stack, ctx)
        if copied_tail is not None:
            return copied_tail
        bottom = max((j for j in self.back_jumps.get(true_label, ())
                      if j < ctx.end and self.ins[j].opname in COND_JUMPS), default=None)
        if false_label in ctx.heads and bottom is not None and bottom + 1 == ctx.end:
            # 3.12: ``while c:`` ending a loop's body, its test's exit threaded to that loop's head
            return self.inverted_while(i, true_label, ctx.end, cond, stack, ctx, out)
        moved = self.moved_if_block(true_label, false_label, ctx) if NEW else None
        if moved is not None:  # 3.12: ``if c:`` ending a loop's body, its block (ending in a jump) after the loop's jump back
            body = self.region(moved, ctx.end, stack, ctx)
            self.emit(out, ast.If(cond, body, []), i)
            return ctx.end
        # (a jump to the loop's repeated test that is also the end of the block is a plain ``if``)
        if false_label in ctx.heads and false_label != ctx.end or (false_label == ctx.exit and false_label is not None):
            jump = ast.Continue() if false_label in ctx.heads else ast.Break()
            self.emit(out, ast.If(negate(cond), [jump], []), i)
            return true_label
        if false_label < true_label:
            raise DecompileError("a backward condition")
        last = self.ins[false_label - 1] if false_label - 1 > true_label else None
        if last is not None and last.opname in COND_JUMPS and self.targets[false_label - 1] == true_label:
            return self.inverted_while(i, true_label, false_label, cond, stack, ctx, out)
        region_end = false_label
        if false_label > ctx.end:
            if false_label != ctx.follow:
                raise DecompileError("a jump out of its block")
            region_end = ctx.end
        last_i = region_end - 1
        if region_end == false_label and last_i > true_label and self.ins[last_i].opname == "JUMP_FORWARD" \
                and self.targets[last_i] > false_label and self.targets[last_i] != ctx.exit:
            join = self.targets[last_i]
            else_end = join if join <= ctx.end else ctx.end
            if join > ctx.end and join != ctx.follow:
                raise DecompileError("a jump out of its block")
            ternary = self.ternary(cond, (true_label, last_i), (false_label, else_end), stack, ctx, join)
            if ternary is not None:
                stack.append(ternary)
                return else_end
            body = self.region(true_label, last_i, stack, ctx.sub(last_i, join))
            orelse = self.run(false_label, else_end, list(stack), ctx.sub(else_end, join), [])
            self.emit(out, ast.If(cond, body, orelse), i)
            return else_end
        body = self.region(true_label, region_end, stack, ctx.sub(region_end, false_label))
        self.emit(out, assert_or_if(cond, body), i)
        return region_end

    for _name in COND_JUMPS:
        locals()[f"op_{_name}"] = conditional
    del _name

    def moved_if_block(self, true_label: int, false_label: int, ctx: Ctx) -> int | None:
        """Where the block of an ``if`` ending a loop's body starts when 3.12 moved it past the
        jumps back to the loop's head (the test's true path jumps over them; None otherwise)."""
        if false_label not in ctx.heads:
            return None
        start = self.targets[true_label] if self.ins[true_label].opname == "JUMP_FORWARD" else true_label
        k = start - 1  # back over the jumps to the head (and a chained comparison's clean-up)
        while k > 0 and (self.ins[k].opname == "POP_TOP" or self.ins[k].opname == "JUMP_BACKWARD"
                         and self.targets[k] in ctx.heads):
            k -= 1
        if not start < ctx.end or k == start - 1 or self.ins[k].opname != "JUMP_FORWARD" or self.targets[k] != start:
            return None
        return start

    def ternary(self, cond, body, orelse, stack, ctx, join: int) -> ast.expr | None:
        try:  # (a conditional expression nested in the first branch may jump to the join itself)
            a = self.expression_region(*body, stack, ctx, follow=join)
            b = self.expression_region(*orelse, stack, ctx)
        except DecompileError:
            return None
        return ast.IfExp(cond, a, b)

    def expression_region(self, start: int, end: int, stack: list, ctx: Ctx, follow: int | None = None) -> ast.expr:
        work = list(stack)
        inner = ctx.sub(end, end if follow is None else follow)
        if self.run(start, end, work, inner, []) or len(work) != len(stack) + 1:
            raise DecompileError("an expression")
        return self.expr(work[-1])

    def op_JUMP_IF_FALSE_OR_POP(self, i, stack, ctx, out):
        """``a and b`` / ``a or b`` as a value (and a chained comparison's value)."""
        left = self.expr(stack.pop())
        target = self.targets[i]
        ins = self.ins
        if ins[target].opname == "SWAP" and ins[target + 1].opname == "POP_TOP" and \
                ins[target - 1].opname == "JUMP_FORWARD" and self.targets[target - 1] == target + 2:
            work = list(stack)
            self.run(i + 1, target - 1, work, ctx.sub(target - 1, target - 1), [])
            right = self.expr(work.pop())
            stack[:] = work[:-1]
            stack.append(merge_and([left, right]))
            if not isinstance(stack[-1], ast.Compare):
                raise DecompileError("a chained comparison")
            return target + 2
        right = self.expression_region(i + 1, target, stack, ctx)
        op = ast.And if ins[i].opname == "JUMP_IF_FALSE_OR_POP" else ast.Or
        stack.append(merge_and([left, right]) if op is ast.And else ast.BoolOp(ast.Or(), flat(ast.Or, [left, right])))
        return target

    op_JUMP_IF_TRUE_OR_POP = op_JUMP_IF_FALSE_OR_POP

    # ------------------------------------------------------------------ with

    _WITH_EXIT = ["LOAD_CONST"] * 3 + ["PRECALL", "CALL", "POP_TOP"]
    _WITH_HANDLER = ["PUSH_EXC_INFO", "WITH_EXCEPT_START", "POP_JUMP_FORWARD_IF_TRUE", "RERAISE", "COPY",
                     "POP_EXCEPT", "RERAISE", "POP_TOP", "POP_EXCEPT", "POP_TOP", "POP_TOP"]

    def op_BEFORE_WITH(self, i, stack, ctx, out):
        """``with m as t:`` whose block falls through (the exit call, then a jump over the
        handler) or returns (the value kept under the exit call, then returned)."""
        if NEW:
            return self.with_statement(i, stack, ctx, out)
        manager = self.expr(stack.pop())
        handler = self.handler_of(i + 1)
        names = [x.opname for x in self.ins[handler - 8:handler]]
        if [x.opname for x in self.ins[handler:handler + 11]] != self._WITH_HANDLER:
            raise DecompileError("a with statement")
        if self.ins[i + 1].opname == "POP_TOP":
            target, j = None, i + 2
        else:
            target, j = self.read_target(i + 1)
        stack.append(Mark("exit"))
        if names[1:] == self._WITH_EXIT + ["JUMP_FORWARD"] and self.targets[handler - 1] == handler + 11:
            body = self.region(j, handler - 7, stack, ctx.sub(handler - 7, handler - 7))
        elif names == ["SWAP"] + self._WITH_EXIT + ["RETURN_VALUE"]:
            work = list(stack)
            body = self.run(j, handler - 8, work, ctx.sub(handler - 8, handler - 8), [])
            if len(work) != len(stack) + 1:
                raise DecompileError("a with statement")
            self.emit(body, ast.Return(self.expr(work[-1])), handler - 1)
        else:
            raise DecompileError("a with statement")
        stack.pop()
        self.emit(out, self.with_kind(i)([ast.withitem(manager, target)], body), i)
        return handler + 11

    def handler_of(self, i: int) -> int:
        offset = self.ins[i].offset
        for entry in dis._parse_exception_table(self.code):
            if entry.start <= offset < entry.end:
                return self.index_of[entry.target]
        raise DecompileError("a with statement")

    # ------------------------------------------------------------------ functions

    def function(self, defaults: list | None = None, kw_defaults: dict | None = None) -> ast.stmt | ast.expr:
        """The ``def`` (or ``lambda``) of this code object."""
        code = self.code
        body = self.run(0, len(self.ins), [], Ctx(len(self.ins)), [])
        body = hoisted_tails(body) if NEW else body
        if code.co_name == "<lambda>":
            if len(body) != 1 or not isinstance(body[0], ast.Return):
                raise DecompileError("a lambda")
            return ast.Lambda(self.arguments(defaults, kw_defaults), body[0].value)
        if body and isinstance(body[-1], ast.Return) and isinstance(body[-1].value, ast.Constant) \
                and body[-1].value.value is None:
            body.pop()
        declared = []
        nonlocal_names = sorted(self.stored_cells & set(code.co_freevars))
        if nonlocal_names:
            declared.append(ast.Nonlocal(nonlocal_names))
        if self.stored_globals:
            declared.append(ast.Global(sorted(self.stored_globals)))
        doc = [ast.Expr(ast.Constant(code.co_consts[0]))] if self.has_docstring() else []
        kind = ast.AsyncFunctionDef if code.co_flags & _ASYNC else ast.FunctionDef
        node = kind(code.co_name, self.arguments(defaults, kw_defaults), doc + declared + (body or [ast.Pass()]),
                               [], None, None)
        node.lineno = code.co_firstlineno
        return node

    def has_docstring(self) -> bool:
        consts = self.code.co_consts
        if not consts or not isinstance(consts[0], str) or self.code.co_name.startswith("<"):
            return False
        return not any(i.opname == "LOAD_CONST" and i.arg == 0 for i in self.ins)

    def arguments(self, defaults: list | None, kw_defaults: dict | None) -> ast.arguments:
        code = self.code
        names = code.co_varnames
        positional, posonly, kwonly = code.co_argcount, code.co_posonlyargcount, code.co_kwonlyargcount
        n = positional + kwonly
        vararg = ast.arg(names[n]) if code.co_flags & 0x04 else None
        n += bool(vararg)
        kwarg = ast.arg(names[n]) if code.co_flags & 0x08 else None
        kw_defaults = kw_defaults or {}
        return ast.arguments(
            posonlyargs=[ast.arg(a) for a in names[:posonly]], args=[ast.arg(a) for a in names[posonly:positional]],
            vararg=vararg, kwonlyargs=[ast.arg(a) for a in names[positional:positional + kwonly]],
            kw_defaults=[kw_defaults.get(a) for a in names[positional:positional + kwonly]],
            kwarg=kwarg, defaults=list(defaults or []))

    def op_MAKE_FUNCTION(self, i, stack, ctx, out):
        flags = self.ins[i].arg
        code = stack.pop().value
        if flags & 0x08:
            stack.pop()  # the closure's cells: the nested code's free variables name them
        annotations = stack.pop() if flags & 0x04 else None
        kw_defaults = self.keyword_defaults(stack.pop()) if flags & 0x02 else None
        defaults = self.elements(stack.pop()) if flags & 0x01 else None
        if code.co_name in _COMPREHENSIONS:
            stack.append(Mark("comprehension", code))
            return
        below = stack[-2:-1] if stack and stack[-1] is NULL else stack[-1:]  # CPython 3.13: NULL above
        if below and isinstance(below[0], Mark) and below[0].kind == "build_class":
            stack.append(Mark("class_body", code))
            return
        node = Decompiler(code).function(defaults, kw_defaults)
        if annotations is not None:
            annotate(node, annotations)
        stack.append(Mark("function", node))

    def class_definition(self, code: types.CodeType, name: str, bases: list, keywords: list) -> ast.ClassDef:
        inner = Decompiler(code)
        statements = inner.run(0, len(inner.ins), [], Ctx(len(inner.ins)), [])
        node = ast.ClassDef(name, bases, keywords, class_statements(statements), [])
        node.lineno = code.co_firstlineno
        # CPython 3.13 stores the ``class`` line in the body: the statement must keep it
        node.first_line = next((s.value.value for s in statements if isinstance(s, ast.Assign)
                                and getattr(s.targets[0], "id", None) == "__firstlineno__"), None)
        return node

    def comprehension(self, code: types.CodeType, iterable: ast.expr) -> ast.expr:
        """The comprehension of a ``<listcomp>``-like code object, its first iterable given."""
        inner = Decompiler(code)
        body = inner.run(0, len(inner.ins), [], Ctx(len(inner.ins)), [])
        node = self.comprehension_of(body, _COMPREHENSIONS[code.co_name])
        node.generators[0].iter = iterable
        node.awaited = bool(code.co_flags & inspect.CO_COROUTINE)  # an async comprehension's call is awaited
        return node

    @staticmethod
    def comprehension_of(body: list, kind: type) -> ast.expr:
        """The comprehension whose loop decompiled to ``body`` (its ``return`` aside)."""
        loops = [s for s in body if not isinstance(s, ast.Return)]
        if len(loops) != 1 or not isinstance(loops[0], (ast.For, ast.AsyncFor)):
            raise DecompileError("a comprehension")
        generators: list = []
        result = comprehension_parts(loops[0], generators)
        if kind is ast.DictComp:
            return ast.DictComp(result[0], result[1], generators)
        return kind(result[0], generators)


#: names a class body's code sets by itself (3.13 adds the last two)
_CLASS_BOOKKEEPING = ("__module__", "__qualname__", "__firstlineno__", "__static_attributes__")


def class_statements(body: list) -> list:
    """A class body's statements without what the compiler adds (``__module__``, ``__qualname__``,
    the ``__class__`` cell's return) and with annotations as written (``a: float = 1.0``)."""
    out: list = []
    for stmt in body:
        target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
        if isinstance(target, ast.Name) and target.id in _CLASS_BOOKKEEPING:
            continue
        if isinstance(stmt, ast.Return):
            continue
        if isinstance(target, ast.Subscript) and isinstance(target.value, ast.Name) \
                and target.value.id == "__annotations__" and isinstance(target.slice, ast.Constant):
            name = target.slice.value
            previous = out[-1] if out else None
            value = None
            if isinstance(previous, ast.Assign) and len(previous.targets) == 1 \
                    and isinstance(previous.targets[0], ast.Name) and previous.targets[0].id == name:
                value = out.pop().value
            annotated = ast.AnnAssign(ast.Name(name, ast.Store()), stmt.value, value, 1)
            annotated.lineno = stmt.lineno
            out.append(annotated)
            continue
        out.append(stmt)
    return out or [ast.Pass()]


def comprehension_parts(stmt: ast.stmt, generators: list) -> tuple:
    """Walk the loops and ifs of a decompiled comprehension body; its element(s)."""
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        generators.append(ast.comprehension(stmt.target, stmt.iter, [], int(isinstance(stmt, ast.AsyncFor))))
        body = list(stmt.body)
        while len(body) > 1 and isinstance(body[0], ast.If) and isinstance(body[0].body[-1], ast.Continue) \
                and len(body[0].body) == 1 and not body[0].orelse:
            generators[-1].ifs.append(negate(body.pop(0).test))
        if len(body) == 2 and isinstance(body[1], ast.Continue):
            body.pop()
        if len(body) != 1:
            raise DecompileError("a comprehension")
        return comprehension_parts(body[0], generators)
    if isinstance(stmt, ast.If) and len(stmt.body) == 1 and not stmt.orelse and generators:
        generators[-1].ifs.append(stmt.test)
        return comprehension_parts(stmt.body[0], generators)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Yield):
        return (stmt.value.value,)
    element = getattr(stmt, "element", None)
    if element is None:
        raise DecompileError("a comprehension")
    return element


def annotate(node: ast.AST, annotations: Any) -> None:
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        raise DecompileError("annotations")
    values = list(annotations.value) if isinstance(annotations, ast.Constant) else annotations.elts
    values = [v if isinstance(v, ast.AST) else ast.Constant(v) for v in values]
    by_name = {node.args.vararg.arg: node.args.vararg} if node.args.vararg else {}
    if node.args.kwarg:
        by_name[node.args.kwarg.arg] = node.args.kwarg
    for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs:
        by_name[a.arg] = a
    for name, value in zip(values[::2], values[1::2]):
        if name.value == "return":
            node.returns = value
        else:
            by_name[name.value].annotation = value


def assert_or_if(cond: ast.expr, body: list) -> ast.stmt:
    """``if not c: raise AssertionError(m)`` compiled from ``assert c, m`` is an ``assert`` again."""
    if len(body) == 1 and isinstance(body[0], ast.Raise) and body[0].cause is None and body[0].exc is not None:
        exc = body[0].exc
        call = isinstance(exc, ast.Call) and len(exc.args) == 1 and not exc.keywords
        func = exc.func if call else exc
        if getattr(func, "assertion", False):
            return ast.Assert(negate(cond), exc.args[0] if call else None)
    return ast.If(cond, body, [])


def flat(op: type, values: list) -> list:
    out = []
    for v in values:
        out.extend(v.values if isinstance(v, ast.BoolOp) and isinstance(v.op, op) else [v])
    return out


__all__ = ["Decompiler", "DecompileError", "NULL"]
