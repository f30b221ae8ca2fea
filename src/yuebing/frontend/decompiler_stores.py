"""Statements one instruction (or one short run) makes, for ``frontend/decompiler.py``: stores
(assignment to names, attributes, subscripts, tuple targets, chained and augmented assignment,
walrus), ``del``, ``import``, ``pass`` and an expression statement -- with the regions' context
``Ctx`` the other mixins share."""
from __future__ import annotations

import ast
import dataclasses
import dis
from typing import Any

from .decompiler_ops import COND_JUMPS, FUNCTION_NODES, DecompileError, Mark


@dataclasses.dataclass(frozen=True)
class Ctx:
    """Where a region ends, where control goes after it, and the enclosing loop's labels."""
    end: int
    follow: int | None = None
    heads: frozenset = frozenset()  # jump targets meaning ``continue``
    exit: int | None = None         # jump target meaning ``break``
    tries: frozenset = frozenset()  # handlers of the ``try`` statements being decompiled
    finallies: tuple = ()           # ``finally`` blocks run before a return/break/continue, innermost first
    except_name: str | None = None  # ``except E as name``: the name the clause clears

    def sub(self, end: int, follow: int | None) -> "Ctx":
        return dataclasses.replace(self, end=end, follow=follow)

    def loop(self, end: int, follow: int | None, heads: frozenset, exit: int | None) -> "Ctx":
        """A loop's body: new labels, the same ``try`` statements around it."""
        return dataclasses.replace(self, end=end, follow=follow, heads=heads, exit=exit)


class StoreStatements:
    """Stores and single-instruction statements (mixed into ``Decompiler``, which provides ``ins``,
    ``emit``, ``step``, ``expr``...)."""

    def op_POP_TOP(self, i, stack, ctx, out):
        after = self.copied_break(i, stack, ctx, out)
        if after is not None:
            return after
        value = stack.pop()
        if isinstance(value, ast.Constant):  # the compiler drops a constant statement: one it folded
            self.emit(out, ast.Expr(self.folded_conditional(i, value)), i)
        elif isinstance(value, ast.expr):
            self.emit(out, ast.Expr(self.expr(value)), i)
        elif isinstance(value, Mark) and value.kind == "function":
            raise DecompileError("a function made and dropped")

    def folded_conditional(self, i: int, value: ast.Constant) -> ast.IfExp:
        """``dead if False else value``, the statement a constant popped at ``i`` was compiled
        from: the dead branch's code is gone, the names it read stay in ``co_names`` (those
        after the names read before ``i``, and before the first new one read from ``i`` on)."""
        raw = [x for x in dis.get_instructions(self.code) if x.opcode in dis.hasname]
        offset = self.ins[i].offset
        before = {x.argval for x in raw if x.offset < offset}
        names = self.code.co_names
        later = [names.index(x.argval) for x in raw if x.offset >= offset and x.argval not in before]
        used = before | {x.argval for x in raw}
        dead = [n for k, n in enumerate(names) if n not in used and k < min(later, default=len(names))
                and n not in self.dead_names]
        self.dead_names.update(dead)
        branch: ast.expr = ast.Constant(None)
        for k, name in enumerate(dead):
            branch = ast.Name(name, ast.Load()) if k == 0 else ast.Attribute(branch, name, ast.Load())
        return ast.IfExp(ast.Constant(False), branch, value)

    def op_NOP(self, i, stack, ctx, out):
        """A ``NOP`` alone on its line is a ``pass`` (the compiler keeps it for the line)."""
        after = super().op_NOP(i, stack, ctx, out)
        if after is None and self.lines.count(self.lines[i]) == 1 and self.ins[i].positions.lineno:
            j = i + 1
            while j < len(self.ins) and self.ins[j].opname == "NOP":
                j += 1
            if all(first != j for first, _ in self.try_extents.values()):  # not a ``try:`` line
                self.emit(out, ast.Pass(), i)
        return after

    def op_DELETE_FAST(self, i, stack, ctx, out):
        self.emit(out, ast.Delete([ast.Name(self.ins[i].argval, ast.Del())]), i)

    op_DELETE_DEREF = op_DELETE_NAME = op_DELETE_FAST

    def op_DELETE_GLOBAL(self, i, stack, ctx, out):
        self.stored_globals.add(self.ins[i].argval)
        self.op_DELETE_FAST(i, stack, ctx, out)

    def op_DELETE_SUBSCR(self, i, stack, ctx, out):
        index = self.expr(stack.pop())
        self.emit(out, ast.Delete([ast.Subscript(self.expr(stack.pop()), index, ast.Del())]), i)

    def op_DELETE_ATTR(self, i, stack, ctx, out):
        self.emit(out, ast.Delete([ast.Attribute(self.expr(stack.pop()), self.ins[i].argval, ast.Del())]), i)

    # ------------------------------------------------------------------ stores

    def op_STORE_FAST(self, i, stack, ctx, out):
        if self.restores_saved(i, stack):
            return
        self.store(ast.Name(self.ins[i].argval, ast.Store()), stack.pop(), i, stack, out)

    op_STORE_NAME = op_STORE_FAST

    def op_STORE_DEREF(self, i, stack, ctx, out):
        self.stored_cells.add(self.ins[i].argval)
        self.op_STORE_FAST(i, stack, ctx, out)

    def op_STORE_GLOBAL(self, i, stack, ctx, out):
        self.stored_globals.add(self.ins[i].argval)
        self.op_STORE_FAST(i, stack, ctx, out)

    def op_STORE_ATTR(self, i, stack, ctx, out):
        obj = self.expr(stack.pop())
        self.store(ast.Attribute(obj, self.ins[i].argval, ast.Store()), stack.pop(), i, stack, out)

    def op_STORE_SUBSCR(self, i, stack, ctx, out):
        index = self.expr(stack.pop())
        obj = self.expr(stack.pop())
        self.store(ast.Subscript(obj, index, ast.Store()), stack.pop(), i, stack, out)

    def op_UNPACK_SEQUENCE(self, i, stack, ctx, out):
        value = stack.pop()
        target, nxt = self.read_targets(i, stack)
        self.store(target, value, nxt - 1, stack, out)
        return nxt

    op_UNPACK_EX = op_UNPACK_SEQUENCE

    _TARGET_STARTS = ("STORE_", "UNPACK_", "LOAD_FAST", "LOAD_NAME", "LOAD_GLOBAL", "LOAD_DEREF")

    def op_SWAP(self, i, stack, ctx, out):
        """``a.x, b[k] = u, v`` (two or three values): the values reversed by one ``SWAP``,
        then stored in the targets' order (only stores to plain variables lose the ``SWAP``)."""
        n = self.ins[i].arg
        if n in (2, 3) and len(stack) >= n and all(isinstance(v, ast.expr) for v in stack[-n:]) \
                and self.ins[i + 1].opname.startswith(self._TARGET_STARTS):
            try:
                targets, j = [], i + 1
                for _ in range(n):
                    target, j = self.read_target(j)
                    targets.append(target)
            except DecompileError:
                return super().op_SWAP(i, stack, ctx, out)
            values = [self.expr(v) for v in stack[-n:]]
            del stack[-n:]
            self.emit(out, ast.Assign([ast.Tuple(targets, ast.Store())], ast.Tuple(values, ast.Load())), i)
            return j
        return super().op_SWAP(i, stack, ctx, out)

    def read_targets(self, i: int, stack: list) -> tuple[ast.expr, int]:
        """The tuple target that the stores after ``UNPACK_SEQUENCE``/``UNPACK_EX`` at ``i`` fill."""
        ins = self.ins[i]
        if ins.opname == "UNPACK_SEQUENCE":
            before, starred, after = ins.arg, False, 0
        else:
            before, starred, after = ins.arg & 0xFF, True, ins.arg >> 8
        elts, j = [], i + 1
        for k in range(before + starred + after):
            target, j = self.read_target(j)
            elts.append(ast.Starred(target, ast.Store()) if starred and k == before else target)
        return ast.Tuple(elts, ast.Store()), j

    def read_target(self, j: int) -> tuple[ast.expr, int]:
        """The assignment target that the instructions from ``j`` store a value into."""
        if self.ins[j].opname in ("UNPACK_SEQUENCE", "UNPACK_EX"):
            return self.read_targets(j, [])
        saved, self.captured = self.captured, None
        stack: list = [Mark("value")]
        try:
            while self.captured is None:
                if j >= len(self.ins) or self.ins[j].opname in COND_JUMPS:
                    raise DecompileError("an assignment target")
                j = self.step(j, stack, Ctx(len(self.ins)), [])
            return self.captured, j
        finally:
            self.captured = saved

    def store(self, target: ast.expr, value: Any, i: int, stack: list, out: list) -> None:
        """Emit ``target = value`` in the form the compiler started from."""
        if isinstance(value, Mark) and value.kind == "value":
            self.captured = target
            return
        if isinstance(value, Mark):
            self.emit(out, self.store_mark(target, value), i)
            return
        if getattr(value, "inplace", False):
            if ast.dump(value.left) != ast.dump(target).replace("Store()", "Load()"):
                raise DecompileError("an in-place operation stored elsewhere")
            self.emit(out, ast.AugAssign(target, value.op, value.right), i)
            return
        if isinstance(value, ast.NamedExpr) and getattr(value, "copied", False):
            targets = [target]
            while isinstance(value, ast.NamedExpr) and getattr(value, "copied", False):
                targets.insert(0, value.target)
                value = value.value
            self.emit(out, ast.Assign(targets, self.expr(value)), i)
            return
        if stack and stack[-1] is value:  # COPY 1 then a store: walrus, or the first of ``a = b = v``
            stack[-1] = ast.NamedExpr(target, value)
            stack[-1].copied = True
            return
        if stack and isinstance(stack[-1], ast.expr):  # ``a, b = b, a`` without a tuple
            self.pending_stores.append((target, value))
            return
        if self.pending_stores:
            pairs = [(target, value)] + self.pending_stores[::-1]
            self.pending_stores = []
            self.emit(out, ast.Assign([ast.Tuple([t for t, _ in pairs], ast.Store())],
                                      ast.Tuple([self.expr(v) for _, v in pairs], ast.Load())), i)
            return
        self.emit(out, ast.Assign([target], self.expr(value)), i)

    def store_mark(self, target: ast.expr, mark: Mark) -> ast.stmt:
        name = target.id if isinstance(target, ast.Name) else None
        if mark.kind == "function" and isinstance(mark.value, FUNCTION_NODES) and mark.value.name == name:
            return mark.value
        if mark.kind == "import" and name is not None:
            module = mark.value[0]
            alias = ast.alias(module, None if module.split(".")[0] == name else name)
            if alias.asname and "." in module:
                raise DecompileError("import a.b as c")
            return ast.Import([alias])
        if mark.kind == "import_from" and name is not None:
            module, level = mark.value[0][0], mark.value[0][1]
            return ast.ImportFrom(module or None, [ast.alias(mark.value[1], None if mark.value[1] == name else name)], level)
        return ast.Assign([target], self.expr(mark))

    def op_IMPORT_NAME(self, i, stack, ctx, out):
        fromlist = stack.pop()
        level = stack.pop()
        stack.append(Mark("import", (self.ins[i].argval, level.value, fromlist)))

    def op_IMPORT_FROM(self, i, stack, ctx, out):
        stack.append(Mark("import_from", (stack[-1].value, self.ins[i].argval)))
