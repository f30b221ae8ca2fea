"""Which generator method emits each kind of IR statement.

Every code generator (reverse mode's ``reverse.ReverseGenerator``, forward mode's
``forward.ForwardGenerator``, second order's ``dual_reverse.DualReverseGenerator``, third order's
``plain_forward.PlainForwardGenerator``) and their block and fallback mixins emit a statement by
one method per kind: ``fwd_<Kind>`` for the forward program (reverse mode's forward pass, forward
mode's tangent program) and ``rev_<Kind>`` for the reverse pass. ``STATEMENT_KINDS`` is the one
table of those kinds; a statement of a kind missing from it is a bug in yuebing, reported by name.
"""
from __future__ import annotations

from ..ir import nodes as ir

#: IR statement class -> the suffix of the methods that emit it
STATEMENT_KINDS: dict[type, str] = {kind: kind.__name__ for kind in (
    ir.Call, ir.Copy, ir.If, ir.While, ir.ForRange, ir.Return, ir.Opaque, ir.MakeClosure, ir.With, ir.Try,
    ir.Pass)}


def _kind(s: object) -> str:
    kind = STATEMENT_KINDS.get(type(s))
    if kind is None:
        raise TypeError(f"yuebing bug: no code generator handles the IR statement {type(s).__name__}")
    return kind


class StatementDispatch:
    """A code generator's dispatch from a statement to its ``fwd_``/``rev_`` method."""

    def forward_statement(self, s: object, out: list, indent: int) -> None:
        """The forward code of statement ``s`` at ``indent`` in ``out``."""
        getattr(self, "fwd_" + _kind(s))(s, out, indent)

    def reverse_statement(self, s: object, out: list, indent: int) -> None:
        """The reverse code of statement ``s`` at ``indent`` in ``out``."""
        getattr(self, "rev_" + _kind(s))(s, out, indent)

    def forward_each(self, stmts: list, out: list, indent: int) -> None:
        """Statement by statement, with no blocks: a block's fallback, a deferred function."""
        for s in stmts:
            self.forward_statement(s, out, indent)

    def reverse_each(self, stmts: list, out: list, indent: int) -> None:
        """The statements' reverse code one by one, last statement first."""
        for s in reversed(stmts):
            self.reverse_statement(s, out, indent)
