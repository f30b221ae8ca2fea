"""Outside state in third order: a module-level dict, list or object (or a closure cell made
outside) that the plain forward program of the function under ``yb.grad`` reaches.

A plain program reads such an object, and its plain tangent, through runtime helpers
(``_pf_global``, ``_pf_gt``, ``_pf_cell_t``...) whose second-order rule gives constants. A
constant made afresh at each read forgets what an earlier read wrote: ``CACHE["k"] = v`` in one
call and ``CACHE["k"]`` returned in a later one lost ``v``'s derivative (22.4 where 50.4 was
right), because the second read's fdata and tangent were new zeros. So the object keeps one
fdata, one tangent and one fdata tangent for the whole pass (``rules/outside_state.shared``, in
roles of their own: the plain program's ``"tangent"`` is the plain tangent ``_pf_gt`` hands
out, a value of the pass), and the pass runs in a scope of its own (``pass_scope``), as every
differentiation pass does: its plain tangents are its own, never the outer pass's. (``yb.jvp``
inside ``yb.hvp`` runs such a pass in the outer pass's forward part: there, the outer scope's
record of what it reached took in the user's module namespace, and its redo emptied the builtins.)
"""
from __future__ import annotations

import contextlib
import types
from typing import Any, Callable, Iterator

from ..ir.primitives import cell_get
from ..rules import outside_state
from ..rules.local_classes import CLASS_LEVEL
from ..rules.util import zero_fdata
from ..tangents import NoFData, NoRData, NoTangent
from .globals_and_cells import _CONSTANT_GLOBALS
from .lifting import _zero_tangent_of
from .third_order_composition import _constant

#: the roles of an outside object's second-order parts in the pass's scope
_ROLES = ("third_fdata", "third_tangent", "third_fdata_tangent")


def _shared(value: Any) -> bool:
    """Whether ``value``, read from outside, keeps its parts for the pass: a container, an object
    or a tangent of one, which writes can change (not a number, function, class or other
    callable, nor an array, read as a read-only constant)."""
    return outside_state.active() and not isinstance(value, _CONSTANT_GLOBALS) and not callable(value)


def outside_parts(value: Any) -> tuple:
    """The 4-tuple of ``value`` read from outside state by a plain program: one fdata, tangent
    and fdata tangent per mutable object for the pass, so that what one read writes into them
    is there at the next; an immutable value (a number, a function, a class, an array read as a
    constant) is a constant."""
    if isinstance(value, types.FunctionType) and value.__closure__ and outside_state.active():
        # a closure made outside: its cells are outside state of their own, which its plain
        # program reads (``outside_read``), not boxes of a tangent made afresh here
        return value, NoFData, NoTangent, NoFData
    if not _shared(value):
        return _constant(value)
    fdata, tangent, fdata_tangent = (outside_state.shared(role, value, make)
                                     for role, make in zip(_ROLES, (zero_fdata, _zero_tangent_of, zero_fdata)))
    return value, fdata, tangent, fdata_tangent


def outside_result(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """The second-order rule of a plain program's readers of outside state (a global, its plain
    tangent, a closure cell's): their result as ``outside_parts``."""
    value = f4[0](*(a[0] for a in args), **{k: v[0] for k, v in kwargs.items()})
    return outside_parts(value), lambda dy, dy_d: ((NoRData,) * (len(args) + len(kwargs) + 1),) * 2


def outside_read(call: Any) -> tuple[int, int] | None:
    """``jvp_call``'s rule (``third_order.FOLLOWED_CALLS``) for a plain program's reads of
    outside objects that are no globals: a class's or module's attribute (``Memo.store``, a
    metaclass's ``Single.instances``) and a cell of a closure made outside (the list a
    module-level ``push`` appends to). The value and its plain tangent (the one ``jvp_call``
    gives, shared for the pass) are ``outside_parts``; None for any other call."""
    from .plain_forward import jvp_call

    if not _reads_outside(call):
        return None
    primals = [call.value(s) for pair in call.arg_slots for s in pair]
    value, tangent = jvp_call(call.f, NoTangent, *primals)
    if call.f is getattr and outside_state.registered_by_linked_pass(value, CLASS_LEVEL):
        raise _class_attribute_refusal(primals[0], primals[2])
    c = call.composition
    if _shared(value):
        return c.add(outside_parts(value)), c.add(outside_parts(tangent))
    if call.f is cell_get:  # a constant (a number, an array, a function captured from outside)
        return c.add(_constant(value)), c.add(_constant(_zero_tangent_of(value)))
    return None


def _class_attribute_refusal(owner: Any, name: str) -> Exception:
    from .protocols import NestedDifferentiationError

    owner_name = getattr(owner, "__qualname__", getattr(owner, "__name__", type(owner).__name__))
    return NestedDifferentiationError(
        f"third derivatives (yb.hvp/yb.hessian over yb.grad) do not follow class attribute "
        f"{owner_name}.{name}, which the differentiated function wrote a value carrying derivatives "
        "into and the function under yb.grad reads, yet; pass the value to that function as an argument "
        "(yb.grad(lambda y, v: ...)(y, v)), or take yb.grad or yb.jvp of the outer function")


def _reads_outside(call: Any) -> bool:
    if call.f is cell_get:  # (a plain program reads its own cells as locals: this one is outside's)
        # but in a pass inside another (yb.jvp of x * yb.hvp(lambda y: x * y * y, ...)) the closure
        # may have been made by the code around it, its cells carrying that pass's derivatives,
        # which a constant would drop (2.0 where 4.0 is right): not followed, so refused by name
        return len(call.arg_slots) == 1 and not outside_state.nested()
    if call.f is not getattr or len(call.arg_slots) != 2 or call.keyword_slots:
        return False
    owner, owner_t = (call.value(s) for s in call.arg_slots[0])
    return isinstance(owner, (type, types.ModuleType)) and owner_t is NoTangent


#: an outside object's parts in a third-order pass inside another pass: the outer pass's
_OUTER_PARTS = dict(zip(_ROLES, ("fdata", "tangent", "fdata_tangent")))


@contextlib.contextmanager
def pass_scope(outer: dict | None = None) -> Iterator[None]:
    """The outside-state scope of one third-order pass over a plain program (its forward part:
    the dual pullbacks that run later hold what they need). With ``outer`` (the memo of the
    second-order pass around the call of the gradient function) an outside object's 4-tuple is
    the outer pass's parts of it: a module dict it wrote a value carrying derivatives into gets
    the cotangents of the plain program's reads of it (``outside_state.enter``)."""
    scope = outside_state.enter(link=(outer, _OUTER_PARTS))
    try:
        yield
    finally:
        outside_state.leave(scope)
