"""The reverse transform of ``try`` statements (a mixin of ``reverse.ReverseGenerator``).

A caught exception is recorded like a branch: the forward pass pushes which handler ran (-1 for
none) and how far the body got; the reverse pass undoes the handler (or the ``else`` block) and
then exactly the statements of the body that completed, newest first. Progress is counted over
the body's statements and, inside them, over the branches of its ifs (a conditional expression
in a ``try`` body is an if): an if that the exception left is undone in part. A loop or ``with``
block that raised after recording work cannot be undone in part: ``exceptions.caught`` refuses it
when the handler starts. A ``try`` with only ``finally`` records nothing (an exception leaves).
"""
from __future__ import annotations

from typing import Callable

from ..ir import nodes as ir


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


class _TryProgress:
    """How far a try body got, as the generated code tracks it: every statement of the body,
    and of the branches of its ifs (which are followed inside), is numbered in order; ``done``
    holds the number of the last one completed, ``taped`` the tape's length then, ``simple``
    whether the statement running is a plain one (not a loop or block)."""

    def __init__(self, s: ir.Try, fresh: Callable) -> None:
        self.done, self.taped, self.simple = fresh("done"), fresh("taped"), fresh("plain")
        self.first_of: dict[int, int] = {}
        self.last_of: dict[int, int] = {}
        self.count = 0
        self._number(s.body)
        self.last = self.count - 1

    def tracked_if(self, s: ir.If) -> bool:
        return has_reverse_work(s.body) or has_reverse_work(s.orelse)

    def _number(self, body: list) -> None:
        for stmt in body:
            first = self.count
            if isinstance(stmt, ir.If) and self.tracked_if(stmt):
                self._number(stmt.body)
                self._number(stmt.orelse)
            self.count += 1  # the statement itself completes after its branches
            self.first_of[id(stmt)], self.last_of[id(stmt)] = first, self.count - 1


class TryStatements:
    """``fwd_Try``/``rev_Try`` and their helpers, for a generator with ``emit``, ``forward``,
    ``reverse``, ``fresh``, ``fd`` and ``primal``."""

    def init_defined(self, name: str) -> str:
        """The line giving ``name``, bound by forward-only Python, its (empty) fdata."""
        return f"{self.fd(name)} = _NF"

    def fwd_Try(self, s: ir.Try, out: list, indent: int) -> None:
        # Recorded for the reverse pass, as a branch is: which handler ran (-1: none) and how far
        # the body got (``_TryProgress``); ``caught`` (transform/exceptions.py) checks that the
        # statement that raised left nothing to undo.
        if not s.handlers:  # try/finally: an exception always leaves, nothing to record
            self.emit(out, indent, f"try:  # line {s.line}", s.line)
            self.forward(s.body, out, indent + 1)
            self.emit(out, indent + 1, "pass", s.line)
            self.emit(out, indent, "finally:", s.line)
            self.forward(s.finalbody, out, indent + 1)
            self.emit(out, indent + 1, "pass", s.line)
            return
        record = any(has_reverse_work(block) for block in ir.child_blocks(s))
        progress = _TryProgress(s, self.fresh) if record else None
        where = (self.fn.filename, s.line, self.fn.name)
        inner = indent + 1 if s.finalbody else indent
        if s.finalbody:
            self.emit(out, indent, "try:", s.line)
        if progress:
            self.emit(out, inner, f"{progress.done} = -1; {progress.taped} = len(_tape); {progress.simple} = True", s.line)
        self.emit(out, inner, f"try:  # line {s.line}", s.line)
        if progress:
            self._forward_tracked(s.body, progress, out, inner + 1)
        else:
            self.forward(s.body, out, inner + 1)
        if not s.body:
            self.emit(out, inner + 1, "pass", s.line)
        for number, h in enumerate(s.handlers):
            name = h.name or self.fresh("error")
            self.emit(out, inner, f"except {h.types or 'BaseException'} as {name}:", h.line)
            check = f"_tape, {progress.taped}, {name}, {progress.simple}" if progress else f"None, 0, {name}, True"
            self.emit(out, inner + 1, f"_caught({check}, {where!r})", h.line)
            self.emit(out, inner + 1, self.init_defined(name), h.line)
            self.forward(h.body, out, inner + 1)
            if progress:
                self.emit(out, inner + 1, f"_push(({progress.done}, {number}))", h.line)
        if s.orelse or progress:
            self.emit(out, inner, "else:", s.line)
            self.forward(s.orelse, out, inner + 1)
            if progress:
                self.emit(out, inner + 1, f"_push(({progress.last}, -1))", s.line)
        if s.finalbody:
            self.emit(out, indent, "finally:", s.line)
            self.forward(s.finalbody, out, indent + 1)

    def _forward_tracked(self, body: list, progress: "_TryProgress", out: list, indent: int) -> None:
        """The forward pass of a try body that keeps ``progress`` up to date after every
        statement; the branches of its ifs are followed inside, other blocks are one step."""
        for stmt in body:
            if isinstance(stmt, ir.If) and progress.tracked_if(stmt):
                self.emit(out, indent, f"if {self.primal(stmt.test)}:", stmt.line)
                self._forward_tracked(stmt.body, progress, out, indent + 1)
                self.emit(out, indent + 1, "_push(True)", stmt.line)
                self.emit(out, indent, "else:", stmt.line)
                self._forward_tracked(stmt.orelse, progress, out, indent + 1)
                self.emit(out, indent + 1, "_push(False)", stmt.line)
            else:
                simple = not ir.child_blocks(stmt)
                if not simple:
                    self.emit(out, indent, f"{progress.simple} = False", stmt.line)
                self.forward([stmt], out, indent)
                if not simple:
                    self.emit(out, indent, f"{progress.simple} = True", stmt.line)
            self.emit(out, indent, f"{progress.done} = {progress.last_of[id(stmt)]}; {progress.taped} = len(_tape)", stmt.line)

    def rev_Try(self, s: ir.Try, out: list, indent: int) -> None:
        if not any(has_reverse_work(block) for block in ir.child_blocks(s)):
            return
        self.reverse(s.finalbody, out, indent)
        if not s.handlers:
            self.reverse(s.body, out, indent)
            return
        progress = _TryProgress(s, self.fresh)
        done, path = self.fresh("done"), self.fresh("path")
        self.emit(out, indent, f"{done}, {path} = _pop()  # undo the try at line {s.line}", s.line)
        keyword = "if"
        for number, block in [*enumerate(h.body for h in s.handlers), (-1, s.orelse)]:
            if has_reverse_work(block):
                self.emit(out, indent, f"{keyword} {path} == {number}:", s.line)
                self.reverse(block, out, indent + 1)
                keyword = "elif"
        self._reverse_tracked(s.body, progress, done, out, indent)

    def _reverse_tracked(self, body: list, progress: "_TryProgress", done: str, out: list, indent: int) -> None:
        """Undo the statements of a try body that completed (``done`` is the number of the last
        one), newest first; an if that was left by the exception is undone in part."""
        for stmt in reversed(body):
            if not has_reverse_work([stmt]):
                continue
            first, last = progress.first_of[id(stmt)], progress.last_of[id(stmt)]
            self.emit(out, indent, f"if {done} >= {last}:", stmt.line)
            self.reverse([stmt], out, indent + 1)
            if isinstance(stmt, ir.If) and progress.tracked_if(stmt) and first < last:
                self.emit(out, indent, f"elif {done} >= {first}:  # left inside the branch at line {stmt.line}", stmt.line)
                middle = progress.first_of[id(stmt.orelse[0])] if stmt.orelse else last + 1
                self.emit(out, indent + 1, f"if {done} < {middle}:", stmt.line)
                self._reverse_tracked(stmt.body, progress, done, out, indent + 2)
                if stmt.orelse:
                    self.emit(out, indent + 1, "else:", stmt.line)
                    self._reverse_tracked(stmt.orelse, progress, done, out, indent + 2)
