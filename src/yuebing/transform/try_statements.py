"""The reverse transform of ``try`` statements (a mixin of ``reverse.ReverseGenerator``).

A caught exception is recorded like a branch: the handler pushes how far the body got, then the
handler (or ``else`` block) runs, then which one ran (-1 for ``else``). The reverse pass undoes
that block, then exactly the work of the body that completed, newest first, as plain Python kept
it. Everything inside a try body is a *region* whose progress the forward pass keeps in plain
locals (``_Level``): per block of statements, the number of the last step passed; per loop, the
iterations completed. A loop, ``with`` block or inner ``try`` that raised part way is undone in
part: the statements of its last iteration that completed, then its completed iterations. The
branches of ifs are followed inside a block's numbering; loops, blocks, inner tries and calls get
a mark when they start and one when they end. A call that raised after its callee did work is
undone by the callee's partial pullback, which the handler took (``exceptions.claim``; the
number of the call that ran last is kept too); the callees themselves keep their progress the
same way (``partial_calls.py``). Inside a region, float blocks and float loops are off (the unit
of work must be one statement: a block raising part way would not even assign its variables).
A ``try`` with only ``finally`` records nothing of its own (an exception leaves). Inside a
region, an exception leaving a try through a ``finally`` block with work first records how far
the try got (``exceptions.through_finally``: the residuals of the statement that raised dropped,
the partial call taken); the finally block's work follows on the tape, and the reverse pass
undoes it first, then the try's part (``_rev_part_Try``).
"""
from __future__ import annotations

import dataclasses
from typing import Callable

from ..ir import nodes as ir

_COMPOUND = (ir.ForRange, ir.While, ir.With, ir.Try)


def has_reverse_work(body: list) -> bool:
    """Whether the statements ``body`` leave anything for the reverse pass to undo (a call, a
    copy, a closure, at any depth): blocks without any record nothing (no branch flag, no count)."""
    for s in body:
        if isinstance(s, (ir.Call, ir.Copy, ir.MakeClosure)):
            return True
        if isinstance(s, ir.If) and (has_reverse_work(s.body) or has_reverse_work(s.orelse)):
            return True
        if isinstance(s, ir.While) and (has_reverse_work(s.body) or has_reverse_work(s.test_body)):
            return True
        if isinstance(s, (ir.ForRange, ir.With)) and has_reverse_work(s.body):
            return True
        if isinstance(s, ir.Try) and any(has_reverse_work(block) for block in ir.child_blocks(s)):
            return True
    return False


def _tracked_if(s: object) -> bool:
    return isinstance(s, ir.If) and (has_reverse_work(s.body) or has_reverse_work(s.orelse))


def _compound(s: object) -> bool:
    """A loop, ``with`` block or try with work: it can stop part way and is undone in part."""
    return isinstance(s, _COMPOUND) and has_reverse_work([s])


class _Level:
    """The progress of one block of statements: each statement (and, inside, the statements of
    the branches of its ifs) is numbered in order; a compound statement gets a number when it
    starts and one when it ends. ``done`` names the local holding the last number passed."""

    def __init__(self, body: list, new_var: Callable) -> None:
        self.done = new_var("done", -1)
        self.first_of: dict[int, int] = {}
        self.last_of: dict[int, int] = {}
        self.count = 0
        self._number(body)
        self.last = self.count - 1

    def _number(self, body: list) -> None:
        for stmt in body:
            first = self.count
            if _tracked_if(stmt):
                self._number(stmt.body)
                self._number(stmt.orelse)
            elif _compound(stmt) or isinstance(stmt, ir.Call):
                self.count += 1  # its start mark (a call's callee may raise after partial work)
            self.count += 1  # the statement completes after its branches
            self.first_of[id(stmt)], self.last_of[id(stmt)] = first, self.count - 1


class _Region:
    """The locals that keep the progress of one try body, all of its depth: its levels' ``done``
    numbers, its loops' iteration counts, its inner tries' parts (with their initial values)."""

    def __init__(self) -> None:
        self.initial: dict[str, int] = {}

    def names(self) -> str:
        return ", ".join(self.initial) + ("," if len(self.initial) == 1 else "")


class TryStatements:
    """``fwd_Try``/``rev_Try`` and their helpers, for a generator with ``emit``, ``forward``,
    ``reverse``, ``fresh``, ``fd`` and ``primal``."""

    def init_defined(self, name: str) -> str:
        """The line giving ``name``, bound by forward-only Python, its (empty) fdata."""
        return f"{self.fd(name)} = _NF"

    # ------------------------------------------------------------ bookkeeping

    def _open(self) -> list:
        regions = self.__dict__.setdefault("_try_regions", [])
        self.__dict__.setdefault("_try_levels", {})
        self.__dict__.setdefault("_try_vars", {})
        return regions

    def _names(self) -> tuple[str, str, str]:
        """The function-wide locals: the tape length when the running statement began, the
        partial call a handler took (``(number, pullback)`` in the reverse pass), and the number
        of the call statement that ran last."""
        if "_try_taped" not in self.__dict__:
            self._try_taped, self._try_slot, self._try_call = self.fresh("taped"), self.fresh("slot"), self.fresh("call")
        return self._try_taped, self._try_slot, self._try_call

    def _call_number(self, s: ir.Call) -> int:
        numbers = self.__dict__.setdefault("_try_calls", {})
        return numbers.setdefault(id(s), len(numbers))

    def _new_var(self, hint: str, initial: int) -> str:
        name = self.fresh(hint)
        for region in self._open():
            region.initial[name] = initial
        return name

    def _level(self, key: tuple, body: list) -> _Level:
        """The level of ``body`` (made by the forward pass, found again by the reverse pass)."""
        levels = self._try_levels
        if key not in levels:
            levels[key] = _Level(body, self._new_var)
        return levels[key]

    def _var(self, key: tuple, hint: str, initial: int) -> str:
        found = self._try_vars
        if key not in found:
            found[key] = self._new_var(hint, initial)
        return found[key]

    def _in_region(self) -> bool:
        return bool(self._open())

    def _enter(self, region: _Region) -> bool:
        """Open ``region``: inside it each unit of work is one statement (no float blocks)."""
        self._open().append(region)
        saved, self.float_blocks = self.float_blocks, False
        return saved

    def _leave(self, saved: bool) -> None:
        self._open().pop()
        self.float_blocks = saved if not self._open() else False

    # ------------------------------------------------------------ forward

    def fwd_Try(self, s: ir.Try, out: list, indent: int) -> None:
        fin = self._finally_var(s)
        if not s.handlers:  # try/finally: an exception always leaves, recorded on its way out
            self._fwd_try_finally(s, fin, out, indent)
            return
        if not any(has_reverse_work(block) for block in ir.child_blocks(s)):
            self._forward_untracked_try(s, out, indent)
            return
        taped, slot, call = self._names()
        outer = self._in_region()
        part = self._var(("part", id(s)), "part", -2) if outer else None
        where = (self.fn.filename, s.line, self.fn.name)
        inner = indent + 1 if s.finalbody else indent
        if s.finalbody:
            if fin:
                self.emit(out, indent, f"{fin} = -1", s.line)
            self.emit(out, indent, "try:", s.line)
        init_at = len(out)
        self.emit(out, inner, "", s.line)  # the region's locals, filled in below
        region = _Region()
        saved = self._enter(region)
        level = self._level(("body", id(s)), s.body)
        self.emit(out, inner, f"try:  # line {s.line}", s.line)
        self._forward_level(s.body, level, out, inner + 1)
        self.emit(out, inner + 1, "pass", s.line)
        self._leave(saved)
        self.__dict__.setdefault("_try_region_names", {})[id(s)] = region.names()
        record = f"({region.names()})"
        for number, h in enumerate(s.handlers):
            name = h.name or self.fresh("error")
            self.emit(out, inner, f"except {h.types or 'BaseException'} as {name}:", h.line)
            self.emit(out, inner + 1, f"_track_out(); {slot} = _caught(_tape, {taped}, {name}, True, {where!r}, {call})", h.line)
            self.emit(out, inner + 1, f"_push(_Progress({call}, {slot}, {record})); {taped} = len(_tape)", h.line)
            if part:
                self.emit(out, inner + 1, f"{part} = {number}", h.line)
            self.emit(out, inner + 1, self.init_defined(name), h.line)
            self._forward_block_of(h.body, out, inner + 1, ("handler", id(h)))
            self.emit(out, inner + 1, f"_push({number})", h.line)
        leaving = self.fresh("leaving")
        self.emit(out, inner, f"except BaseException as {leaving}:  # no handler matched: it leaves", s.line)
        self.emit(out, inner + 1, f"_track_out({leaving})", s.line)
        self.emit(out, inner + 1, "raise", s.line)
        self.emit(out, inner, "else:", s.line)
        self.emit(out, inner + 1, f"_track_out(); _push(_Progress(-1, None, {record})); {taped} = len(_tape)", s.line)
        if part:
            self.emit(out, inner + 1, f"{part} = -1", s.line)
        self._forward_block_of(s.orelse, out, inner + 1, ("else", id(s)))
        self.emit(out, inner + 1, "_push(-1)", s.line)
        if s.finalbody:
            self._fwd_way_out(s, fin, out, indent)
            self.emit(out, indent, "finally:", s.line)
            self._forward_block_of(s.finalbody, out, indent + 1, ("finalbody", id(s)))
        values = "; ".join(f"{name} = {value}" for name, value in region.initial.items())
        start = f"{values}; " if values else ""
        out[init_at] = ("    " * inner + f"{start}{taped} = len(_tape); {call} = -1; _track_in()"
                        + (f"; {part} = -2" if part else ""), s.line)

    def _fwd_try_finally(self, s: ir.Try, fin: str | None, out: list, indent: int) -> None:
        """``try``/``finally`` without handlers: an exception always leaves; inside a region, the
        body's progress is recorded on its way out through a ``finally`` block with work."""
        if fin:
            self.emit(out, indent, f"{fin} = -1", s.line)
        self.emit(out, indent, f"try:  # line {s.line}", s.line)
        self._forward_block_of(s.body, out, indent + 1, ("finally-body", id(s)))
        self.emit(out, indent + 1, "pass", s.line)
        self._fwd_way_out(s, fin, out, indent)
        self.emit(out, indent, "finally:", s.line)
        self._forward_block_of(s.finalbody, out, indent + 1, ("finalbody", id(s)))
        self.emit(out, indent + 1, "pass", s.line)

    def _finally_var(self, s: ir.Try) -> str | None:
        """Inside a region, a try whose ``finally`` block has work: the local saying how its
        finally block began (-1 not yet, 0 after the try completed, 1 with an exception leaving)."""
        if not (self._in_region() and has_reverse_work(s.finalbody)):
            return None
        return self._var(("fin", id(s)), "fin", -1)

    def _fwd_way_out(self, s: ir.Try, fin: str | None, out: list, indent: int) -> None:
        """The clauses that run before a ``finally`` block with work: an exception leaving
        records how far the try got (the residuals of the statement that raised dropped, the
        partial call taken) before the finally block's own work follows it on the tape."""
        if not fin:
            return
        taped, _, call = self._names()
        leaving = self.fresh("leaving")
        self.emit(out, indent, f"except BaseException as {leaving}:  # it leaves through the finally block", s.line)
        self.emit(out, indent + 1, f"_through_finally(_tape, {taped}, {leaving}, {call}); {taped} = len(_tape); {fin} = 1", s.line)
        self.emit(out, indent + 1, "raise", s.line)
        self.emit(out, indent, "else:", s.line)
        self.emit(out, indent + 1, f"{fin} = 0", s.line)

    def _forward_untracked_try(self, s: ir.Try, out: list, indent: int) -> None:
        """A try without reverse work anywhere: plain Python, each handler checking first."""
        where = (self.fn.filename, s.line, self.fn.name)
        self.emit(out, indent, f"try:  # line {s.line}", s.line)
        self.forward(s.body, out, indent + 1)
        self.emit(out, indent + 1, "pass", s.line)
        for h in s.handlers:
            name = h.name or self.fresh("error")
            self.emit(out, indent, f"except {h.types or 'BaseException'} as {name}:", h.line)
            self.emit(out, indent + 1, f"_caught(None, 0, {name}, True, {where!r})", h.line)
            self.emit(out, indent + 1, self.init_defined(name), h.line)
            self.forward(h.body, out, indent + 1)
        if s.orelse:
            self.emit(out, indent, "else:", s.line)
            self.forward(s.orelse, out, indent + 1)
        if s.finalbody:
            self.emit(out, indent, "finally:", s.line)
            self.forward(s.finalbody, out, indent + 1)
            self.emit(out, indent + 1, "pass", s.line)

    def _forward_block_of(self, body: list, out: list, indent: int, key: tuple) -> None:
        """A block outside the try body being tracked: tracked too inside an outer region."""
        if self._in_region():
            self.emit(out, indent, f"{self._level(key, body).done} = -1", 0)
            self._forward_level(body, self._level(key, body), out, indent)
        else:
            self.forward(body, out, indent)

    def _forward_level(self, body: list, level: _Level, out: list, indent: int) -> None:
        """The forward pass of a tracked block: ``level.done`` is kept up to date after every
        statement (and before every compound one); the branches of its ifs are followed."""
        taped, _, call = self._names()
        for stmt in body:
            if _tracked_if(stmt):
                self.emit(out, indent, f"if {self.primal(stmt.test)}:", stmt.line)
                self._forward_level(stmt.body, level, out, indent + 1)
                self.emit(out, indent + 1, "_push(True)", stmt.line)
                self.emit(out, indent, "else:", stmt.line)
                self._forward_level(stmt.orelse, level, out, indent + 1)
                self.emit(out, indent + 1, "_push(False)", stmt.line)
            elif _compound(stmt):
                self.emit(out, indent, f"{level.done} = {level.first_of[id(stmt)]}", stmt.line)
                getattr(self, f"_fwd_tracked_{type(stmt).__name__}")(stmt, out, indent)
            else:
                if isinstance(stmt, ir.Call):  # a function it calls may raise after partial work
                    self.emit(out, indent, f"{level.done} = {level.first_of[id(stmt)]}; {call} = {self._call_number(stmt)}", stmt.line)
                self.forward([stmt], out, indent)
            self.emit(out, indent, f"{level.done} = {level.last_of[id(stmt)]}; {taped} = len(_tape)", stmt.line)

    def _iteration_start(self, level: _Level) -> str:
        return f"{level.done} = -1; {self._names()[0]} = len(_tape)"

    def _fwd_tracked_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        level, trips = self._level(("body", id(s)), s.body), self._var(("trips", id(s)), "trips", 0)
        bounds = ", ".join(self.primal(a) for a in (s.start, s.stop, s.step))
        loop_range = self.fresh("range")
        self.emit(out, indent, f"{loop_range} = range({bounds}); {trips} = 0", s.line)
        self.emit(out, indent, f"for {s.var} in {loop_range}:", s.line)
        if s.var not in self.integers:
            self.emit(out, indent + 1, self.init_defined(s.var), s.line)
        self.emit(out, indent + 1, self._iteration_start(level), s.line)
        self._forward_level(s.body, level, out, indent + 1)
        self.emit(out, indent + 1, f"{trips} += 1", s.line)
        self.emit(out, indent, f"_push({trips})", s.line)

    def _fwd_tracked_While(self, s: ir.While, out: list, indent: int) -> None:
        level = self._level(("body", id(s)), s.test_body + s.body)
        trips = self._var(("trips", id(s)), "trips", 0)
        self.emit(out, indent, f"{trips} = 0", s.line)
        self.emit(out, indent, "while True:", s.line)
        self.emit(out, indent + 1, self._iteration_start(level), s.line)
        self._forward_level(s.test_body, level, out, indent + 1)
        self.emit(out, indent + 1, f"if not {self.primal(s.test)}:", s.line)
        self.emit(out, indent + 2, "break", s.line)
        self._forward_level(s.body, level, out, indent + 1)
        self.emit(out, indent + 1, f"{trips} += 1", s.line)
        self.emit(out, indent, f"_push({trips})", s.line)

    def _fwd_tracked_With(self, s: ir.With, out: list, indent: int) -> None:
        level = self._level(("body", id(s)), s.body)
        self.emit(out, indent, f"with {s.items}:", s.line)
        for name in s.defines:
            self.emit(out, indent + 1, self.init_defined(name), s.line)
        self.emit(out, indent + 1, self._iteration_start(level), s.line)
        self._forward_level(s.body, level, out, indent + 1)

    def _fwd_tracked_Try(self, s: ir.Try, out: list, indent: int) -> None:
        self.fwd_Try(s, out, indent)

    # ------------------------------------------------------------ reverse

    def rev_Try(self, s: ir.Try, out: list, indent: int) -> None:
        if not any(has_reverse_work(block) for block in ir.child_blocks(s)):
            return
        self._reverse_block_of(s.finalbody, out, indent)
        if not s.handlers:
            self._reverse_block_of(s.body, out, indent)
            return
        self._rev_completed_try(s, out, indent)

    def _rev_completed_try(self, s: ir.Try, out: list, indent: int) -> None:
        """Undo a try whose body and handler (or ``else`` block) completed (its ``finally`` block
        is undone before)."""
        path = self.fresh("path")
        self.emit(out, indent, f"{path} = _pop()  # undo the try at line {s.line}", s.line)
        keyword = "if"
        for number, block in [*enumerate(h.body for h in s.handlers), (-1, s.orelse)]:
            if has_reverse_work(block):
                self.emit(out, indent, f"{keyword} {path} == {number}:", s.line)
                self._reverse_block_of(block, out, indent + 1)
                keyword = "elif"
        self._reverse_body(s, out, indent)

    def _reverse_body(self, s: ir.Try, out: list, indent: int, ran_after: str = "") -> None:
        """Undo what the body of ``s`` completed, given the record its handler (or ``else``
        block) pushed; only ``if ran_after`` when given (otherwise the progress is current)."""
        slot = self._names()[1]
        region = _Region()
        saved = self._enter(region)
        level = self._level(("body", id(s)), s.body)
        names = self._try_region_names[id(s)]  # in the order its handlers pushed them
        restore = f"_e = _pop(); {slot} = _e.slot; {names} = _e.record  # how far the body at line {s.line} got"
        if ran_after:
            self.emit(out, indent, f"if {ran_after}:  # a handler or its else block ran after it", s.line)
            self.emit(out, indent + 1, restore, s.line)
        else:
            self.emit(out, indent, restore, s.line)
        self._reverse_level(s.body, level, out, indent)
        self._leave(saved)

    def _reverse_block_of(self, body: list, out: list, indent: int) -> None:
        if self._in_region():
            self._reverse_full(body, out, indent)
        else:
            self.reverse(body, out, indent)

    def _reverse_full(self, body: list, out: list, indent: int) -> None:
        """Undo a tracked block that completed, newest first."""
        start = len(out)
        for stmt in reversed(body):
            if not has_reverse_work([stmt]):
                continue
            if _tracked_if(stmt):
                self.emit(out, indent, f"if _pop():  # undo the branch at line {stmt.line}", stmt.line)
                self._reverse_full(stmt.body, out, indent + 1)
                self.emit(out, indent, "else:", stmt.line)
                self._reverse_full(stmt.orelse, out, indent + 1)
            elif _compound(stmt):
                getattr(self, f"_rev_full_{type(stmt).__name__}")(stmt, out, indent)
            else:
                self.reverse([stmt], out, indent)
        if len(out) == start:
            self.emit(out, indent, "pass")

    def _rev_full_ForRange(self, s: ir.ForRange, out: list, indent: int) -> None:
        self.emit(out, indent, f"for _ in range(_pop()):  # undo the loop at line {s.line}", s.line)
        self._reverse_full(s.body, out, indent + 1)

    def _rev_full_While(self, s: ir.While, out: list, indent: int) -> None:
        trips = self.fresh("trips")
        self.emit(out, indent, f"{trips} = _pop()  # undo the loop at line {s.line}", s.line)
        self._reverse_full(s.test_body, out, indent)
        self.emit(out, indent, f"for _ in range({trips}):", s.line)
        self._reverse_full(s.body, out, indent + 1)
        self._reverse_full(s.test_body, out, indent + 1)

    def _rev_full_With(self, s: ir.With, out: list, indent: int) -> None:
        self._reverse_full(s.body, out, indent)

    def _rev_full_Try(self, s: ir.Try, out: list, indent: int) -> None:
        self.rev_Try(s, out, indent)

    def _reverse_level(self, body: list, level: _Level, out: list, indent: int) -> None:
        """Undo the statements of a tracked block that completed (``level.done`` is the number of
        the last step passed), newest first; an if, loop, block or try left part way by the
        exception is undone in part. A block that completed is undone by this same code with
        ``level.done`` set to its last number: each inner block's undoing is emitted once, so the
        code grows with the source, not with the product of its nesting (an if, loop or try
        undone in full and, separately, in part would double per level)."""
        done = level.done
        for stmt in reversed(body):
            if not has_reverse_work([stmt]):
                continue
            first, last = level.first_of[id(stmt)], level.last_of[id(stmt)]
            if _tracked_if(stmt):
                self._undo_If(stmt, level, out, indent)
            elif _compound(stmt):
                self.emit(out, indent, f"if {done} >= {first}:  # undo line {stmt.line} (in part if it was left inside)", stmt.line)
                getattr(self, f"_undo_{type(stmt).__name__}")(stmt, f"{done} >= {last}", out, indent + 1)
            else:
                self.emit(out, indent, f"if {done} >= {last}:", stmt.line)
                self._reverse_full([stmt], out, indent + 1)
                if isinstance(stmt, ir.Call):
                    self._rev_part_Call(stmt, f"{done} == {first}", out, indent)

    def _undo_block(self, body: list, level: _Level, out: list, indent: int) -> None:
        """``_reverse_level`` of ``body``, or ``pass`` if it has nothing to undo."""
        start = len(out)
        self._reverse_level(body, level, out, indent)
        if len(out) == start:
            self.emit(out, indent, "pass")

    def _undo_If(self, s: ir.If, level: _Level, out: list, indent: int) -> None:
        """An if of a tracked block (its branches numbered in the block's level): the branch
        taken is popped if the if completed, told by ``level.done`` if it was left inside."""
        done, first, last = level.done, level.first_of[id(s)], level.last_of[id(s)]
        middle = level.first_of[id(s.orelse[0])] if s.orelse else last + 1
        self.emit(out, indent, f"if {done} >= {first}:  # undo the branch at line {s.line}", s.line)
        self.emit(out, indent + 1, f"if (_pop() if {done} >= {last} else {done} < {middle}):", s.line)
        self._undo_block(s.body, level, out, indent + 2)
        if has_reverse_work(s.orelse):
            self.emit(out, indent + 1, "else:", s.line)
            self._undo_block(s.orelse, level, out, indent + 2)

    def _undo_iterations(self, body: list, level: _Level, runs: str, out: list, indent: int) -> None:
        """Undo ``runs`` iterations of a loop's ``body``, the first as far as ``level.done`` says
        (an iteration left part way, or a while loop's last test), the others in full."""
        self.emit(out, indent, f"for _ in range({runs}):", 0)
        self._undo_block(body, level, out, indent + 1)
        self.emit(out, indent + 1, f"{level.done} = {level.last}", 0)

    def _undo_ForRange(self, s: ir.ForRange, completed: str, out: list, indent: int) -> None:
        level, trips = self._level(("body", id(s)), s.body), self._var(("trips", id(s)), "trips", 0)
        runs = self.fresh("runs")
        self.emit(out, indent, f"if {completed}:", s.line)
        self.emit(out, indent + 1, f"{runs} = _pop(); {level.done} = {level.last}", s.line)
        self.emit(out, indent, "else:  # left inside its last iteration", s.line)
        self.emit(out, indent + 1, f"{runs} = {trips} + 1", s.line)
        self._undo_iterations(s.body, level, runs, out, indent)

    def _undo_While(self, s: ir.While, completed: str, out: list, indent: int) -> None:
        body = s.test_body + s.body
        level, trips = self._level(("body", id(s)), body), self._var(("trips", id(s)), "trips", 0)
        tested = level.last_of[id(s.test_body[-1])] if s.test_body else -1
        runs = self.fresh("runs")
        self.emit(out, indent, f"if {completed}:  # its iterations, then the test that ended it", s.line)
        self.emit(out, indent + 1, f"{runs} = _pop() + 1; {level.done} = {tested}", s.line)
        self.emit(out, indent, "else:  # left inside its last iteration", s.line)
        self.emit(out, indent + 1, f"{runs} = {trips} + 1", s.line)
        self._undo_iterations(body, level, runs, out, indent)

    def _undo_With(self, s: ir.With, completed: str, out: list, indent: int) -> None:
        level = self._level(("body", id(s)), s.body)
        self.emit(out, indent, f"if {completed}:", s.line)
        self.emit(out, indent + 1, f"{level.done} = {level.last}", s.line)
        self._undo_block(s.body, level, out, indent)

    def _undo_Try(self, s: ir.Try, completed: str, out: list, indent: int) -> None:
        """Undo an inner try, completed or left by the exception: from its body (no handler
        matched), from a handler, from its ``else`` block (its body completed) or from its
        ``finally`` block; one that left through a ``finally`` block with work recorded how far it
        got on its way out (``_fwd_way_out``), then the finally block's work followed. Its body,
        handlers and blocks are each undone by one piece of code, in full or in part."""
        slot = self._names()[1]
        fin = self._try_vars.get(("fin", id(s)))
        if fin:
            finalbody = self._level(("finalbody", id(s)), s.finalbody)
            self.emit(out, indent, f"if {completed}:", s.line)
            self.emit(out, indent + 1, f"{finalbody.done} = {finalbody.last}", s.line)
            self._undo_block(s.finalbody, finalbody, out, indent)
        if not s.handlers:
            body = self._level(("finally-body", id(s)), s.body)
            self.emit(out, indent, f"if {completed}:", s.line)
            self.emit(out, indent + 1, f"{body.done} = {body.last}", s.line)
            if fin:
                self.emit(out, indent, f"elif {fin} == 1:  # it left through its finally block", s.line)
                self.emit(out, indent + 1, f"_e = _pop(); {slot} = _e.slot", s.line)
            self._undo_block(s.body, body, out, indent)
            return
        part = self._var(("part", id(s)), "part", -2)
        blocks = [(number, block, self._level(key, block)) for number, block, key in
                  [*((i, h.body, ("handler", id(h))) for i, h in enumerate(s.handlers)), (-1, s.orelse, ("else", id(s)))]
                  if has_reverse_work(block)]
        ended = f"{completed} or {fin} != 1" if fin else completed  # (a finally block raised after it completed)
        self.emit(out, indent, f"if {ended}:  # its body, then a handler or its else block, completed", s.line)
        self.emit(out, indent + 1, f"{part} = _pop()", s.line)
        for i, (number, _, level) in enumerate(blocks):
            self.emit(out, indent + 1, f"{'el' if i else ''}if {part} == {number}:", s.line)
            self.emit(out, indent + 2, f"{level.done} = {level.last}", s.line)
        if fin:
            self.emit(out, indent, "else:  # it left through its finally block", s.line)
            self.emit(out, indent + 1, f"_e = _pop(); {slot} = _e.slot", s.line)
        for i, (number, block, level) in enumerate(blocks):
            self.emit(out, indent, f"{'el' if i else ''}if {part} == {number}:", s.line)
            self._undo_block(block, level, out, indent + 1)
        self._reverse_body(s, out, indent, ran_after=f"{part} != -2")  # (-2: no handler matched)

    def _rev_part_Call(self, s: ir.Call, started: str, out: list, indent: int) -> None:
        """Undo the completed work of a call that raised (its partial pullback, which the
        handler took): the arguments get their rdata; the target was never assigned."""
        slot = self._names()[1]
        self.emit(out, indent, f"elif {started} and {slot} is not None and {slot}[0] == {self._call_number(s)}:", s.line)
        self.emit(out, indent + 1, f"_e = {slot}[1]; {slot} = None", s.line)
        self._generic_reverse(dataclasses.replace(s, target=None), "_e", f"  # undo the part of line {s.line} that ran", out, indent + 1)
