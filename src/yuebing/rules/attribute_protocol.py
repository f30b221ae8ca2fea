"""Attribute access through a user class's ``__getattr__``/``__getattribute__`` when a default is
involved: Python definitions that the transforms differentiate like user code (as
``differentiated.py``'s helpers), so that ``getattr(obj, name, default)`` and ``__getattribute__``
falling back to ``__getattr__`` follow Python's protocol in every mode. Which definition (or
which user method) a read reaches is decided by ``transform/protocols.attribute_method``."""
from __future__ import annotations

from typing import Any


def getattr_or_default(obj: Any, name: str, default: Any) -> Any:
    """``getattr(obj, name, default)`` for a name the class's ``__getattr__`` computes."""
    try:
        return type(obj).__getattr__(obj, name)
    except AttributeError:
        return default


def getattribute_then_getattr(obj: Any, name: str) -> Any:
    """``obj.name`` on a class overriding ``__getattribute__`` and ``__getattr__``."""
    try:
        return type(obj).__getattribute__(obj, name)
    except AttributeError:
        return type(obj).__getattr__(obj, name)


def getattribute_or_default(obj: Any, name: str, default: Any) -> Any:
    """``getattr(obj, name, default)`` on a class overriding ``__getattribute__`` only."""
    try:
        return type(obj).__getattribute__(obj, name)
    except AttributeError:
        return default


def getattribute_getattr_or_default(obj: Any, name: str, default: Any) -> Any:
    """``getattr(obj, name, default)`` on a class overriding both."""
    try:
        return getattribute_then_getattr(obj, name)
    except AttributeError:
        return default


def tangent_field(tangent: Any, name: str) -> Any:
    """``g.w`` of a gradient taken inside differentiated code that is a tangent object (the
    gradient of an object): the entry of its ``fields``, read as differentiated code reads a
    dict (the tangent class's own ``__getattr__`` is yuebing's machinery, which no mode enters)."""
    return tangent.fields[name]
