"""What a ``RecursionError`` raised while differentiating says: how deep the recursion got, how
many Python frames each of its levels costs under differentiation, and the recursion limit to
set for a deeper one (``sys.setrecursionlimit(n)`` with ``n`` worked out from the traceback).

Each level of a differentiated recursive function costs one frame of its generated code when the
call reaches it directly (``transform/direct_calls.py``), more when it goes through the runtime's
dispatch (a method, a closure, a call with keywords): the frames are counted, not assumed.
"""
from __future__ import annotations

import collections
import re
import sys

_GENERATED = re.compile(r"^<yuebing (?:reverse|forward|hvp|plain forward|[a-z ]+) (?P<name>.+) #\d+>$")
_SLACK = 50  # frames for what runs after the deepest level (rules, their helpers)


def recursion_note(error: RecursionError) -> str:
    """The note for ``error``: the advice with concrete numbers when the traceback shows a
    generated function recurring, the general advice otherwise."""
    positions = collections.defaultdict(list)  # generated filename -> its frames' positions
    depth = 0
    tb = error.__traceback__
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        if _GENERATED.match(filename):
            positions[filename].append(depth)
        depth += 1
        tb = tb.tb_next
    limit = sys.getrecursionlimit()
    recurring = max(positions.values(), key=len, default=[])
    if len(recurring) < 2:
        return ("yuebing differentiates recursion with extra Python frames per level: for deep recursion "
                "raise the limit with sys.setrecursionlimit")
    name = _GENERATED.match(next(f for f, p in positions.items() if p is recurring)).group("name")
    name = name.rsplit(".<locals>.", 1)[-1]  # a nested function is made inside generated code
    levels = len(recurring)
    per_level = (recurring[-1] - recurring[0]) / (levels - 1)
    outside = max(limit - per_level * levels, 0)  # frames not spent on the recursion's levels
    suggested = _round_up(outside + per_level * 2 * levels + _SLACK)
    return (f"{name} was {levels} levels deep when Python's recursion limit ({limit}) stopped it; "
            f"differentiated, each level takes {per_level:.3g} Python frame(s) (a plain call takes 1), "
            f"and about {outside:.0f} frames are spent outside the recursion. If the recursion is meant to "
            f"go deeper, raise the limit to about {outside:.0f} + {per_level:.3g} x (levels): "
            f"sys.setrecursionlimit({suggested}) allows twice the depth reached")


def _round_up(n: float) -> int:
    return int(-(-n // 100) * 100)


__all__ = ["recursion_note"]
