"""Rules of the primitives the normaliser introduces (``ir/primitives.py``): display builders,
closure cells, ``super()`` and sequence checks."""
from __future__ import annotations

import types
from typing import Any, Callable

import numpy as np

from ..ir.suppressing_managers import made_when_run_entered_by_methods, made_by_a_python_method, \
    manager_entered_by_methods
from ..ir.primitives import (as_sequence, cell_get, cell_set, check_unpack, dict_keys,
                             holds_float_data, manager_holding_floats, min_len,
                             with_bound, with_inputs, mkdict, mklist, python_iterable,
                             mkset, mktuple, super_getattr)
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, SetTangent, fdata, zero_tangent
from ..tangents.kinds import VALUE_CARRYING_DICT_VIEWS
from ..tangents.types import Tangent
from . import outside_state
from . import structured_values
from .core import CoDual, Dual, register_frule, register_rrule
from .core import frule as core_frule, rrule as core_rrule
from .iteration import iterate_to_list
from .util import output, slot_rdata, slot_tangent

# --------------------------------------------------------------------------------------------
# Rules
# --------------------------------------------------------------------------------------------


def _mklist_rrule(*items: CoDual) -> tuple[CoDual, Callable]:
    out = CoDual(list(c.primal for c in items), [slot_tangent(c) for c in items])

    def pullback(dy: Any) -> tuple:
        return (NoRData, *(slot_rdata(t) for t in out.fdata[: len(items)]))

    return out, pullback


def _mklist_frule(*items: Dual) -> Dual:
    return Dual([d.primal for d in items], [d.tangent for d in items])


def _mktuple_rrule(*items: CoDual) -> tuple[CoDual, Callable]:
    parts = tuple(c.fdata for c in items)
    f = NoFData if all(p is NoFData for p in parts) else parts

    def pullback(dy: Any) -> tuple:
        if dy is NoRData:
            return (NoRData,) * (len(items) + 1)
        return (NoRData, *dy)

    return CoDual(tuple(c.primal for c in items), f), pullback


def _mktuple_frule(*items: Dual) -> Dual:
    tangents = tuple(d.tangent for d in items)
    return Dual(tuple(d.primal for d in items), NoTangent if all(t is NoTangent for t in tangents) else tangents)


def _mkdict_rrule() -> tuple[CoDual, Callable]:
    return CoDual({}, {}), lambda dy: (NoRData,)


def _cell_get_rrule(cell: CoDual) -> tuple[CoDual, Callable]:
    value = cell.primal.cell_contents
    box = cell.fdata
    if not isinstance(box, MutableTangent):  # captured from outside the differentiated code
        if isinstance(value, types.FunctionType):  # a constant function, as a global one is
            return CoDual(value, NoFData), lambda dy: (NoRData, NoRData)
        return output(value), lambda dy: (NoRData, NoRData)
    slot = box.fields.get("cell_contents", NoTangent)
    if slot is NoTangent:
        slot = box.fields["cell_contents"] = zero_tangent(value)
    out = CoDual(value, fdata(slot))

    def pullback(dy: Any) -> tuple:
        if dy is not NoRData:
            from ..tangents import increment

            box.fields["cell_contents"] = increment(box.fields["cell_contents"], _as_tangent(value, dy))
        return NoRData, NoRData

    return out, pullback


_EMPTY = object()


def _cell_set_rrule(cell: CoDual, value: CoDual) -> tuple[CoDual, Callable]:
    c, box = cell.primal, cell.fdata
    try:
        old = c.cell_contents
    except ValueError:
        old = _EMPTY
    c.cell_contents = value.primal
    if not isinstance(box, MutableTangent):  # a closure made outside: outside state
        outside_state.note_reached(c)

        def plain_pullback(dy: Any) -> tuple:
            _restore(c, old)
            return NoRData, NoRData, NoRData

        return output(None), plain_pullback
    old_slot = box.fields.get("cell_contents", NoTangent)
    box.fields["cell_contents"] = slot_tangent(value)

    def pullback(dy: Any) -> tuple:
        value_r = slot_rdata(box.fields["cell_contents"])  # the cotangent the new value gathered
        box.fields["cell_contents"] = _zeroed(old_slot)  # the old value was overwritten
        _restore(c, old)
        return NoRData, NoRData, value_r

    return output(None), pullback


def _restore(cell: types.CellType, old: Any) -> None:
    if old is _EMPTY:
        del cell.cell_contents
    else:
        cell.cell_contents = old


def _zeroed(slot: Any) -> Any:
    """An overwritten float slot restarts at zero; a mutable tangent object is put back as is."""
    return 0.0 if isinstance(slot, float) else 0j if isinstance(slot, complex) else slot


def _as_tangent(value: Any, r: Any) -> Any:
    from ..tangents import join

    return join(fdata(zero_tangent(value)), r) if not isinstance(r, (float, complex)) else r


def _cell_get_frule(cell: Dual) -> Dual:
    value = cell.primal.cell_contents
    box = cell.tangent
    if isinstance(box, MutableTangent):
        slot = box.fields.get("cell_contents", NoTangent)
        if slot is NoTangent:  # not tracked yet: a zero tangent, kept so every read shares it
            slot = zero_tangent(value)
            if slot is not NoTangent:
                box.fields["cell_contents"] = slot
        return Dual(value, slot)
    return Dual(value, zero_tangent(value))


def _cell_set_frule(cell: Dual, value: Dual) -> Dual:
    cell.primal.cell_contents = value.primal
    box = cell.tangent
    if isinstance(box, MutableTangent):
        box.fields["cell_contents"] = value.tangent if isinstance(value, Dual) else zero_tangent(value)
    return Dual(None, NoTangent)


def _identity_rrule(x: CoDual, *rest: CoDual) -> tuple[CoDual, Callable]:
    return x, lambda dy: (NoRData, dy) + (NoRData,) * len(rest)


def _walks_set(x: Any) -> bool:
    """A set (of floats: its elements carry tangents) or a set's tangent (second order's tangent
    call), or a dict's values or items handed on as a view (a generator expression's iterable):
    walked as ``list(x)`` is, each element with its tangent (rules/containers/)."""
    return isinstance(x, (set, frozenset, *VALUE_CARRYING_DICT_VIEWS)) or type(x) is SetTangent


def _as_sequence_rrule(x: CoDual) -> tuple[CoDual, Callable]:
    if python_iterable(x.primal):  # a user class's __iter__/__next__: differentiated as user code
        return core_rrule(iterate_to_list, x)
    if _walks_set(x.primal):
        return core_rrule(list, x)
    if structured_values.carries(x.primal):  # a record unpacked: its fields read (structured_values.py)
        return core_rrule(structured_values.record_fields, x)
    seq = as_sequence(x.primal)
    if seq is x.primal:
        return x, lambda dy: (NoRData, dy)
    return output(seq), lambda dy: (NoRData, NoRData)


def _as_sequence_frule(x: Dual) -> Dual:
    if python_iterable(x.primal):
        return core_frule(iterate_to_list, x)
    if _walks_set(x.primal):
        return core_frule(list, x)
    if structured_values.carries(x.primal):
        return core_frule(structured_values.record_fields, x)
    seq = as_sequence(x.primal)
    return x if seq is x.primal else Dual(seq, zero_tangent(seq))


def _zero_rrule(f: Callable) -> Callable:
    def rrule(*args: CoDual) -> tuple[CoDual, Callable]:
        return output(f(*(a.primal for a in args))), lambda dy: (NoRData,) * (len(args) + 1)

    return rrule


def _zero_frule(f: Callable) -> Callable:
    def frule(*args: Dual) -> Dual:
        y = f(*(a.primal for a in args))
        return Dual(y, zero_tangent(y))

    return frule


def bound_to(value: Any, obj: Any) -> bool:
    """Whether ``super().name`` gave a method bound to ``obj``: a Python method, or a C slot's
    (``super().__setattr__`` is ``object.__setattr__`` bound, whose writes must reach obj's fdata)."""
    return isinstance(value, (types.MethodType, types.MethodWrapperType, types.BuiltinMethodType)) \
        and value.__self__ is obj


def _super_getattr_rrule(cell: CoDual, obj: CoDual, name: CoDual) -> tuple[CoDual, Callable]:
    value = super_getattr(cell.primal, obj.primal, name.primal)
    if bound_to(value, obj.primal):
        out = CoDual(value, Tangent(type(value), {"__self__": obj.fdata}) if obj.fdata is not NoFData else NoFData)

        def pullback(dy: Any) -> tuple:
            self_r = dy.fields.get("__self__", NoRData) if isinstance(dy, Tangent) else NoRData
            return NoRData, NoRData, self_r, NoRData

        return out, pullback
    from .local_classes import class_level_read  # (it imports this module)

    found = class_level_read(value)  # a class attribute a class made in the function computed
    if found is not None:
        return found[0], lambda dy: (NoRData, NoRData, found[1](dy), NoRData)
    return output(value), lambda dy: (NoRData,) * 4


def _super_getattr_frule(cell: Dual, obj: Dual, name: Dual) -> Dual:
    from .core import primal

    o = primal(obj)
    value = super_getattr(primal(cell), o, primal(name))
    if bound_to(value, o):
        t = obj.tangent if isinstance(obj, Dual) else zero_tangent(o)
        return Dual(value, NoTangent if t is NoTangent else Tangent(type(value), {"__self__": t}))
    from .local_classes import class_level_tangent  # (it imports this module)

    t = class_level_tangent(value)  # a class attribute a class made in the function computed
    return Dual(value, zero_tangent(value) if t is None else t)


register_rrule(super_getattr, _super_getattr_rrule)
register_frule(super_getattr, _super_getattr_frule)
register_frule(cell_set, _cell_set_frule)
register_rrule(mklist, _mklist_rrule)
register_frule(mklist, _mklist_frule)
register_rrule(mktuple, _mktuple_rrule)
register_frule(mktuple, _mktuple_frule)
register_rrule(mkdict, _mkdict_rrule)
register_frule(mkdict, lambda: Dual({}, {}))
register_rrule(cell_get, _cell_get_rrule)
register_rrule(cell_set, _cell_set_rrule)
register_frule(cell_get, _cell_get_frule)
register_rrule(as_sequence, _as_sequence_rrule)
register_frule(as_sequence, _as_sequence_frule)
for _f in (check_unpack, min_len, dict_keys, with_bound, with_inputs, holds_float_data,
           manager_holding_floats, manager_entered_by_methods, made_when_run_entered_by_methods,
           made_by_a_python_method):  # (mkset: containers/sets.py; globals: transform/global_writes.py)
    register_rrule(_f, _zero_rrule(_f))
    register_frule(_f, _zero_frule(_f))




# The helpers of rewritten match, except* and async code (frontend/syntax_rewrites.py): type tests
# and exception bookkeeping, without derivatives.
from ..ir import primitives as _rewrites  # noqa: E402
from ..tangents import register_nondifferentiable_type  # noqa: E402
from .second_order import zero as _second_order_zero  # noqa: E402

_REWRITE_CHECKS = (_rewrites.match_sequence, _rewrites.match_mapping, _rewrites.match_args, _rewrites.match_unique,
                   _rewrites.star_start, _rewrites.star_match,
                   _rewrites.star_reraise, _rewrites.star_raised, _rewrites.star_result,
                   _rewrites.plain_data, _rewrites.immutable_data)  # (the guard of eager generators: frontend/generator_eagerness.py)
for _f in _REWRITE_CHECKS:
    register_rrule(_f, _zero_rrule(_f))
    register_frule(_f, _zero_frule(_f))
_second_order_zero(*_REWRITE_CHECKS)
register_nondifferentiable_type(_rewrites.ExceptStar)
register_nondifferentiable_type(types.TracebackType)  # (passed to __aexit__ by a rewritten async with)







# Second order: the builders are linear in their elements; values captured from an enclosing
# function are constants of forward-over-reverse; the checks have no derivative.
# (cell_get, cell_set and super_getattr reach into dual programs: transform/lifting.py has their rules)
from .second_order import linear as _so_linear, zero as _so_zero  # noqa: E402

_so_linear(mklist, mktuple, mkdict)  # (as_sequence: transform/lifting_objects.py, user iterators)
_so_zero(check_unpack, min_len, dict_keys, with_bound, with_inputs, holds_float_data,
         manager_holding_floats, manager_entered_by_methods, made_when_run_entered_by_methods,
         made_by_a_python_method)  # (np.vectorize: numpy_vectorize.py)
