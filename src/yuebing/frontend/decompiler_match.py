"""``match`` statements for ``frontend/decompiler.py`` (CPython 3.11's pattern bytecode).

The subject is computed and left on the stack. Every case but the last copies it (``COPY 1``),
runs its pattern -- which consumes the copy, stores the names it captures and on failure
jumps into a run of ``POP_TOP`` that clears what the pattern had pushed and reaches the next
case -- then its guard (failing to the same place), ``POP_TOP`` for the subject, the body and a
jump to the end. The last case's pattern consumes the subject itself; a trailing ``case _:``
has no pattern code at all (a ``NOP`` for its line).

Patterns read back: literals and dotted names (``<value> COMPARE_OP == POP_JUMP_IF_FALSE``),
``None``/``True``/``False``, captures and ``_``, ``as``, alternatives of capture-free patterns
(``1 | 2``), sequences (``MATCH_SEQUENCE``, length test, ``UNPACK_SEQUENCE``/``UNPACK_EX``),
mappings with constant keys (``MATCH_MAPPING``, ``MATCH_KEYS``) and classes with positional and
keyword sub-patterns (``MATCH_CLASS``), nested, when every capture is stored where it is
matched; and a whole case's ``{k: p, **rest}``, whose captures are rotated under the subject
(``SWAP``) and stored at the end (the stack simulated). Other patterns whose captures the
compiler shuffles on the stack are refused, as is a guard on the last case; the compile-back
check in ``bytecode.py`` confirms the rest.
"""
from __future__ import annotations

import ast

from .decompiler_ops import DecompileError, Mark

_STORES = ("STORE_FAST", "STORE_NAME", "STORE_DEREF", "STORE_GLOBAL")
_PATTERN_STARTS = ("COPY", "MATCH_SEQUENCE", "MATCH_MAPPING")


class MatchStatements:
    """``match`` statements (mixed into ``Decompiler``)."""

    def try_match(self, i: int, stack: list, ctx, out: list) -> int | None:
        """At a statement boundary with a value left on the stack: a ``match`` statement on it,
        or None with nothing changed."""
        if self.ins[i].opname not in _PATTERN_STARTS or not stack or not isinstance(stack[-1], ast.expr):
            return None
        saved = (list(self.pending_stores), set(self.stored_globals), set(self.stored_cells))
        try:
            node, end = self.match_statement(i, stack, ctx)
        except (DecompileError, IndexError, KeyError, AttributeError, TypeError):
            self.pending_stores, self.stored_globals, self.stored_cells = saved
            return None
        stack.pop()
        self.emit(out, node, i - 1)
        return end

    def match_statement(self, i: int, stack: list, ctx) -> tuple:
        subject, rest = self.expr(stack[-1]), stack[:-1]
        cases, j, end, last = [], i, None, False
        while not last and j < ctx.end:
            case, j, body_end, last = self.match_case(j, rest, ctx, end, first=not cases)
            end = body_end if end is None else end
            if body_end is not None and body_end != end:
                raise DecompileError("a match statement's end")
            cases.append(case)
        if not last:
            raise DecompileError("a match statement")
        stop = self.case_stop(end, ctx)
        if j < stop and self.ins[j].opname == "NOP":  # ``case _:``
            body = self.region(j + 1, stop, rest, ctx.sub(stop, end))
            if end in ctx.heads and len(body) > 1 and isinstance(body[-1], ast.Continue):
                body.pop()
            default = ast.match_case(ast.MatchAs(), None, body)
            default.pattern.lineno = self.lines[j]
            cases.append(default)
            j = stop
        if end is not None and end > ctx.end and end != ctx.follow:
            raise DecompileError("a match statement ending outside its block")
        return ast.Match(subject, cases), j if end is None or end in ctx.heads else min(end, ctx.end)

    def match_case(self, j: int, rest: list, ctx, end, first: bool) -> tuple:
        """One case from ``j``: (the case, where the next starts, where its body jumps, last?)."""
        attempts = [True, False] if self.ins[j].opname == "COPY" and self.ins[j].arg == 1 else [False]
        for copied in attempts:
            fails: set = set()
            try:
                pattern, k = self.pattern(j + copied, fails)
                guard = None
                if copied and self.ins[k].opname != "POP_TOP":
                    guard, k = self.guard(k, rest, ctx, fails)
                if copied:
                    if self.ins[k].opname != "POP_TOP":
                        raise DecompileError("a case")
                    k += 1
            except DecompileError:
                continue
            if first and not fails:
                raise DecompileError("a match statement whose first case cannot fail")
            return self.case_body(j, k, pattern, guard, fails, rest, ctx, end, last=not copied)
        raise DecompileError("a case")

    def case_body(self, j, k, pattern, guard, fails, rest, ctx, end, last) -> tuple:
        ins = self.ins
        fail = min(fails) if fails else None
        stop = fail if fail is not None else self.case_stop(end, ctx)
        jump_end = None
        if stop - 1 > k and ins[stop - 1].opname in ("JUMP_FORWARD", "JUMP_BACKWARD"):
            jump_end = self.targets[stop - 1]
        follow = jump_end if jump_end is not None else end
        body = self.region(k, stop, rest, ctx.sub(stop, follow))
        if jump_end is not None and jump_end in ctx.heads and len(body) > 1 and isinstance(body[-1], ast.Continue):
            body.pop()  # the jump to the end of the match is the loop's next iteration
        nxt = stop
        while nxt < len(ins) and ins[nxt].opname == "POP_TOP" and fail is not None:
            nxt += 1
        pattern.lineno = self.lines[j]
        return ast.match_case(pattern, guard, body), nxt, jump_end, last

    @staticmethod
    def case_stop(end, ctx) -> int:
        """Where the last case's body (or ``case _:``'s) stops: the end of the match, or of the
        block when the match ends by jumping out of it (back to a loop's head)."""
        return end if end is not None and end <= ctx.end and end not in ctx.heads else ctx.end

    def guard(self, k: int, rest: list, ctx, fails: set) -> tuple:
        work = list(rest) + [Mark("subject")]
        jump = self.node_expression(k, work, ctx)
        cond, true_label, false_label, _ = self.chain(jump, work.pop(), work, ctx)
        fails.add(false_label)
        return cond, true_label

    # ------------------------------------------------------------------ patterns

    def pattern(self, j: int, fails: set) -> tuple:
        """The pattern whose code starts at ``j`` (it consumes the value on top): (pattern, next)."""
        ins = self.ins
        name = ins[j].opname
        if name in _STORES:
            self.note_store(j)
            return ast.MatchAs(None, ins[j].argval), j + 1
        if name == "POP_TOP":
            return ast.MatchAs(), j + 1
        if name == "POP_JUMP_FORWARD_IF_NOT_NONE":
            fails.add(self.targets[j])
            return ast.MatchSingleton(None), j + 1
        if name == "COPY" and ins[j].arg == 1:
            try:
                return self.or_pattern(j, fails)
            except DecompileError:
                inner, k = self.pattern(j + 1, fails)
                if ins[k].opname not in _STORES:
                    raise DecompileError("an as pattern")
                self.note_store(k)
                return ast.MatchAs(inner, ins[k].argval), k + 1
        if name == "MATCH_SEQUENCE":
            return self.sequence_pattern(j, fails)
        if name == "MATCH_MAPPING":
            return self.mapping_pattern(j, fails)
        return self.value_or_class_pattern(j, fails)

    def note_store(self, j: int) -> None:
        if self.ins[j].opname == "STORE_GLOBAL":
            self.stored_globals.add(self.ins[j].argval)
        elif self.ins[j].opname == "STORE_DEREF":
            self.stored_cells.add(self.ins[j].argval)

    def expect(self, j: int, names: list) -> None:
        if [x.opname for x in self.ins[j:j + len(names)]] != names:
            raise DecompileError("a pattern")

    def or_pattern(self, j: int, fails: set) -> tuple:
        ins, alternatives, success = self.ins, [], None
        while ins[j].opname == "COPY" and ins[j].arg == 1:
            inner_fails: set = set()
            alternative, k = self.pattern(j + 1, inner_fails)
            if ins[k].opname != "JUMP_FORWARD" or (success is not None and self.targets[k] != success):
                raise DecompileError("an or pattern")
            success = self.targets[k]
            alternatives.append(alternative)
            j = k + 1
            if inner_fails != {j}:
                raise DecompileError("an or pattern")
        self.expect(j, ["POP_TOP", "JUMP_FORWARD"])
        fails.add(self.targets[j + 1])
        if len(alternatives) < 2 or success != j + 2 or ins[success].opname != "POP_TOP":
            raise DecompileError("an or pattern")
        return ast.MatchOr(alternatives), success + 1

    def length_test(self, j: int, fails: set) -> tuple:
        """``GET_LEN; LOAD_CONST n; COMPARE_OP op; POP_JUMP_FORWARD_IF_FALSE``: (n, op, next)."""
        self.expect(j, ["GET_LEN", "LOAD_CONST", "COMPARE_OP", "POP_JUMP_FORWARD_IF_FALSE"])
        fails.add(self.targets[j + 3])
        return self.ins[j + 1].argval, self.ins[j + 2].argval, j + 4

    def sub_patterns(self, j: int, count: int, fails: set) -> tuple:
        patterns = []
        for _ in range(count):
            pattern, j = self.pattern(j, fails)
            patterns.append(pattern)
        return patterns, j

    def sequence_pattern(self, j: int, fails: set) -> tuple:
        ins = self.ins
        self.expect(j, ["MATCH_SEQUENCE", "POP_JUMP_FORWARD_IF_FALSE"])
        fails.add(self.targets[j + 1])
        size, op, j = self.length_test(j + 2, fails)
        if ins[j].opname == "UNPACK_SEQUENCE" and op == "==" and ins[j].arg == size:
            patterns, j = self.sub_patterns(j + 1, size, fails)
            return ast.MatchSequence(patterns), j
        if ins[j].opname == "UNPACK_EX" and op == ">=":
            before, after = ins[j].arg & 0xFF, ins[j].arg >> 8
            if before + after != size:
                raise DecompileError("a sequence pattern")
            patterns, j = self.sub_patterns(j + 1, before + 1 + after, fails)
            star = patterns[before]
            if not isinstance(star, ast.MatchAs) or star.pattern is not None:
                raise DecompileError("a sequence pattern")
            patterns[before] = ast.MatchStar(star.name)
            return ast.MatchSequence(patterns), j
        raise DecompileError("a sequence pattern")

    def mapping_pattern(self, j: int, fails: set) -> tuple:
        ins = self.ins
        self.expect(j, ["MATCH_MAPPING", "POP_JUMP_FORWARD_IF_FALSE"])
        fails.add(self.targets[j + 1])
        size, op, j = self.length_test(j + 2, fails) if ins[j + 2].opname == "GET_LEN" else (0, ">=", j + 2)
        self.expect(j, ["LOAD_CONST", "MATCH_KEYS", "COPY", "POP_JUMP_FORWARD_IF_NONE", "UNPACK_SEQUENCE"])
        keys = ins[j].argval
        if op != ">=" or not isinstance(keys, tuple) or len(keys) != size or ins[j + 4].arg != size:
            raise DecompileError("a mapping pattern")
        fails.add(self.targets[j + 3])
        keys = [ast.Constant(k) for k in keys]
        try:
            inner_fails: set = set()
            patterns, k = self.sub_patterns(j + 5, size, inner_fails)
            self.expect(k, ["POP_TOP", "POP_TOP"])
        except DecompileError:
            return self.mapping_with_rest(keys, j + 5, fails)
        fails |= inner_fails
        return ast.MatchMapping(keys, patterns, None), k + 2

    _REST = ["BUILD_MAP", "SWAP", "DICT_UPDATE", "UNPACK_SEQUENCE"]

    def mapping_with_rest(self, keys: list, j: int, fails: set) -> tuple:
        """``{k: p, ..., **rest}`` as a whole case's pattern: each capture's value is rotated
        under the subject (``SWAP``s), ``rest`` is built (a copy of the subject without the keys)
        and all are stored at the end, in an order the optimiser may change: the stack is
        simulated to tell which store takes which value."""
        ins = self.ins
        stack: list = ["subject", "keys"] + [("value", k) for k in reversed(range(len(keys)))]
        patterns: list = []
        captures: list = []  # which sub-patterns are captures, named by the stores at the end
        for k in range(len(keys)):
            if stack[-1] != ("value", k):
                raise DecompileError("a mapping pattern")
            if ins[j].opname == "SWAP":
                captures.append(k)
                patterns.append(ast.MatchAs(None, None))
                j = self.rotate(j, stack)
            else:
                pattern, j = self.pattern(j, fails)
                if ins[j - 1].opname in _STORES:
                    raise DecompileError("a mapping pattern")
                patterns.append(pattern)
                stack.pop()
        self.expect(j, self._REST)
        if stack[-2:] != ["subject", "keys"] or ins[j + 3].arg != len(keys):
            raise DecompileError("a mapping pattern")
        j += 4
        for _ in keys:
            self.expect(j, ["COPY", "SWAP", "DELETE_SUBSCR"])
            j += 3
        stack[-2:] = ["rest"]
        rest = None
        while stack:
            if ins[j].opname == "SWAP":
                j = self.rotate(j, stack)
                continue
            if ins[j].opname not in _STORES:
                raise DecompileError("a mapping pattern")
            self.note_store(j)
            value, name = stack.pop(), ins[j].argval
            if value == "rest":
                rest = name
            else:
                patterns[value[1]].name = name
            j += 1
        if rest is None or any(patterns[k].name is None for k in captures):
            raise DecompileError("a mapping pattern")
        return ast.MatchMapping(keys, patterns, rest), j

    def rotate(self, j: int, stack: list) -> int:
        """Apply the ``SWAP``s from ``j`` to the simulated ``stack``; where they end."""
        while self.ins[j].opname == "SWAP":
            n = self.ins[j].arg
            if n > len(stack):
                raise DecompileError("a pattern's captures")
            stack[-1], stack[-n] = stack[-n], stack[-1]
            j += 1
        return j

    def value_or_class_pattern(self, j: int, fails: set) -> tuple:
        ins = self.ins
        value, k = self.dotted_value(j)
        name = ins[k].opname
        if name == "COMPARE_OP" and ins[k].argval == "==" and ins[k + 1].opname == "POP_JUMP_FORWARD_IF_FALSE":
            fails.add(self.targets[k + 1])
            return ast.MatchValue(value), k + 2
        if name == "IS_OP" and ins[k].arg == 0 and isinstance(value, ast.Constant) and value.value in (True, False) \
                and ins[k + 1].opname == "POP_JUMP_FORWARD_IF_FALSE":
            fails.add(self.targets[k + 1])
            return ast.MatchSingleton(value.value), k + 2
        if name == "LOAD_CONST" and isinstance(ins[k].argval, tuple):
            self.expect(k + 1, ["MATCH_CLASS", "COPY", "POP_JUMP_FORWARD_IF_NONE", "UNPACK_SEQUENCE"])
            keywords, positional = ins[k].argval, ins[k + 1].arg
            if ins[k + 4].arg != positional + len(keywords):
                raise DecompileError("a class pattern")
            fails.add(self.targets[k + 3])
            patterns, end = self.sub_patterns(k + 5, positional + len(keywords), fails)
            return ast.MatchClass(value, patterns[:positional], list(keywords), patterns[positional:]), end
        raise DecompileError("a pattern")

    def dotted_value(self, j: int) -> tuple:
        """A constant, or a (dotted) name, loaded from ``j``: (expression, next)."""
        ins = self.ins
        if ins[j].opname == "LOAD_CONST":
            return ast.Constant(ins[j].argval), j + 1
        if ins[j].opname not in ("LOAD_GLOBAL", "LOAD_FAST", "LOAD_DEREF", "LOAD_NAME") or \
                ins[j].opname == "LOAD_GLOBAL" and ins[j].arg & 1:
            raise DecompileError("a pattern's value")
        value, j = ast.Name(ins[j].argval, ast.Load()), j + 1
        while ins[j].opname == "LOAD_ATTR":
            value, j = ast.Attribute(value, ins[j].argval, ast.Load()), j + 1
        return value, j


__all__ = ["MatchStatements"]
