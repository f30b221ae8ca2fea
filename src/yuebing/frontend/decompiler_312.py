"""CPython 3.12 and 3.13 bytecode for ``frontend/decompiler.py``, which was written for 3.11.

Most of what changed is spelling, so the instruction stream is first rewritten into the 3.11
words the decompiler reads (``instructions``): ``RETURN_CONST`` becomes ``LOAD_CONST;
RETURN_VALUE``, the paired ``LOAD_FAST_LOAD_FAST``/``STORE_FAST_STORE_FAST``/``STORE_FAST_LOAD_FAST``
split in two, ``TO_BOOL``/``END_FOR`` (and 3.13's ``POP_TOP`` after it)/``END_SEND`` disappear
so that ``FOR_ITER`` and ``SEND`` jump past their loops as in 3.11 (and ``yield from``'s
``CLEANUP_THROW`` with its jump back, reached only from the exception table), the direction-less ``POP_JUMP_IF_*`` get their
direction back, a conditional jump over a ``JUMP_BACKWARD`` is 3.11's backward conditional
jump, ``COPY 1; POP_JUMP_IF_*; POP_TOP`` is 3.11's ``JUMP_IF_*_OR_POP``, a method ``LOAD_ATTR`` is
``LOAD_METHOD``, and 3.13's ``SET_FUNCTION_ATTRIBUTE`` flags go back into ``MAKE_FUNCTION``.
Jump targets are offsets: an instruction dropped or merged hands its offset to the one that
stands for it, so a jump to it lands there.

What is new in substance is decompiled by ``NewOps``: 3.12's inlined comprehensions (the loop
variables saved by ``LOAD_FAST_AND_CLEAR`` and restored after the loop), ``BINARY_SLICE``/
``STORE_SLICE``, ``CALL_INTRINSIC_1``, ``LOAD_SUPER_ATTR``, and 3.13's ``CALL_KW`` and
f-string instructions. 3.13 pushes the ``NULL`` of a call above the callable rather than below;
``decompiler_ops.py`` accepts both orders.

Asynchronous code is rewritten into its synchronous shape on every version, 3.11 included:
``async with`` loses the awaits of ``__aenter__``/``__aexit__`` and is read as ``with``;
``async for``'s ``GET_AITER`` and ``GET_ANEXT`` with its await are read as ``GET_ITER`` and a
``FOR_ITER`` leaving where ``END_ASYNC_FOR`` is (3.12 puts that block, reached only by the
exception ending the loop, at the end of the function: it is moved back after its loop, and an
inlined comprehension's variable-restoring handler that it jumps over goes to the end); the
instructions are marked, so the statements come back ``async``.

As everywhere in the decompiler, a wrong guess is caught by ``bytecode.py``'s compile-back check.
"""
from __future__ import annotations

import ast
import dis
import sys
from typing import Any

from .decompiler_ops import DecompileError, Mark, METHOD_SELF, NULL
from .decompiler_try import FinallyCopy

NEW = sys.version_info >= (3, 12)
_OP = dis.opmap
_JUMPS = set(dis.hasjrel) | set(dis.hasjabs)
_DROPPED = {"EXTENDED_ARG", "END_FOR", "END_SEND", "TO_BOOL"}
_FLIPPED = {"FALSE": "TRUE", "TRUE": "FALSE", "NONE": "NOT_NONE", "NOT_NONE": "NONE"}


def _as(ins: Any, opname: str, **changes: Any) -> Any:
    """``ins`` under another 3.11 name (its opcode too unless it is a jump, whose target
    ``Decompiler`` finds from the opcode)."""
    opcode = ins.opcode if ins.opcode in _JUMPS else _OP.get(opname, ins.opcode)
    return ins._replace(opname=opname, opcode=opcode, **changes)


def _rewritten(ins: Any, previous: str | None) -> list:
    """The 3.11 instructions standing for one 3.12/3.13 instruction (none when dropped)."""
    name = ins.opname
    if name in _DROPPED or (name == "POP_TOP" and previous == "END_FOR" and sys.version_info >= (3, 13)):
        return []
    if name == "CLEANUP_THROW" or (previous == "CLEANUP_THROW" and name.startswith("JUMP_BACKWARD")):
        return []  # ``yield from``'s handler for ``throw()``, reached only from the exception table
    if name == "RETURN_CONST":
        return [_as(ins, "LOAD_CONST"), _as(ins, "RETURN_VALUE", arg=None, argval=None, argrepr=_FUSED)]
    pair = {"LOAD_FAST_LOAD_FAST": ("LOAD_FAST", "LOAD_FAST"), "STORE_FAST_STORE_FAST": ("STORE_FAST", "STORE_FAST"),
            "STORE_FAST_LOAD_FAST": ("STORE_FAST", "LOAD_FAST")}.get(name)
    if pair:
        return [_as(ins, op, argval=value) for op, value in zip(pair, ins.argval)]
    if name == "LOAD_FAST_CHECK":
        return [_as(ins, "LOAD_FAST")]
    if name.startswith("POP_JUMP_IF_"):
        direction = "BACKWARD" if ins.argval <= ins.offset else "FORWARD"
        return [_as(ins, f"POP_JUMP_{direction}_IF_{name[len('POP_JUMP_IF_'):]}")]
    if name == "LOAD_ATTR" and ins.arg & 1:
        return [_as(ins, "LOAD_METHOD")]
    if name == "COMPARE_OP" and ins.argval.startswith("bool("):  # 3.13: a comparison feeding a jump
        return [ins._replace(argval=ins.argval[5:-1])]
    if name == "CALL_INTRINSIC_2" and ins.argrepr == "INTRINSIC_PREP_RERAISE_STAR":  # ``except*``
        return [_as(ins, "PREP_RERAISE_STAR")]
    if name == "CALL_INTRINSIC_1" and ins.argrepr == "INTRINSIC_ASYNC_GEN_WRAP":  # ``yield`` in ``async def``
        return [_as(ins, "ASYNC_GEN_WRAP")]
    if name == "MAKE_FUNCTION" and ins.arg is None:  # 3.13: its flags follow
        return [ins._replace(arg=0)]
    return [ins]


def _entries(code: Any) -> list:
    """[instruction, offsets that lead to it] in order, rewritten into 3.11 instructions."""
    entries: list = []
    pending: list = []
    previous = None
    for ins in dis.get_instructions(code):
        if ins.opname == "CACHE":
            continue
        pending.append(ins.offset)
        if ins.opname == "SET_FUNCTION_ATTRIBUTE" and entries and entries[-1][0].opname == "MAKE_FUNCTION":
            made = entries[-1][0]
            entries[-1][0] = made._replace(arg=made.arg | ins.arg)
        else:
            for k, new in enumerate(_rewritten(ins, previous)):
                entries.append([new, pending if k == 0 else []])
                pending = []
        previous = ins.opname
    return entries


def _merge_patterns(entries: list) -> list:
    """3.11's ``JUMP_IF_*_OR_POP`` and backward conditional jumps from their 3.12 spellings."""
    targets = {e[0].argval for e in entries if e[0].opcode in _JUMPS}
    out: list = []
    k = 0
    while k < len(entries):
        ins = entries[k][0]
        later = entries[k + 1:k + 3]
        names = [e[0].opname for e in later]
        untargeted = not any(o in targets for e in later for o in e[1])
        if ins.opname == "COPY" and ins.arg == 1 and len(names) == 2 and untargeted and names[1] == "POP_TOP" \
                and names[0] in ("POP_JUMP_FORWARD_IF_FALSE", "POP_JUMP_FORWARD_IF_TRUE"):
            jump = later[0][0]
            out.append([_as(jump, f"JUMP_IF_{jump.opname.rsplit('_', 1)[1]}_OR_POP"),
                        entries[k][1] + later[0][1] + later[1][1]])
            k += 3
            continue
        if ins.opname.startswith("POP_JUMP_FORWARD_IF_") and names[:1] == ["JUMP_BACKWARD"] and k + 2 < len(entries) \
                and ins.argval in entries[k + 2][1] and not any(o in targets for o in later[0][1]):
            back = later[0][0]
            test = _FLIPPED[ins.opname[len("POP_JUMP_FORWARD_IF_"):]]
            out.append([_as(ins, f"POP_JUMP_BACKWARD_IF_{test}", argval=back.argval), entries[k][1] + later[0][1]])
            k += 2
            continue
        out.append(entries[k])
        k += 1
    return out


_WITH_HANDLER = ["PUSH_EXC_INFO", "WITH_EXCEPT_START", "POP_JUMP_FORWARD_IF_TRUE", "RERAISE", "POP_TOP",
                 "POP_EXCEPT", "POP_TOP", "POP_TOP"]


def _with_handlers_unlinked(entries: list) -> list:
    """A ``with`` handler that swallowed the exception jumps back to the code after the block;
    that jump is no loop: it becomes a ``NOP`` (``NewOps.with_statement`` reads the handler)."""
    names = [e[0].opname for e in entries]
    for k in range(len(_WITH_HANDLER), len(entries)):
        if names[k].startswith("JUMP_BACKWARD") and names[k - len(_WITH_HANDLER):k] == _WITH_HANDLER:
            entries[k][0] = entries[k][0]._replace(opname="NOP", opcode=_OP["NOP"], arg=None, argval=None)
    return entries


_TERNARY = "a conditional expression's clean-up"
_MAX_COPY_SIZE = 4  # CPython 3.12's flowgraph.c: an exit block this short is copied into a jump to it
_FUSED = "RETURN_CONST"


def _chain_cleanups_moved(entries: list) -> list:
    """``return a if x < y < z else b``: 3.12 places the clean-up of the chained comparison
    (``POP_TOP``) after the first branch, falling into the second; 3.11 put it, between two
    jumps, right after the test. Moved there (its jumps marked, ``ternary_with_copied_tail``
    knows the expression by them)."""
    targets = {e[0].argval for e in entries if e[0].opcode in _JUMPS}
    for k in range(1, len(entries) - 1):
        ins, offsets = entries[k]
        following = entries[k + 1][1]
        if ins.opname != "POP_TOP" or entries[k - 1][0].opname != "RETURN_VALUE" \
                or not targets.intersection(offsets) or not targets.intersection(following) \
                or not _comparison_cleanup(entries, k):
            continue
        last = next((m for m in range(k - 1, -1, -1) if entries[m][0].opname.startswith("POP_JUMP_FORWARD_IF")
                     and entries[m][0].argval in following), None)
        if last is None or not entries[last + 1][1] or entries[last + 1][0].opname.startswith("JUMP"):
            continue
        jump = ins._replace(opname="JUMP_FORWARD", opcode=_OP["JUMP_FORWARD"], arg=None, argrepr=_TERNARY)
        moved = [[jump._replace(argval=entries[last + 1][1][0]), []], entries[k],
                 [jump._replace(argval=following[0]), []]]
        return _chain_cleanups_moved(entries[:last + 1] + moved + entries[last + 1:k] + entries[k + 1:])
    return entries


def _chain_cleanup_copies_moved(entries: list) -> list:
    """``if x < y < z: return a`` then ``return b``: 3.12 follows the chained comparison's
    clean-up (``POP_TOP``) with a copy of the ``return b`` block the other test jumps to; 3.11
    jumped there from the clean-up, placed between two jumps after the test. So it is again
    (the copy dropped)."""
    targets = {e[0].argval for e in entries if e[0].opcode in _JUMPS}
    ops = [(e[0].opname, e[0].argval) for e in entries]
    for k in range(1, len(entries) - 1):
        if ops[k][0] != "POP_TOP" or ops[k - 1][0] not in ("RETURN_VALUE", "JUMP_FORWARD") \
                or not targets.intersection(entries[k][1]) or not _comparison_cleanup(entries, k):
            continue
        end = next((m for m in range(k + 1, len(entries)) if ops[m][0] == "RETURN_VALUE"), None)
        if end is None or any(ins.opcode in _JUMPS or targets.intersection(o) for ins, o in entries[k + 1:end + 1]):
            continue
        block = ops[k + 1:end + 1]
        start = next((t for t in range(end + 1, len(entries) - len(block) + 1) if targets.intersection(entries[t][1])
                      and ops[t:t + len(block)] == block), None)
        if start is None:
            continue
        last = next((m for m in range(k - 1, -1, -1) if entries[m][0].opname.startswith("POP_JUMP_FORWARD_IF")
                     and entries[m][0].argval in entries[start][1]), None)
        if last is None or not entries[last + 1][1]:
            continue
        jump = entries[k][0]._replace(opname="JUMP_FORWARD", opcode=_OP["JUMP_FORWARD"], arg=None)
        if ops[k - 1][0] == "JUMP_FORWARD":  # already between the test and the branch: the copy goes
            cleanup = [[entries[k][0], [o for e in entries[k:end + 1] for o in e[1]]],
                       [jump._replace(argval=entries[start][1][0]), []]]
            return _chain_cleanup_copies_moved(entries[:k] + cleanup + entries[end + 1:])
        moved = [[jump._replace(argval=entries[last + 1][1][0]), []],
                 [entries[k][0], [o for e in entries[k:end + 1] for o in e[1]]],
                 [jump._replace(argval=entries[start][1][0]), []]]
        return _chain_cleanup_copies_moved(entries[:last + 1] + moved + entries[last + 1:k] + entries[end + 1:])
    return entries


def _comparison_cleanup(entries: list, k: int) -> bool:
    """Whether the ``POP_TOP`` at ``k`` is reached from a chained comparison's test (``SWAP 2;
    COPY 2; COMPARE_OP``, then the jump) -- not, say, a failed pattern's clean-up."""
    names = [e[0].opname for e in entries]
    return any(e[0].opcode in _JUMPS and e[0].argval in entries[k][1] and m >= 3
               and names[m - 3:m] == ["SWAP", "COPY", "COMPARE_OP"] for m, e in enumerate(entries))


def _chain_cleanups_marked(entries: list) -> list:
    """3.13 keeps 3.11's place for that clean-up in a conditional expression (and not in an
    ``if`` statement): its jumps are marked the same way."""
    names = [e[0].opname for e in entries]
    for k in range(1, len(entries) - 2):
        if names[k:k + 3] == ["JUMP_FORWARD", "POP_TOP", "JUMP_FORWARD"] and names[k - 1].startswith("POP_JUMP_FORWARD_IF"):
            for m in (k, k + 2):
                entries[m][0] = entries[m][0]._replace(argrepr=_TERNARY)
    return entries


_AWAIT = ["GET_AWAITABLE", "LOAD_CONST", "SEND", "YIELD_VALUE", "RESUME", "JUMP_BACKWARD_NO_INTERRUPT"]
ASYNC_WITH = "async with"


def _async_with_awaits_dropped(entries: list) -> list:
    """``async with``: ``BEFORE_ASYNC_WITH`` becomes ``BEFORE_WITH`` (marked), and the awaits of
    its ``__aenter__``/``__aexit__`` calls (``GET_AWAITABLE 1``/``2`` and their ``SEND`` loops)
    go: what is left is a ``with`` statement's code."""
    out: list = []
    k = 0
    while k < len(entries):
        ins = entries[k][0]
        names = [e[0].opname for e in entries[k:k + len(_AWAIT)]]
        if names == _AWAIT and ins.arg in (1, 2) and k + len(_AWAIT) < len(entries):
            entries[k + len(_AWAIT)][1] = [o for e in entries[k:k + len(_AWAIT) + 1] for o in e[1]]
            k += len(_AWAIT)
            continue
        if ins.opname == "BEFORE_ASYNC_WITH":
            entries[k][0] = _as(ins, "BEFORE_WITH", argrepr=ASYNC_WITH)
        out.append(entries[k])
        k += 1
    return out


ASYNC_FOR = "async for"
_ENDS = ("RETURN_VALUE", "JUMP_FORWARD", "JUMP_BACKWARD", "RAISE_VARARGS", "RERAISE")


def _async_for_as_for(entries: list, handled: dict) -> list:
    """``async for``: ``GET_AITER`` becomes ``GET_ITER`` and ``GET_ANEXT`` with its await a
    ``FOR_ITER`` (both marked) leaving the loop where the exhausted iterator's handler
    (``END_ASYNC_FOR``) is, which goes: what is left is a ``for`` loop's code."""
    out: list = []
    k = 0
    while k < len(entries):
        ins = entries[k][0]
        names = [e[0].opname for e in entries[k:k + len(_AWAIT)]]
        if ins.opname == "GET_AITER":
            entries[k][0] = _as(ins, "GET_ITER", argrepr=ASYNC_FOR)
        elif ins.opname == "GET_ANEXT" and names[1:] == _AWAIT[1:]:
            end = next((e[0] for e in entries if e[0].opname == "END_ASYNC_FOR"
                        and ins.offset in handled.get(e[0].offset, ())), None)
            if end is not None:
                out.append([_as(ins, "FOR_ITER", argval=end.offset, argrepr=ASYNC_FOR), entries[k][1]])
                entries[k + len(_AWAIT)][1] = [o for e in entries[k + 1:k + len(_AWAIT) + 1] for o in e[1]]
                k += len(_AWAIT)
                continue
        elif ins.opname == "END_ASYNC_FOR" and k + 1 < len(entries):
            entries[k + 1][1] = entries[k][1] + entries[k + 1][1]
            k += 1
            continue
        out.append(entries[k])
        k += 1
    return out


def _async_loop_exits_moved(entries: list, handled: dict) -> list:
    """3.12 puts an ``async for``'s ``END_ASYNC_FOR`` (reached only by the exception ending the
    loop) with the straight code after it at the end of the function; 3.11 had them right after
    the loop's jump back. Moved there."""
    names = [e[0].opname for e in entries]
    for k, name in enumerate(names):
        if name != "END_ASYNC_FOR" or names[k - 1] not in _ENDS:
            continue
        end = next((m for m in range(k + 1, len(entries)) if names[m] in _ENDS), None)
        head = next((m for m in range(k) if names[m] == "GET_ANEXT"
                     and entries[m][0].offset in handled.get(entries[k][0].offset, ())), None)
        back = None if head is None else next((m for m in range(k - 1, head, -1) if names[m] == "JUMP_BACKWARD"
                                               and entries[m][0].argval == entries[head][0].offset), None)
        if end is None or back is None or back + 1 == k:
            continue
        block = entries[k:end + 1]
        return entries[:back + 1] + block + entries[back + 1:k] + entries[end + 1:]
    return entries


def _async_comprehension_handlers_moved(entries: list) -> list:
    """An inlined comprehension that is or holds an ``async`` one jumps at its end over the
    handler restoring its variables (``SWAP 2; POP_TOP; ...; STORE_FAST; RERAISE 0``); other
    inlined comprehensions have that handler at the end. Moved there."""
    restoring = {"SWAP", "POP_TOP", "STORE_FAST", "RERAISE"}
    for k in range(len(entries) - 2):
        if entries[k][0].opname != "JUMP_FORWARD":
            continue
        target = entries[k][0].argval
        t = next((m for m in range(k + 1, len(entries)) if target in entries[m][1]), None)
        block = [e[0].opname for e in entries[k + 1:t]] if t is not None else []
        if block[:2] != ["SWAP", "POP_TOP"] or block[-1] != "RERAISE" or not set(block) <= restoring:
            continue
        joined = [entries[t][0], entries[k][1] + entries[t][1]]
        return _async_comprehension_handlers_moved(entries[:k] + [joined] + entries[t + 1:] + entries[k + 1:t])
    return entries


def instructions(code: Any) -> list:
    """[instruction, offsets leading to it] for ``code``, in CPython 3.11's words."""
    handled: dict = {}  # handler offset -> offsets of the instructions it protects
    for entry in dis._parse_exception_table(code):
        handled.setdefault(entry.target, set()).update(range(entry.start, entry.end, 2))
    if not NEW:
        entries, pending = [], []
        for ins in dis.get_instructions(code):
            if ins.opname == "CACHE":
                continue
            pending.append(ins.offset)
            if ins.opname != "EXTENDED_ARG":
                entries.append([ins, pending])
                pending = []
        return _async_for_as_for(_async_with_awaits_dropped(entries), handled)
    entries = _async_comprehension_handlers_moved(_async_loop_exits_moved(_entries(code), handled))
    entries = _async_for_as_for(_async_with_awaits_dropped(entries), handled)
    entries = _chain_cleanups_marked(_with_handlers_unlinked(_merge_patterns(entries)))
    return _chain_cleanups_moved(_chain_cleanup_copies_moved(entries))


_DISPLAYS = {ast.List: ast.ListComp, ast.Set: ast.SetComp, ast.Dict: ast.DictComp}
_INTRINSICS = {"INTRINSIC_UNARY_POSITIVE", "INTRINSIC_LIST_TO_TUPLE"}


def _slice(start: ast.expr, end: ast.expr) -> ast.Slice:
    return ast.Slice(*[None if isinstance(p, ast.Constant) and p.value is None else p for p in (start, end)])


def _is_saved(value: Any) -> bool:
    return isinstance(value, Mark) and value.kind == "saved"


class NewOps:
    """Instructions new in CPython 3.12/3.13 (mixed into ``Decompiler`` before the 3.11 mixins)."""

    def inline_comprehension_at(self, stack: list) -> bool:
        """Whether a ``FOR_ITER`` with this stack runs an inlined comprehension: the empty
        display under the iterator, the saved loop variables under that."""
        return len(stack) >= 3 and _is_saved(stack[-3]) and type(stack[-2]) in _DISPLAYS \
            and not getattr(stack[-2], "elts", getattr(stack[-2], "keys", None))

    def op_FOR_ITER(self, i, stack, ctx, out):
        if not self.inline_comprehension_at(stack):
            return super().op_FOR_ITER(i, stack, ctx, out)
        exit_ = self.targets[i]
        work = stack[-2:]
        body = self.run(i, exit_, work, type(ctx)(exit_), [])
        if len(work) != 1 or work[0] is not stack[-2]:
            raise DecompileError("a comprehension")
        stack[-2:] = [self.comprehension_of(body, _DISPLAYS[type(work[0])])]
        return exit_

    def op_LOAD_FAST_AND_CLEAR(self, i, stack, ctx, out):
        stack.append(Mark("saved", self.ins[i].argval))  # a comprehension's variable, restored after it

    def restores_saved(self, i: int, stack: list) -> bool:
        """Whether the ``STORE_FAST`` at ``i`` puts back a variable an inlined comprehension saved
        (popping it)."""
        if not (stack and _is_saved(stack[-1])):
            return False
        if stack.pop().value != self.ins[i].argval:
            raise DecompileError("a comprehension's variables")
        return True

    def op_BINARY_SLICE(self, i, stack, ctx, out):
        end, start = self.expr(stack.pop()), self.expr(stack.pop())
        stack.append(ast.Subscript(self.expr(stack.pop()), _slice(start, end), ast.Load()))

    def op_STORE_SLICE(self, i, stack, ctx, out):
        end, start = self.expr(stack.pop()), self.expr(stack.pop())
        target = ast.Subscript(self.expr(stack.pop()), _slice(start, end), ast.Store())
        self.store(target, stack.pop(), i, stack, out)

    def op_CALL_INTRINSIC_1(self, i, stack, ctx, out):
        name = self.ins[i].argrepr
        if name == "INTRINSIC_STOPITERATION_ERROR":  # a generator's handler, after all its code
            return max(ctx.end, i + 1)
        if name not in _INTRINSICS:
            raise DecompileError(f"the intrinsic {name}")
        if name == "INTRINSIC_LIST_TO_TUPLE":
            return self.op_LIST_TO_TUPLE(i, stack, ctx, out)
        stack.append(ast.UnaryOp(ast.UAdd(), self.expr(stack.pop())))
        return None

    def op_LOAD_SUPER_ATTR(self, i, stack, ctx, out):
        """``super().name`` (``super(C, self).name`` when written with its arguments)."""
        arg = self.ins[i].arg
        instance, cls = self.expr(stack.pop()), self.expr(stack.pop())
        func = self.expr(stack.pop())
        call = ast.Call(func, [cls, instance] if arg & 2 else [], [])
        stack.append(ast.Attribute(call, self.ins[i].argval, ast.Load()))
        if arg & 1:
            stack.append(METHOD_SELF)

    def op_CALL_KW(self, i, stack, ctx, out):
        names = self.expr(stack.pop())
        self.kwnames = tuple(e.value for e in names.elts)
        return self.op_CALL(i, stack, ctx, out)

    def op_CONVERT_VALUE(self, i, stack, ctx, out):
        stack.append(Mark("converted", (self.expr(stack.pop()), self.ins[i].arg)))

    def formatted(self, value: Any, spec: ast.expr | None) -> ast.JoinedStr:
        converted = isinstance(value, Mark) and value.kind == "converted"
        expression, conversion = value.value if converted else (self.expr(value), 0)
        if isinstance(spec, ast.Constant):
            spec = ast.JoinedStr([spec])
        return ast.JoinedStr([ast.FormattedValue(expression, {0: -1, 1: 115, 2: 114, 3: 97}[conversion], spec)])

    def op_FORMAT_SIMPLE(self, i, stack, ctx, out):
        stack.append(self.formatted(stack.pop(), None))

    def op_FORMAT_WITH_SPEC(self, i, stack, ctx, out):
        spec = self.expr(stack.pop())
        stack.append(self.formatted(stack.pop(), spec))

    # ------------------------------------------------------------------ copied exit blocks

    def copied_return_end(self, j: int) -> int | None:
        """After the ``NOP``/``POP_TOP`` at ``j``: the end of a copied ``return`` block (a value
        computed, then returned -- not the ``SWAP 2; POP_TOP`` of a ``return`` in a loop)."""
        if self.ins[j].opname not in ("NOP", "POP_TOP") or (j and self.ins[j - 1].opname == "SWAP"):
            return None
        end = self.returning_block_end(j + 1)
        return end if end is not None and end > j + 1 else None

    def returning_block_end(self, j: int) -> int | None:
        """The ``RETURN_VALUE`` ending the straight-line code from ``j``, if it is one."""
        while j < len(self.ins):
            name = self.ins[j].opname
            if name == "RETURN_VALUE":
                return j
            if self.targets[j] is not None or name.startswith(("RAISE", "RERAISE", "FOR_ITER", "POP_EXCEPT")):
                return None
            j += 1
        return None

    def copies_code_at(self, start: int, end: int, other: int) -> bool:
        ins = self.ins
        return other + end - start <= len(ins) and all(
            (a.opname, a.argval) == (b.opname, b.argval) for a, b in zip(ins[start:end], ins[other:other + end - start]))

    def copied_break(self, i, stack, ctx, out) -> int | None:
        """At a ``POP_TOP``: 3.12 copies a small ``return`` block after a loop into the ``break``
        that leads to it, the iterator popped, then the copy (a ``return`` in the loop would pop
        it after its value). Emits the ``break``; where to go on (None if it is not one)."""
        if NEW and stack and isinstance(stack[-1], Mark) and stack[-1].kind == "iter" and ctx.exit is not None:
            end = self.copied_return_end(i)
            if end is not None and self.copies_code_at(i + 1, end + 1, ctx.exit):
                stack.pop()
                self.emit(out, ast.Break(), i)
                return self.after_exit(end, ctx)
        return None

    def threaded_break(self, target: int, ctx) -> bool:
        """Whether a jump to ``target`` is a ``break`` that 3.12 threaded through the jump after
        the loop (to the enclosing loop's head, say)."""
        exit_ = ctx.exit
        return exit_ is not None and exit_ < len(self.ins) and self.ins[exit_].opname in (
            "JUMP_FORWARD", "JUMP_BACKWARD") and self.targets[exit_] == target

    def copied_break_target(self, start: int, exit_: int, ctx) -> int | None:
        """Where the ``break`` of a loop with an ``else`` (body from ``start``, normal exit to
        ``exit_``) would jump, when 3.12 copied the ``return`` block found there into it: the
        copy follows the ``break``'s ``NOP`` (or the popped iterator)."""
        if not NEW:
            return None
        for j in range(start, exit_):
            end = self.copied_return_end(j)
            if end is None:
                continue
            for p in range(exit_ + 1, min(ctx.end, len(self.ins)) - (end - j) + 1):
                if self.copies_code_at(j + 1, end + 1, p):
                    return p
        return None

    def op_NOP(self, i, stack, ctx, out):
        """The line of a ``break`` out of a ``while`` loop whose ``return`` block 3.12 copied."""
        if NEW and ctx.exit is not None:
            end = self.copied_return_end(i)
            if end is not None and self.copies_code_at(i + 1, end + 1, ctx.exit):
                self.emit(out, ast.Break(), i)
                return self.after_exit(end, ctx)
        return None

    def copied_tail_after_finally(self, i: int, handler: int, copy: Any) -> tuple | None:
        """3.12 puts the body's copy of a ``finally`` block, then the code after the ``try`` when
        it is a ``return`` block, before the handlers (the ``finally`` one, or the ``except`` ones
        jumping back to the copy): (end of the body, start and end of that ``return`` block)."""
        if not NEW:
            return None
        for p in range(i, handler - copy.length):
            if copy.handler in self.handler_chain(p) or not self.same_as_copy(p, copy):
                continue
            end = self.returning_block_end(p + copy.length)
            if end is not None and end > p + copy.length and (end + 1 == handler or self.ins[end + 1].opname == "PUSH_EXC_INFO"):
                return p, p + copy.length, end + 1
        return None

    def finally_out_of_line(self, handler: int, ctx) -> bool:
        """Whether a ``try``/``finally`` ending its block (a loop's body) has its handler beyond
        the block, with the body's copy of the ``finally`` block last in it (3.12)."""
        if not NEW or self.is_except_handler(handler) or self.ins[handler].opname != "PUSH_EXC_INFO":
            return False
        cleanup = self.handler_at[handler]
        copy = FinallyCopy(handler, handler + 1, cleanup - 1 - (handler + 1))
        return copy.length > 0 and self.same_as_copy(ctx.end - copy.length, copy)

    def copied_constant_return(self, end: int) -> bool:
        """Whether the ``RETURN_VALUE`` at ``end`` returns a constant without ``RETURN_CONST``:
        a copied ``return`` (of a conditional expression), which the compiler does not fuse."""
        return self.ins[end - 1].opname == "LOAD_CONST" and self.ins[end].argrepr != _FUSED

    def ternary_with_copied_tail(self, cond: ast.expr, true_label: int, false_label: int, stack: list, ctx) -> int | None:
        """``... (a if c else b) ...`` returned: 3.12 copies what follows the conditional
        expression (up to the ``return``) into both branches. Pushes the expression and returns
        where the second copy starts (None if the branches are not that)."""
        end_a = self.returning_block_end(true_label) if NEW else None
        end_b = self.returning_block_end(false_label) if end_a == false_label - 1 else None
        uncopied = self.uncopied_tail_end(false_label) if end_a == false_label - 1 and end_b is None else None
        end_b = end_b if uncopied is None else uncopied
        moved = true_label and self.ins[true_label - 1].argrepr == _TERNARY
        if end_b is None or not (moved or self.copied_constant_return(end_a) or self.copied_constant_return(end_b)
                                 or uncopied is not None or any(isinstance(v, ast.expr) for v in stack)):
            return None
        common = 0
        while common < min(end_a - true_label, end_b - false_label) and self.copies_code_at(
                end_a - common, end_a + 1, end_b - common):
            common += 1
        for n in range(common, 0, -1):
            try:
                a = self.expression_region(true_label, end_a + 1 - n, stack, ctx)
                b = self.expression_region(false_label, end_b + 1 - n, stack, ctx)
            except DecompileError:
                continue
            stack.append(ast.IfExp(cond, a, b))
            return end_b + 1 - n
        return None

    def uncopied_tail_end(self, j: int) -> int | None:
        """The ``RETURN_VALUE`` ending a branch from ``j`` whose jump to a join (of an inner
        conditional expression) was not replaced by a copy of the short code from the join to the
        ``return``: 3.12 copies that code unless the ``return`` is a block of its own, reached
        from another branch too -- the branches of one returned conditional expression."""
        while j < len(self.ins) and self.ins[j].opname != "JUMP_FORWARD":
            if self.ins[j].opname.startswith(("RETURN", "RAISE", "RERAISE", "FOR_ITER", "JUMP_BACKWARD")):
                return None
            j += 1
        join = self.targets[j] if j < len(self.ins) else None
        end = self.returning_block_end(join) if join is not None else None
        return end if end is not None and end - join + 1 <= _MAX_COPY_SIZE else None

    _WITH_EXIT_312 = ["LOAD_CONST"] * 3 + ["CALL", "POP_TOP"]

    def with_statement(self, i, stack, ctx, out) -> int:
        """``with m as t:`` in 3.12/3.13: the handler is out of line, so the block ends where the
        handler stops protecting; then the exit call, and the code after (or a ``return``)."""
        manager = self.expr(stack.pop())
        handler = self.handler_of(i + 1)
        if [x.opname for x in self.ins[handler:handler + 8]] != _WITH_HANDLER:
            raise DecompileError("a with statement")
        # (the handlers of statements nested in the block are out of line too, before this one)
        first_handler = next((n for n in range(i + 1, handler) if self.ins[n].opname == "PUSH_EXC_INFO"), handler)
        end = 1 + max(n for n in range(i + 1, first_handler) if handler in self.handler_chain(n))
        target, j = (None, i + 2) if self.ins[i + 1].opname == "POP_TOP" else self.read_target(i + 1)
        names = [x.opname for x in self.ins[end:end + 7]]
        stack.append(Mark("exit"))
        if names[:5] == self._WITH_EXIT_312:
            body, after = self.region(j, end, stack, ctx.sub(end, end + 5)), end + 5
        elif names == ["SWAP"] + self._WITH_EXIT_312 + ["RETURN_VALUE"]:
            work = list(stack)
            body = self.run(j, end, work, ctx.sub(end, end), [])
            if len(work) != len(stack) + 1:
                raise DecompileError("a with statement")
            # (on the line of the value: 3.13 fuses two loads or a store and a load on one line)
            self.emit(body, ast.Return(self.expr(work[-1])), end - 1)
            after = self.after_exit(end + 6, ctx)
        else:
            raise DecompileError("a with statement")
        stack.pop()
        self.emit(out, self.with_kind(i)([ast.withitem(manager, target)], body), i)
        return after

    def with_kind(self, i: int) -> type:
        """``ast.With``, or ``ast.AsyncWith`` for the marked ``BEFORE_WITH`` at ``i``."""
        return ast.AsyncWith if self.ins[i].argrepr == ASYNC_WITH else ast.With

    def leaves_handler_backward(self, n: int) -> bool:
        """Whether the jump at ``n`` ends an ``except`` clause (after ``POP_EXCEPT``, and the
        clearing of its name): 3.12 puts handlers after the code they return to, and that jump
        back does not make a loop."""
        ins = self.ins
        if not NEW or n < 1:
            return False
        return ins[n - 1].opname == "POP_EXCEPT" or (
            n >= 4 and ins[n - 4].opname == "POP_EXCEPT" and ins[n - 1].opname.startswith("DELETE_"))

    def handler_join(self, i: int, handler: int, cleanup: int, ctx) -> int | None:
        """Where the clauses of the ``try`` at ``i`` jump back to when 3.12 placed them out of
        line after the code that follows the statement, or the head of the loop it ends (else None)."""
        if not NEW:
            return None
        joins = {self.targets[k] for k in range(handler, cleanup) if self.leaves_handler_backward(k)
                 and self.targets[k] is not None and (i < self.targets[k] < handler or self.targets[k] in ctx.heads)}
        return joins.pop() if len(joins) == 1 else None

    def op_POP_EXCEPT(self, i, stack, ctx, out):
        """Marks a ``return`` block copied into the end of an ``except`` clause (``hoisted_tails``
        puts it back after the ``try``): a ``return`` in the clause would leave it after its value."""
        after = super().op_POP_EXCEPT(i, stack, ctx, out)
        end = self.returning_block_end(i + 1 if after is None else after) if NEW else None
        if end is not None:
            self.copied_returns.add(end)
        return after


def hoisted_tails(body: list) -> list:
    """``body`` with the ``return`` that 3.12 copied to the end of every way out of a ``try``
    statement (its clauses and its ``else``) put back once after it."""
    out: list = []
    for stmt in body:
        for field in ("body", "orelse", "finalbody", "handlers"):
            if isinstance(getattr(stmt, field, None), list) and field != "handlers":
                setattr(stmt, field, hoisted_tails(getattr(stmt, field)))
        for clause in getattr(stmt, "handlers", []) if isinstance(stmt, ast.Try) else []:
            clause.body = hoisted_tails(clause.body)
        out.append(stmt)
        tail = _copied_tail(stmt) if isinstance(stmt, ast.Try) else None
        if tail is not None:
            out.append(tail)
    return out


def _copied_tail(node: ast.Try) -> ast.stmt | None:
    if node.finalbody or not node.handlers:
        return None
    ends = [clause.body[-1] for clause in node.handlers]
    if not all(getattr(end, "copied", False) for end in ends) or len({ast.dump(e) for e in ends}) != 1:
        return None
    if node.orelse and ast.dump(node.orelse[-1]) == ast.dump(ends[0]):
        node.orelse.pop()
    elif node.orelse:
        return None
    elif getattr(node.body[-1], "copied", False) and ast.dump(node.body[-1]) == ast.dump(ends[0]):
        node.body = node.body[:-1] or [ast.Pass()]  # hoisted out of a try nested at its end
    for clause in node.handlers:
        clause.body = clause.body[:-1] or [ast.Pass()]
    return ends[0]


__all__ = ["NEW", "NewOps", "hoisted_tails", "instructions"]
