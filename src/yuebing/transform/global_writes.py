"""Rules of the globals that functions write with a ``global`` statement (``ir/primitives.py``:
``global_get``, ``global_set``, ``global_del``; the normaliser emits them, ``frontend/global_writes.py``).

A write keeps the value's tangent for the call in a slot of the outside state
(``rules/outside_state.global_slot``, one per module global and role), and a later read in the
call -- in the writer, a callee, a sibling function, another module reading ``mod.G`` -- shares
it, as a read of a local variable would:

* reverse: a read hands out the slot's fdata and gathers its cotangent in the slot; the write's
  pullback gives what the slot gathered to the value written and puts the slot back as it was
  before the write (reads before it gather into the earlier value's slot);
* forward: a write puts the value's tangent in the slot, a read takes it;
* second order: the reverse rule runs on the fdata and on the fdata tangents (a slot each), the
  tangent goes through a slot of its own.

A global the call has not written is a constant, read as plain global loads are (``runtime``).
The module's global holds what a plain call leaves there: writes are not undone (a container or
array written is kept as the forward pass left it: ``outside_state.leave``).

A write carrying derivatives in a pass nested in another (``yb.grad`` inside a differentiated
function) is followed in that pass. Refused, naming the global: a read in the passes around it of
the value it wrote (``outside_state.written_by_nested_pass``), a read in a nested pass of what the
outer pass wrote, and such writes or reads in third order (``third_order.py``); a write carrying derivatives when a function was
compiled reading that global as a constant and still running when the write was found
(``frontend.global_writes.stale_reader``). A reader not running then is compiled again at its
next call (``_relower``: a notebook cell defining a writer after a reader was differentiated).
"""
from __future__ import annotations

import sys
import types
from typing import Any, Callable

from ..frontend import global_writes as _found_writes
from ..frontend.global_writes import note_written, stale_reader
from ..ir.globals_view import global_names
from ..ir.primitives import global_defined, global_del, global_get, global_set, namespace_of
from ..rules import objects as _objects, outside_state
from ..rules.batched import BATCH, is_batched
from ..rules.core import CoDual, Dual, primal, register_frule, register_rrule
from ..rules.declare import nondifferentiable
from ..rules.primitives import _as_tangent, _zeroed
from ..rules.second_order import _register, zero as _so_zero
from ..rules.util import output, slot_rdata, slot_tangent
from ..tangents import NoFData, NoRData, NoTangent, fdata, increment, zero_tangent
from .forward_runtime import global_tangent, zero_tangent_of
from .lifting import _primal_codual, _with_fdata_tangents
from .globals_and_cells import global_fdata, read_only

_NOTHING = (NoRData, NoRData, NoRData)


def carries_derivative(value: Any) -> bool:
    """Whether ``value`` has a tangent (a float, a float array, a list or object holding them)."""
    try:
        return zero_tangent(value) is not NoTangent
    except TypeError:
        return False


def _lost(name: str, why: str, advice: str) -> TypeError:
    return TypeError(f"yuebing cannot follow the derivative of the global {name!r}: {why}. What to do: {advice}.")


def _check_write(namespace: dict, name: str, value: Any) -> None:
    note_written(namespace, name)  # (a name computed when it runs: globals()[k] = v)
    if not carries_derivative(value):
        return
    reader = stale_reader(namespace, name)
    if reader is not None:
        raise _lost(name, f"{reader} was running code compiled reading it as a constant when it was found written "
                          "(a globals() item or a module's attribute written with a name computed when it runs, a "
                          "module reached through a variable, or a writer reached only then)",
                    f"call again ({reader} is compiled anew at its next call, reading the global's derivative), or "
                    "write it with a constant name (globals()['G'] = x, mod.G = x with mod a global name) or a "
                    "global statement")
    if outside_state.nested():  # followed in the nested pass; the passes around it must not read it
        outside_state.note_nested_write(namespace, name, value)
    if not outside_state.active():
        raise _lost(name, "it is written a value carrying derivatives outside a differentiation pass",
                    "call the function through yb.grad, yb.jvp or yb.hvp")


def _constant(namespace: dict, name: str, value: Any) -> Any:
    """A global the call did not write: a constant, as plain global loads read it."""
    if outside_state.nested() and carries_derivative(value) and outside_state.written_by_outer_pass(namespace, name):
        raise _lost(name, "the differentiation around this nested one (yb.grad inside a differentiated function) "
                          "wrote it a value carrying derivatives, which the nested one does not see",
                    "pass the value to the inner function as an argument")
    if carries_derivative(value) and outside_state.written_by_nested_pass(namespace, name, value):
        raise _lost(name, "a differentiation nested in this one (yb.grad inside a differentiated function) wrote "
                          "it the value read here, whose derivative this one does not see",
                    "return the value from the inner function as an auxiliary value (yb.grad(inner, "
                    "has_aux=True) of an inner function returning (value, the global's value)) instead of "
                    "reading the global it wrote")
    return read_only(value)


def _written(role: str, namespace: dict, name: str, value: Any) -> outside_state.GlobalSlot | None:
    """The slot of the global when this call wrote the value it holds."""
    slot = outside_state.global_slot(role, namespace, name)
    return slot if slot is not None and slot.value is value else None


# --------------------------------------------------------------------------------------------
# Reverse
# --------------------------------------------------------------------------------------------


def _get_rrule(fn: CoDual, name: CoDual) -> tuple[CoDual, Callable]:
    namespace, key = namespace_of(fn.primal), name.primal
    value = global_get(fn.primal, key)
    slot = _written("fdata", namespace, key, value)
    if slot is None:
        value = _constant(namespace, key, value)
        return CoDual(value, global_fdata(value)), lambda dy: _NOTHING
    if slot.tangent is NoTangent:
        slot.tangent = zero_tangent(value)

    def pullback(dy: Any) -> tuple:
        if dy is not NoRData:
            slot.tangent = increment(slot.tangent, _as_tangent(value, dy))
        return _NOTHING

    return CoDual(value, fdata(slot.tangent)), pullback


def _set_rrule(fn: CoDual, name: CoDual, value: CoDual) -> tuple[CoDual, Callable]:
    namespace, key = namespace_of(fn.primal), name.primal
    _check_write(namespace, key, value.primal)
    global_set(fn.primal, key, value.primal)
    slot = outside_state.global_slot("fdata", namespace, key, create=carries_derivative(value.primal))
    if slot is None:  # a value without derivatives, no earlier one to put back (or outside a pass)
        return output(None), lambda dy: (NoRData,) * 4
    old = slot.value, slot.tangent
    slot.value, slot.tangent = value.primal, slot_tangent(value)

    def pullback(dy: Any) -> tuple:
        value_r = slot_rdata(slot.tangent)  # the cotangent the reads after the write gathered
        slot.value, slot.tangent = old[0], _zeroed(old[1])
        return NoRData, NoRData, NoRData, value_r

    return output(None), pullback


def _del_rrule(fn: CoDual, name: CoDual) -> tuple[CoDual, Callable]:
    global_del(fn.primal, name.primal)  # (a later read raises NameError; a write starts a new slot)
    return output(None), lambda dy: _NOTHING


# --------------------------------------------------------------------------------------------
# Forward
# --------------------------------------------------------------------------------------------


def _get_frule(fn: Any, name: Any) -> Dual:
    f, key = primal(fn), primal(name)
    value = global_get(f, key)
    slot = _written("tangent", namespace_of(f), key, value)
    if slot is None:
        value = _constant(namespace_of(f), key, value)
        return Dual(value, global_tangent(value))
    return Dual(value, slot.tangent)


def _set_frule(fn: Any, name: Any, value: Any) -> Dual:
    f, key, v = primal(fn), primal(name), primal(value)
    _check_write(namespace_of(f), key, v)
    global_set(f, key, v)
    slot = outside_state.global_slot("tangent", namespace_of(f), key, create=carries_derivative(v))
    if slot is not None:
        slot.value = v
        slot.tangent = value.tangent if isinstance(value, Dual) and value.tangent is not NoTangent else zero_tangent_of(v)
    return Dual(None, NoTangent)


def _del_frule(fn: Any, name: Any) -> Dual:
    global_del(primal(fn), primal(name))
    return Dual(None, NoTangent)


# --------------------------------------------------------------------------------------------
# Second order (forward over reverse)
# --------------------------------------------------------------------------------------------


def _unbatched(name: str) -> Exception:
    """A batched second-order pass (``yb.hessian``'s columns B at a time) does not carry a written
    global's tangents: the pass is dropped and each column computed one pass at a time."""
    from .batched_second_order import Unbatched

    return Unbatched(f"the global {name!r}, written with a global statement")


def _get_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """A read: fdata and fdata tangent from the reverse rule's slots, the tangent from its own."""
    fn, key = args[0][0], args[1][0]
    slot = _written("tangent", namespace_of(fn), key, global_get(fn, key))
    if slot is not None and slot.tangent is not NoTangent and (BATCH.size or is_batched(slot.tangent, slot.value)):
        raise _unbatched(key)  # (a read of constants runs unbatched inside a batched pass)
    out1, out2, pullback = _with_fdata_tangents(_primal_codual(f), args)
    y = out1.primal
    y_d = slot.tangent if slot is not None else global_tangent(y)
    if y_d is NoTangent and type(y) is float:
        y_d = 0.0
    return (y, out1.fdata, y_d, out2.fdata), pullback


def _set_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """A write: the reverse rule on the fdata and on the fdata tangents, the tangent into its slot
    (put back by the pullback)."""
    fn, key, value = args[0][0], args[1][0], args[2]
    if BATCH.size and carries_derivative(value[0]):
        raise _unbatched(key)  # before anything is written: the columns are then computed one at a time
    out1, out2, pullback = _with_fdata_tangents(_primal_codual(f), args)
    slot = outside_state.global_slot("tangent", namespace_of(fn), key, create=carries_derivative(value[0]))
    if slot is None:
        return (None, NoFData, NoTangent, NoFData), pullback
    old = slot.value, slot.tangent
    slot.value, slot.tangent = value[0], value[2] if value[2] is not NoTangent else zero_tangent_of(value[0])

    def pullback2(dy: Any, dy_d: Any) -> tuple:
        result = pullback(dy, dy_d)
        slot.value, slot.tangent = old
        return result

    return (None, NoFData, NoTangent, NoFData), pullback2


def _globals_refused(*args: Any, **kwargs: Any) -> Any:
    """``globals()`` in differentiated code: a write through it (``globals()['G'] = x``) would not
    give later reads its derivative, so it is refused, pointing at the statement that is followed."""
    raise TypeError("yuebing cannot follow globals() in a differentiated function other than through its items "
                    "(globals()[k], read, written or deleted; globals().update(...), globals().get(k, d), k in "
                    "globals(); the same on g where g = globals() is used only so): a global written through it "
                    "otherwise would not carry its derivative "
                    "to later reads. What to do: use its items, write it with a global statement (global G; G = x), "
                    "or read it by its name.")


def _globals_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    return _globals_refused()


register_rrule(globals, _globals_refused)
register_frule(globals, _globals_refused)
_register((globals,), _globals_dual)
register_rrule(global_get, _get_rrule)
register_rrule(global_set, _set_rrule)
register_rrule(global_del, _del_rrule)
register_frule(global_get, _get_frule)
register_frule(global_set, _set_frule)
register_frule(global_del, _del_frule)
_register((global_get,), _get_dual)
_register((global_set,), _set_dual)
_so_zero(global_del)
nondifferentiable(global_defined, global_names)  # name in globals(): a bool; the names: strings


def check_third_order(f: Any, values: list) -> None:
    """Third order (``yb.hvp`` over a function calling ``yb.grad``) reads globals as constants: a
    write carrying derivatives, or a read of what a pass wrote, is refused naming the global."""
    if f is global_set and carries_derivative(values[2]) or f is global_get and carries_derivative(
            global_get(*values[:2])) and outside_state.written_by_outer_pass(namespace_of(values[0]), values[1], True):
        raise _lost(values[1], "third derivatives (yb.hvp/yb.hessian of a function that calls yb.grad) do not follow "
                               "globals written with a global statement",
                    "return the value instead of writing it to a global, or take the Hessian of the gradient's "
                    "function itself")


# --------------------------------------------------------------------------------------------
# Readers compiled before a global was found written
# --------------------------------------------------------------------------------------------


def _relower(readers: dict) -> str | None:
    """A global the ``readers`` (``{qualname: code}``) were compiled reading as a constant is now
    known written: what was generated from their code is dropped in every mode, so their next call
    compiles them anew with ``global_get``. The name of one of them running (its old code on the
    stack reads the global as a constant: the rest of that call refuses a write carrying
    derivatives, ``stale_reader``), or None."""
    from . import dual_vectorize
    from .direct_calls import FORWARD, REVERSE, SECOND
    from .forward_runtime import _SPECULATIVE
    from .protocols import CodeCache

    for code in readers.values():
        for cache in [*CodeCache.every, REVERSE, FORWARD, SECOND]:
            cache.forget(code)
        _SPECULATIVE.pop(code, None)
        dual_vectorize._IR.pop(code, None)
    return _running(readers)


def _running(readers: dict) -> str | None:
    """The qualified name of one of ``readers`` whose generated code is on the stack, or None."""
    from .codegen import GENERATED_FROM

    wanted = {(code.co_filename, qualname) for qualname, code in readers.items()}
    frame: types.FrameType | None = sys._getframe(1)
    while frame is not None:
        origin = GENERATED_FROM.get(frame.f_code.co_filename)
        if origin is not None and (origin[0], origin[2]) in wanted:
            return origin[2]
        frame = frame.f_back
    return None


_found_writes.RELOWER = _relower


# --------------------------------------------------------------------------------------------
# Attribute writes on a module found only when they run
# --------------------------------------------------------------------------------------------


def _module_write_checked(module: Any, name: Any) -> None:
    """``setattr(mod, name, x)`` (``m.G = x`` with ``m`` a module bound in a branch, or computed),
    written as ``global_set`` writes: the module learns the name written (functions compiled
    reading it as a constant are compiled anew, or refused in the call running them: ``_check_write``)."""
    if not isinstance(name, str):
        raise TypeError(f"attribute name must be string, not '{type(name).__name__}'")


def _module_setattr_rrule(obj: CoDual, name: Any, value: Any) -> tuple[CoDual, Callable]:
    _module_write_checked(obj.primal, primal(name))
    value = value if isinstance(value, CoDual) else CoDual(value, NoFData)
    out, pullback = _set_rrule(CoDual(obj.primal, NoFData), CoDual(primal(name), NoFData), value)
    return out, lambda dy: (NoRData, *pullback(dy)[1:])


def _module_setattr_frule(obj: Any, name: Any, value: Any) -> Dual:
    _module_write_checked(primal(obj), primal(name))
    return _set_frule(primal(obj), primal(name), value)


def module_setattr_dual(args: tuple) -> tuple:
    """Second order of ``setattr(module, name, value)`` (``lifting_objects._setattr`` asks here)."""
    _module_write_checked(args[0][0], args[1][0])
    return _set_dual((global_set, NoFData, NoTangent, NoFData), args, {})


def _module_getattr_rrule(obj: CoDual, name: Any) -> tuple[CoDual, Callable] | None:
    """``mod.G`` read through a variable or ``getattr`` (not lowered to ``global_get``): the
    derivative this call's write gave it; None when this call did not write it (a constant)."""
    module, key = obj.primal, primal(name)
    if not isinstance(key, str) or _written("fdata", vars(module), key, vars(module).get(key, _ABSENT)) is None:
        return None
    return _get_rrule(CoDual(module, NoFData), CoDual(key, NoFData))


def _module_getattr_frule(obj: Any, name: Any) -> Dual | None:
    module, key = primal(obj), primal(name)
    if not isinstance(key, str) or _written("tangent", vars(module), key, vars(module).get(key, _ABSENT)) is None:
        return None
    return _get_frule(module, key)


def module_getattr_dual(args: tuple) -> tuple | None:
    """Second order of ``getattr(module, name)`` (``lifting_objects._getattr`` asks here): a global
    this call wrote, with its derivatives; None for any other."""
    module, key = args[0][0], args[1][0]
    if not isinstance(key, str) or _written("tangent", vars(module), key, vars(module).get(key, _ABSENT)) is None:
        return None
    return _get_dual((global_get, NoFData, NoTangent, NoFData), args, {})


_ABSENT = object()  # (a name the module does not hold: no slot holds it)
_objects.MODULE_SETATTR.update(rrule=_module_setattr_rrule, frule=_module_setattr_frule,
                               read_rrule=_module_getattr_rrule, read_frule=_module_getattr_frule)
