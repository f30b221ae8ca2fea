"""Rules of the primitives that follow a class defined inside a differentiated function
(``ir/local_classes.py``), and the reads that find what they recorded.

Such a class is used through itself or its instances long after its statement ran, by calls
that do not know where it was made (``m(x)`` reaches ``Model.__call__``, ``m.scale`` the class
attribute). So the statement records, for the pass (``rules/outside_state.py``):

* ``class_cells``: each captured variable's cell with its tangent box, by the cell. A method's
  rules take a cell's box from the registry before anything else (``transform/runtime.cell_fdata``
  and its forward and second-order twins): the method reads the variable's current value and
  derivative, and a ``nonlocal`` write from it reaches the function, as a nested ``def``'s does.
* ``class_level``: a value the class body stores, by the value's identity, with a box of its own
  (a cell's, as if the value were a captured variable): a read of the class attribute (or a
  dataclass field's default) gets the box's tangent, its pullback adds the cotangent there, and
  ``class_level``'s pullback hands the sum back to the code that computed the value.
"""
from __future__ import annotations

import collections
import dataclasses
import inspect
import sys
import types
from typing import Any, Callable

from ..ir.local_classes import (MISSING, class_cells, class_level, class_stored, defer_init_subclass,
                                 refuse_field_defaults_reads)
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, fdata, zero_tangent
from . import outside_state
from .core import CoDual, Dual, register_frule, register_rrule
from .declare import nondifferentiable, nondifferentiable_as
from .second_order import _register, defined_as
from .util import add_rdata_to, slot_rdata, slot_tangent, sum_rdata

CLASS_LEVEL = "class_level"


# --------------------------------------------------------------------------------------------
# class_cells
# --------------------------------------------------------------------------------------------


def _class_cells_rrule(names: CoDual, *cells: CoDual) -> tuple[CoDual, Callable]:
    for cell in cells:
        outside_state.register("fdata", cell.primal, cell.fdata)
    share = class_cells(names.primal, *(c.primal for c in cells))
    return CoDual(share, NoFData), lambda dy: (NoRData,) * (len(cells) + 2)


def _class_cells_frule(names: Dual, *cells: Dual) -> Dual:
    for cell in cells:
        outside_state.register("tangent", cell.primal, cell.tangent)
    return Dual(class_cells(names.primal, *(c.primal for c in cells)), NoTangent)


def _class_cells_second_order(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """The boxes of each role: fdata, tangent (second order's holder) and fdata tangent."""
    names, *cells = args
    for cell, box, holder, box_d in cells:
        outside_state.register("fdata", cell, box)
        outside_state.register("tangent", cell, holder)
        outside_state.register("fdata_tangent", cell, box_d)
    share = class_cells(names[0], *(c[0] for c in cells))
    nothing = (NoRData,) * (len(args) + 1)
    return (share, NoFData, NoTangent, NoFData), lambda dy, dy_d: (nothing, nothing)


# --------------------------------------------------------------------------------------------
# class_level
# --------------------------------------------------------------------------------------------


def _box(value: CoDual) -> MutableTangent:
    return MutableTangent(types.CellType, {"cell_contents": slot_tangent(value)})


def _class_level_rrule(value: CoDual) -> tuple[CoDual, Callable]:
    box = _box(value)
    outside_state.register("fdata", value.primal, box, CLASS_LEVEL)

    def pullback(dy: Any) -> tuple:  # the value's own cotangent plus what reads of the class's gathered
        return NoRData, sum_rdata(dy, slot_rdata(box.fields["cell_contents"]))

    return CoDual(value.primal, value.fdata), pullback


def _class_level_frule(value: Dual) -> Dual:
    outside_state.register("tangent", value.primal, value.tangent, CLASS_LEVEL)
    return value


def _class_level_second_order(f: tuple, args: tuple, kwargs: dict) -> tuple:
    ((v, fd, t, fdd),) = args
    box, box_d = _box(CoDual(v, fd)), _box(CoDual(v, fdd))
    outside_state.register("fdata", v, box, CLASS_LEVEL)
    outside_state.register("fdata_tangent", v, box_d, CLASS_LEVEL)
    outside_state.register("tangent", v, t, CLASS_LEVEL)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return ((NoRData, sum_rdata(dy, slot_rdata(box.fields["cell_contents"]))),
                (NoRData, sum_rdata(dy_d, slot_rdata(box_d.fields["cell_contents"]))))

    return (v, fd, t, fdd), pullback


# --------------------------------------------------------------------------------------------
# Reads
# --------------------------------------------------------------------------------------------


def class_level_read(value: Any) -> tuple[CoDual, Callable] | None:
    """A read of ``value`` from a class (reverse mode, in the current fdata role): the value with
    its derivative and a pullback ``dy -> NoRData`` (the owner's rdata) that gathers the
    cotangent in the value's box; None when ``value`` is not a value a class body stored in this
    pass."""
    box = outside_state.registered("fdata", value, CLASS_LEVEL)
    if box is None:
        return _refuse_plain_holder(value)

    def gather(dy: Any) -> Any:
        box.fields["cell_contents"] = add_rdata_to(box.fields["cell_contents"], dy)
        return NoRData

    return CoDual(value, fdata(box.fields["cell_contents"])), gather


def class_level_tangent(value: Any) -> Any:
    """The tangent of ``value`` read from a class in forward mode (and second order's tangent
    part); None when ``value`` is not a value a class body stored in this pass."""
    found = outside_state.registered("tangent", value, CLASS_LEVEL)
    return _refuse_plain_holder(value) if found is None else found


def _refuse_plain_holder(value: Any) -> None:
    """None, after refusing a tuple read from a class or function that holds a value a class body
    (or a write on a class) gave a derivative in this pass, without being one itself: Python made
    it as plain Python (a dataclass ``__init__``'s ``__defaults__``), and its items would be read
    without their derivatives. (A list or dict there that the pass changed has a tangent of its
    own for the call: ``outside_state.shared``.)"""
    _refuse_placeholder_defaults(value)
    if type(value) is not tuple:
        return None
    if any(outside_state.registered(role, item, CLASS_LEVEL) is not None for item in value
           for role in ("fdata", "tangent")):
        raise TypeError("yuebing cannot differentiate reading a tuple Python made from a value a class "
                        "defined in the differentiated function computed from its variables (a dataclass "
                        "__init__'s __defaults__, say): its items would lose their derivative. What to do: read "
                        "the value from the class itself (C.w) or from dataclasses.fields(C)")
    return None


def _refuse_placeholder_defaults(value: Any, through: str = "") -> None:
    """Refuse a function's ``__defaults__`` (or ``__kwdefaults__``) holding the placeholder the
    normaliser puts for a default value computed from the function's variables (a method's
    ``k=a``, a nested ``def g(v, k=2 * x)``: ``frontend/local_classes._method_defaults``,
    ``frontend/closures``): the function finds the value itself when called, but the tuple read
    would hand the placeholder string to the user's code."""
    items = value if type(value) is tuple else value.values() if type(value) is dict else ()
    if any(item.__class__ is str and item == MISSING for item in items):
        raise TypeError(f"yuebing cannot differentiate reading __defaults__ (or __kwdefaults__){through} of a "
                        "function or method defined in the differentiated function whose default value is computed from the "
                        "function's variables (def scale(self, y, k=a)): yuebing passes that value to the calls "
                        "itself, with its derivative, and the tuple does not hold it. What to do: keep the value in "
                        "a variable (or a class attribute, k_default = a) and read it from there")


def _signature_read(read: Callable) -> Callable:
    """``read`` (``inspect.signature``...) of a function, refused as a read of its ``__defaults__``
    is when they hold the placeholder (a parameter's ``default`` would be the placeholder string)."""

    def checked(fn: Any, *args: Any, **kwargs: Any) -> Any:
        for target in _wrapped_functions(fn):
            for defaults in (getattr(target, "__defaults__", None), getattr(target, "__kwdefaults__", None)):
                _refuse_placeholder_defaults(defaults, f" through inspect.{read.__name__}")
        return read(fn, *args, **kwargs)

    return checked


def _wrapped_functions(fn: Any) -> list:
    """``fn`` and the functions whose parameters its signature shows: a bound method's function,
    a wrapper's ``__wrapped__``, a partial's function."""
    found: list = []
    while fn is not None and len(found) < 100 and not any(fn is seen for seen in found):
        found.append(fn)
        fn = next((getattr(fn, name) for name in ("__func__", "__wrapped__", "func")
                   if callable(getattr(fn, name, None))), None)
    return found


# --------------------------------------------------------------------------------------------
# Writes on a class (``cls.factor = k`` in a class decorator, a singleton's ``cls.instance = ...``)
# --------------------------------------------------------------------------------------------


def writes_on_class(o: Any, plain: bool) -> bool:
    """Whether ``setattr(o, ...)`` writes a class attribute these rules follow: ``o`` is a class
    made by a class statement whose metaclass writes as ``type`` does."""
    return not plain and isinstance(o, type) and bool(o.__flags__ & _HEAP_TYPE) \
        and type(o).__setattr__ is type.__setattr__


_HEAP_TYPE = 1 << 9  # Py_TPFLAGS_HEAPTYPE: made by a class statement, not a builtin or C type


def class_write_rrule(cls: type, name: str, value: Any) -> tuple[CoDual, Callable]:
    """``setattr(cls, name, value)`` in reverse mode: the value is a class value as ``class_level``'s
    (a read through the class gathers its cotangent in the value's box); the pullback puts the
    attribute back and hands the value what the box gathered."""
    take = _gathered(value if isinstance(value, CoDual) else CoDual(value, NoFData))
    restore = _written(cls, name, primal_of(value))

    def pullback(dy: Any) -> tuple:
        restore()
        return NoRData, NoRData, NoRData, take()

    return CoDual(None, NoFData), pullback


def class_write_second(cls: type, name: str, value: tuple) -> tuple[tuple, Callable]:
    """``setattr(cls, name, value)`` in second order: the value's box in the fdata and fdata tangent
    roles, its tangent registered as forward mode's."""
    v, fd, t, fdd = value
    take = _gathered(CoDual(v, fd))
    with outside_state.fdata_tangent_pass():
        take_d = _gathered(CoDual(v, fdd))
    outside_state.register("tangent", v, t, CLASS_LEVEL)
    restore = _written(cls, name, v)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        restore()
        return (NoRData, NoRData, NoRData, take()), (NoRData, NoRData, NoRData, take_d())

    return (None, NoFData, NoTangent, NoFData), pullback


def _gathered(value: CoDual) -> Callable[[], Any]:
    """The box of ``value`` written on a class (in the current fdata role; shared with an earlier
    registration of the same value); returns what takes the rdata it gathered (a second write of
    the value does not count it again)."""
    box = outside_state.registered("fdata", value.primal, CLASS_LEVEL)
    if box is None:
        box = _box(value)
        outside_state.register("fdata", value.primal, box, CLASS_LEVEL)

    def take() -> Any:
        gathered = slot_rdata(box.fields["cell_contents"], value.primal)
        box.fields["cell_contents"] = _box(value).fields["cell_contents"]
        return gathered

    return take


def primal_of(value: Any) -> Any:
    return value.primal if isinstance(value, (CoDual, Dual)) else value


def class_write_frule(cls: type, name: str, value: Any) -> Dual:
    """``setattr(cls, name, value)`` in forward mode: a read through the class finds the tangent."""
    tangent = value.tangent if isinstance(value, Dual) else zero_tangent(value)
    outside_state.register("tangent", primal_of(value), tangent, CLASS_LEVEL)
    setattr(cls, name, primal_of(value))
    return Dual(None, NoTangent)


def _written(cls: type, name: str, value: Any) -> Callable[[], None]:
    """Write ``cls.name = value``; returns what puts back the class's own attribute as it was."""
    own = vars(cls)
    existed, old = name in own, own.get(name)
    setattr(cls, name, value)
    outside_state.note_reached(cls)

    def restore() -> None:
        if existed:
            setattr(cls, name, old)
        elif name in vars(cls):
            delattr(cls, name)

    return restore


def field_default(owner: Any, name: str) -> bool:
    """Whether ``owner.name`` reads the default a dataclass ``Field`` holds (``dataclasses.fields(C)``,
    ``C.__dataclass_fields__``): the class statement made the field as plain Python, so a default
    the class body computed (``class_level``) is read with its derivative only through the
    registry, by these reads (``rules/objects.py``, ``transform/lifting_objects.py``)."""
    return name == "default" and type(owner) is dataclasses.Field


def stored_defaults(items: list, is_given: Callable[[Any], bool]) -> dict[int, Callable]:
    """A named tuple's field values (``items``: the call's arguments, ``is_given``, and the class's
    defaults), each default a class body stored in this pass replaced in place by its codual;
    returns the gathers of their rdata by field index (reverse mode)."""
    gathers = {}
    for i, item in enumerate(items):
        found = None if is_given(item) else class_level_read(item)
        if found is not None:
            items[i], gathers[i] = found
    return gathers


def stored_default_second(value: Any) -> tuple[tuple, Callable, Callable] | None:
    """A default a class body stored in this pass, in second order: ``(value, fdata, tangent,
    fdata tangent)`` and the gathers of the rdata of its fdata and of its fdata tangent; None
    for another value."""
    found = class_level_read(value)
    if found is None:
        return None
    with outside_state.fdata_tangent_pass():
        found_d = class_level_read(value) or (CoDual(value, NoFData), lambda dy: NoRData)
    tangent = class_level_tangent(value)
    return (value, found[0].fdata, NoTangent if tangent is None else tangent, found_d[0].fdata), found[1], found_d[1]


def _namedtuple(typename: str, field_names: Any, *, rename: bool = False, defaults: Any = None,
                module: str | None = None) -> type:
    """``collections.namedtuple`` in differentiated code: its defaults are class values
    (``class_level``), which the class's construction reads with their derivatives
    (``stored_defaults``), as those of a ``NamedTuple`` class body."""
    if defaults is not None:
        defaults = [class_level(d) for d in defaults]
    return _named_tuple_class(typename, field_names, rename, defaults, module)


def _named_tuple_class(typename: str, field_names: Any, rename: bool, defaults: Any, module: str | None) -> type:
    made = collections.namedtuple(typename, field_names, rename=rename, defaults=defaults,
                                  module=_caller_module() if module is None else module)
    if any(may_carry_derivatives(d) for d in defaults or ()):
        refuse_field_defaults_reads(made)
    return made


def _caller_module() -> str:
    """The module of the user's code calling ``namedtuple`` (what it would name itself), past
    yuebing's frames."""
    frame = sys._getframe(2)
    while frame is not None and frame.f_globals.get("__name__", "").startswith("yuebing."):
        frame = frame.f_back
    return "__main__" if frame is None else frame.f_globals.get("__name__", "__main__")


def may_carry_derivatives(value: Any) -> bool:
    """Whether ``value`` has a tangent type (a float, an array of them, a container holding them)."""
    try:
        return zero_tangent(value) is not NoTangent
    except TypeError:
        return False


register_rrule(class_cells, _class_cells_rrule)
register_frule(class_cells, _class_cells_frule)
register_rrule(class_level, _class_level_rrule)
register_frule(class_level, _class_level_frule)
_register((class_cells,), _class_cells_second_order)
_register((class_level,), _class_level_second_order)
# (a batched Hessian pass reads a class attribute as a constant call, without the batched
# tangent registered here: the pass is dropped, Unbatched, and its columns run one pass each)
_class_level_second_order.second_order_kind = "special"  # type: ignore[attr-defined]
nondifferentiable(class_stored)  # (a check: the values' derivatives go through class_level)
nondifferentiable(defer_init_subclass)  # (it hands the bases back: the keywords go to a later call)
nondifferentiable(_named_tuple_class)
defined_as(collections.namedtuple, _namedtuple)

CASES: list = []  # (their effect is on later reads: tests/test_local_classes.py checks them in every mode)
# a signature shows a function's __defaults__: refused as reading them is when they hold the placeholder
for _read in (inspect.signature, inspect.getfullargspec):
    nondifferentiable_as(_read, _signature_read(_read))
