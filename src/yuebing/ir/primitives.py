"""Primitives that the normaliser introduces: the functions generated code calls.

Generated code builds displays (``[a, b]``, ``(a, b)``, ``{}``), reads closure cells and walks
sequences through these functions so that each is one operation with one rule (the rules are in
``rules/primitives.py``).
"""
from __future__ import annotations

import builtins
import contextlib
import types
from typing import Any

import numpy as np

from . import float_errors



def mklist(*items: Any) -> list:
    """``[a, b, ...]``"""
    return list(items)


def mktuple(*items: Any) -> tuple:
    """``(a, b, ...)``"""
    return items


def mkdict() -> dict:
    """``{}`` (entries are added by ``setitem``)."""
    return {}


def mkset(*items: Any) -> set:
    """``{a, b, ...}`` (a set of floats carries a ``SetTangent``: rules/containers/sets.py)."""
    return set(items)


def cell_get(cell: types.CellType) -> Any:
    """The value of a closure variable."""
    return cell.cell_contents


def cell_set(cell: types.CellType, value: Any) -> None:
    """``x = value`` for a variable kept in a cell (``nonlocal``)."""
    cell.cell_contents = value


def global_get(fn: types.FunctionType | types.ModuleType, name: str) -> Any:
    """A read of global ``name`` in ``fn`` (or of attribute ``name`` of module ``fn``: ``mod.G``)
    where functions of its module write that global with a ``global`` statement (other globals
    are plain loads): its rules give it the derivative the write in this call gave it
    (``transform/global_writes.py``)."""
    try:
        return namespace_of(fn)[name]
    except KeyError:
        if isinstance(fn, types.ModuleType):
            raise AttributeError(f"module {fn.__name__!r} has no attribute {name!r}") from None
    try:
        return getattr(builtins, name)
    except AttributeError:
        raise NameError(f"name {name!r} is not defined") from None


def namespace_of(owner: types.FunctionType | types.ModuleType) -> dict:
    """The globals of a function, or a module's namespace."""
    return owner.__globals__ if isinstance(owner, types.FunctionType) else vars(owner)


def global_defined(fn: types.FunctionType, name: str) -> bool:
    """``name in globals()`` in ``fn`` (``globals().get(name, d)`` tests it first)."""
    return name in namespace_of(fn)


def global_set(fn: types.FunctionType | types.ModuleType, name: str, value: Any) -> None:
    """``global name; name = value`` in ``fn`` (or ``mod.name = value`` of module ``fn``): the
    module's global is written, as a plain call writes it (its rules keep the value's derivative
    for later reads)."""
    namespace_of(fn)[name] = value


def made_exception(cls: type, *args: Any, **kwargs: Any) -> BaseException:
    """``cls(*args)`` for an exception class: how dispatch makes one (``ValueError(v)``,
    ``it.throw(KeyError(k))``, a user's ``Exception`` subclass), and what the normaliser lowers
    ``raise E(...)`` to when ``E`` names one. Its ``__init__`` runs without being differentiated;
    the rules (``rules/exception_data.py``) keep the arguments' derivatives beside the exception."""
    if not (isinstance(cls, type) and issubclass(cls, BaseException)):  # a global rebound since it was lowered
        raise TypeError(f"yuebing lowered raise {getattr(cls, '__name__', cls)}(...) as the construction of an "
                        "exception class, which that name no longer holds: bind it before differentiating")
    return cls(*args, **kwargs)


def flat_assign(x: Any, index: Any, values: Any) -> None:
    """``x.flat[index] = values``: an array's elements in C order written, the values repeated to
    fill the places, as NumPy does (also when ``x`` is not C-contiguous); its rules follow the
    derivatives (``rules/numpy_iterators.py``)."""
    x.flat[index] = values


def global_del(fn: types.FunctionType, name: str) -> None:
    """``global name; del name`` in ``fn``."""
    try:
        del fn.__globals__[name]
    except KeyError:
        raise NameError(f"name {name!r} is not defined") from None


def with_bound(value: Any, name: str) -> Any:
    """``with manager as name``: the value ``__enter__`` returned, which the assignment after it
    binds. ``with`` headers run without derivatives, so a value holding float data (a number, a
    float array, a list, tuple or dict of them: ``contextlib.nullcontext(x * x)``) is refused rather
    than bound with a zero derivative."""
    if isinstance(value, np.nditer):  # its views are made undifferentiated: refused as iterating one is
        as_sequence(value)
    if _holds_float_data(value, 0):
        raise TypeError(
            f"yuebing cannot differentiate the value a with statement binds to {name!r} "
            f"({type(value).__name__}, holding float data): with headers run without derivatives. What to "
            f"do: compute the value before the with statement ({name} = ...) and enter the context manager "
            "without 'as' (or bind something that holds no floats: a file, a lock, a list of warnings).")
    return value


def _holds_float_data(value: Any, depth: int, objects: bool = False) -> bool:
    """Whether ``value`` is or holds (to a few levels) a float, a complex or a float array; with
    ``objects``, instance attributes count too."""
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fc"
    if depth > 3:
        return False
    if isinstance(value, (list, tuple, set, frozenset)):
        return any(_holds_float_data(v, depth + 1, objects) for v in value)
    if isinstance(value, dict):
        return any(_holds_float_data(v, depth + 1, objects) for v in value.values())
    if objects and isinstance(value, types.FunctionType):  # a nested manager's maker: what it captured
        return any(_holds_float_data(v, depth + 1, objects) for v in _captured(value))
    if objects and not isinstance(value, _NOT_LOOKED_INTO):
        return any(_holds_float_data(v, depth + 1, objects) for v in _attributes(value))
    # without ``objects``: what `as` binds is mostly the manager itself, whose floats are its own
    # bookkeeping (a timer's start time); what it was handed was checked (with_inputs)
    return False


_NOT_LOOKED_INTO = (type, types.ModuleType, types.FunctionType, types.BuiltinFunctionType, types.MethodType, str, bytes)


def _captured(function: types.FunctionType) -> list:
    """What a function holds: its closure cells' values (a decorator's helper holds the function
    it wraps) and its default values."""
    cells = []
    for cell in function.__closure__ or ():
        try:
            cells.append(cell.cell_contents)
        except ValueError:  # an empty cell (a variable not bound yet)
            pass
    return [*cells, *(function.__defaults__ or ()), *(function.__kwdefaults__ or {}).values()]


def _attributes(value: Any) -> list:
    """An object's instance attributes (``__dict__`` and ``__slots__``)."""
    found = list(getattr(value, "__dict__", {}).values()) if isinstance(getattr(value, "__dict__", None), dict) else []
    for cls in type(value).__mro__:
        for slot in getattr(cls, "__slots__", ()) if isinstance(getattr(cls, "__slots__", ()), (tuple, list)) else ():
            if isinstance(slot, str) and slot not in ("__dict__", "__weakref__") and hasattr(value, slot):
                found.append(getattr(value, slot))
    return found


def with_inputs(maker: str, *values: Any) -> None:
    """The values a ``with`` header hands its manager (``frontend/with_statements.py``; ``maker``:
    the header's callee, as written): the manager runs without derivatives, so none may hold float
    data."""
    for value in values:
        if _holds_float_data(value, 0, objects=True):
            advice = ("make the iterator in the loop itself instead, as in `for v in np.nditer(x, "
                      "op_flags=['readwrite']): v[...] = 2 * v`, which yuebing differentiates"
                      if maker.endswith("nditer") else
                      "define the manager outside the function, handed nothing holding floats, and compute with the "
                      "floats inside the with block" if isinstance(value, types.FunctionType) else
                      "compute with the value inside the with block, and hand the manager only what holds no floats "
                      "(a file name, a flag, a count)")
            what = (f"the function {value.__name__}, which captures float data" if isinstance(value, types.FunctionType)
                    else f"a value holding float data ({type(value).__name__})")
            raise TypeError(
                f"yuebing cannot differentiate a with statement whose context manager ({maker}) is handed "
                f"{what}: a with header's manager is entered and exited without "
                f"derivatives (a `with` header), so what it keeps, returns or changes would lose them. What to do: "
                f"{advice}.")


def holds_float_data(*values: Any) -> bool:
    """Whether one of ``values`` (what a ``with`` header hands a manager class of the function's
    own module) holds float data: the statement then enters it through its differentiated
    methods instead (``frontend/with_statements.py``)."""
    return any(_holds_float_data(value, 0, objects=True) for value in values)


_CONTEXTMANAGER_HELPER = contextlib.contextmanager(lambda: (yield)).__code__


def is_generator_manager(f: Any) -> bool:
    """Whether ``f`` is a ``@contextlib.contextmanager`` function of Python code, whose manager's
    ``__enter__``/``__exit__`` (contextlib's Python) step its generator."""
    return isinstance(f, types.FunctionType) and f.__code__ is _CONTEXTMANAGER_HELPER \
        and isinstance(getattr(f, "__wrapped__", None), types.FunctionType)


def is_python_manager_class(cls: Any) -> bool:
    """Whether ``cls`` is a class whose ``__enter__`` and ``__exit__`` are Python functions."""
    return isinstance(cls, type) and all(
        isinstance(getattr(cls, name, None), types.FunctionType) for name in ("__enter__", "__exit__"))


def manager_holding_floats(manager: Any) -> bool:
    """A ``with`` header naming a manager made before the statement: true when its class has
    Python ``__enter__``/``__exit__`` and it holds float data (then entered through them)."""
    return is_python_manager_class(type(manager)) and holds_float_data(manager)


class Managed:
    """A ``with`` header's manager as entered by differentiated code: the manager's own
    ``__enter__``/``__exit__``, except that suppressing an exception raised in the body is refused
    (the body's work up to it would be half recorded)."""

    __slots__ = ("manager", "exit", "errors")

    def __init__(self, manager: Any) -> None:
        self.manager = manager
        self.exit = type(manager).__exit__  # looked up before entering, as the with statement does

    def __enter__(self) -> Any:
        entered = type(self.manager).__enter__(self.manager)
        self.errors = float_errors.adopt_manager(self.manager)  # np.errstate(divide='raise'): for the primal only
        return entered

    def __exit__(self, kind: Any, error: Any, traceback: Any) -> bool:
        float_errors.restore(self.errors)
        suppress = self.exit(self.manager, kind, error, traceback)
        if suppress and kind is not None:
            raise TypeError(
                f"yuebing cannot differentiate a with block whose context manager ({type(self.manager).__qualname__}) "
                f"suppressed the {kind.__name__} raised in it: the work done before the exception would be half "
                "recorded. What to do: catch the exception with try/except around the statement that raises it "
                "(contextlib.suppress is rewritten so; other suppressing managers are not).") from error
        return False


_SEQUENCES = (list, tuple, np.ndarray, range, str, bytes)

#: how many items a generator or iterator evaluated eagerly under differentiation may yield before
#: yuebing stops it with an error (an infinite one would otherwise run until memory runs out)
EAGER_ITEMS_LIMIT = 10**5  # (about 15 s of differentiated work at ~150 us an item)


#: values a pure generator may reach without running user code: reading, comparing and
#: combining them with builtins, math and NumPy calls changes nothing (frontend/generator_eagerness.py)
_PLAIN_LEAVES = (type(None), bool, int, float, complex, str, bytes, range, slice, np.generic, np.dtype,
                 types.BuiltinFunctionType, np.ufunc)
_PLAIN_CONTAINERS = (list, tuple, dict, set, frozenset)
_PLAIN_MODULES = ("builtins", "numpy", "math", "cmath")


def plain_data(*values: Any) -> bool:
    """Whether ``values`` are plain data all the way down: numbers, strings, NumPy arrays (not of
    objects) and scalars, and lists, tuples, dicts and sets of them (exactly those types, so no
    user dunder runs); NumPy's and math's modules, builtin and NumPy classes and functions count
    too (a pure generator reads ``np.pi`` or compares types). Not user objects, classes or
    modules, generators or other iterators: code reading those may run the user's code. The run-time half of the proof that a pure generator
    evaluated eagerly is Python's generator (``frontend/generator_eagerness.py``)."""
    seen: set = set()
    stack = list(values)
    while stack:
        value = stack.pop()
        kind = type(value)
        if kind in _PLAIN_CONTAINERS:
            if id(value) in seen:
                continue
            seen.add(id(value))
            stack.extend(value.items() if kind is dict else value)
        elif kind is np.ndarray:
            if value.dtype.hasobject:
                return False
        elif not _plain_leaf(value, kind):
            return False
    return True


def immutable_data(values: tuple) -> bool:
    """Whether ``values`` are numbers, strings or NumPy scalars (or tuples of them): values a
    ``+=`` rebinds instead of writing into (``frontend/generator_sites.py``)."""
    return all(type(v) is tuple and immutable_data(v) or type(v) in (int, float, complex, bool, str, bytes)
               or isinstance(v, np.generic) and type(v).__module__ == "numpy" for v in values)


def _plain_leaf(value: Any, kind: type) -> bool:
    if isinstance(value, types.ModuleType):  # NumPy's and math's (a user module's attributes may be anything)
        return value.__name__.partition(".")[0] in _PLAIN_MODULES
    if isinstance(value, type):  # (a user class's metaclass may run code on isinstance or attribute reads)
        return value.__module__.partition(".")[0] in _PLAIN_MODULES
    return isinstance(value, _PLAIN_LEAVES) and kind.__module__.partition(".")[0] in _PLAIN_MODULES  # (no user subclass)


class NotASequenceError(TypeError):
    pass


def python_iterable(x: Any) -> bool:
    """Whether ``x`` is an instance of a user class whose ``__iter__`` is Python code: iterating
    over it is differentiated through that code (``rules.iteration.iterate_to_list``)."""
    method = getattr(type(x), "__iter__", None)
    return isinstance(method, types.FunctionType) and not isinstance(x, (*_SEQUENCES, set, frozenset, dict))


def as_sequence(x: Any) -> Any:
    """``x`` itself when it can be indexed like the loop or unpacking needs, else an error."""
    if isinstance(x, _SEQUENCES):
        return x
    if isinstance(x, (set, frozenset, dict, type({}.keys()))):
        items = list(x)
        if any(isinstance(i, (float, complex, np.ndarray)) for i in items):
            raise NotASequenceError(  # (sets walk through their rule: rules/primitives.py; dicts land here)
                f"yuebing cannot follow derivatives through iteration over a {type(x).__qualname__} whose "
                "keys are floats or arrays; iterate over a list of them")
        return items
    if isinstance(x, np.void) and x.dtype.names is not None:
        return _record_fields(x)
    if isinstance(x, np.nditer):  # made in a `with` header, which runs undifferentiated
        raise NotASequenceError(
            "yuebing cannot follow derivatives through an np.nditer made undifferentiated (in a `with` header: "
            "with headers are not differentiated); make it in the loop itself instead, as in `for v in "
            "np.nditer(x, op_flags=['readwrite']): v[...] = 2 * v`, which yuebing differentiates")
    raise NotASequenceError(
        f"yuebing cannot follow derivatives through iteration over a {type(x).__qualname__}: "
        "iterate over a list, tuple or array (for example build a list first), or over "
        "range/enumerate/zip/reversed or dict.items()/values()/keys() directly in the for statement"
    )


def _record_fields(x: np.void) -> tuple:
    """A structured array's record walked field by field (``for name, k in table``) outside
    differentiation, or one of labels only (no float field): its fields, a sub-array field
    read-only. A record with float fields is walked with its derivatives by
    ``rules.structured_values.record_fields``."""
    fields = tuple(x[name] for name in x.dtype.names)
    for v in fields:
        if type(v) is np.ndarray:
            v.flags.writeable = False
    return fields


def check_unpack(seq: Any, n: int, starred: bool) -> None:
    """Raise Python's error when unpacking ``seq`` into ``n`` targets would fail."""
    if (len(seq) < n) if starred else (len(seq) != n):
        kind = "at least " if starred else ""
        raise ValueError(f"cannot unpack {len(seq)} values into {kind}{n} targets")


def min_len(*seqs: Any) -> int:
    """The number of steps of ``zip(*seqs)``."""
    return min(len(s) for s in seqs)


def dict_keys(mapping: Any, view: str) -> list:
    """The keys a ``for`` over ``mapping.items()/values()/keys()`` visits, as a list."""
    if not isinstance(mapping, (dict, types.MappingProxyType)):
        raise NotASequenceError(
            f"yuebing can follow `for ... in x.{view}()` only for dicts, not {type(mapping).__qualname__}; "
            f"build a list first: list(x.{view}())"
        )
    return list(mapping)


_TPFLAGS_SEQUENCE, _TPFLAGS_MAPPING = 1 << 5, 1 << 6  # CPython's Py_TPFLAGS_SEQUENCE, Py_TPFLAGS_MAPPING


def match_sequence(x: Any) -> bool:
    """Whether a sequence pattern (``case [a, *rest]``) may match ``x``: CPython's own test, the
    type's ``Py_TPFLAGS_SEQUENCE`` flag (list, tuple, range, deque, ``collections.abc.Sequence``
    subclasses; not str, bytes, bytearray or NumPy arrays)."""
    return bool(type(x).__flags__ & _TPFLAGS_SEQUENCE)


def match_mapping(x: Any) -> bool:
    """Whether a mapping pattern (``case {"k": v, **rest}``) may match ``x``: the type's
    ``Py_TPFLAGS_MAPPING`` flag (dict and its subclasses, ``collections.abc.Mapping``)."""
    return bool(type(x).__flags__ & _TPFLAGS_MAPPING)


_TPFLAGS_MATCH_SELF = 1 << 22  # CPython's _Py_TPFLAGS_MATCH_SELF: int(v), str(v)... bind the subject


def match_args(cls: Any, n: int) -> tuple | None:
    """The attribute names of a class pattern's ``n`` positional sub-patterns (``cls.__match_args__``),
    None when a built-in type (``int(v)``, ``float(v)``) matches the subject itself; CPython's
    ``TypeError``s otherwise."""
    if not isinstance(cls, type):
        raise TypeError("called match pattern must be a class")
    names = getattr(cls, "__match_args__", None)
    if names is None and cls.__flags__ & _TPFLAGS_MATCH_SELF and n <= 1:
        return None
    names = () if names is None else names
    if not isinstance(names, tuple):
        raise TypeError(f"{cls.__name__}.__match_args__ must be a tuple (got {type(names).__name__})")
    if n > len(names):
        allowed = 1 if cls.__flags__ & _TPFLAGS_MATCH_SELF and not names else len(names)
        raise TypeError(f"{cls.__name__}() accepts {allowed} positional sub-pattern{'' if allowed == 1 else 's'} ({n} given)")
    return names


def match_unique(cls: type, names: tuple | None, n: int, attr: str) -> bool:
    """True, unless keyword sub-pattern ``attr`` names an attribute a positional one took (CPython's
    ``TypeError``)."""
    if names is not None and attr in names[:n]:
        raise TypeError(f"{cls.__name__}() got multiple sub-patterns for attribute {attr!r}")
    return True


class ExceptStar:
    """The state of one ``try``/``except*`` while its clauses run (``frontend/try_star.py``): the
    exception caught, what is left of it, and what each handler that ran raised."""

    def __init__(self, caught: BaseException) -> None:
        self.caught, self.rest = caught, caught
        self.outcomes: list = []  # per handler run: what it raised (None: nothing)
        self.reraised: list = []  # subgroups a bare ``raise`` re-raised
        self.match: BaseException | None = None  # what the handler running handles
        self.match_context: BaseException | None = None


def star_start(caught: BaseException) -> ExceptStar:
    return ExceptStar(caught)


def star_match(state: ExceptStar, types: Any) -> BaseException | None:
    """What the next ``except* types`` clause handles, taken out of what is left (CPython's
    ``CHECK_EG_MATCH``): None, the naked exception wrapped in a group, or a subgroup."""
    for t in types if isinstance(types, tuple) else (types,):
        if not (isinstance(t, type) and issubclass(t, BaseException)):
            raise TypeError("catching classes that do not inherit from BaseException is not allowed")
        if issubclass(t, BaseExceptionGroup):
            raise TypeError("catching ExceptionGroup with except* is not allowed. Use except instead.")
    rest, match = state.rest, None
    if rest is None:
        return None
    if isinstance(rest, types):
        match, state.rest = rest, None
        if not isinstance(rest, BaseExceptionGroup):  # a naked exception: wrapped, as CPython does
            match = BaseExceptionGroup("", (rest,)).with_traceback(rest.__traceback__)  # (a tuple, as CPython's)
    elif isinstance(rest, BaseExceptionGroup):
        match, state.rest = rest.split(types)
    if match is not None:
        state.outcomes.append(None)
        state.match, state.match_context = match, match.__context__
    return match


def star_reraise(state: ExceptStar, match: BaseException) -> BaseException:
    """A bare ``raise`` in an ``except*`` handler: re-raises the handler's subgroup, marked as such."""
    state.reraised.append(match)
    return match


def star_raised(state: ExceptStar, raised: BaseException) -> None:
    """The handler that ran last raised ``raised``: kept for the end. Its context is what CPython
    gives it: the subgroup the handler handled (the rewritten handler handles the whole exception
    caught), and none new when it is that subgroup itself."""
    if raised is state.match:
        raised.__context__ = state.match_context
    elif raised.__context__ is state.caught:
        raised.__context__ = state.match
    state.outcomes[-1] = raised


def star_result(state: ExceptStar) -> BaseException | None:
    """What the ``try``/``except*`` raises once its clauses ran (CPython's ``_PyExc_PrepReraiseStar``):
    None, or the exceptions left and raised."""
    outcomes = [e for e in (*state.outcomes, state.rest) if e is not None]
    if not isinstance(state.caught, BaseExceptionGroup):  # at most one clause ran
        return outcomes[0] if outcomes else None
    # re-raised (CPython: the same traceback, context, cause and notes as the exception caught):
    # the rest, subgroups re-raised bare, and the exception caught itself (a clause matching it all)
    kept = [e for e in outcomes if e is state.rest or e is state.caught or any(e is r for r in state.reraised)]
    raised = [e for e in outcomes if not any(e is k for k in kept)]
    leaves = {id(leaf) for e in kept for leaf in _leaves(e)}
    projected = state.caught.split(lambda e: id(e) in leaves)[0] if leaves else None
    if not raised:
        return projected
    combined = raised + ([projected] if projected is not None else [])
    return combined[0] if len(combined) == 1 else BaseExceptionGroup("", combined)


def _leaves(e: BaseException) -> list:
    if isinstance(e, BaseExceptionGroup):
        return [leaf for child in e.exceptions for leaf in _leaves(child)]
    return [e]


def super_getattr(cell: types.CellType | type, obj: Any, name: str) -> Any:
    """``super().name`` inside a method (``cell`` is the method's ``__class__`` cell), or
    ``super(cls, obj).name`` (``cell`` is ``cls``)."""
    return getattr(super(cell if isinstance(cell, type) else cell.cell_contents, obj), name)


__all__ = ["as_sequence", "cell_get", "cell_set", "check_unpack", "dict_keys", "global_del", "global_get", "global_set", "min_len", "mkdict", "mklist", "mkset", "mktuple", "super_getattr"]
