"""How a call of a class binds, decided alike in every mode (reverse ``runtime``, forward
``forward_runtime``, second order ``lifting_objects``, third order ``plain_objects``): a class with
no ``__init__`` of its own, a dataclass's generated ``__init__``, a named tuple's fields."""
from __future__ import annotations

import types


def without_init(cls: type, args: tuple, kwargs: dict) -> bool:
    """Whether ``cls(*args)`` makes an empty object (a class with neither ``__init__`` nor
    ``__new__`` of its own); arguments to it are refused as Python refuses them."""
    if cls.__new__ is not object.__new__ or cls.__init__ is not object.__init__:
        return False
    if args or kwargs:
        raise TypeError(f"{cls.__qualname__}() takes no arguments")
    return True


def is_generated_init(cls: type) -> bool:
    """Whether ``cls.__init__`` is generated code (a dataclass's), not written by the user."""
    init = cls.__dict__.get("__init__")
    return isinstance(init, types.FunctionType) and init.__code__.co_filename.startswith("<")


def is_namedtuple(cls: type) -> bool:
    """A ``collections.namedtuple`` or ``typing.NamedTuple`` class (its ``__new__`` is generated).
    A subclass with a ``__new__`` of its own (scikit-learn's ``Hyperparameter``, filling defaults)
    is not: binding the fields directly would skip what its ``__new__`` computes."""
    new = getattr(cls, "__new__", None)
    generated = getattr(getattr(new, "__code__", None), "co_filename", "") == "<string>"
    return issubclass(cls, tuple) and isinstance(getattr(cls, "_fields", None), tuple) and generated


def namedtuple_fields(cls: type, args: tuple, kwargs: dict) -> list:
    """Each field's argument (or its constant default), as ``cls(*args, **kwargs)`` binds them;
    Python's own TypeError for a call the class does not accept."""
    fields = cls._fields
    if len(args) > len(fields):
        raise TypeError(f"{cls.__qualname__}() takes {len(fields)} arguments but {len(args)} were given")
    values = dict(zip(fields, args))
    for key, value in kwargs.items():
        if key not in fields or key in values:
            raise TypeError(f"{cls.__qualname__}() got an unexpected or repeated argument {key!r}")
        values[key] = value
    defaults = getattr(cls, "_field_defaults", {})
    missing = [name for name in fields if name not in values and name not in defaults]
    if missing:
        raise TypeError(f"{cls.__qualname__}() missing required arguments: {', '.join(map(repr, missing))}")
    return [values[name] if name in values else defaults[name] for name in fields]


def call_positions(cls: type, n_args: int, kwargs: dict) -> list[int]:
    """For each argument of the call (positional, then keywords in call order), its field index."""
    return list(range(n_args)) + [cls._fields.index(k) for k in kwargs]
