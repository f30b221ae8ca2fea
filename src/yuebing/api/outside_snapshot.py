"""Outside state a dropped batched Hessian pass must put back (``api/batched_hessian.py``).

A batched forward-over-reverse pass that is abandoned part way (scalar code, a rule without a
batched form, anything it raised) has run part of the function: it may have changed objects the
function reaches without receiving them -- a global, a module's list, an object's counter
(opfunu's problems count their evaluations in ``self.n_fe``), a cache. The Hessian's columns are
then computed one pass each, and those must start from the state the batched pass started from,
or they would differ from what one pass per column gives.

``FirstReads`` is the outside-state memo of a batched pass (``rules/outside_state.py``): at the
first read of each outside object it keeps a deep copy of it, all copies made with one shared
``copy.deepcopy`` memo (so an object reached from two outside objects is copied once, as it was
first seen, and each copy maps back to its original). It also notes each global's value before the
pass first writes it (``outside_state.note_write``). ``restore`` puts everything back in place,
keeping identities: a list gets its original items again, an object its original attributes.

An object it could neither copy nor put back (a lock, an object with ``__slots__``, an object
array) drops the pass at its first read, before the pass can change it: nothing is ever left
changed behind the columns' backs.
"""
from __future__ import annotations

import copy
import types
from typing import Any, Callable

import numpy as np

#: outside objects a pass cannot change (functions, modules, classes: their attributes are read
#: through the memo entries of what they hold), and numbers
_UNCHANGING = (float, int, complex, str, bytes, bool, type(None), np.generic, types.FunctionType,
               types.BuiltinFunctionType, types.ModuleType, type)

#: objects kept as code: what they cache (a scipy.stats distribution's ``vecentropy`` fills its
#: cache on first use) is no data of the pass
_CODE = (np.ufunc, np.vectorize)

_ABSENT = object()  # a global that did not exist, a cell that was empty
_MAX_DEPTH = 64


class CannotRestore(Exception):
    """An outside object the batched pass cannot copy or put back (the pass is then dropped at
    its first read of it)."""


class FirstReads(dict):
    """The outside-state memo of a batched pass that also keeps what each outside object held
    when the pass first reached it, and each global before the pass first wrote it."""

    def __init__(self, on_unrestorable: Callable[[str], Exception]) -> None:
        super().__init__()
        self._copies: dict = {}  # the deepcopy memo every copy of the pass shares
        self._before: dict = {}  # id(object) -> (object, its copy), in first-read order
        self._bindings: dict = {}  # (id(owner), name) -> (owner, name, what it held before or _ABSENT)
        self._on_unrestorable = on_unrestorable

    def __setitem__(self, key: Any, hit: Any) -> None:
        if len(key) == 2 and isinstance(key[0], str):  # a read through ``shared``: (role, id)
            self._first_read(hit[0])
        super().__setitem__(key, hit)

    def note_write(self, owner: Any, name: Any) -> None:
        """Called before the pass rebinds global ``name`` of namespace ``owner``, attribute
        ``name`` of object ``owner``, or (``name`` None) cell ``owner``'s variable."""
        key = (id(owner), name)
        if key not in self._bindings:
            self._bindings[key] = (owner, name, _bound(owner, name))

    def _first_read(self, value: Any) -> None:
        if id(value) in self._before or _unchanging(value):
            return
        try:
            if isinstance(value, types.CellType):
                contents = _cell_contents(value)
                before = (contents if contents is _ABSENT or _unchanging(contents)
                          else copy.deepcopy(contents, self._copies),)
            else:
                before = copy.deepcopy(value, self._copies)
            _check_restorable(value, set(), 0)
        except Exception as error:  # noqa: BLE001 - whatever deepcopy raises: an object it cannot copy
            raise self._on_unrestorable(f"an outside {type(value).__qualname__} it cannot put back ({error})") \
                from None
        self._before[id(value)] = (value, before)

    def unchanged(self) -> bool:
        """Whether every outside object and global the pass reached is as it was."""
        return all(_bound(owner, name) is before for owner, name, before in self._bindings.values()) and all(
            _same(before, value, 0) for value, before in self._before.values())

    def restore(self) -> None:
        """Put every outside object and global the pass changed back as it was."""
        back = {id(made): original for original in self._copies.get(id(self._copies), ())
                if (made := self._copies.get(id(original))) is not None}
        seen: set = set()
        for value, before in reversed(list(self._before.values())):
            if not _same(before, value, 0):
                _restore(value, before, back, seen, 0)
        for owner, name, before in self._bindings.values():  # (last: a name rebound before its
            # object's first read was copied as the pass had rebound it)
            _rebind(owner, name, before)
        if not self.unchanged():
            raise CannotRestore("outside state the dropped pass changed could not be put back")


def _unchanging(value: Any) -> bool:
    return isinstance(value, _UNCHANGING) or hasattr(value, "__yuebing_gradient__")


def _cell_contents(cell: types.CellType) -> Any:
    try:
        return cell.cell_contents
    except ValueError:  # an empty cell
        return _ABSENT


def _bound(owner: Any, name: Any) -> Any:
    """What global ``name`` of namespace ``owner``, attribute ``name`` of object ``owner`` or
    cell ``owner`` (``name`` None) holds, or ``_ABSENT``."""
    if name is None:
        return _cell_contents(owner)
    if isinstance(owner, dict):
        return owner.get(name, _ABSENT)
    try:
        return vars(owner).get(name, _ABSENT) if hasattr(owner, "__dict__") else getattr(owner, name, _ABSENT)
    except TypeError:
        return _ABSENT


def _rebind(owner: Any, name: Any, value: Any) -> None:
    if _bound(owner, name) is value:
        return
    if name is None:
        if value is _ABSENT:
            del owner.cell_contents
        else:
            owner.cell_contents = value
    elif isinstance(owner, dict) or hasattr(owner, "__dict__") and not isinstance(owner, type):
        attributes = owner if isinstance(owner, dict) else vars(owner)  # (past any __setattr__)
        if value is _ABSENT:
            attributes.pop(name, None)
        else:
            attributes[name] = value
    elif value is _ABSENT:
        delattr(owner, name)
    else:
        setattr(owner, name, value)


def _has_slots(value: Any) -> bool:
    """Whether ``value`` keeps attributes in slots (outside its ``__dict__``): ``__slots__ = ()``
    of a base class (``typing.Generic``'s) keeps none."""
    for klass in type(value).__mro__[:-1]:
        slots = vars(klass).get("__slots__", ())
        if set((slots,) if isinstance(slots, str) else slots) - {"__dict__", "__weakref__"}:
            return True
    return False


def _check_restorable(value: Any, seen: set, depth: int) -> None:
    """Raise ``CannotRestore`` unless ``restore`` can put every object reachable from ``value``
    back in place (what ``_same`` compares is what ``_restore`` restores)."""
    if _unchanging(value) or isinstance(value, _CODE) or id(value) in seen:
        return
    if depth > _MAX_DEPTH:
        raise CannotRestore("nested too deeply")
    seen.add(id(value))
    for child in _children(value):
        _check_restorable(child, seen, depth + 1)


def _children(value: Any) -> Any:
    """What ``value`` holds that ``_same``/``_restore`` look into; ``CannotRestore`` for an object
    they do not know."""
    if isinstance(value, np.ndarray):
        if value.dtype.hasobject:
            raise CannotRestore("an object array")
        return ()
    if isinstance(value, (list, tuple, set, frozenset)):
        return value
    if isinstance(value, dict):
        return (*value.keys(), *value.values())
    if isinstance(value, types.CellType):
        return (_cell_contents(value),)
    if isinstance(value, types.MethodType):
        return (value.__self__,)
    if isinstance(value, (np.random.RandomState, np.random.Generator)):
        return ()
    if hasattr(value, "__dict__") and not _has_slots(value):
        return tuple(vars(value).values())
    raise CannotRestore(f"a {type(value).__qualname__}")


def _same(before: Any, value: Any, depth: int) -> bool:
    """Whether ``value`` holds what its copy ``before`` held (by value, arrays bit for bit)."""
    if before is value:  # what cannot change is kept, not copied
        return True
    if depth > _MAX_DEPTH:
        return False
    if isinstance(value, types.CellType):
        return len(before) == 1 and _same(before[0], _cell_contents(value), depth + 1)
    if type(before) is not type(value):
        return False
    if isinstance(value, np.ndarray):
        return before.shape == value.shape and before.dtype == value.dtype and np.array_equal(
            before, value, equal_nan=value.dtype.kind in "fc")
    if isinstance(value, (list, tuple)):
        return len(before) == len(value) and all(_same(c, v, depth + 1) for c, v in zip(before, value))
    if isinstance(value, dict):
        return list(before) == list(value) and all(_same(before[key], value[key], depth + 1) for key in value)
    if isinstance(value, (float, complex, np.floating, np.complexfloating)):
        return before == value or before != before and value != value
    if isinstance(value, _UNCHANGING):
        return before == value
    if isinstance(value, (set, frozenset)):
        return before == value
    if isinstance(value, _CODE):
        return True
    if isinstance(value, types.MethodType):
        return before.__func__ is value.__func__ and _same(before.__self__, value.__self__, depth + 1)
    if isinstance(value, np.random.RandomState):  # (a scipy.stats distribution holds one)
        return _same(before.get_state(legacy=False), value.get_state(legacy=False), depth + 1)
    if isinstance(value, np.random.Generator):
        return _same(before.bit_generator.state, value.bit_generator.state, depth + 1)
    if hasattr(value, "__dict__") and not _has_slots(value):
        # (attributes by name: a copy made through __setstate__ may hold them in another order)
        mine, theirs = vars(before), vars(value)
        return mine.keys() == theirs.keys() and all(_same(mine[key], theirs[key], depth + 1) for key in theirs)
    return False  # (an object compared by nothing we can trust: taken as changed)


def _restore(value: Any, before: Any, back: dict, seen: set, depth: int) -> None:
    """Put ``value`` back to what its copy ``before`` held, in place; ``back`` maps each copy
    (by id) to its original, so what ``value`` held is held again, not a copy of it."""
    if before is value or id(value) in seen or _unchanging(value) or isinstance(value, _CODE):
        return
    if depth > _MAX_DEPTH:
        raise CannotRestore("nested too deeply")
    seen.add(id(value))

    def original(made: Any) -> Any:
        return back.get(id(made), made)

    def restore_children(copies: Any) -> None:
        for made in copies:
            _restore(original(made), made, back, seen, depth + 1)

    if isinstance(value, types.CellType):
        contents = original(before[0])
        if contents is _ABSENT:
            del value.cell_contents
        else:
            value.cell_contents = contents
        restore_children(before)
    elif isinstance(value, np.ndarray):
        if before.shape != value.shape or before.dtype != value.dtype:
            raise CannotRestore("an array resized in place")
        if not np.array_equal(before, value, equal_nan=value.dtype.kind in "fc"):
            value[...] = before
    elif isinstance(value, list):
        value[:] = [original(made) for made in before]
        restore_children(before)
    elif isinstance(value, dict):
        items = [(original(key), original(made)) for key, made in before.items()]
        value.clear()
        value.update(items)
        restore_children(before.values())
    elif isinstance(value, set):
        value.clear()
        value.update(original(made) for made in before)
    elif isinstance(value, (tuple, frozenset)):
        restore_children(before)
    elif isinstance(value, types.MethodType):
        _restore(value.__self__, before.__self__, back, seen, depth + 1)
    elif isinstance(value, np.random.RandomState):
        value.set_state(before.get_state())
    elif isinstance(value, np.random.Generator):
        value.bit_generator.state = before.bit_generator.state
    elif hasattr(value, "__dict__") and not _has_slots(value):
        attributes = vars(value)
        kept = {name: original(made) for name, made in vars(before).items()}
        attributes.clear()
        attributes.update(kept)
        restore_children(vars(before).values())
    else:
        raise CannotRestore(f"a {type(value).__qualname__}")


__all__ = ["CannotRestore", "FirstReads"]
