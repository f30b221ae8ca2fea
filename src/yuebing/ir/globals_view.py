"""What ``globals()`` gives in differentiated code when it is used other than through its items
(``frontend/global_writes.py`` lowers ``globals()[k]``, ``g = globals()`` used only as ``g[k]``,
``globals().update(...)`` to the reads and writes of ``ir.primitives``): passed on, iterated,
measured. A ``GlobalsView`` reads and writes the module's globals through those same primitives,
so a value written through it reaches later reads with its derivative, and a value written
earlier in the call is read with its own; its methods are differentiated as user code is
(``transform/protocols._DIFFERENTIATED``)."""
from __future__ import annotations

from typing import Any

from .primitives import global_defined, global_del, global_get, global_set, namespace_of


def global_names(owner: Any) -> list:
    """The names the module's globals hold now (declared without derivative:
    ``transform/global_writes.py``)."""
    return list(namespace_of(owner))


class GlobalsView:
    """The globals of ``owner``'s module (a function of it, or the module), as a mapping."""

    def __init__(self, owner: Any) -> None:
        self.owner = owner

    def __getitem__(self, key: str) -> Any:
        if not global_defined(self.owner, key):
            raise KeyError(key)
        return global_get(self.owner, key)

    def __setitem__(self, key: str, value: Any) -> None:
        global_set(self.owner, key, value)

    def __delitem__(self, key: str) -> None:
        global_del(self.owner, key)

    def __contains__(self, key: str) -> bool:
        return global_defined(self.owner, key)

    def __len__(self) -> int:
        return len(global_names(self.owner))

    def __iter__(self) -> Any:
        return iter(global_names(self.owner))

    def keys(self) -> list:
        return global_names(self.owner)

    def values(self) -> list:
        return [global_get(self.owner, k) for k in global_names(self.owner)]

    def items(self) -> list:
        return [(k, global_get(self.owner, k)) for k in global_names(self.owner)]

    def get(self, key: str, default: Any = None) -> Any:
        return global_get(self.owner, key) if global_defined(self.owner, key) else default

    def copy(self) -> dict:
        return {k: global_get(self.owner, k) for k in global_names(self.owner)}

    def update(self, *args: Any, **kwargs: Any) -> None:
        for k, v in dict(*args, **kwargs).items():
            global_set(self.owner, k, v)
