"""The function ``singledispatchmethod.__get__`` makes, recognised by its code object, and the
instance it is bound to: what the ``getattr`` rules (``objects.py``) and the dispatch of its call
(``single_dispatch.py``) share, in a module importing neither."""
from __future__ import annotations

import functools
from typing import Any


class _Probe:
    @functools.singledispatchmethod
    def method(self, arg: Any) -> None:
        """A singledispatchmethod, for the code object of the function its ``__get__`` makes."""


METHOD_CODE = _Probe().method.__code__  # ``singledispatchmethod.__get__``'s ``_method(*args, **kwargs)``


def dispatch_method_owner(value: Any) -> Any:
    """The instance a ``singledispatchmethod`` read from it (``value``, the function ``__get__``
    made) is bound to; None for any other value."""
    if getattr(value, "__code__", None) is not METHOD_CODE:
        return None
    return dict(zip(METHOD_CODE.co_freevars, (c.cell_contents for c in value.__closure__)))["obj"]
