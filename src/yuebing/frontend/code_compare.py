"""Whether two code objects were compiled from the same source text (``source.py`` checks a
file's text against the live code with it; ``bytecode.py`` checks a decompiled function)."""
from __future__ import annotations

import types
from typing import Any


def _same_constant(a: Any, b: Any, positions: bool) -> bool:
    if isinstance(a, types.CodeType) and isinstance(b, types.CodeType):
        return same_code(a, b, positions)
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, frozenset)):
        if len(a) != len(b):
            return False
        if isinstance(a, frozenset):
            return a == b
        return all(_same_constant(x, y, positions) for x, y in zip(a, b))
    if isinstance(a, (float, complex)):
        return repr(a) == repr(b)  # tells -0.0 from 0.0, and nan equals nan
    return a == b


_CODE_FIELDS = ("co_code", "co_names", "co_varnames", "co_freevars", "co_cellvars", "co_argcount",
                "co_posonlyargcount", "co_kwonlyargcount", "co_flags", "co_name", "co_qualname")
_POSITION_FIELDS = ("co_firstlineno", "co_linetable")


def same_code(a: types.CodeType, b: types.CodeType, positions: bool = True) -> bool:
    """Whether two code objects were compiled from the same source text: bytecode, names,
    variables, flags and, recursively, constants; with ``positions``, at the same place too
    (first line and ``co_linetable``, which has the columns)."""
    fields = _CODE_FIELDS + _POSITION_FIELDS if positions else _CODE_FIELDS
    if any(getattr(a, f, None) != getattr(b, f, None) for f in fields):
        return False
    return len(a.co_consts) == len(b.co_consts) and all(
        _same_constant(x, y, positions) for x, y in zip(a.co_consts, b.co_consts))


__all__ = ["same_code"]
