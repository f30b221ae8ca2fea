"""Rules of ``dict_of_view`` (``ir/dict_views.py``): the dict behind a dict view, which a dict's
iterator reads its values from (``ir/generators.SequenceIterator``). The dict's tangent is the
one behind the view's tangent, the same view of the dict's tangent (``tangents/dict_views.py``):
the fdata dict in reverse mode, the tangent dict in forward mode. No derivative is made here: the
values' derivatives flow through the dict's own slots when read.
"""
from __future__ import annotations

from typing import Any

from ...ir.dict_views import dict_of_view, mapping_kind
from ...tangents import NoRData
from ..batched import _ALWAYS
from ..core import CoDual, Dual, frule_for, rrule_for
from ..declare import nondifferentiable
from ..second_order import linear


def _behind(tangent: Any) -> Any:
    """The dict of a view's fdata or tangent (itself when it is no view: no derivatives)."""
    return dict_of_view(tangent) if mapping_kind(tangent) is not None else tangent


@rrule_for(dict_of_view)
def _dict_of_view_rrule(view):
    return CoDual(dict_of_view(view.primal), _behind(view.fdata)), lambda dy: (NoRData, NoRData)


@frule_for(dict_of_view)
def _dict_of_view_frule(view):
    return Dual(dict_of_view(view.primal), _behind(view.tangent))


linear(dict_of_view)
_ALWAYS.add(dict_of_view)  # batched passes: it only moves tangents (the dict's, batched or not)
nondifferentiable(mapping_kind)

CASES: list = []  # views have no tangent type: tests/test_live_dict_iterators.py checks them
