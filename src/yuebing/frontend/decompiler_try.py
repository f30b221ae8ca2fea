"""``try`` statements for ``frontend/decompiler.py``, rebuilt from CPython 3.11's exception table.

CPython 3.11 has no ``SETUP_FINALLY`` instruction: a ``try`` body is the run of instructions the
exception table sends to one handler, a block starting ``PUSH_EXC_INFO``. What the compiler lays
out, and what is read back here:

- ``try``/``except``: the body (protected), the ``else`` block (not protected), a jump over the
  handler; the handler tests each clause (``<type> CHECK_EXC_MATCH POP_JUMP_FORWARD_IF_FALSE``,
  or nothing for a bare ``except``), binds or drops the exception, runs the clause body, then
  ``POP_EXCEPT`` and a jump to the end. ``except E as name`` wraps its body in a hidden
  ``try``/``finally`` that clears ``name`` (``LOAD_CONST None; STORE name; DELETE name``). After
  the clauses come ``RERAISE 0`` and the clean-up block ``COPY 3; POP_EXCEPT; RERAISE 1``.
- ``try``/``finally``: the body, a copy of the ``finally`` block for the normal path, a jump over
  the handler, then the handler: ``PUSH_EXC_INFO``, a second copy, ``RERAISE 0`` and the clean-up.
  ``return``/``break``/``continue`` inside the body run yet another copy, unprotected, just
  before they leave; those copies are recognised (same instructions as the handler's) and skipped.
- ``try``/``except``/``finally`` is a ``try``/``except`` inside the body of a ``try``/``finally``
  that starts at the same instruction; it becomes one statement again.

Nesting is read from the table too: a handler's own instructions are protected by its clean-up
block, and that block by the enclosing handler, so following "which handler protects this
instruction" from any instruction walks out through the ``try`` statements around it.

Whatever shape is not recognised raises ``DecompileError``; whatever is recognised wrongly is
caught by the compile-back check in ``bytecode.py``.
"""
from __future__ import annotations

import ast
import dataclasses
import dis
import functools

from .decompiler_ops import DecompileError, Mark

_CLEANUP = ["COPY", "POP_EXCEPT", "RERAISE"]
_NAME_CLEANUP = ["LOAD_CONST", "STORE", "DELETE", "RERAISE"]
_STORES = ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL")


@dataclasses.dataclass(frozen=True)
class FinallyCopy:
    """The handler's copy of a ``finally`` block: ``length`` instructions from ``start``,
    protecting the body of the ``try`` whose handler is at ``handler``."""
    handler: int
    start: int
    length: int


class TryStatements:
    """``try`` statements (mixed into ``Decompiler``, which provides ``ins``, ``run``, ``step``...)."""

    # ------------------------------------------------------------------ the exception table

    @functools.cached_property
    def handler_at(self) -> list:
        """For each instruction, the index of the innermost handler protecting it (or None)."""
        handlers: list = [None] * len(self.ins)
        offsets = [i.offset for i in self.ins]
        for entry in dis._parse_exception_table(self.code):
            target = self.index_of[entry.target]
            for n, offset in enumerate(offsets):
                if entry.start <= offset < entry.end:
                    handlers[n] = target
        return handlers

    def handler_chain(self, i: int) -> list:
        """The handlers around instruction ``i``, innermost first."""
        chain, h = [], self.handler_at[i]
        while h is not None and h not in chain:
            chain.append(h)
            h = self.handler_at[h]
        return chain

    @functools.cached_property
    def try_extents(self) -> dict:
        """For each ``try`` handler, (first, one past the last) instruction of what it protects,
        nested statements included."""
        extents: dict = {}
        for n in range(len(self.ins)):
            for h in self.handler_chain(n):
                if self.is_try_handler(h):
                    first, last = extents.get(h, (n, n + 1))
                    extents[h] = (min(first, n), max(last, n + 1))
        return extents

    def is_try_handler(self, h: int) -> bool:
        ins = self.ins
        return ins[h].opname == "PUSH_EXC_INFO" and h + 1 < len(ins) and ins[h + 1].opname != "WITH_EXCEPT_START"

    def try_at(self, i: int, ctx) -> int | None:
        """The handler of the outermost ``try`` statement starting at ``i`` not yet opened."""
        found = [h for h, (first, _) in self.try_extents.items() if first == i and h not in ctx.tries]
        return max(found) if found else None

    # ------------------------------------------------------------------ statements

    def try_statement(self, i: int, handler: int, stack: list, ctx, out: list) -> int:
        ins = self.ins
        cleanup = self.handler_at[handler]
        if cleanup is None or [x.opname for x in ins[cleanup:cleanup + 3]] != _CLEANUP:
            raise DecompileError("a try statement's clean-up")
        if self.except_star_header(handler) is not None:
            return self.try_star_statement(i, handler, cleanup, stack, ctx, out)
        join = self.handler_join(i, handler, cleanup, ctx) if self.is_except_handler(handler) else None
        after = cleanup + 3 if join is None else join if join not in ctx.heads else ctx.end
        if after > ctx.end and self.finally_out_of_line(handler, ctx):
            after = ctx.end
        if after > ctx.end:
            raise DecompileError("a try statement ending outside its block")
        # at the end of its block, a try's exits jump to the block's follow -- or to the end
        # itself, when what is there is a jump the optimiser did not thread through
        to_end = any(self.targets[k] == after for k in range(i, after))
        follow = after if after < ctx.end or to_end else ctx.follow
        inner = dataclasses.replace(ctx, tries=ctx.tries | {handler})
        if join is not None:  # CPython 3.12: the clauses out of line, jumping back
            node = self.try_except(i, handler, cleanup, stack, inner, join, after)
            if join in ctx.heads:  # back to the loop's head: the end of the loop's body
                for clause in node.handlers:
                    if isinstance(clause.body[-1], ast.Continue):
                        clause.body = clause.body[:-1] or [ast.Pass()]
        elif self.is_except_handler(handler):
            node = self.try_except(i, handler, cleanup, stack, inner, follow)
        else:
            node = self.try_finally(i, handler, cleanup, stack, inner, follow)
        node.start_index = i
        self.emit(out, node, self.try_line(i, handler, ctx))
        if getattr(node, "copied_tail", None):  # what follows the try, copied before its handler
            self.run(*node.copied_tail, list(stack), ctx.sub(node.copied_tail[1], None), out)
        return after

    def try_line(self, i: int, handler: int, ctx) -> int:
        """The instruction holding the ``try`` line: the ``NOP`` before its body, counted back
        past those of the ``try`` statements nested in it that start at the same instruction."""
        nested = sum(1 for h, (first, _) in self.try_extents.items()
                     if first == i and h < handler and h not in ctx.tries)
        for k in (i - 1 - nested, i - 1):
            if k >= 0 and self.ins[k].opname == "NOP":
                return k
        return i

    def is_except_handler(self, handler: int) -> bool:
        """Whether the handler tests clauses (else it runs a ``finally`` block)."""
        ins, n = self.ins, handler + 1
        if ins[n].opname == "POP_TOP":
            return True
        while n < len(ins) and self.handler_at[n] == self.handler_at[handler + 1]:
            if ins[n].opname == "CHECK_EXC_MATCH":
                return True
            if ins[n].opname.startswith(("STORE", "POP", "JUMP", "RETURN", "RAISE", "RERAISE", "DELETE")):
                return False
            n += 1
        return False

    def try_except(self, i: int, handler: int, cleanup: int, stack: list, ctx, follow, join=None) -> ast.Try:
        """``try``/``except``; with ``join``, the clauses are out of line (CPython 3.12) and jump
        back there: the body, then its ``else`` up to ``join``."""
        ins = self.ins
        body_end = self.try_extents[handler][1]
        if body_end < handler and ins[body_end].opname == "RETURN_VALUE":
            body_end += 1  # ``return v`` leaves the protected range just before returning
        else_end = handler if join is None else join
        rest = list(range(body_end, else_end))
        has_else = rest and not (len(rest) == 1 and ins[rest[0]].opname.startswith("JUMP"))
        body = self.region(i, body_end, stack, ctx.sub(body_end, body_end if has_else else follow))
        orelse = self.run(body_end, else_end, list(stack), ctx.sub(else_end, follow), []) if has_else else []
        handlers = self.except_clauses(handler, cleanup, stack, ctx, follow)
        return ast.Try(body, handlers, orelse, [])

    def except_clauses(self, handler: int, cleanup: int, stack: list, ctx, follow) -> list:
        ins, j, clauses = self.ins, handler + 1, []
        while j < cleanup:
            if ins[j].opname == "RERAISE" and ins[j].arg == 0 and j + 1 == cleanup:
                break
            clause, j = self.except_clause(j, cleanup, stack, ctx, follow)
            clauses.append(clause)
        if not clauses or any(c.type is None for c in clauses[:-1]):
            raise DecompileError("a try statement's handlers")
        return clauses

    def except_clause(self, j: int, cleanup: int, stack: list, ctx, follow) -> tuple:
        """One ``except`` clause starting at ``j``: (the clause, where the next one starts)."""
        ins, line = self.ins, self.lines[j]
        if ins[j].opname == "POP_TOP":
            kind, name, start, next_ = None, None, j + 1, cleanup
            if ins[cleanup - 1].opname == "RERAISE" and ins[cleanup - 1].arg == 0:
                next_ = cleanup - 1
        else:
            kind, k = self.exception_type(j, stack, ctx)
            if not ins[k + 1].opname == "POP_JUMP_FORWARD_IF_FALSE":
                raise DecompileError("an except clause")
            next_, k = self.targets[k + 1], k + 2
            name = ins[k].argval if ins[k].opname in _STORES else None
            if name is None and ins[k].opname != "POP_TOP":
                raise DecompileError("an except clause")
            if ins[k].opname == "STORE_GLOBAL":
                self.stored_globals.add(name)
            elif ins[k].opname == "STORE_DEREF":
                self.stored_cells.add(name)
            start = k + 1
        stop = next_
        if name is not None:
            tail = ins[next_ - 4:next_]
            if [x.opname[:len(p)] for x, p in zip(tail, _NAME_CLEANUP)] != _NAME_CLEANUP or tail[1].argval != name:
                raise DecompileError("an except clause's name")
            stop = next_ - 4
        work = list(stack) + [Mark("exc_info")]
        body = self.run(start, stop, work, dataclasses.replace(ctx, end=stop, follow=follow, except_name=name), [])
        leaves = body and isinstance(body[-1], (ast.Return, ast.Raise, ast.Break, ast.Continue))
        if not leaves and (len(work) != len(stack) or any(a is not b for a, b in zip(work, stack))):
            raise DecompileError("an except clause's stack")
        clause = ast.ExceptHandler(kind, name, body or [ast.Pass()])
        clause.lineno = line
        return clause, next_

    def exception_type(self, j: int, stack: list, ctx, check: str = "CHECK_EXC_MATCH") -> tuple:
        """The expression an ``except`` clause matches, and the index of its ``CHECK_EXC_MATCH``
        (``CHECK_EG_MATCH`` for ``except*``)."""
        work, out = list(stack) + [Mark("exc_info"), Mark("exception")], []
        while self.ins[j].opname != check:
            if self.ins[j].opname.startswith(("JUMP", "POP_JUMP", "RETURN", "RAISE", "STORE", "FOR_ITER")):
                raise DecompileError("an except clause's type")
            j = self.step(j, work, ctx, out)
            if out:
                raise DecompileError("an except clause's type")
        if len(work) != len(stack) + 3:
            raise DecompileError("an except clause's type")
        return self.expr(work[-1]), j

    def op_POP_EXCEPT(self, i, stack, ctx, out):
        """Leaving a handler (``return``/``break``/``continue``/the end of a clause); after
        ``except E as name`` the compiler clears ``name`` too."""
        mark = stack.pop()
        if not (isinstance(mark, Mark) and mark.kind == "exc_info"):
            raise DecompileError("POP_EXCEPT outside a handler")
        name = getattr(ctx, "except_name", None)
        tail = self.ins[i + 1:i + 4]
        if name is not None and [x.opname[:len(p)] for x, p in zip(tail, _NAME_CLEANUP)] == _NAME_CLEANUP[:3] \
                and tail[0].argval is None and tail[1].argval == name and tail[2].argval == name:
            return i + 4
        return None

    def try_finally(self, i: int, handler: int, cleanup: int, stack: list, ctx, follow) -> ast.Try:
        ins = self.ins
        if ins[cleanup - 1].opname != "RERAISE" or ins[cleanup - 1].arg != 0:
            raise DecompileError("a finally block that does not re-raise")
        copy = FinallyCopy(handler, handler + 1, cleanup - 1 - (handler + 1))
        work = list(stack) + [Mark("exc_info"), Mark("exception")]
        final = self.region(copy.start, cleanup - 1, work,
                            dataclasses.replace(ctx, end=cleanup - 1, follow=None, heads=frozenset(), exit=None))
        body_end = handler
        last = handler - 1
        found = self.copied_tail_after_finally(i, handler, copy)
        tail = None if found is None else found[1:]
        if found is not None:  # CPython 3.12: the finally block's copy, then the code after the try
            body_end = found[0]
        elif handler > ctx.end:  # CPython 3.12: the handler out of line, the copy ends the block
            body_end = ctx.end - copy.length
        elif ins[last].opname.startswith("JUMP") and self.same_as_copy(last - copy.length, copy):
            body_end = last - copy.length
            if self.targets[last] != follow and self.targets[last] not in ctx.heads:
                raise DecompileError("a try statement's exit")
        inner = dataclasses.replace(ctx, end=body_end, follow=body_end if body_end < handler else follow,
                                    finallies=(copy,) + ctx.finallies)
        body = self.region(i, body_end, stack, inner)
        if len(body) == 1 and isinstance(body[0], (ast.Try, ast.TryStar)) and not body[0].finalbody \
                and getattr(body[0], "start_index", None) == i:
            body[0].finalbody = final
            node = body[0]
        else:
            node = ast.Try(body, [], [], final)
        node.copied_tail = tail
        return node

    def same_as_copy(self, at: int, copy: FinallyCopy) -> bool:
        """Whether the instructions at ``at`` repeat the ``finally`` block ``copy``."""
        ins = self.ins
        if at < 0 or at + copy.length > len(ins):
            return False
        for k in range(copy.length):
            a, b = ins[at + k], ins[copy.start + k]
            jumps = self.targets[at + k] is not None or self.targets[copy.start + k] is not None
            if a.opname != b.opname or (not jumps and a.argval != b.argval):
                return False
        return True

    def skip_finally_copies(self, i: int, ctx) -> int:
        """Past a copy of a ``finally`` block that a ``return``/``break``/``continue`` runs
        before it leaves (unprotected instructions inside a protected body), if one is at ``i``."""
        for copy in ctx.finallies:
            if copy.length and copy.handler not in self.handler_chain(i) and self.same_as_copy(i, copy):
                if not self.leaves_after(i + copy.length, ctx):
                    raise DecompileError("a finally block run before leaving")
                return i + copy.length
        return i

    def leaves_after(self, j: int, ctx) -> bool:
        """Whether only unwinding (other ``finally`` copies, popping a loop's iterator or a
        handler's exception, clearing an ``except`` name) lies between ``j`` and a return or jump."""
        unwinding = ("SWAP", "POP_TOP", "POP_EXCEPT", "LOAD_CONST", "STORE_FAST", "STORE_NAME", "DELETE_FAST",
                     "DELETE_NAME", "STORE_DEREF", "DELETE_DEREF", "STORE_GLOBAL", "DELETE_GLOBAL")
        while j < len(self.ins):
            name = self.ins[j].opname
            if name == "RETURN_VALUE" or name.startswith("JUMP"):
                return True
            copy = next((c for c in ctx.finallies if c.length and self.same_as_copy(j, c)), None)
            if copy is not None:
                j += copy.length
            elif name in unwinding:
                j += 1
            else:
                return False
        return False


__all__ = ["FinallyCopy", "TryStatements"]
