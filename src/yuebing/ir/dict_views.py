"""The dict behind ``iter(d)``, ``iter(d.values())`` and ``iter(d.items())`` under differentiation.

``SequenceIterator`` (``ir/generators.py``) iterates a dict or one of its views as CPython's dict
iterators do: over the keys the dict had when ``iter`` was called, reading a value when its item is
taken (a value written meanwhile is the one seen, with its derivative), and raising CPython's
``RuntimeError`` once the dict changed size. It needs the dict itself, whose reads the transforms
differentiate: ``dict_of_view`` (``tangents/dict_views.py``) gives it (its rules,
``rules/containers/dict_views.py``, give the
dict's tangent the same way).
"""
from __future__ import annotations

from typing import Any

from ..tangents.dict_views import dict_of_view, view_name

__all__ = ["dict_of_view", "mapping_kind"]  # dict_of_view is a primitive: rules/containers/dict_views.py


def mapping_kind(x: Any) -> str | None:
    """``"keys"`` for a dict or its keys view, ``"values"`` or ``"items"`` for those views, else None
    (an ``OrderedDict``'s views are subclasses of the dict's)."""
    return "keys" if isinstance(x, dict) else view_name(x)
