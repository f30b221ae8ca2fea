"""``try``/``except*`` statements for ``frontend/decompiler.py`` (CPython 3.11-3.13).

The handler of an ``except*`` statement starts by keeping the exception group and an empty list
of what the clauses raise (3.11: ``COPY 1; BUILD_LIST 0; SWAP 2``; 3.12: ``BUILD_LIST 0; COPY
2``). Each clause splits the group: ``<type> CHECK_EG_MATCH; COPY 1; POP_JUMP_IF_NONE`` to a
``POP_TOP`` before the next clause, binds the matched part (``STORE name``) or drops it, runs its
body -- protected by a block that appends what it raises to the list -- clears its name and jumps
(through a second jump) to the next clause. After the last clause ``LIST_APPEND 1;
PREP_RERAISE_STAR`` computes what is left to raise: nothing (``POP_EXCEPT`` and the way out: a
jump, or 3.12's copy of a short ``return`` block) or the rest (re-raised).

Where the ``else`` block lies differs: 3.11 puts it after the handler (the body jumps there, the
handler jumps past it); 3.12 keeps it after the body, the handler out of line jumping back to the
code after the statement (or returning a copy of it). Whatever is read wrongly is caught by the
compile-back check in ``bytecode.py``.
"""
from __future__ import annotations

import ast
import dataclasses

from .decompiler_ops import DecompileError, Mark

_STORES = ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL")
_HEADERS = (["COPY", "BUILD_LIST", "SWAP"], ["BUILD_LIST", "COPY"])
_NAME_CLEANUP = ["LOAD_CONST", "STORE", "DELETE"]


class TryStarStatements:
    """``try``/``except*`` (mixed into ``Decompiler``, with ``TryStatements``)."""

    def except_star_header(self, handler: int) -> int | None:
        """Where the first clause of an ``except*`` handler starts (None if it is not one)."""
        for header in _HEADERS:
            if [x.opname for x in self.ins[handler + 1:handler + 1 + len(header)]] == header:
                return handler + 1 + len(header)
        return None

    def try_star_statement(self, i: int, handler: int, cleanup: int, stack: list, ctx, out: list) -> int:
        ins = self.ins
        inner = dataclasses.replace(ctx, tries=ctx.tries | {handler})
        clauses, j = [], self.except_star_header(handler)
        while ins[j].opname != "LIST_APPEND":
            clause, j = self.except_star_clause(j, stack, inner)
            clauses.append(clause)
        self.expect_names(j, ["LIST_APPEND", "PREP_RERAISE_STAR", "COPY", "POP_JUMP_FORWARD_IF_NOT_NONE",
                              "POP_TOP", "POP_EXCEPT"])
        exit_ = j + 6
        body_end = self.try_extents[handler][1]
        tail = None
        if ins[exit_].opname.startswith("JUMP"):
            after = self.targets[exit_]
            if i < after < handler:  # 3.12: back to the code after the statement
                else_range = (body_end, after)
            elif after > cleanup and body_end == handler:  # the body leaves (raises, returns)
                else_range = None
            elif after > cleanup and ins[body_end].opname == "JUMP_FORWARD":  # 3.11: the else block past the handler
                else_range = (cleanup + 3, after) if self.targets[body_end] != after else None
            else:
                raise DecompileError("an except* statement's exit")
        else:  # 3.12: a copy of the short return block after the statement
            end = self.returning_block_end(exit_)
            if end is None:
                raise DecompileError("an except* statement's exit")
            length, after = end + 1 - exit_, cleanup + 3
            copy = next((p for p in range(body_end, handler - length + 1)
                         if self.copies_code_at(exit_, end + 1, p)), None)
            if copy is not None:  # the body's copy, after its else block
                tail = (copy, copy + length)
                else_range = (body_end, copy)
            elif body_end == handler:  # the body leaves: the handler's is the only copy
                tail, else_range = (exit_, end + 1), None
            else:
                raise DecompileError("an except* statement's exit")
        if after > ctx.end and after != ctx.follow:
            raise DecompileError("an except* statement ending outside its block")
        has_else = else_range is not None and else_range[1] > else_range[0]
        body = self.region(i, body_end, stack, inner.sub(body_end, else_range[0] if has_else else after))
        # (an else range holding only the line of the body's last ``if`` is no ``else`` block)
        orelse = self.run(*else_range, list(stack), inner.sub(else_range[1], after), []) if has_else else []
        node = ast.TryStar(body, clauses, orelse, [])
        node.start_index = i
        self.emit(out, node, self.try_line(i, handler, ctx))
        if tail is not None:
            self.run(*tail, list(stack), ctx.sub(tail[1], None), out)
        return min(after, ctx.end)

    def expect_names(self, j: int, names: list) -> None:
        if [x.opname for x in self.ins[j:j + len(names)]] != names:
            raise DecompileError("an except* statement")

    def except_star_clause(self, j: int, stack: list, ctx) -> tuple:
        """One ``except* E [as name]`` clause from ``j``: (the clause, where the next starts)."""
        ins, line = self.ins, self.lines[j]
        kind, k = self.exception_type(j, stack, ctx, check="CHECK_EG_MATCH")
        self.expect_names(k + 1, ["COPY", "POP_JUMP_FORWARD_IF_NONE"])
        no_match = self.targets[k + 2]
        store = ins[k + 3]
        name = store.argval if store.opname in _STORES else None
        if name is None and store.opname != "POP_TOP" or ins[no_match].opname != "POP_TOP":
            raise DecompileError("an except* clause")
        if store.opname == "STORE_GLOBAL":
            self.stored_globals.add(name)
        elif store.opname == "STORE_DEREF":
            self.stored_cells.add(name)
        start = k + 4
        raised = self.handler_at[start]  # the block keeping what the body raises
        end = 1 + max(n for n in range(start, no_match) if raised in self.handler_chain(n))
        if name is not None:
            cleanup = ins[end:end + 3]
            if [x.opname[:len(p)] for x, p in zip(cleanup, _NAME_CLEANUP)] != _NAME_CLEANUP \
                    or cleanup[1].argval != name:
                raise DecompileError("an except* clause's name")
        body = self.region(start, end, list(stack) + [Mark("exc_info")] * 3, ctx.sub(end, end))
        clause = ast.ExceptHandler(kind, name, body)
        clause.lineno = line
        return clause, no_match + 1


__all__ = ["TryStarStatements"]
