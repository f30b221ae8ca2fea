"""The tangent type of a dict view (``d.values()``, ``d.items()``) holding values that carry
derivatives: the same view of the dict's tangent (docs/tangents.md).

A view holds nothing of its own: it shows its dict, live. Its tangent is therefore identity data
(fdata, no rdata) made of one part, the dict's tangent, and shown through the same view, so that
iterating the tangent walks the values' tangents as iterating the view walks the values. The
tangent operations take a view apart into that one part (``parts``) and build it back
(``view_like``) once its dict's tangent or copy is made; a view inside its own dict works, since
the dict's tangent is made first.

A keys view of float keys has none: a dict's tangent is keyed by the primal keys, which carry no
tangent slot (refused where such a view is made into a tangent: ``kinds._dict_view_kind``).
"""
from __future__ import annotations

import gc
from typing import Any

#: the name of the dict method making each view type (an OrderedDict's views subclass these)
_VIEW_NAMES = ((type({}.keys()), "keys"), (type({}.values()), "values"), (type({}.items()), "items"))
#: the views whose tangent is a view of the dict's tangent
VALUE_VIEW_NAMES = ("values", "items")


def view_name(x: Any) -> str | None:
    """``"keys"``, ``"values"`` or ``"items"`` for a dict view (of any dict subclass), else None."""
    for view_type, name in _VIEW_NAMES:
        if isinstance(x, view_type):
            return name
    return None


def dict_of_view(x: Any) -> dict:
    """The dict a dict view shows (a dict itself for a dict). Python has no attribute for it
    (``view.mapping`` is a read-only proxy, which the tangent model does not know); a view's one
    reference, which the garbage collector's traversal reports, is its dict."""
    if isinstance(x, dict):
        return x
    (mapping,) = gc.get_referents(x)
    return mapping


def view_like(view: Any, mapping: dict) -> Any:
    """The view of ``mapping`` of the kind of ``view`` (``view`` itself when it shows ``mapping``)."""
    if dict_of_view(view) is mapping:
        return view
    return getattr(mapping, view_name(view))()


def view_parts(view: Any) -> tuple[list, list]:
    """``(keys, children)`` of a view taken apart: its one part, the dict it shows."""
    return ["mapping"], [dict_of_view(view)]
