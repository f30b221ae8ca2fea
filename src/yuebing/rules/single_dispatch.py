"""``functools.singledispatch`` functions and ``singledispatchmethod`` methods: the call is followed into the implementation the
registry picks for the first argument's class, which is looked up as a plain call. The lookup
takes a class and gives a function (no derivative either way), while differentiating the
dispatcher itself would walk its ``WeakKeyDictionary`` cache and the ``KeyError`` it catches.

A ``singledispatchmethod`` read from an instance (``s.apply``) is a function ``__get__`` makes,
holding the instance in its closure: the ``getattr`` rules give it the instance's derivative data
as a bound method's (``dispatch_method_owner`` tells them), and the call runs the implementation
bound to the instance with that data (``protocols.dispatch``), so an instance holding float data
is differentiated like any method's ``self``."""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

from ..tangents import NoFData, NoRData, NoTangent, zero_tangent
from . import outside_state

from ._dispatch_methods import METHOD_CODE, dispatch_method_owner
from ._float_reach import holds_floats
from .cached_calls import GENERATED_FILES
from .batched import _ALWAYS
from .core import CoDual, Dual, RuleArgumentError, frule_for, primal, rrule_for
from .second_order import _register as special
from .util import output


@functools.singledispatch
def _probe(arg: Any) -> None:
    """A singledispatch function, for the code object every one of them shares."""


_WRAPPER_CODE = _probe.__code__  # functools' ``wrapper(*args, **kw)``, shared by every singledispatch function


def singledispatch_implementation(fn: Any, first: Any) -> Callable | None:
    """The implementation singledispatch function (or method read from its instance) ``fn``
    calls for first argument ``first`` (a primal), or None when ``fn`` is neither. Refused where
    the pick would hold what carries derivatives as a constant: an implementation defined in the
    differentiated function (its captured variables) whose registration this pass did not see."""
    code = getattr(fn, "__code__", None)
    if code is _WRAPPER_CODE and hasattr(fn, "dispatch"):
        chosen = fn.dispatch(first.__class__)
    elif code is METHOD_CODE:  # its closure: the singledispatchmethod and what __get__ was given
        cells = dict(zip(code.co_freevars, (c.cell_contents for c in fn.__closure__)))
        chosen = cells["self"].dispatcher.dispatch(first.__class__).__get__(cells["obj"], cells["cls"])
    else:
        return None
    defined_in = getattr(getattr(chosen, "__func__", chosen), "__code__", None)
    if defined_in is not None and defined_in.co_filename.startswith(GENERATED_FILES) and not _kept_parts(chosen) \
            and holds_floats(_captured(getattr(chosen, "__func__", chosen))):  # (else there is nothing to hold)
        raise _refusal(fn, "an implementation a differentiated function registered in another call (the "
                           "derivative data of what it captures was that call's; it would be held constant)")
    return chosen


def _captured(fn: Any) -> list:
    """The values of the variables function ``fn`` captures (its filled cells)."""
    values = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # (an empty cell)
            continue
    return values


def bound_implementation(fn: Any, chosen: Any) -> bool:
    """Whether ``chosen`` is the implementation of singledispatchmethod ``fn`` bound to an instance
    holding float data: called with ``fn``'s derivative data (its instance's), not as a constant."""
    owner = dispatch_method_owner(fn)
    return owner is not None and getattr(chosen, "__self__", None) is owner and holds_floats([owner])


# ------------------------------------------------------------------------------------------------
# Implementations registered in the differentiated function: their derivative data kept by the pass
# ------------------------------------------------------------------------------------------------

_REGISTER_CODE = _probe.register.__code__  # functools' ``register(cls, func=None)``, of every singledispatch function
_KIND = "singledispatch implementation"  # (outside_state's entries, apart from other registrations)
_ROLES = ("fdata", "tangent", "fdata_tangent")


def is_register(fn: Any) -> bool:
    """Whether ``fn`` is the ``register`` of a singledispatch function (its call is
    ``register_followed``'s)."""
    return getattr(fn, "__code__", None) is _REGISTER_CODE


def register_followed(register: Any, *args: Any) -> Any:
    """``register(*args)`` as Python runs it; its rules keep the derivative data of the function it
    registers for the pass, where the dispatch of a call finds it (``registered_value``)."""
    return register(*args)


def _keep(role: str, values: list, parts: list) -> None:
    for value, part in zip(values, parts):
        if isinstance(value, types.FunctionType) and part is not NoFData and part is not NoTangent \
                and outside_state.active():
            outside_state.register(role, value, part, _KIND)


def _kept_parts(fn: Any) -> bool:
    return any(outside_state.registered(role, fn, _KIND) is not None for role in _ROLES)


def registered_value(chosen: Any, like: Any) -> Any:
    """Implementation ``chosen`` with the derivative data its registration kept, as a value of the
    mode ``like`` (the callee's: a CoDual, a Dual or a second-order 4-tuple) is; None if none kept."""
    if not _kept_parts(chosen):
        return None
    part = {role: outside_state.registered(role, chosen, _KIND) for role in _ROLES}
    if type(like) is tuple:
        return (chosen, part["fdata"] or NoFData, part["tangent"] or NoTangent, part["fdata_tangent"] or NoFData)
    if isinstance(like, CoDual):
        return CoDual(chosen, part["fdata"] or NoFData)
    return Dual(chosen, part["tangent"] or NoTangent)


def _run_register(register: Any, args: tuple, parts: dict) -> tuple:
    """``register(*args)`` on the primals (a CoDual's, a Dual's, a 4-tuple's first), after keeping
    the derivative data ``parts`` gives for each role (a list, one per argument); the result and
    the position of the argument it is (``register(func)`` returns ``func``), or None."""
    primals = [a[0] if type(a) is tuple else primal(a) for a in args]
    for role, part in parts.items():
        _keep(role, primals, part)
    y = primal(register)(*primals)
    at = next((k for k, p in enumerate(primals) if p is y and isinstance(y, types.FunctionType)), None)
    return y, at


@rrule_for(register_followed)
def _register_rrule(register, *args):
    y, i = _run_register(register, args, {"fdata": [a.fdata if isinstance(a, CoDual) else NoFData for a in args]})
    out = output(y) if i is None or not isinstance(args[i], CoDual) else CoDual(y, args[i].fdata)
    return out, lambda dy: (NoRData, NoRData, *(dy if k == i else NoRData for k in range(len(args))))


@frule_for(register_followed)
def _register_frule(register, *args):
    y, i = _run_register(register, args, {"tangent": [a.tangent if isinstance(a, Dual) else NoTangent for a in args]})
    return Dual(y, args[i].tangent if i is not None and isinstance(args[i], Dual) else zero_tangent(y))


def _register_dual(f: tuple, args: tuple, kwargs: dict) -> tuple:
    """Second order: the function's fdata, tangent and fdata tangent kept."""
    register4, rest = args[0], args[1:]
    y, i = _run_register(register4[0], rest, {role: [a[at] for a in rest] for role, at in zip(_ROLES, (1, 2, 3))})
    out = rest[i] if i is not None else (y, NoFData, zero_tangent(y), NoFData)

    def pullback(dy: Any, dy_d: Any) -> tuple:
        return tuple((NoRData, NoRData, *(d if k == i else NoRData for k in range(len(rest)))) for d in (dy, dy_d))

    return out, pullback


special((register_followed,), _register_dual)
_ALWAYS.add(register_followed)  # (batched forward passes: it only moves the function's tangent)


def _refusal(fn: Any, what: str) -> RuleArgumentError:
    name = getattr(fn, "__qualname__", "the function")
    name = getattr(fn, "__name__", name) if ".<locals>." in name else name  # (generated code's own qualname)
    return RuleArgumentError(
        f"{name}: yuebing cannot differentiate {what}. What to do: dispatch with isinstance in a plain "
        "function or method, register the implementation in the call that uses it, or register module-level "
        "implementations that take the captured values as arguments")
