"""Loops for ``frontend/decompiler.py``: ``for`` and ``while`` (tested at the top, or inverted
with the test repeated at the bottom, or ``while True``), with ``break``/``continue`` and ``else``.

A loop's ``else`` block sits between the loop's normal exit (where ``FOR_ITER`` or the false
test goes) and where ``break`` jumps: a ``break`` in the body that jumps past the normal exit
marks it. When what lies between is only a jump to the same place, the compiler threaded
``break`` through a jump after the loop, and there is no ``else``.
"""
from __future__ import annotations

import ast

from .decompiler_ops import DecompileError, Mark
from .decompiler_312 import ASYNC_FOR, NEW


class LoopStatements:
    """Loop statements (mixed into ``Decompiler``, which provides ``ins``, ``region``, ``chain``...)."""


    def op_FOR_ITER(self, i, stack, ctx, out):
        iterator = stack[-1]
        iterable = iterator.value if isinstance(iterator, Mark) and iterator.kind == "iter" else self.expr(iterator)
        exit_ = self.targets[i]
        back = exit_ - 1
        if self.ins[back].opname != "JUMP_BACKWARD" or self.targets[back] != i:
            # a body ending in a ``try`` statement; from 3.12, in a ``return`` or ``raise`` (its
            # last jump back is a conditional one)
            leaving = ("RETURN_VALUE", "RAISE_VARARGS") if NEW else ()
            if NEW and self.ins[back].opname == "JUMP_FORWARD" and self.targets[back] >= exit_:
                leaving = ("JUMP_FORWARD",)  # 3.12: a body ending in an ``if`` whose block ends in ``break``
            if self.ins[back].opname not in ("RERAISE",) + leaving:
                raise DecompileError("a for loop")
            back = exit_
        target, j = self.read_target(i + 1)
        breaks, else_end = self.loop_else(j, exit_, ctx)
        loop = ctx.loop(back, i, frozenset({i}), breaks)
        body = self.region(j, back, stack, loop)
        stack.pop()
        orelse = self.loop_else_block(exit_, else_end, breaks, stack, ctx)
        kind = ast.AsyncFor if self.ins[i].argrepr == ASYNC_FOR else ast.For
        self.emit(out, kind(target, iterable, body, orelse), i)
        return else_end

    def loop_else(self, start: int, exit_: int, ctx) -> tuple:
        """(where ``break`` jumps, where the loop statement ends) for a loop whose body starts at
        ``start`` and whose test fails to ``exit_``; ``else`` is what lies in between."""
        beyond = {self.targets[j] for j in range(start, exit_)
                  if self.targets[j] is not None and self.targets[j] > exit_}
        if not beyond:
            copied = self.copied_break_target(start, exit_, ctx)  # CPython 3.12+
            return (exit_, exit_) if copied is None else (copied, copied)
        if len(beyond) > 1:
            raise DecompileError("a loop's breaks")
        breaks = beyond.pop()
        if self.ins[exit_].opname.startswith("JUMP") and self.targets[exit_] == breaks:
            return breaks, exit_  # ``break`` threaded through the jump after the loop: no ``else``
        if breaks > ctx.end and breaks != ctx.follow:
            raise DecompileError("a loop's else block")
        return breaks, min(breaks, ctx.end)

    def loop_else_block(self, exit_: int, else_end: int, breaks: int, stack: list, ctx) -> list:
        if else_end == exit_:
            return []
        return self.region(exit_, else_end, stack, ctx.sub(else_end, breaks))

    def while_loop(self, i, stack, ctx, out) -> int:
        """A loop whose head ``i`` is jumped back to: ``while cond:`` tested at the top, or ``while True``."""
        back = max(j for j in self.back_jumps[i] if j < ctx.end)
        if self.ins[back].opname not in ("JUMP_BACKWARD", "JUMP_BACKWARD_NO_INTERRUPT"):
            raise DecompileError("a loop ending in a conditional jump")
        try:
            work = list(stack)
            k = self.node_expression(i, work, ctx.sub(back, None))
            cond, body_start, exit_, work = self.chain(k, work.pop(), work, ctx.sub(back, None))
            if exit_ <= back or body_start > back:
                raise DecompileError("not a while condition")
        except DecompileError:
            cond, body_start, exit_ = ast.Constant(True), i, back + 1
        breaks, else_end = self.loop_else(body_start, exit_, ctx) if exit_ <= ctx.end else (exit_, exit_)
        loop = ctx.loop(back, i, frozenset({i}), breaks)
        body = self.region(body_start, back, stack, loop)
        orelse = self.loop_else_block(exit_, else_end, breaks, stack, ctx)
        # ``while True:`` keeps its line in a NOP before the loop
        self.emit(out, ast.While(cond, body, orelse), i - 1 if i and self.ins[i - 1].opname == "NOP" else i)
        return else_end if else_end <= ctx.end or else_end == ctx.follow else back + 1

    def inverted_while(self, i, body_start, exit_, cond, stack, ctx, out) -> int:
        """``while cond:`` whose test is repeated at the bottom (jumping back to the body)."""
        test_length = self.repeated_test_length(body_start, exit_)
        bottom = exit_ - test_length
        breaks, else_end = self.loop_else(body_start, exit_, ctx)
        loop = ctx.loop(bottom, bottom, frozenset({bottom, body_start - test_length}), breaks)
        body = self.region(body_start, bottom, stack, loop)
        orelse = self.loop_else_block(exit_, else_end, breaks, stack, ctx)
        self.emit(out, ast.While(cond, body, orelse), i)
        return else_end

    def repeated_test_length(self, body_start: int, exit_: int) -> int:
        """How many instructions before ``body_start`` (the loop's test) are repeated before
        ``exit_``: the longest matching run, not crossing a statement boundary."""
        ins, n = self.ins, 1
        boundaries = ("POP_TOP", "RETURN", "JUMP", "RESUME", "NOP", "DELETE", "FOR_ITER")
        while body_start - n - 1 >= 0 and exit_ - n - 1 >= body_start:
            a, b = ins[body_start - n - 1], ins[exit_ - n - 1]
            walrus = a.opname.startswith("STORE") and ins[body_start - n - 2].opname == "COPY"
            if a.opname.startswith(boundaries) or a.opname.startswith("STORE") and not walrus:
                break
            jumps = self.targets[body_start - n - 1] is not None
            if a.opname.replace("BACKWARD", "FORWARD") != b.opname.replace("BACKWARD", "FORWARD") or \
                    (not jumps and a.argval != b.argval):
                break
            n += 1
        return n


__all__ = ["LoopStatements"]
