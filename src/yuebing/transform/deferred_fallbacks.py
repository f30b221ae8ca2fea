"""Deferred fallbacks: the statement-by-statement code of a long float block, generated as two
functions of their own at the end of the generated source and compiled on their first call.

A float block (``float_blocks.py``) runs its arithmetic alone when its inputs are floats; its
fallback, for inputs that are not (arrays, objects), calls each statement's rule. For a block of
hundreds of statements that fallback is most of the generated source -- the 400 statements of
``large_single_block`` gave 2400 of its 4500 lines, and the strong-zero re-run of its adjoint
(run when an adjoint comes out NaN) 800 more -- and compiling them was most of the time to a
first gradient, for code that float inputs never run. So a block longer than ``LONG_BLOCK``
calls its fallback and its strong-zero re-run (``_strong<n>_reverse``) out of line::

    if type(y) in _FT and type(a) in _FT:  # float block: lines 8-407
        ...
    else:
        y, y_f = _fallback3_forward(_tape, y, y_f, a, a_f)  # lines 8-407 statement by statement
        _push(_SLOWB)

and ``_fallback3_forward`` / ``_fallback3_reverse`` are emitted after the rule's own functions,
exactly as the fallback was emitted inline (the same lines, mapped to the same user lines).
``codegen.compile_generated`` compiles the source up to them, and them when one is first
called (``Generated.deferred_from``); code that compiles the whole source defines them at once.

The forward function takes the block's inputs (primal and fdata) and returns the variables the
block assigns that are read after it; the reverse function takes and returns the rdata of both.
The block's other temporaries are its own: their rdata starts at ``_NR`` (nothing after the
block reads them, so nothing accumulated into them) and is consumed inside.
"""
from __future__ import annotations

from typing import Any


class DeferredFallbacks:
    """A reverse generator mixin (``reverse.ReverseGenerator``): ``defer_forward`` and
    ``defer_reverse`` emit a long block's fallback as calls and keep the functions' lines,
    which ``append_deferred`` adds after the rule's own functions."""

    deferred_lines: list | None = None  # (text, user line) of the deferred functions
    deferred_names: list | None = None

    def _deferred(self) -> tuple[list, list]:
        if self.deferred_lines is None:
            self.deferred_lines, self.deferred_names = [], []
        return self.deferred_lines, self.deferred_names

    @staticmethod
    def _fallback_outputs(block: Any) -> list[str]:
        """The variables the block assigns that are read after it (``FloatBlock.final``)."""
        return list(block.final)

    @staticmethod
    def _fallback_rdata(block: Any) -> list[str]:
        """The variables whose rdata the reverse function takes and returns: the block's inputs,
        then its outputs."""
        return list(dict.fromkeys([*block.inputs, *block.final]))

    def defer_forward(self, block: Any, stmts: list, out: list, indent: int) -> None:
        """At ``indent`` in ``out``: the call of the block's deferred forward fallback; its
        definition goes to the deferred lines."""
        lines, names = self._deferred()
        stem = self.fresh("fallback")  # type: ignore[attr-defined]
        block.fallback = stem
        names.append(f"{stem}_forward")
        fd = self.fd  # type: ignore[attr-defined]
        first, last = block.first_line, block.last_line
        params = "".join(f", {v}, {fd(v)}" for v in block.inputs)
        outputs = self._fallback_outputs(block)
        results = ", ".join(f"{v}, {fd(v)}" for v in outputs)
        call = f"{stem}_forward(_tape{params})  # lines {first}-{last} statement by statement"
        self.emit(out, indent, f"{results} = {call}" if outputs else call, first)  # type: ignore[attr-defined]
        self.emit(lines, 0, "", first)  # type: ignore[attr-defined]
        self.emit(lines, 0, f"def {stem}_forward(_tape{params}):", first)  # type: ignore[attr-defined]
        self.emit(lines, 1, f'"""Lines {first}-{last} of {self.fn.name}, statement by statement: the fallback of '  # type: ignore[attr-defined]
                            f'their float block (compiled when first called)."""', first)
        self.emit(lines, 1, "_push = _tape.append", first)  # type: ignore[attr-defined]
        saved, self.generic_only = self.generic_only, True  # type: ignore[has-type]
        self.forward_each(stmts, lines, 1)
        self.generic_only = saved
        if outputs:
            self.emit(lines, 1, f"return {results}", last)  # type: ignore[attr-defined]

    def defer_reverse(self, block: Any, stmts: list, out: list, indent: int) -> None:
        """At ``indent`` in ``out``: the call of the block's deferred reverse fallback; its
        definition goes to the deferred lines."""
        lines, names = self._deferred()
        stem, rd = block.fallback, self.rd  # type: ignore[attr-defined]
        first, last = block.first_line, block.last_line
        shared = self._fallback_rdata(block)
        rdata = ", ".join(rd(v) for v in shared)
        comma = "," if len(shared) == 1 else ""
        self.emit(out, indent, f"{rdata}{comma} = {stem}_reverse(_tape, {rdata})  # undo lines {first}-{last}", last)  # type: ignore[attr-defined]
        if f"{stem}_reverse" in names:
            return  # the block's reverse is emitted twice (a while loop's test): defined once
        names.append(f"{stem}_reverse")
        self.emit(lines, 0, "", last)  # type: ignore[attr-defined]
        self.emit(lines, 0, f"def {stem}_reverse(_tape, {rdata}):", last)  # type: ignore[attr-defined]
        self.emit(lines, 1, f'"""The reverse of {stem}_forward: the rdata of the variables it takes."""', last)  # type: ignore[attr-defined]
        self.emit(lines, 1, "_pop = _tape.pop", last)  # type: ignore[attr-defined]
        own = sorted({s.target for s in stmts if s.target} - set(shared))
        self.emit_no_rdata(lines, 1, [rd(v) for v in own], last)  # type: ignore[attr-defined]
        self.reverse_each(stmts, lines, 1)
        self.emit(lines, 1, f"return {rdata}{comma}", first)  # type: ignore[attr-defined]

    def deferred_strong_zero(self, block: Any) -> Any:
        """For ``FloatBlock.reverse(defer=...)``: its strong-zero re-run (a NaN adjoint), as a
        function of the residuals and incoming cotangents returning the inputs' adjoints."""

        def defer(params: list[str], body: list[str], results: list[str]) -> str:
            lines, names = self._deferred()
            name = f"{self.fresh('strong')}_reverse"  # type: ignore[attr-defined]
            names.append(name)
            line = block.last_line
            self.emit(lines, 0, "", line)  # type: ignore[attr-defined]
            self.emit(lines, 0, f"def {name}({', '.join(params)}):", line)  # type: ignore[attr-defined]
            self.emit(lines, 1, f'"""The adjoint of lines {block.first_line}-{line} again, by the strong-zero rule '  # type: ignore[attr-defined]
                                f'(compiled when first called)."""', line)
            for text in body:
                self.emit(lines, 1, text, line)  # type: ignore[attr-defined]
            self.emit(lines, 1, f"return {', '.join(results)},", line)  # type: ignore[attr-defined]
            return f"{name}({', '.join(params)})"

        return defer

    def append_deferred(self, out: list) -> int:
        """Add the deferred functions' lines to ``out``; the line number (from 1) where they
        start, 0 when there are none."""
        if not self.deferred_lines:
            return 0
        start = len(out) + 1
        out += self.deferred_lines
        return start


__all__ = ["DeferredFallbacks"]
