"""``cls(*args, **kwargs)`` for a class whose ``__new__`` is Python code, written out as
``type.__call__`` runs it, so that every mode differentiates it as user code.

The runtimes (``transform/runtime.py``, ``forward_runtime.py``, ``lifting_objects.py``, third
order's ``plain_objects.py``) call ``made_by_new`` in place of the class: its ``__new__`` runs
from source (``super().__new__(cls, ...)`` reaching a namedtuple's generated ``__new__`` and
``tuple.__new__``, or ``object.__new__(cls)`` and attribute writes), then ``__init__`` when the
result is an instance of the class. Its frames are yuebing's runtime, not the user's lines
(``transform/direct_calls._RUNTIME_DIR``).

A frozen dataclass is identified by value (DESIGN.md §3): the object ``object.__new__`` returns
has the tangent of a finished frozen object, which its generated ``__init__``'s
``object.__setattr__`` cannot write into. ``made_frozen_by_new`` builds one: ``under_construction``
gives the object a mutable tangent (the attribute rules allow ``object.__setattr__`` on a frozen
object with one, as while a dataclass's ``__post_init__`` runs) and ``constructed`` the frozen
tangent of the fields it ended with (``transform/frozen_new.py``). Both return their argument.
"""
from __future__ import annotations

from typing import Any


def made_by_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """What ``type.__call__(cls, *args, **kwargs)`` returns: ``cls.__new__``'s result, initialised
    by its own class's ``__init__`` only when it is an instance of ``cls`` (CPython's rule: a
    ``__new__`` returning an object of another class skips ``__init__``)."""
    obj = cls.__new__(cls, *args, **kwargs)
    if isinstance(obj, cls):
        init = type(obj).__init__
        if init is not object.__init__:  # (object's ignores the arguments when __new__ is overridden)
            init(obj, *args, **kwargs)
    return obj


def made_frozen_by_new(cls: type, *args: Any, **kwargs: Any) -> Any:
    """``made_by_new`` for a frozen dataclass ``cls``."""
    obj = cls.__new__(cls, *args, **kwargs)
    if isinstance(obj, cls):
        obj = under_construction(obj)
        init = type(obj).__init__
        if init is not object.__init__:
            init(obj, *args, **kwargs)
        obj = constructed(obj)
    return obj


def under_construction(obj: Any) -> Any:
    """``obj``, which ``__init__`` is about to fill (its tangent becomes mutable)."""
    return obj


def constructed(obj: Any) -> Any:
    """``obj``, filled (its tangent becomes the frozen one of its fields)."""
    return obj


__all__ = ["constructed", "made_by_new", "made_frozen_by_new", "under_construction"]
