"""``cls(*args, **kwargs)`` for a class whose ``__new__`` is Python code, written out as
``type.__call__`` runs it, so that every mode differentiates it as user code.

The runtimes (``transform/runtime.py``, ``forward_runtime.py``, ``lifting_objects.py``, third
order's ``plain_objects.py``) call ``made_by_new`` in place of the class: its ``__new__`` runs
from source (``super().__new__(cls, ...)`` reaching a namedtuple's generated ``__new__`` and
``tuple.__new__``, or ``object.__new__(cls)`` and attribute writes), then ``__init__`` when the
result is an instance of the class. Its frames are yuebing's runtime, not the user's lines
(``transform/direct_calls._RUNTIME_DIR``).
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


__all__ = ["made_by_new"]
