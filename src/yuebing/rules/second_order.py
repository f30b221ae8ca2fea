"""Second-order (forward-over-reverse) declarations: which class each primitive falls in.

A second-order rule takes 4-tuples ``(primal, fdata, tangent, fdata_tangent)`` and returns the
output 4-tuple and a dual pullback ``(dy, dy_tangent) -> (rdatas, rdata_tangents)``: the forward
rule of the primitive's reverse rule. We do not write one per primitive. Each primitive falls in
one of a few classes, declared here as data; ``transform/lifting.py`` builds the rule of each
class from the primitive's existing first-order rules:

* ``linear`` -- the function is linear in its differentiable arguments (indexing, reshapes,
  sums, concatenation, container construction, ``x[i] = v``): its tangent program *is* the
  primal program, so the rule runs the ordinary reverse rule twice, once on the primals and fdata
  and once on the tangents and fdata tangents (mutations of the tangent mirror the primal's).
* ``multilinear`` -- linear in each factor (``matmul``, ``dot``, ``einsum``, ``kron``): the
  ordinary reverse rule run with one factor replaced by its tangent gives both the output tangent
  and the second-order cotangent terms.
* ``selection`` -- returns some of its arguments, chosen by their values (``max``, ``sorted``).
* elementwise functions declared with ``elementwise(f, *partials)`` (``rules/declare.py``): the
  cotangent tangent is ``dy_tangent * partial + dy * d(partial)``, where ``d(partial)`` comes from
  the forward transform of the partial itself (it is ordinary NumPy code); each product follows
  the strong-zero rule (``declare.strong_product``).
* zero-derivative functions (``nondifferentiable``, or ``zero(...)``) stay zero.
* ``with_vjp(f, vjp)`` -- a nonlinear primitive whose cotangent map is written as ordinary NumPy
  code ``vjp(g, y, *xs)`` (the same function its first-order pullback calls); its forward
  derivative comes from the forward transform. That runs the first-order work twice (the forward
  rule for the output tangent, then the forward transform of the map, which factorises or inverts
  again); ``with_vjp(f, vjp, direct=...)`` adds the second-order formula written out, which
  computes the primal, the first-order and the tangent parts once (``direct``, the ``direct``
  class of ``docs/rules.md``; the map's forward transform where it returns None).
* ``defined_by(f, definition)`` -- the second order of a Python function computing the same.
* ``special`` -- a rule written out (random draws, objects, closure cells: ``_register``).

The declarations live next to the first-order rules, at the end of each domain file (one line per
function, in a "Second order" section); this file holds the common declarations of operators and
containers. ``docs/rules.md`` lists each function's class. A primitive in none of these classes
raises ``SecondOrderError`` naming it. This module imports nothing from ``transform/``.
"""
from __future__ import annotations

import dataclasses
import operator
import types
from typing import Any, Callable

import numpy as np

from ..tangents import NoRData
from .core import CoDual, SecondOrderError
from .declare import ELEMENTWISE_PARTIALS, ZERO_DERIVATIVE
from .util import accumulate, call_on_primals, defined_rrule, fit_tangent, is_differentiable, out_cotangent, zero_fdata

Rule = Callable[[tuple, tuple, dict], tuple]


@dataclasses.dataclass(frozen=True, eq=False)
class SecondOrder:
    """How the second-order rule of a primitive is made (``transform/lifting.py`` makes it).

    ``kind`` names the class (see the module docstring). ``data``/``stored``: the linear class's
    value positions; ``function``: the primitive (elementwise, in_place, with_vjp); ``partials``, ``vjp``, ``definition``: the
    class's formula (an elementwise primitive's partials, when not given, are
    ``declare.ELEMENTWISE_PARTIALS``'); ``rule``: a special rule written out; ``check(out, args, kwargs)``: a refusal
    a zero-class rule runs after the call (random draws whose parameters move); ``delegate(args,
    kwargs)``: the Python function a call is differentiated as instead, or None (``np.sum(A)`` of an
    object NumPy hands to its own ``sum``).
    """

    kind: str
    data: tuple = ()
    stored: tuple = ()
    function: Any = None
    partials: tuple = ()
    vjp: Callable | None = None
    definition: Callable | None = None
    rule: Rule | None = None
    check: Callable | None = None
    direct: Callable | None = None
    delegate: Callable | None = None

    @property
    def label(self) -> str:
        """The class as ``docs/rules.md`` names it."""
        if self.kind == "special":
            return getattr(self.rule, "second_order_kind", "special")
        if self.kind == "vjp" and self.direct is not None:
            return "direct"
        return {"in_place": "elementwise"}.get(self.kind, self.kind)


_BY_FUNCTION: dict[Any, SecondOrder] = {}
_BY_METHOD: dict[tuple[type, str], SecondOrder] = {}
_ZERO = SecondOrder("zero")
_ELEMENTWISE: dict[Any, SecondOrder] = {}  # made on first lookup, from declare.ELEMENTWISE_PARTIALS


def _error(message: str) -> Exception:
    return SecondOrderError(message)


def declare(targets: tuple, declaration: SecondOrder) -> None:
    """Record ``declaration`` for each target: a function, or a ``(type, method name)`` pair."""
    for target in targets:
        if isinstance(target, tuple):
            _BY_METHOD[target] = declaration
        else:
            _BY_FUNCTION[target] = declaration


def _register(targets: tuple, rule: Rule) -> None:
    """Declare a special second-order rule, written out (``rule(f4, args4, kwargs4)``)."""
    declare(targets, SecondOrder("special", rule=rule))


def zero(*targets: Any, check: Callable | None = None) -> None:
    """Declare functions whose tangent is zero in second order (their first-order rule stays);
    ``check(out, args, kwargs)`` may refuse a call after it ran (the call is then undone)."""
    declare(targets, SecondOrder("zero", check=check) if check is not None else _ZERO)


def linear(*targets: Any, data: tuple = (), stored: tuple = (), delegate: Callable | None = None) -> None:
    """Declare functions (or ``(type, method)`` pairs) linear in their differentiable arguments.

    Integer arguments are passed to the tangent call as they are (axes, indices, shapes), except
    at the positions and keyword names in ``data``, whose integers are values read as numbers
    (``sum(xs, start=1)``, ``np.array([x, 1])``: ints there and inside lists become 0), and in
    ``stored``, values written into a container (``y[0] = 1``, ``lst.append(1)``: an int becomes
    0; a list is stored as its own tangent, keeping its identity). ``delegate(args, kwargs)``
    (the primals): a Python function the call is differentiated as instead, like user code, or None.
    """
    declare(targets, SecondOrder("linear", data=data, stored=stored, delegate=delegate))


def multilinear(*targets: Any) -> None:
    """Declare functions linear in each of their differentiable arguments separately."""
    declare(targets, SecondOrder("multilinear"))


def selection(*targets: Any, calling_key: types.FunctionType | None = None) -> None:
    """Declare functions that return (or gather) some of their arguments' values, chosen by the
    primal values (``max``, ``min``, ``sorted``): linear given that choice, which small changes
    do not alter. The ordinary rule runs once with the fdata and once with the fdata tangents (on
    the same primals: the same choice), and the forward rule gives the output's tangent. They
    must not mutate their arguments. ``calling_key``: the Python definition that runs instead,
    differentiated like user code, when the call's ``key=`` may change data
    (``rules/_key_functions.py``)."""
    declare(targets, SecondOrder("selection", definition=calling_key))


def with_vjp(f: Any, vjp: Callable, direct: Callable | None = None) -> None:
    """Declare nonlinear ``f`` with its cotangent map ``vjp(g, y, *xs) -> tuple`` written as
    ordinary, differentiable NumPy code: ``xs`` are the arguments bound to the positional
    parameters of ``f``'s first-order rule (call-site keywords included, defaults filled in), and
    the tuple has one cotangent per parameter (None, or a missing trailing entry, for none).

    ``direct(xs, x_ds)``, optional: the second-order formula written out, tried first. ``xs`` are
    the call's primals bound to positional parameters (as passed, or, when the call passes
    keywords, all parameters with defaults filled in), ``x_ds`` their tangents (``NoTangent`` for
    none). It returns None where it does not apply (the cotangent
    map's forward transform then runs), or ``(y, y_d, pullback)`` with ``pullback(g, g_d) ->
    (cotangents, cotangent tangents)``, one entry per argument of ``xs`` (None for none), after
    computing ``y`` exactly as ``f`` does."""
    function = getattr(f[0], f[1]) if isinstance(f, tuple) else f  # (type, method): unbound
    declare((f,), SecondOrder("vjp", function=function, vjp=vjp, direct=direct))


def run_direct(direct: Callable, args: tuple) -> tuple | None:
    """The output 4-tuple and dual pullback of ``with_vjp``'s ``direct`` formula on 4-tuple
    ``args``, or None where it does not apply: fresh fdata for the output, the cotangents and their
    tangents gathered into the arguments' fdata (rdata for numbers)."""
    made = direct(tuple(a[0] for a in args), tuple(a[2] for a in args))
    if made is None:
        return None
    y, y_d, direct_pullback = made
    out = (y, zero_fdata(y), y_d, zero_fdata(y))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        g, g_d = out_cotangent(CoDual(y, out[1]), dy), out_cotangent(CoDual(y, out[3]), dy_d)
        rs, rsd = [NoRData] * (len(args) + 1), [NoRData] * (len(args) + 1)
        for k, (a, c, c_d) in enumerate(zip(args, *direct_pullback(g, g_d)), start=1):
            if c is not None and is_differentiable(a[0]):
                rs[k] = accumulate(CoDual(a[0], a[1]), c)
                rsd[k] = accumulate(CoDual(a[0], a[3]), 0.0 if c_d is None else c_d)
        return tuple(rs), tuple(rsd)

    return out, pullback


def defined_by(target: Any, definition: types.FunctionType) -> None:
    """Declare ``target`` (a function or ``(type, method)``) whose second order is that of the
    Python function ``definition``: the same computation written with covered functions (``map``
    as a list comprehension, an in-place sort as an assignment of ``np.sort``), differentiated by
    a dual rule like user code. ``definition`` takes the target's arguments (a method's owner
    first) and must return the same values and mutate the same way."""
    declare((target,), SecondOrder("python", definition=definition))


def defined_as(target: Any, definition: types.FunctionType, validate: bool | Callable = False) -> None:
    """Declare ``target`` (a C function, or Python code yuebing cannot derive) to be differentiated,
    in every mode, as the Python function ``definition``: the same arguments, the same values,
    written with covered constructs (``itertools`` as list building, ``functools.reduce`` as a
    loop, a distribution's ``logpdf`` in NumPy). Reverse and forward mode call the transforms on
    ``definition`` (through the ``core.rrule``/``core.frule`` fallback); second order is
    ``defined_by``. ``validate``: call ``target`` itself on the primals first, for its own errors on
    bad arguments (shapes, dimensions); a function: call it instead (a check free of side effects)."""
    from . import core

    def check(args: tuple, kwargs: dict) -> None:
        if validate:
            call_on_primals(target if validate is True else validate, args, kwargs)

    def rrule(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        return defined_rrule(definition, *args, **kwargs)

    def frule(*args: Any, **kwargs: Any) -> Any:
        check(args, kwargs)
        out = core.frule(definition, *args, **kwargs)
        if isinstance(out.primal, (np.floating, np.complexfloating)):  # a NumPy scalar's tangent: a number
            return core.Dual(out.primal, fit_tangent(out.tangent, out.primal))
        return out  # arrays as they are: a view's tangent is the same view of the input's

    label = f"{target[0].__qualname__}.{target[1]}" if isinstance(target, tuple) else getattr(target, "__qualname__", target)
    rrule.__qualname__ = frule.__qualname__ = f"{label} as {definition.__qualname__}"
    frule.definition, frule.check = definition, check  # type: ignore[attr-defined] - batched forward mode runs them
    core.register_rrule(target, rrule)
    core.register_frule(target, frule)
    defined_by(target, definition)


#: forward derivatives written as NumPy code, for third order (``transform/third_order.py``),
#: where the cotangent map cannot serve: ``definition(x1, t1, x2, t2, ...) -> (value, tangent)``
JVP_DEFINITIONS: dict[Any, types.FunctionType] = {}


def jvp_defined_by(target: Any, definition: types.FunctionType) -> None:
    """Declare the forward derivative of ``target`` as ordinary NumPy code (each argument
    followed by its tangent, ``NoTangent`` for none), for third derivatives of a primitive whose
    cotangent map calls the primitive itself (``solve``'s solves)."""
    JVP_DEFINITIONS[target] = definition


# --------------------------------------------------------------------------------------------
# Lookup
# --------------------------------------------------------------------------------------------


def _method_key(f: Any) -> tuple[type, str, Any] | None:
    """``(type, name, owner)`` of a builtin method: ``owner`` is None for an unbound one."""
    if isinstance(f, (types.MethodDescriptorType, types.WrapperDescriptorType)):
        return f.__objclass__, f.__name__, None
    owner = getattr(f, "__self__", None)
    if owner is not None and isinstance(f, (types.BuiltinMethodType, types.MethodWrapperType)) \
            and not isinstance(owner, types.ModuleType):
        return type(owner), f.__name__, owner
    if isinstance(f, types.MethodType) and not isinstance(f.__func__, types.FunctionType) \
            and not isinstance(owner, types.ModuleType):  # a Cython method (np.random.Generator)
        return type(owner), f.__func__.__name__, owner
    return None


def class_method_owner(owner: Any, name: str) -> tuple:
    """The classes of ``owner``'s MRO whose ``name`` is a classmethod of a C class, when ``owner`` is
    the class it is bound to (``itertools.chain.from_iterable``): declared for the class itself,
    ``(chain, "from_iterable")``, looked up before its metaclass's entries (as ``rules.core`` does)."""
    if not isinstance(owner, type):
        return ()
    return tuple(base for base in owner.__mro__
                 if isinstance(base.__dict__.get(name), types.ClassMethodDescriptorType))


def _elementwise(f: Any, partials: tuple) -> SecondOrder:
    found = _ELEMENTWISE.get(f)
    if found is None or found.partials is not partials:  # new, or declared again with new partials
        found = _ELEMENTWISE[f] = SecondOrder("elementwise", function=f, partials=partials)
    return found


def declaration_of(f: Any) -> tuple[SecondOrder, Any] | None:
    """``(declaration, owner)`` for callable ``f``, or None. ``owner`` is the object a builtin
    method is bound to (the rule then takes the unbound method, with the owner as first argument)."""
    try:
        found = _BY_FUNCTION.get(f)
        if found is not None:
            return found, None
        if f in ZERO_DERIVATIVE:
            return _ZERO, None
        partials = ELEMENTWISE_PARTIALS.get(f)
        if partials is not None:
            return _elementwise(f, partials), None
    except TypeError:  # unhashable callable
        pass
    key = _method_key(f)
    if key is not None:
        tp, name, owner = key
        for base in (*class_method_owner(owner, name), *tp.__mro__):
            found = _BY_METHOD.get((base, name))
            if found is None and (base, name) in ZERO_DERIVATIVE:
                found = _ZERO
            if found is None and owner is not None:  # declared for the unbound method (np.ndarray.std)
                unbound = base.__dict__.get(name)
                found = _BY_FUNCTION.get(unbound) if unbound is not None else None
                if found is None and isinstance(unbound, types.WrapperDescriptorType) \
                        and unbound in ZERO_DERIVATIVE and unbound.__get__(owner) == f:
                    found = _ZERO  # a zero slot bound by super(): object.__init__
            if found is not None:
                return found, owner
    return None


# --------------------------------------------------------------------------------------------
# Declarations of operators and containers
# --------------------------------------------------------------------------------------------

#: the nonlinear in-place operators and the out-of-place operator each computes
OUT_OF_PLACE = {operator.imul: operator.mul, operator.itruediv: operator.truediv, operator.ipow: operator.pow,
                operator.ifloordiv: operator.floordiv, operator.imod: operator.mod}

# partials are read when the rule is made (transform/lifting.py), not here: the operator rule
# modules that declare them may be imported after this one
declare((operator.abs,), SecondOrder("elementwise", function=abs))  # the same function

linear(
    operator.getitem, operator.neg, operator.pos,
    np.sum, np.mean, np.trace, np.diag, np.diagonal, np.tril, np.triu, np.cumsum,
    np.reshape, np.ravel, np.transpose, np.swapaxes, np.moveaxis, np.squeeze, np.expand_dims,
    np.atleast_1d, np.atleast_2d, np.copy, np.broadcast_to, np.flip, np.roll, np.tile, np.repeat,
    np.diff, np.real, zip, enumerate,
    (np.ndarray, "sum"), (np.ndarray, "mean"), (np.ndarray, "reshape"), (np.ndarray, "ravel"),
    (np.ndarray, "flatten"), (np.ndarray, "transpose"), (np.ndarray, "copy"), (np.ndarray, "trace"),
    (np.ndarray, "squeeze"), (np.ndarray, "cumsum"), (np.ndarray, "item"),
    (np.ndarray, "__getitem__"), (list, "pop"), (list, "copy"), (list, "reverse"),
    (list, "__getitem__"), (dict, "__getitem__"), (dict, "copy"), (dict, "values"), (dict, "items"),
    (dict, "keys"),
)
# the value written is data: an int written into a float container has tangent 0
linear(operator.setitem, (np.ndarray, "__setitem__"), (list, "__setitem__"), (dict, "__setitem__"),
       (list, "insert"), (dict, "get"), stored=(2,))
linear((list, "append"), (np.ndarray, "fill"), stored=(1,))
linear((list, "extend"), operator.iadd, operator.isub, data=(1,))
linear(np.where, data=(1, 2))
for _iop in OUT_OF_PLACE:
    declare((_iop,), SecondOrder("in_place", function=_iop))


linear(sum, data=(1, "start"))
linear(float, data=(0,))  # float(1), float(flag): an int or bool is a value, of tangent 0
linear(list, tuple, dict, data=(0,))
linear(np.array, np.asarray, np.concatenate, np.stack, np.vstack, np.hstack, np.column_stack, data=(0,))

multilinear(operator.matmul, np.matmul, np.dot, np.inner, np.outer, np.kron, np.einsum, np.tensordot,
            np.vdot, (np.ndarray, "dot"))
