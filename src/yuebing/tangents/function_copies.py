"""A copy of a Python function with other globals or other closure cells, and all else it had.

``types.FunctionType(code, globals, name, defaults, closure)`` takes only those: a copy made with
it alone loses the keyword-only defaults (it could not be called as the original is), the
qualified name, a docstring assigned to ``__doc__``, the annotations (``typing.get_type_hints``
and ``functools.singledispatch``'s ``register`` read them) and the attributes. The copies yuebing
makes of a user's function go through ``function_copy``: a nested function rebound to the user's
globals, a closure given shared cells, a local class's method given its class's cells, a function
rebuilt from its captured values."""
from __future__ import annotations

import types


def function_copy(fn: types.FunctionType, globals_: dict | None = None,
                  closure: tuple | None = None) -> types.FunctionType:
    """``fn`` with ``globals_`` and ``closure`` in place of its own (each kept when None)."""
    copied = types.FunctionType(fn.__code__, fn.__globals__ if globals_ is None else globals_, fn.__name__,
                                fn.__defaults__, fn.__closure__ if closure is None else closure)
    copied.__kwdefaults__ = fn.__kwdefaults__
    copied.__qualname__ = fn.__qualname__
    copied.__annotations__ = fn.__annotations__
    copied.__doc__ = fn.__doc__
    copied.__dict__.update(fn.__dict__)
    return copied
