"""How the dual reverse program (``dual_reverse.DualReverseGenerator``) emits its blocks: a run of
elementwise statements as a dual array block (``dual_blocks_code.py``) with its statements as the
fallback, and, when every operation has a float form, a dual float block before both
(``dual_float_blocks.py``), whose other forms a long block calls out of line (``dual_deferred.py``).
Also the generator's naming of fresh locals and the dropping of global parts no line reads."""
from __future__ import annotations

import collections
import re

from .dual_blocks import find_dual_blocks
from .dual_blocks_code import DualArrayBlock, emit_forward
from .dual_deferred import LONG_BLOCK, DualDeferred
from .dual_float_blocks import DualFloatBlock, emit_float_forward, emit_float_reverse, float_capable
from .dual_product_blocks import DualProductBlock, has_products


class DualBlockForms(DualDeferred):
    """A mixin of ``DualReverseGenerator``: its blocks and fresh names."""

    def _blocks(self, body: list) -> tuple[dict, dict]:
        """No float blocks; dual array blocks (``dual_blocks.py``) as ``{start: stop}``."""
        if self.generic_only:
            return {}, {}
        return {}, dict(find_dual_blocks(body, self.integers, self._resolve))

    def _forward_array_block(self, stmts: list, out: list, indent: int) -> int:
        kind = DualProductBlock if has_products(stmts, self) else DualArrayBlock
        block = stmts[0].array_block = kind(stmts, self)  # type: ignore[attr-defined]
        self._dual_blocks[id(stmts[0])] = block
        if float_capable(block):  # on floats: straight-line float code (dual_float_blocks.py)
            block.float_form = DualFloatBlock(block, self)
            emit_float_forward(self, block.float_form, out, indent)
            if len(stmts) > LONG_BLOCK:  # its other forms out of line, compiled when first needed
                lines: list = []
                self._array_block_forward(block, stmts, lines, 1)
                if self.may_defer(lines):
                    self.defer_dual_forward(block, lines, out, indent + 1)
                    return len(stmts)
            indent += 1
        self._array_block_forward(block, stmts, out, indent)
        return len(stmts)

    def _array_block_forward(self, block: DualArrayBlock, stmts: list, out: list, indent: int) -> None:
        emit_forward(self, block, out, indent)
        self.forward_each(stmts, out, indent + 1)  # the fallback: statement by statement
        self.emit(out, indent + 1, "_push(_DSLOWAB)", block.last_line)

    def _reverse_array_block(self, stmts: list, out: list, indent: int) -> None:
        block = self._dual_blocks[id(stmts[0])]
        if getattr(block, "float_form", None) is not None:
            emit_float_reverse(self, block.float_form, out, indent)
            indent += 1
        if hasattr(block, "deferred"):
            lines: list = []
            self._array_block_reverse(block, stmts, lines, 1)
            self.defer_dual_reverse(block, lines, out, indent)
            return
        self._array_block_reverse(block, stmts, out, indent)

    def _array_block_reverse(self, block: DualArrayBlock, stmts: list, out: list, indent: int) -> None:
        self._undo_guarded("dual array block", "_DFASTAB", block, block.reverse(), out, indent)
        self.reverse_each(stmts, out, indent + 1)


def drop_unread_global_parts(out: list, global_lines: dict) -> None:
    """A global's fdata, tangent and fdata tangent that no line of the forward pass reads
    (``np_f``, ``np_d``, ``np_fd`` where ``np`` only serves ``np.sum``) are not computed: three
    calls fewer per call of the function."""
    if not global_lines:
        return
    start = min(global_lines.values())
    parts = {k: [p.split(" = ")[0] for p in out[k][0].strip().split("; ")[1:]] for k in global_lines.values()}
    names = "|".join(sorted((re.escape(n) for found in parts.values() for n in found), key=len, reverse=True))
    text = "\n".join(line for line, _ in out[start:])
    uses = collections.Counter(re.findall(rf"(?<![\w.])(?:{names})\b", text))  # one pass for all
    for k, found in parts.items():
        line, number = out[k]
        kept = [part for part, name in zip(line.split("; "), [None] + found) if name is None or uses[name] > 1]
        out[k] = ("; ".join(kept), number)
