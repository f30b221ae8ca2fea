"""The dict behind ``iter(d)``, ``iter(d.values())`` and ``iter(d.items())`` under differentiation.

``SequenceIterator`` (``ir/generators.py``) iterates a dict or one of its views as CPython's dict
iterators do: over the keys the dict had when ``iter`` was called, reading a value when its item is
taken (a value written meanwhile is the one seen, with its derivative), and raising CPython's
``RuntimeError`` once the dict changed size. It needs the dict itself, whose reads the transforms
differentiate: ``dict_of_view`` gives it (its rules, ``rules/containers/dict_views.py``, give the
dict's tangent the same way).
"""
from __future__ import annotations

import gc
from typing import Any

_VIEW_KINDS = ((type({}.keys()), "keys"), (type({}.values()), "values"), (type({}.items()), "items"))


def mapping_kind(x: Any) -> str | None:
    """``"keys"`` for a dict or its keys view, ``"values"`` or ``"items"`` for those views, else None
    (an ``OrderedDict``'s views are subclasses of the dict's)."""
    if isinstance(x, dict):
        return "keys"
    for view_type, kind in _VIEW_KINDS:
        if isinstance(x, view_type):
            return kind
    return None


def dict_of_view(x: Any) -> dict:
    """The dict a dict view shows (a dict itself for a dict). Python has no attribute for it
    (``view.mapping`` is a read-only proxy, which the tangent model does not know); a view's one
    reference, which the garbage collector's traversal reports, is its dict."""
    if isinstance(x, dict):
        return x
    (mapping,) = gc.get_referents(x)
    return mapping
