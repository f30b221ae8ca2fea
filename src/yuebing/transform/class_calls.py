"""How a call of a class binds, decided alike in every mode (reverse ``runtime``, forward
``forward_runtime``, second order ``lifting_objects``, third order ``plain_objects``): a class with
no ``__init__`` of its own, a dataclass's generated ``__init__``, a named tuple's fields, a
``__new__`` written in Python."""
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


def has_python_new(cls: type) -> bool:
    """Whether ``cls.__new__`` is written in Python (a namedtuple's generated one aside: its
    fields are bound directly, ``namedtuple_fields``)."""
    return isinstance(getattr(cls, "__new__", None), types.FunctionType) and not is_namedtuple(cls)


def metaclass_call(cls: type) -> type | None:
    """The metaclass whose own ``__call__`` runs for ``cls(...)`` in place of ``type.__call__``
    (a singleton's, ``Enum``'s), or None."""
    caller = next(m for m in type(cls).__mro__ if "__call__" in vars(m))
    return None if caller is type else caller


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


def is_tuple_bunch(cls: type) -> bool:
    """A SciPy "tuple bunch" (``scipy._lib._bunch._make_tuple_bunch``: ``LinregressResult``,
    ``PearsonRResult``): a named tuple whose other keyword arguments become instance attributes,
    set by its ``__init__`` (or a subclass's Python ``__init__`` calling it)."""
    return is_namedtuple(cls) and isinstance(getattr(cls, "_extra_fields", None), tuple)


def extra_arguments(cls: type, kwargs: dict) -> dict:
    """The keyword arguments of a tuple bunch's call that are not its tuple's fields: its
    ``__init__`` keeps them as attributes, outside the tuple (and outside its tangent)."""
    if not is_tuple_bunch(cls):
        return {}
    return {key: value for key, value in kwargs.items() if key not in cls._fields}


def namedtuple_fields(cls: type, args: tuple, kwargs: dict) -> list:
    """Each field's argument (or its constant default), as ``cls(*args, **kwargs)`` binds them;
    Python's own TypeError for a call the class does not accept."""
    fields = cls._fields
    if len(args) > len(fields):
        raise TypeError(f"{cls.__qualname__}() takes {len(fields)} arguments but {len(args)} were given")
    values = dict(zip(fields, args))
    extras = extra_arguments(cls, kwargs)
    for key, value in kwargs.items():
        if key in extras:
            continue
        if key not in fields or key in values:
            raise TypeError(f"{cls.__qualname__}() got an unexpected or repeated argument {key!r}")
        values[key] = value
    stored = getattr(cls, "_field_defaults", {})  # (read as a dict: ir/local_classes._StoredDefaults refuses users' reads)
    defaults = {name: dict.__getitem__(stored, name) for name in dict.keys(stored)}
    missing = [name for name in fields if name not in values and name not in defaults]
    if missing:
        raise TypeError(f"{cls.__qualname__}() missing required arguments: {', '.join(map(repr, missing))}")
    return [values[name] if name in values else defaults[name] for name in fields]


def call_positions(cls: type, n_args: int, kwargs: dict) -> list[int]:
    """For each argument of the call (positional, then keywords in call order), its field index;
    a tuple bunch's attribute argument gets ``len(cls._fields)``, one past the fields (its
    cotangent is zero: a read of the attribute is refused, ``rules/objects.py``)."""
    fields = cls._fields
    return list(range(n_args)) + [fields.index(k) if k in fields else len(fields) for k in kwargs]


def with_aliases(y: tuple, parts: tuple) -> tuple:
    """``parts`` (a tuple of ``y``'s class holding its items' tangents or fdata) given the
    attributes of ``y`` that are one of its items (``self.correlation = statistic``), as that
    item's: an attribute read of the derivative then finds them."""
    from ..rules.objects import aliased_item

    for name, value in getattr(y, "__dict__", {}).items():
        index = aliased_item(y, name, value)
        if index is not None:
            parts.__dict__[name] = parts[index]
    return parts


def make_namedtuple(cls: type, values: list, extras: dict) -> tuple:
    """``cls`` of the fields' values, with a tuple bunch's attribute arguments as its ``__init__``
    takes them."""
    return cls(*values, **extras)
