"""Speculative forward code: a JVP of a plain function run on the caller's own arguments, with no
copies, no random-state record and no outside-state scope, when the path it takes cannot change
anything (``api/forward.py``).

A JVP runs the function on copies of the caller's arguments because forward mode replays it,
mutations included. Most functions never write into their arguments, but which path their
forward code takes is known only as it runs. This program is the forward code of ``generate``'s
with every step that could change state taken out: a call that is not an inline template of a
computation (a rule call, a direct call of a Python function, an element write) raises
``Speculation`` instead, and a float loop writing into arrays runs as statements (whose writes
raise too). What stays only computes new values from old ones (inline templates, float and array
blocks, float loops that read), so a run that raises part way has changed nothing, and the JVP
runs again by the ordinary path. A function whose body holds statements of other kinds
(closures, ``with``, ``try``, source run as is) or captures variables gets no such program.
"""
from __future__ import annotations

import dataclasses
import operator
import re
from typing import Any

from ..ir import nodes as ir
from .forward import ForwardGenerator, GeneratedForward, compile_forward
from .forward_templates import Names, forward_templates


_CONSTANTS = {"not _FWD.strong": "True", "_FWD.strong": "False", "not _BATCH.size": "True", "_BATCH.size": "0"}
_PLAIN_PASS = re.compile(r"(?<![\w.])(?:not )?(?:_FWD\.strong|_BATCH\.size)\b")


class Speculation(Exception):
    """Raised by speculative forward code where the function would do more than compute values."""


_PURE_STATEMENTS = (ir.Call, ir.Copy, ir.If, ir.While, ir.ForRange, ir.Return, ir.Pass)


def eligible(fn: ir.Function) -> bool:
    """Whether normalised ``fn`` can have a speculative program: statements of the kinds above
    only, no closure variables."""
    return not fn.free_vars and not fn.cell_backed and _pure(fn.body)


def _pure(body: list) -> bool:
    return all(isinstance(s, _PURE_STATEMENTS) and all(_pure(block) for block in ir.child_blocks(s)) for s in body)


class SpeculativeForwardGenerator(ForwardGenerator):
    """``ForwardGenerator`` whose calls are inline computations or ``raise _SPECULATION``."""

    loop_writes = False  # a float loop writing into arrays: statement by statement (writes raise)

    def fwd_Call(self, s: ir.Call, out: list, indent: int) -> None:
        value = None if self.generic_only else self._known_function(s)
        variants = [] if value is None or value is operator.setitem else forward_templates(
            s, value, Names(self.primal, self.tangent, self.td))
        variants = [v for v in variants if v[0] != "False"]
        for k, (guard, lines) in enumerate(variants):
            note = f"  # line {s.line}: {ir._call_text(s)} (inline)" if k == 0 else ""
            self.emit(out, indent, f"{'if' if k == 0 else 'elif'} {guard}:{note}", s.line)
            for text in lines:
                self.emit(out, indent + 1, text, s.line)
        if variants:
            self.emit(out, indent, "else:", s.line)
        self._generic_call(s, out, indent + 1 if variants else indent)

    def _generic_call(self, s: ir.Call, out: list, indent: int) -> None:
        self.emit(out, indent, f"raise _SPECULATION  # line {s.line}: {ir._call_text(s)}", s.line)


def speculative_forward(fn_ir: ir.Function, fn: Any, runtime_names: dict) -> Any:
    """The compiled speculative program of ``fn`` (normalised as ``fn_ir``), or None when it
    cannot have one; ``runtime_names``: the forward runtime's (``compile_forward``)."""
    if not eligible(fn_ir):
        return None
    generated: GeneratedForward = SpeculativeForwardGenerator(fn_ir, fn.__globals__).generate()
    # it runs only as a JVP's plain pass, unbatched (``api/forward.py``): those checks are constants
    source = _PLAIN_PASS.sub(lambda m: _CONSTANTS[m.group(0)], generated.source)
    generated = dataclasses.replace(generated, source=source)
    return compile_forward(generated, fn, runtime_names, label="yuebing speculative forward",
                           extra={"_SPECULATION": Speculation})


__all__ = ["Speculation", "SpeculativeForwardGenerator", "eligible", "speculative_forward"]
