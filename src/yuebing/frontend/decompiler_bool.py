"""``and``/``or`` values that mix the two, for ``frontend/decompiler.py``: ``(a and b) or c``.

``a and b`` or ``a or b`` alone compiles to ``JUMP_IF_FALSE_OR_POP``/``JUMP_IF_TRUE_OR_POP``
(the jump keeps the value it tested), which ``ExpressionOps`` reads directly. Mixed, the
optimiser rewrites a value-keeping jump that lands on another one it knows the outcome of into
a ``POP_JUMP_FORWARD_IF_*`` to the next operand: ``(a and b) or c`` becomes ``a
POP_JUMP_IF_FALSE c; b JUMP_IF_TRUE_OR_POP end; c; end:``.

Rather than undo each rewrite, the operands and their jumps are read off the bytecode, and the
``and``/``or`` trees over that many operands are tried in turn: for each, where control goes
after each operand when it is true and when it is false (the next operand, another operand, or
the end keeping the value) is worked out and compared with the jumps. The first tree whose
jumps agree is the expression (the compile-back check in ``bytecode.py`` confirms it).
"""
from __future__ import annotations

import ast
import functools

from .decompiler_ops import COND_JUMPS, DecompileError, merge_and

_KEEPING = {"JUMP_IF_FALSE_OR_POP": False, "JUMP_IF_TRUE_OR_POP": True}
_POPPING = {"POP_JUMP_FORWARD_IF_FALSE": False, "POP_JUMP_FORWARD_IF_TRUE": True}
_MAX_OPERANDS = 7
_END = "end"


class BoolValues:
    """Mixed ``and``/``or`` values (mixed into ``Decompiler``)."""

    def bool_value(self, i: int, stack: list, ctx) -> int | None:
        """At a ``POP_JUMP_FORWARD_IF_*`` at ``i``: if it starts a mixed ``and``/``or`` value,
        push that value and return where it ends; else None, nothing changed."""
        if self.ins[i].opname not in _POPPING or not self.keeping_jump_ahead(i, ctx):
            return None
        pending = list(self.pending_stores)
        try:
            operands, work, end = self.bool_operands(i, stack, ctx)
            tree = matching_tree(operands)
        except DecompileError:
            return None
        finally:
            self.pending_stores = pending
        if tree is None:
            return None
        stack[:] = work
        stack.append(to_expression(tree, [self.expr(value) for value, _ in operands]))
        return end

    def keeping_jump_ahead(self, i: int, ctx) -> bool:
        """Whether a value-keeping jump follows before anything that ends an expression."""
        for k in range(i + 1, min(ctx.end, len(self.ins))):
            name = self.ins[k].opname
            if name in _KEEPING:
                return True
            if name.startswith(("STORE", "RETURN", "JUMP_FORWARD", "JUMP_BACKWARD", "POP_TOP", "RAISE", "FOR_ITER")):
                return False
        return False

    def bool_operands(self, i: int, stack: list, ctx) -> tuple:
        """[(operand, its jump or None for the last)], the stack below the value, the end label.
        A jump is (jumps when true, keeps the value, target: an operand's number or ``_END``)."""
        ins = self.ins
        work = list(stack)
        values, jumps, starts = [work.pop()], [(i, ins[i].opname)], []
        j, end = i + 1, None
        while True:
            starts.append(j)
            trial = list(work)
            k, out = j, []
            while k != end:
                name = ins[k].opname if k < ctx.end else "the end"
                if name in _KEEPING or name in _POPPING:
                    break
                if name in COND_JUMPS or name.startswith(("JUMP", "RETURN", "RAISE", "FOR_ITER", "STORE", "the end")):
                    raise DecompileError("a boolean value")
                k = self.step(k, trial, ctx, out)
                if out or self.pending_stores:
                    raise DecompileError("a boolean value")
            if len(trial) != len(work) + 1:
                raise DecompileError("a boolean value")
            values.append(trial[-1])
            if k == end:
                break
            if ins[k].opname in _KEEPING:
                if end is not None and self.targets[k] != end:
                    raise DecompileError("a boolean value")
                end = self.targets[k]
            jumps.append((k, ins[k].opname))
            j = k + 1
            if len(values) > _MAX_OPERANDS:
                raise DecompileError("a boolean value")
        labels = {start: n + 1 for n, start in enumerate(starts)}
        operands = []
        for n, value in enumerate(values):
            if n == len(values) - 1:
                operands.append((value, None))
                continue
            k, name = jumps[n]
            target = _END if name in _KEEPING else labels.get(self.targets[k])
            if target is None or (name in _POPPING and self.targets[k] == end):
                raise DecompileError("a boolean value")
            when_true = _KEEPING.get(name, _POPPING.get(name))
            operands.append((value, (when_true, name in _KEEPING, target)))
        return operands, work, end


def matching_tree(operands: list):
    """The first ``and``/``or`` tree over the operands whose jumps are the bytecode's."""
    n = len(operands)
    for tree in trees(0, n):
        expected = {}
        destinations(tree, _END, _END, expected)
        if all(jump_of(k, expected[k], n) == operands[k][1] for k in range(n)):
            return tree
    return None


@functools.lru_cache(maxsize=None)
def trees(first: int, stop: int, parent: str | None = None) -> tuple:
    """Every ``and``/``or`` tree over operands ``first..stop-1``: an int (one operand) or
    (op, left, right); an operand of the same op as its parent is flattened, so never nested."""
    if stop - first == 1:
        return (first,)
    found = []
    for op in ("and", "or"):
        if op == parent:
            continue
        for m in range(first + 1, stop):
            for left in trees(first, m, op):
                for right in trees(m, stop, None):
                    found.append((op, left, right))
    return tuple(found)


def leftmost(tree) -> int:
    return tree if isinstance(tree, int) else leftmost(tree[1])


def destinations(tree, if_true, if_false, out: dict) -> None:
    """Where control goes after each operand of ``tree`` when it is true and when it is false:
    an operand's number, or ``_END`` (the value kept)."""
    if isinstance(tree, int):
        out[tree] = (if_true, if_false)
        return
    op, left, right = tree
    right_start = leftmost(right)
    if op == "and":
        destinations(left, right_start, if_false, out)
    else:
        destinations(left, if_true, right_start, out)
    destinations(right, if_true, if_false, out)


def jump_of(k: int, dests: tuple, n: int):
    """The jump the compiler leaves after operand ``k`` going to ``dests``, as read by
    ``bool_operands``: (jumps when true, keeps the value, target), or None for falling through."""
    if_true, if_false = dests
    if k == n - 1:
        return None if dests == (_END, _END) else "impossible"
    if if_true == k + 1:
        return (False, if_false == _END, if_false)
    if if_false == k + 1:
        return (True, if_true == _END, if_true)
    return "impossible"


def to_expression(tree, values: list) -> ast.expr:
    if isinstance(tree, int):
        return values[tree]
    op, left, right = tree
    parts = [to_expression(left, values), to_expression(right, values)]
    if op == "and":
        return merge_and(parts)
    flat = []
    for part in parts:
        flat.extend(part.values if isinstance(part, ast.BoolOp) and isinstance(part.op, ast.Or) else [part])
    return ast.BoolOp(ast.Or(), flat)


__all__ = ["BoolValues"]
