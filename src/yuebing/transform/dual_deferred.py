"""Deferred fallbacks of long dual float blocks: compiled when first called (second order's twin
of ``deferred_fallbacks.py``).

A dual float block (``dual_float_blocks.py``) runs when its inputs are floats; for other inputs
its dual array block runs, and for others still its statements one by one. For a block of
hundreds of statements those two fallbacks are most of the generated source (the 400 statements
of ``large_single_block`` gave 14,000 of its 18,000 lines) and compiling them most of the time to
a first HVP, for code that float inputs never run. So a float block longer than ``LONG_BLOCK``
calls them out of line::

    if _fb1 is None:
        y, y_f, y_d, y_fd = _dfallback2_forward(_tape, locals())  # lines 8-407: arrays, or one by one

and ``_dfallback2_forward`` / ``_dfallback2_reverse`` are emitted after the rule's own functions,
exactly as the fallback was emitted inline (the same lines, mapped to the same user lines), and
compiled when one is first called (``codegen``'s ``_CompiledLater``). Each takes the caller's
locals (a snapshot: a name the block assigns before reading it may be unbound there) and returns
what the caller reads after it: the forward function the four parts of each variable the block
hands on, the reverse function the rdata (and rdata tangents) it touched.
"""
from __future__ import annotations

import re
from typing import Any

from .float_blocks import LONG_BLOCK

_WORD = re.compile(r"\b[A-Za-z_]\w*\b")

__all__ = ["DualDeferred", "LONG_BLOCK"]


class DualDeferred:
    """A mixin of ``dual_reverse.DualReverseGenerator``: a long float block's other forms as
    functions compiled when first called."""

    dual_deferred: list | None = None  # (text, user line) of the deferred functions
    dual_deferred_names: list | None = None

    def _deferred_parts(self) -> tuple[list, list]:
        if self.dual_deferred is None:
            self.dual_deferred, self.dual_deferred_names = [], []
        return self.dual_deferred, self.dual_deferred_names

    def _forward_locals(self) -> set:
        fn = self.fn  # type: ignore[attr-defined]
        names = set(self.vars) | set(fn.global_names) | set(fn.params)  # type: ignore[attr-defined]
        return {n for v in names for n in (v, self.fd(v), self.dd(v), self.fdd(v))}  # type: ignore[attr-defined]

    def _reverse_locals(self) -> set:
        return {n for v in self.vars for n in (self.rd(v), self.rdd(v))}  # type: ignore[attr-defined]

    @staticmethod
    def _unpacked(text: str, candidates: set) -> list[str]:
        """The caller's locals ``text`` reads or writes, to take from its ``locals()``."""
        return sorted(set(_WORD.findall(text)) & candidates)

    def may_defer(self, lines: list) -> bool:
        """Whether a fallback's lines use only what a deferred function can take (no closure cells)."""
        return not any("_cell" in text for text, _ in lines)

    def defer_dual_forward(self, block: Any, lines: list, out: list, indent: int) -> None:
        """At ``indent`` in ``out``: the call of the block's other forms (``lines``, emitted at
        indent 1); their function goes to the deferred lines."""
        deferred, names = self._deferred_parts()
        stem = block.deferred = self.fresh("dfallback")  # type: ignore[attr-defined]
        names.append(f"{stem}_forward")
        first, last = block.first_line, block.last_line
        results = [n for var in block.final for n in (var, self.fd(var), self.dd(var), self.fdd(var))]  # type: ignore[attr-defined]
        call = f"{stem}_forward(_tape, locals())  # lines {first}-{last}: as arrays, or one by one"
        self.emit(out, indent, f"{', '.join(results)}, = {call}" if results else call, first)  # type: ignore[attr-defined]
        text = "\n".join(t for t, _ in lines)
        self.emit(deferred, 0, "", first)  # type: ignore[attr-defined]
        self.emit(deferred, 0, f"def {stem}_forward(_tape, _L):", first)  # type: ignore[attr-defined]
        self.emit(deferred, 1, f'"""Lines {first}-{last}: the dual array block or the statements, for inputs '  # type: ignore[attr-defined]
                               'that are not floats (compiled when first called)."""', first)
        self.emit(deferred, 1, "_push = _tape.append", first)  # type: ignore[attr-defined]
        for name in self._unpacked(text, self._forward_locals()):
            self.emit(deferred, 1, f"{name} = _L.get({name!r})", first)  # type: ignore[attr-defined]
        deferred += lines
        if results:
            self.emit(deferred, 1, f"return {', '.join(results)},", last)  # type: ignore[attr-defined]

    def defer_dual_reverse(self, block: Any, lines: list, out: list, indent: int) -> None:
        """At ``indent`` in ``out``: the call of the reverse of the block's other forms."""
        deferred, names = self._deferred_parts()
        stem = block.deferred
        first, last = block.first_line, block.last_line
        text = "\n".join(t for t, _ in lines)
        rdata = self._unpacked(text, self._reverse_locals())
        call = f"{stem}_reverse(_tape, locals())  # undo lines {first}-{last}"
        self.emit(out, indent, f"{', '.join(rdata)}, = {call}" if rdata else call, last)  # type: ignore[attr-defined]
        if f"{stem}_reverse" in names:
            return  # emitted twice (a while loop's test): defined once
        names.append(f"{stem}_reverse")
        self.emit(deferred, 0, "", last)  # type: ignore[attr-defined]
        self.emit(deferred, 0, f"def {stem}_reverse(_tape, _L):", last)  # type: ignore[attr-defined]
        self.emit(deferred, 1, f'"""The reverse of {stem}_forward: the rdata it touches."""', last)  # type: ignore[attr-defined]
        self.emit(deferred, 1, "_pop = _tape.pop", last)  # type: ignore[attr-defined]
        for name in rdata:
            self.emit(deferred, 1, f"{name} = _L.get({name!r})", last)  # type: ignore[attr-defined]
        deferred += lines
        if rdata:
            self.emit(deferred, 1, f"return {', '.join(rdata)},", first)  # type: ignore[attr-defined]

    def append_dual_deferred(self, out: list) -> int:
        """Add the deferred functions' lines to ``out``; the line number (from 1) where they
        start, 0 when there are none."""
        if not self.dual_deferred:
            return 0
        start = len(out) + 1
        out += self.dual_deferred
        return start
