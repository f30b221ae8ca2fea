"""Rules for the mutating methods of ``set``: ``add`` and ``discard``. Sets carry no tangent
(their elements are hashable, so not arrays); their rules only undo the mutation in the pullback.
"""
from __future__ import annotations

from ...tangents import NoRData, NoTangent
from ..cases import Case
from ..core import Dual, frule_for, primal, rrule_for
from ..second_order import zero
from ..util import output

# ------------------------------------------------------------------------------------------------
# set
# ------------------------------------------------------------------------------------------------


@rrule_for((set, "add"))
def _set_add_rrule(s, item):
    target, value = primal(s), primal(item)
    added = value not in target
    target.add(value)

    def pullback(dy):
        if added:
            target.discard(value)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@frule_for((set, "add"))
def _set_add_frule(s, item):
    primal(s).add(primal(item))
    return Dual(None, NoTangent)


@rrule_for((set, "discard"))
def _set_discard_rrule(s, item):
    target, value = primal(s), primal(item)
    present = value in target
    target.discard(value)

    def pullback(dy):
        if present:
            target.add(value)
        return NoRData, NoRData, NoRData

    return output(None), pullback


@frule_for((set, "discard"))
def _set_discard_frule(s, item):
    primal(s).discard(primal(item))
    return Dual(None, NoTangent)


# ------------------------------------------------------------------------------------------------
# Second order
# ------------------------------------------------------------------------------------------------

zero((set, "add"), (set, "discard"))


# ------------------------------------------------------------------------------------------------
# Cases
# ------------------------------------------------------------------------------------------------


_C = Case

CASES = [
    # sets carry no tangent; their mutations are undone
    _C(set.add, {1, 2}, 3, name="set.add(new)"),
    _C(set.add, {1, 2}, 2, name="set.add(present)"),
    _C(set.discard, {1, 2}, 2, name="set.discard(present)"),
]
