"""Third derivatives: second order of forward mode, and second order of ``yb.grad``.

``yb.hvp``/``yb.hessian`` of a function ``f`` that calls ``grad(g)`` runs the dual pullback of
that call: cotangent ``ybar`` (with tangent ``ybar_dot``) goes back to ``x`` as ``H ybar`` with
tangent ``H ybar_dot + D^3 g[xdot, ybar]`` (plus ``vbar * grad`` terms for ``value_and_grad``).
All of it is one forward-over-reverse pass over ``psi(x, u) = vbar g(x) + D g(x)[u]`` at
``u = ybar``, seeded along ``(xdot, ybar_dot)``: the gradient of ``psi`` in ``x`` is the
cotangent, its Hessian-vector product the cotangent's tangent. ``psi`` is ``g``'s *plain forward
program* (``transform/plain_forward.py``), in which every call is ``jvp_call(f, f_t, a, a_t,
...)``; this file gives ``jvp_call`` its second-order rule, by the class of ``f``:

* a Python function: the second order of its own plain forward program (differentiated like user
  code, so user functions, loops, branches and in-place updates follow);
* ``linear``: the value from ``f`` on the primals, the tangent from ``f`` on the tangents (ints,
  indices and shapes passed as themselves; an int *value* written or summed becomes 0);
* ``multilinear``: the tangent is the sum of ``f`` with one factor replaced by its tangent;
* ``elementwise`` (``declare.elementwise``'s partials): ``sum_k partial_k(*xs, y) * t_k``, with
  the partials differentiated like user code; the nonlinear in-place operators as their
  out-of-place operator written back into the array and its tangent;
* ``zero``: a constant zero tangent; ``defined_by``: its Python definition;
* ``with_vjp``: the tangent ``J t`` is the gradient in ``g`` of ``<vjp(g, y, *xs), t>`` (the
  cotangent map is linear in ``g``), taken by the same third-order gradient call, so the
  derivatives come from the cotangent map's own code; a primitive whose map calls it again has a
  forward definition instead (``jvp_defined_by``: ``solve``, ``math.log``) or is refused.

Each is assembled from calls of the existing second-order rules (``_Composition``,
``third_order_composition.py``), so nothing
here restates a derivative. Other classes (``selection``: ``max``/``min``/``sorted``; objects),
tuple-valued cotangent-map primitives and random draws raise ``NestedDifferentiationError``
naming them.
"""
from __future__ import annotations

import builtins
import operator
import threading
import types
from typing import Any, Callable

import numpy as np

from ..tangents import NoFData, NoRData, NoTangent
from ..tangents.kinds import NONDIFF, primal_kind
from ..ir import primitives as P
from ..rules import array_like, lazy
from ..rules._partial_work import ATTRIBUTE as PARTIAL_CALL
from ..rules.core import describe_callable
from ..rules.declare import ELEMENTWISE_PARTIALS, given_out
from ..rules.differentiated import paired, tangent_array
from ..rules.function_wrappers import cache_function, captures_our_floats, copy_wrapper_attributes, give_cache_attributes
from ..rules.numpy_coverage import THIRD_ORDER_MAPS_FOLLOWED
from ..rules.second_order import JVP_DEFINITIONS, _register
from . import plain_closures, protocols
from .lifting import _MUTATORS, _has_float_data, _zero_ints, _zero_tangent_of, lookup_second_order
from .lifting_objects import _is_field_tangent
from .plain_forward import CLOSURE_ADVICE, STAR, STARSTAR, TANGENT_KEYWORD, jvp_call, plain_forward
from .plain_forward import _refusal as restructure
from .third_order_composition import _MKDICT, _MUL, _SETITEM, _Composition, _constant, _function
from .third_order_outside import outside_read, outside_result
from .third_order_refusals import check_global, local_class_refusal


def _refusal(what: str) -> Exception:
    """Third order does not cover a primitive (or a way of calling it)."""
    from .plain_forward import PRIMITIVE, _refusal as refusal

    return refusal(what, PRIMITIVE)


# --------------------------------------------------------------------------------------------
# The rule of jvp_call
# --------------------------------------------------------------------------------------------


class _Call:
    """``jvp_call``'s arguments as slots: the function, its tangent, each argument and its
    tangent (positional, then keywords)."""

    def __init__(self, args: tuple, kwargs: dict) -> None:
        self.function_slot = 0
        self.inputs = list(args) + list(kwargs.values())
        self.composition = _Composition(self.inputs)
        self.f = args[0][0]
        n = (len(args) - 2) // 2
        self.arg_slots = [(2 + 2 * k, 3 + 2 * k) for k in range(n)]
        names = list(kwargs)
        self.keyword_slots = {k: (len(args) + names.index(k), len(args) + names.index(TANGENT_KEYWORD + k))
                              for k in names if not k.startswith(TANGENT_KEYWORD)}

    def value(self, slot: int) -> Any:
        return self.composition.values[slot][0]


#: calls followed by modules building on this one's compositions, each putting its function here:
#: ``plain_objects.object_call`` (objects of user classes), ``plain_keys.keyed_call`` (a key=);
#: each returns the slot of the call's ``(value, tangent)`` pair or the two slots, or None
FOLLOWED_CALLS: list[Callable] = [outside_read]  # (a class's attribute, an outside cell: third_order_outside.py)


def jvp_rule(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """Second-order rule of ``jvp_call(f, f_t, a, a_t, ..., k=v, _t_k=v_t)``."""
    call = _Call(args, kwargs)
    _unpack_stars(call)
    check_global(call.f, [call.value(a) for a, _ in call.arg_slots])
    if plain_closures.is_plain_closure(call.value(1)):
        return call.composition.pair_output(_plain_closure(call))
    if _not_yet(call.f):
        raise _refusal(f"{describe_callable(call.f)} ({_NOT_YET[call.f]})")
    for follow in FOLLOWED_CALLS:
        followed = follow(call)
        if isinstance(followed, tuple):
            return call.composition.output(*followed)
        if followed is not None:
            return call.composition.pair_output(followed)
    if getattr(call.f, "__module__", None) == "yuebing.ir.local_classes":
        raise local_class_refusal(call.f)
    found = lookup_second_order(call.f)
    if found is None:
        found = _as_dispatcher(call)
    if found is None and isinstance(call.f, type) and type(call.f).__module__ == "builtins" \
            and call.f.__module__ not in ("builtins", "numpy"):
        # (a user's class is followed, plain_objects.object_call: here are a library's, scipy.stats' _SimpleStudentT)
        raise _refusal(f"objects of a library's classes ({call.f.__module__}.{call.f.__qualname__})")
    if found is None and isinstance(call.f, types.FunctionType):
        return call.composition.pair_output(_python_function(call, call.f))
    implementation = _numpy_source(call) if found is None else None
    if implementation is not None:  # a NumPy dispatcher with a Python implementation (np.block)
        call.function_slot = call.composition.add(_function(implementation))
        return call.composition.pair_output(_python_function(call, implementation))
    if found is not None and found[1] is not None:  # a builtin method: unbound, its owner first
        _unbind_method(call, found[1])
    if _draws(call):
        raise _refusal(f"random draws ({describe_callable(call.f)}: each pass would draw new numbers)")
    _array_like_boundary(call)
    if call.f is P.made_exception:
        return call.composition.output(*_exception_made(call))
    rule = found[0] if found is not None else None
    kind = getattr(rule, "second_order_kind", None)
    if kind not in ("linear", "python") and call.f is not getattr:
        _refuse_closure_arguments(call)
    if call.f is getattr and isinstance(call.value(call.arg_slots[0][0]), np.vectorize):
        raise restructure("a method read back from an np.vectorize object (pyfunc, otypes and its other data "
                          "are followed: plain_partials.py)", "call the vectorized function itself, or vec.pyfunc")
    if call.f is getattr and _flat_without_view(call):
        raise restructure("x.flat of an array that is not C-contiguous (rules/flat_iterators.py)",
                          "read np.ravel(x) instead, and write x.flat[i] = v as one statement")
    if found is not None and kind != "linear" and call.f is not getattr and not _has_tangents(call):
        # only constants in (sorted axes, a closure cell of a constant): a constant out. (Not for
        # linear functions or getattr, which keep the identity of a list's tangent: [], lst.append.)
        return call.composition.output(*_zero(call))
    definition = JVP_DEFINITIONS.get(call.f)
    if call.f is sorted:
        return call.composition.pair_output(_sorted_pair(call, definition))
    if definition is not None:
        return call.composition.pair_output(_defined_pair(call, definition))
    if kind == "python" or (kind == "linear" and (delegated := _delegated_definition(call, rule)) is not None):
        # (a linear rule's delegate hands some calls to a Python definition, np.multiply.at's loop:
        # taking them for linear gave 6.02 where -0.67 is right)
        definition = rule.definition if kind == "python" else delegated
        call.function_slot = call.composition.add(_function(definition))
        return call.composition.pair_output(_python_function(call, definition))
    if kind == "elementwise" and hasattr(rule, "in_place_of"):
        pair = _in_place(call, rule.in_place_of)
    elif kind == "elementwise" and not _is_structure_call(call):
        pair = _elementwise(call, rule.partials)
    elif kind in ("linear", "elementwise") or call.f is getattr:
        pair = _linear(call, getattr(rule, "data", ()), getattr(rule, "stored", ()))
    elif kind == "multilinear":
        pair = _multilinear(call)
    elif kind == "zero":
        _refuse_out(call)
        pair = _zero(call)
    elif kind == "vjp":
        pair = _with_vjp(call, rule.vjp)
    elif kind == "selection" and (constant := _selection_of_constants(call)) is not None:
        pair = constant
    else:
        raise _refusal(describe_callable(call.f) if kind is None else f"{describe_callable(call.f)} (a '{kind}' rule)")
    return call.composition.output(*pair)


def _delegated_definition(call: _Call, rule: Any) -> Callable | None:
    """The Python function a linear rule's ``delegate`` hands this call to, or None."""
    delegate = getattr(rule, "delegate", None)
    if delegate is None:
        return None
    args = tuple(call.value(a) for a, _ in call.arg_slots)
    return delegate(args, {k: call.value(v) for k, (v, _) in call.keyword_slots.items()})


def _exception_made(call: _Call) -> tuple[int, int]:
    """``raise E(...)`` (``made_exception``): an exception of values without derivatives is a
    constant; one carrying them is refused (its handler would read them: ``rules/exception_data.py``
    keeps them beside the exception in the other orders, third order does not yet)."""
    if _has_tangents(call):
        cls = call.value(call.arg_slots[0][0])
        raise restructure(f"an exception made of values carrying derivatives ({getattr(cls, '__name__', cls)}(...))",
                          "make the exception of a message string, and keep the values in variables of their own")
    return _zero(call)


def _flat_without_view(call: _Call) -> bool:
    """``getattr(x, "flat")`` of an array with no C-order view (a ``FlatIterator`` in the other orders)."""
    values = [call.value(a) for a, _ in call.arg_slots]
    return len(values) == 2 and isinstance(values[0], np.ndarray) and values[1] == "flat" and values[0].size > 0 \
        and not values[0].flags.c_contiguous


def _as_dispatcher(call: _Call) -> tuple | None:
    """The second-order rule of the NumPy dispatcher whose C implementation the call calls (NumPy's
    Python calls ``_multiarray_umath.concatenate`` itself: ``np.block``), the call made the
    dispatcher's; None if there is none."""
    dispatcher = protocols._dispatcher_of(call.f)
    found = lookup_second_order(dispatcher) if dispatcher is not None else None
    if found is not None:
        call.f = dispatcher
        call.function_slot = call.composition.add(_function(dispatcher))
    return found


def _numpy_source(call: _Call) -> types.FunctionType | None:
    """The Python function NumPy runs for a dispatcher without a rule (``np.block``, ``np.cov``),
    which the other modes differentiate from NumPy's source (``protocols.python_implementation``)."""
    return protocols.python_implementation(call.f, tuple(call.value(a) for a, _ in call.arg_slots),
                                           {k: call.value(a) for k, (a, _) in call.keyword_slots.items()})


_GENERATORS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator)


def _draws(call: _Call) -> bool:
    """Whether the call draws random numbers (a generator method, or a generator argument)."""
    if isinstance(getattr(call.f, "__self__", None), _GENERATORS):
        return True
    pairs = list(call.arg_slots) + list(call.keyword_slots.values())
    return any(isinstance(call.value(a), _GENERATORS) for a, _ in pairs)


def _unpack_stars(call: _Call) -> None:
    """The call's ``*args`` and ``**kwargs`` (keywords ``STAR``, ``STARSTAR``): their items as
    argument slots, each taken out by the second-order rule of ``operator.getitem`` (so their
    derivatives go back to the sequence or the dict)."""
    c = call.composition

    def item(slot: int, key: Any) -> int:
        if call.value(slot) is NoTangent:
            return c.add(_constant(NoTangent))
        return c.call(_GETITEM, [slot, c.add(_constant(key))])

    if STAR in call.keyword_slots:
        values, tangents = call.keyword_slots.pop(STAR)
        if not isinstance(call.value(values), (tuple, list, np.ndarray, np.void)):
            raise restructure(f"*args of a {type(call.value(values)).__name__} (calling {describe_callable(call.f)})",
                              "make it a tuple or a list first")
        call.arg_slots += [(item(values, k), item(tangents, k)) for k in range(len(call.value(values)))]
    if STARSTAR in call.keyword_slots:
        mapping, tangents = call.keyword_slots.pop(STARSTAR)
        if type(call.value(mapping)) is not dict:
            raise restructure(f"**kwargs of a {type(call.value(mapping)).__name__} (calling {describe_callable(call.f)})",
                              "make it a dict first")
        for name in call.value(mapping):
            call.keyword_slots[name] = (item(mapping, name), item(tangents, name))


_GETITEM = (operator.getitem, NoFData, NoTangent, NoFData)
#: primitives that look at a function without calling it (filter's definition: ``pred is None``)
_NEVER_CALLING = (operator.is_, operator.is_not, callable, id, isinstance, type, cache_function,
                  copy_wrapper_attributes, captures_our_floats, give_cache_attributes)


def _refuse_closure_arguments(call: _Call) -> None:
    """A closure made inside the plain program passed to a primitive that would call it (``map``,
    ``sorted(key=)``): its tangent is its plain program, which only a direct call follows."""
    if call.f in _NEVER_CALLING:
        return
    pairs = list(call.arg_slots) + list(call.keyword_slots.values())
    for a, t in pairs:
        if plain_closures.is_plain_closure(call.value(t)):
            raise restructure(f"nested functions capturing variables ({call.value(a).__name__}) passed to "
                              f"{describe_callable(call.f)}", CLOSURE_ADVICE)


def _has_tangents(call: _Call) -> bool:
    """Whether any argument of the call carries a tangent."""
    pairs = list(call.arg_slots) + list(call.keyword_slots.values())
    return any(call.value(t) is not NoTangent and _has_float_data(call.value(t)) for _, t in pairs)


def _unbind_method(call: _Call, owner: Any) -> None:
    """A bound builtin method ``x.sum`` with tangent ``x_t.sum``: the unbound method, with ``x``
    and ``x_t`` as the first argument pair."""
    method, method_t = call.inputs[0], call.inputs[1]
    empty = (NoTangent, NoFData, NoTangent, NoFData)  # a constant method (np.add.at): no tangent owner
    owner4 = tuple(getattr(part, "__self__", e) for part, e in zip(method, empty))
    owner_t4 = tuple(getattr(part, "__self__", e) for part, e in zip(method_t, empty))
    name = method[0].__name__
    if isinstance(owner, type):  # a classmethod bound to its class (dict.fromkeys): its descriptor takes the class
        unbound = next(k.__dict__[name] for k in owner.__mro__ if name in k.__dict__)
    else:
        unbound = getattr(type(owner), name)
    c = call.composition
    call.function_slot = c.add(_function(unbound))
    call.arg_slots = [(c.add(owner4), c.add(owner_t4))] + call.arg_slots
    call.f = unbound


def _is_structure_call(call: _Call) -> bool:
    """``list + list``, ``2 * [x]``: structure, not arithmetic (linear, as in second order)."""
    xs = [call.value(a) for a, _ in call.arg_slots]
    return any(isinstance(x, (list, tuple, str)) for x in xs) and not any(isinstance(x, np.ndarray) for x in xs)


def _on_object(call: _Call) -> bool:
    """A linear function applied to an object's tangent (``copy.copy(obj)``) would not follow
    forward mode's tangent of its result; only gathering objects into a list or tuple does."""
    return bool(call.arg_slots) and _is_field_tangent(call.value(call.arg_slots[0][1])) \
        and call.f not in (P.mklist, P.mktuple)


def _apply(call: _Call, slots: list, keywords: dict | None = None) -> int:
    """``f`` applied to argument slots (the call's own keywords unless given)."""
    if keywords is None:
        keywords = {k: a for k, (a, _) in call.keyword_slots.items()}
    c = call.composition
    return c.call(c.values[call.function_slot], slots, keywords)


def _selection_of_constants(call: _Call) -> tuple[int, int] | None:
    """A selection (``set(kwargs)``, ``max`` of ints) giving only values without derivatives: a
    constant (scipy.stats' wrapper: ``set(d_args) & set(kwds)``); None when its result holds numbers."""
    y = _primal_call(call)
    value = call.value(y)
    if any(_has_float_data(e) for e in (value if isinstance(value, (set, frozenset)) else (value,))):
        return None
    return y, call.composition.add(_constant(_zero_tangent_of(value)))


def _primal_call(call: _Call) -> int:
    return _apply(call, [a for a, _ in call.arg_slots])


def _linear(call: _Call, data: tuple, stored: tuple) -> tuple[int, int]:
    """Value ``f(a, ...)``, tangent ``f(a_t, ...)``: structure (ints, indices, shapes) passes as
    itself, except an int *value* (``data``/``stored`` positions) which becomes 0."""
    if _on_object(call):
        raise _refusal(f"{describe_callable(call.f)} on objects")
    c = call.composition
    if call.f is getattr and call.value(call.arg_slots[0][1]) is NoTangent:
        return _zero(call)  # an attribute of a value without derivatives: getattr(np, "pi") is a constant
    # the first argument's tangent itself, as in second order (``_MUTATORS``: getattr too, for a
    # method that will mutate it: lst.append)
    mutates = call.f in _MUTATORS or isinstance(call.f, (types.MethodDescriptorType, types.WrapperDescriptorType))
    if mutates and call.arg_slots:
        target, target_t = (call.value(s) for s in call.arg_slots[0])
        if target_t is NoTangent and isinstance(target, np.ndarray) and target.dtype.kind not in "fc":
            return _zero(call)  # a write into an int array: no tangent (the tangent call would write into it)
        if target_t is target and call.f is not getattr and not _has_float_data(target):
            # data without derivatives that is its own tangent (an int array kept in a tuple, whose
            # tangent holds it as structure: np.histogramdd's Ncount[i][on_edge] -= 1): the tangent
            # call would write into the value a second time
            return _zero(call)
    y = _primal_call(call)

    def tangent_slot(key: Any, slots: tuple, first: bool) -> int:
        a, t = slots
        p, tp = call.value(a), call.value(t)
        if tp is NoTangent or not (mutates and first) and not _has_float_data(p) and not _holds_container(p):
            if key in data or key in stored:
                zeroed = _zero_ints(p, p, key in data)
                if zeroed is not p:
                    return c.add(_constant(zeroed))
            return a
        if key in data and _zero_ints(p, tp, True) is not tp:
            raise _refusal(f"{describe_callable(call.f)} of a list mixing numbers and ints")
        return t

    slots = [tangent_slot(k, s, k == 0) for k, s in enumerate(call.arg_slots)]
    keywords = {k: tangent_slot(k, s, False) for k, s in call.keyword_slots.items()}
    if not {t for _, t in [*call.arg_slots, *call.keyword_slots.values()]} & {*slots, *keywords.values()} \
            and _has_float_data(call.value(y)):
        # no tangent in (a structured table's field, T["b"]: the table has none): the tangent
        # call would run on the primals and take their numbers for the tangent
        return y, c.add(_constant(_zero_tangent_of(call.value(y))))
    return y, _apply(call, slots, keywords)


def _holds_container(p: Any) -> bool:
    """Whether ``p`` is or holds (in tuples) an empty list or dict: one without float data yet
    (``[]``, the ``[]`` of ``ys, flag = [], False``) may receive some, so its tangent is its own
    object, never ``p`` itself passed as structure (the primal list would then take the
    tangents). A list of ints (indices, repeats) is structure."""
    if type(p) in (list, dict):
        return not p
    return type(p) is tuple and any(_holds_container(v) for v in p)


def _multilinear(call: _Call) -> tuple[int, int]:
    """Tangent: the sum of ``f`` with one factor replaced by its tangent."""
    c = call.composition
    y = _primal_call(call)
    terms = []
    for k, (a, t) in enumerate(call.arg_slots):
        if call.value(t) is NoTangent or not _has_float_data(call.value(a)):
            continue
        terms.append(_apply(call, [t if j == k else s for j, (s, _) in enumerate(call.arg_slots)]))
    return y, c.total(terms, y)


def _elementwise(call: _Call, partials: tuple) -> tuple[int, int]:
    """Tangent ``sum_k partial_k(*xs, y) * t_k``."""
    if call.keyword_slots or len(call.arg_slots) != len(partials):
        raise _refusal(f"{describe_callable(call.f)} with out=, where= or dtype=")
    c = call.composition
    y = _primal_call(call)
    xs = [a for a, _ in call.arg_slots]
    terms = []
    for (a, t), partial in zip(call.arg_slots, partials):
        if partial is None or call.value(t) is NoTangent or not _has_float_data(call.value(a)):
            continue
        derivative = c.call(_function(partial), xs + [y])
        terms.append(c.call(_MUL, [derivative, t]))
    return y, c.total(terms, y)


def _in_place(call: _Call, operation: Any) -> tuple[int, int]:
    """``a op= b``: for numbers, ``a op b``; for arrays, ``a op b`` and its tangent written back
    into ``a`` and ``a_t`` (``a[...] = y``, ``a_t[...] = y_t``)."""
    c = call.composition
    (a, a_t), _ = call.arg_slots
    call.function_slot = c.add(_function(operation))
    call.f = operation
    y, y_t = _elementwise(call, ELEMENTWISE_PARTIALS[operation])
    if not isinstance(call.value(a), np.ndarray):
        return y, y_t
    everything = c.add(_constant(Ellipsis))
    c.call(_SETITEM, [a, everything, y])
    if not isinstance(call.value(a_t), np.ndarray):
        raise _refusal(f"{describe_callable(call.f)} in place on an array without a tangent array")
    c.call(_SETITEM, [a_t, everything, y_t])
    return a, a_t


def _refuse_out(call: _Call) -> None:
    """A zero-derivative call writing into ``out=``: the array's tangent slot would keep its old
    tangent (the plain program rebinds only the result), so it is refused."""
    args = [call.value(a) for a, _ in call.arg_slots]
    kwargs = {k: call.value(a) for k, (a, _) in call.keyword_slots.items()}
    if given_out(call.f, args, kwargs):
        raise _refusal(f"{describe_callable(call.f)} with out= (assign the result instead: y[...] = f(x))")


def _zero(call: _Call) -> tuple[int, int]:
    y = _primal_call(call)
    return y, call.composition.add(_constant(_zero_tangent_of(call.value(y))))


def _with_vjp(call: _Call, vjp: Callable) -> tuple[int, int]:
    """A primitive given by its cotangent map ``vjp(g, y, *xs)``, which is linear in ``g``: its
    tangent ``J t`` is the gradient in ``g`` of ``sum_k <vjp(g, y, *xs)[k], t_k>``, taken by
    ``_gradient_call`` (so its derivatives come from the cotangent map's own code). A map that
    calls its primitive is refused (its third derivatives would need the primitive's own again),
    unless declared followed (``numpy_coverage.THIRD_ORDER_MAPS_FOLLOWED``: on constants, or
    without recursing); the nesting guard below refuses those that recurse after all."""
    if getattr(call.f, "__name__", None) in vjp.__code__.co_names and not _maps_followed(call.f):
        raise _refusal(f"{describe_callable(call.f)} (its cotangent map calls it again)")
    if _not_yet(call.f):
        raise _refusal(f"{describe_callable(call.f)} ({_NOT_YET[call.f]})")
    c = call.composition
    slots = _positional(call)  # lists of numbers are arrays already (_array_like_boundary)
    y = c.call(c.values[call.function_slot], [a for a, _ in slots])
    value = call.value(y)
    if not _real_values(value):
        raise _refusal(f"{describe_callable(call.f)} (it returns a {type(value).__name__}{_holding_complex(value)})")
    # strings and None (``UPLO='L'``, ``axis=None``) are written into the pairing function
    constants = {k: call.value(a) for k, (a, _) in enumerate(slots) if isinstance(call.value(a), (str, type(None)))}
    slots = [pair for k, pair in enumerate(slots) if k not in constants]
    inputs = [c.add(_constant(_zero_tangent_of(value))), y, c.add(_function(vjp))]
    inputs += [a for a, _ in slots] + [t for _, t in slots]
    pairing = _pairing(len(slots) + len(constants), tuple(sorted(constants.items())))
    gradient_call = protocols.GRADIENT_CALLS["gradient_call"]  # api/nested.py
    out, pullback = gradient_call(pairing, tuple(c.values[s] for s in inputs), (0,), True, False)

    def guarded(dy: Any, dy_d: Any) -> tuple:
        # the third derivatives come from the cotangent map's second order; a map that calls its
        # own primitive again (solve's calls solve) would need them again, without end
        depth = _EXPANDING.depth.get(vjp, 0)
        if depth >= _MAX_DEPTH:
            raise _refusal(f"{describe_callable(call.f)} (its cotangent map calls it again)")
        _EXPANDING.depth[vjp] = depth + 1
        try:
            return pullback(dy, dy_d)
        finally:
            _EXPANDING.depth[vjp] = depth

    c.steps.append((guarded, inputs, len(c.values)))
    return y, c.add(out)


def _array_like_boundary(call: _Call) -> None:
    """Lists of numbers that NumPy would make arrays (``rules/array_like.py``), and their
    tangents, become arrays through ``np.asarray``'s own rule, as in the other modes."""
    if not array_like.applies(call.f):
        return
    keys = array_like.conversions(call.f, [call.value(a) for a, _ in call.arg_slots],
                                  {k: call.value(a) for k, (a, _) in call.keyword_slots.items()})
    for key in keys:
        slots = call.arg_slots if isinstance(key, int) else call.keyword_slots
        slots[key] = _as_array_pair(call, slots[key])


def _as_array_pair(call: _Call, pair: tuple[int, int]) -> tuple[int, int]:
    """A (nested) list of numbers and its tangent as arrays (``np.sort([x, y])``), through
    ``np.asarray``'s own rule."""
    a, t = pair
    if not isinstance(call.value(a), (list, tuple)):
        return pair
    c = call.composition
    tangent = call.value(t)
    if tangent is NoTangent or not array_like.carries_floats(call.value(a)):
        return c.call(_ASARRAY, [a]), c.add(_constant(NoTangent))
    if _float_leaves(tangent):
        return c.call(_ASARRAY, [a]), c.call(_ASARRAY, [t])
    # ints among the numbers: their tangents are NoTangent, zeros in the tangent array
    return c.call(_ASARRAY, [a]), c.call(_function(tangent_array), [t])


def _float_leaves(tangent: Any) -> bool:
    if type(tangent) in (list, tuple):
        return all(_float_leaves(e) for e in tangent)
    return isinstance(tangent, float) or isinstance(tangent, np.ndarray) and tangent.dtype.kind in "fc"


_ASARRAY = (np.asarray, NoFData, NoTangent, NoFData)


def _real_values(value: Any) -> bool:
    """A float, a real array, or a tuple of them (``slogdet``, ``eigh``)."""
    if isinstance(value, tuple):
        return all(_real_values(v) for v in value)
    return isinstance(value, float) or isinstance(value, np.ndarray) and value.dtype.kind == "f"


def _holding_complex(value: Any) -> str:
    """`` holding complex numbers`` when ``value`` (or an element of a tuple) is complex."""
    parts = value if isinstance(value, tuple) else (value,)
    return " holding complex numbers" if any(np.iscomplexobj(v) for v in parts) else ""


#: primitives whose third derivatives through their cotangent map ``check_third_order`` finds
#: wrong, refused until the cause is found
_NOT_YET: dict = {}


def _refuse_for_now(f: Any, why: str) -> None:
    """Refuse ``f`` in third order (its result there is known wrong, cause not found yet)."""
    _NOT_YET[f] = why


def _not_yet(f: Any) -> bool:
    lazy.load_imported()  # the refusals of SciPy's functions are made once SciPy is imported
    try:
        return f in _NOT_YET
    except TypeError:  # unhashable callables
        return False


class _Expanding(threading.local):
    """Per thread (a depth counted across threads would refuse, or miss, another thread's
    nesting): the cotangent maps being differentiated, and how deeply nested."""

    def __init__(self) -> None:
        self.depth: dict = {}


_EXPANDING = _Expanding()
_MAX_DEPTH = 2


def _positional(call: _Call) -> list[tuple[int, int]]:
    """The argument slot pairs bound to the first-order rule's positional parameters, as
    ``with_vjp`` rules see them (call-site keywords bound, defaults as constants)."""
    if not call.keyword_slots:
        return list(call.arg_slots)
    from ..rules.core import RRULES
    from .lifting import _Given

    if not _binds_keywords(call.f):
        raise _refusal(f"{describe_callable(call.f)} with keyword arguments; pass them positionally")
    found = RRULES.lookup(call.f)
    c = call.composition
    values, _ = found[1].bind([_Given(pair) for pair in call.arg_slots],
                              {k: _Given(pair) for k, pair in call.keyword_slots.items()})
    return [v.value if isinstance(v, _Given) else (c.add(_constant(v)), c.add(_constant(_zero_tangent_of(v))))
            for v in values]


_PAIRINGS: dict[tuple, types.FunctionType] = {}


def _pairing(n: int, constants: tuple) -> types.FunctionType:
    """``pairing(g, y, vjp, *xs, *ts) = sum_k <vjp(g, y, *xs)[k], t_k>``, written out for ``n``
    arguments (plain forward programs take no ``*args``), the ``constants`` (``(position,
    value)`` pairs: strings, None) written in."""
    import linecache

    key = (n, constants)
    if key not in _PAIRINGS:
        fixed = dict(constants)
        variable = [k for k in range(n) if k not in fixed]
        arguments = ", ".join(f"_c{k}" if k in fixed else f"x{k}" for k in range(n))
        params = ", ".join([f"x{k}" for k in variable] + [f"t{k}" for k in variable])
        terms = " + ".join([f"_paired(cotangents, {k}, t{k})" for k in variable] or ["0.0"])
        source = (f"def pairing{n}(g, y, vjp, {params}):\n"
                  f"    cotangents = vjp(g, y, {arguments})\n"
                  f"    return {terms}\n")
        filename = f"<third order pairing {len(_PAIRINGS)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        namespace: dict = {"__name__": __name__, "_paired": paired, **{f"_c{k}": v for k, v in fixed.items()}}
        exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated code
        _PAIRINGS[key] = namespace[f"pairing{n}"]
    return _PAIRINGS[key]


def _sorted_pair(call: _Call, definition: types.FunctionType) -> int:
    """``sorted(items, reverse=r)`` of numbers: ``definition(items, items_t, r, _)``; a key is
    refused (its calls would need their own derivatives)."""
    keywords = {k: call.value(a) for k, (a, _) in call.keyword_slots.items()}
    if len(call.arg_slots) != 1 or set(keywords) - {"key", "reverse"} or keywords.get("key") is not None:
        raise _refusal("sorted with key= (sort the numbers themselves, or sort positions: "
                       "sorted(range(n), key=...) has no derivative to follow)")
    reverse = bool(keywords.get("reverse", False))
    c = call.composition
    slots = list(call.arg_slots[0]) + [c.add(_constant(reverse)), c.add(_constant(NoTangent))]
    return _run_definition(call, definition, slots)


def _defined_pair(call: _Call, definition: types.FunctionType) -> int:
    """A primitive whose ``(value, tangent)`` is computed by ``definition`` (ordinary NumPy code,
    each argument followed by its tangent): its second order, like user code's. Keywords a rule
    cannot bind to positions (its ``**kwargs``: ``np.unique``'s ``sorted=``) go by name, each
    with its tangent as ``<name>_t``."""
    if call.keyword_slots and not _binds_keywords(call.f):
        c = call.composition
        keywords = {}
        for name, (a, t) in call.keyword_slots.items():
            keywords[name], keywords[name + "_t"] = a, t
        return c.call(_function(definition), [s for pair in call.arg_slots for s in pair], keywords)
    return _run_definition(call, definition, [s for pair in _positional(call) for s in pair])


def _drop_partial_work(error: BaseException) -> None:
    """A primitive's definition raised (``math.log`` of a negative number, caught by the user's
    ``try``): the primitive raised as a whole, as in every other mode, where its rule leaves no
    work behind. The work its definition completed made only values of its own, so it is undone
    and dropped, not carried to the handler, which would refuse it naming the definition
    (``rules/_partial_work.py``)."""
    partial = getattr(error, PARTIAL_CALL, None)
    if partial is not None:
        delattr(error, PARTIAL_CALL)
        if partial.undo is not None:
            partial.undo()


def _binds_keywords(f: Any) -> bool:
    """Whether ``f``'s first-order rule binds call-site keywords to its positional parameters."""
    from ..rules.core import RRULES

    found = RRULES.lookup(f)
    return found is not None and found[2] is None and not found[1].passthrough


def _run_definition(call: _Call, definition: types.FunctionType, slots: list[int]) -> int:
    from .second_order import dual_rule

    c = call.composition
    try:
        out, pullback = dual_rule(definition)(_function(definition), *(c.values[s] for s in slots))
    except BaseException as error:
        _drop_partial_work(error)
        raise
    c.steps.append((pullback, slots, len(c.values)))
    return c.add(out)


def _python_function(call: _Call, fn: types.FunctionType) -> int:
    """A Python function: the second order of its plain forward program, called with each
    parameter's ``(primal, tangent)`` 4-tuples (defaults as constants). Returns the pair's slot."""
    from .second_order import dual_rule

    if _captures_variables(fn):
        # a function made inside the differentiated code, reached without its plain program:
        # its captured variables' derivatives would be lost
        raise restructure(f"nested functions capturing variables ({fn.__qualname__}) passed through a call that "
                          "does not keep their derivatives", CLOSURE_ADVICE)
    program = plain_forward(fn)
    source = program.__yuebing_source__
    plan = source.plan(fn, tuple(call.value(a) for a, _ in call.arg_slots),
                       {k: call.value(a) for k, (a, _) in call.keyword_slots.items()})
    slots = [call.function_slot, call.composition.add(_constant(NoTangent))] + _bound_slots(call, plan, fn)
    out, pullback = dual_rule(program)(_function(program), *(call.composition.values[s] for s in slots))
    call.composition.steps.append((pullback, slots, len(call.composition.values)))
    return call.composition.add(out)


#: the files of code yuebing generates (plain forward programs, and second order's of them)
_GENERATED_FILES = ("<plain forward", "<yuebing hvp", "<yuebing plain closure")


def _captures_variables(fn: types.FunctionType) -> bool:
    """Whether ``fn`` is a function made inside a plain program that captures its variables. (A
    helper capturing nothing of the user's reads globals there as cells: ``np`` is a local of the
    plain program; those names are the user's globals or builtins.)"""
    if not fn.__closure__ or not fn.__code__.co_filename.startswith(_GENERATED_FILES) \
            or primal_kind(fn) is NONDIFF:  # (its cells hold helpers capturing nothing with a derivative...)
        return False
    return any(name not in fn.__globals__ and not hasattr(builtins, name) for name in fn.__code__.co_freevars)


def _plain_closure(call: _Call) -> int:
    """A call of a closure made inside the plain program, whose tangent is its nested plain
    program (``plain_closures.py``): the second order of that program, the closure's own 4-tuple
    (its captured variables' derivatives) as the function differentiated."""
    from .second_order import dual_rule

    c = call.composition
    program = call.value(1)
    plan = plain_closures.bind(program, call.f, len(call.arg_slots), list(call.keyword_slots))
    slots = [call.function_slot, c.add(_constant(NoTangent))] + _bound_slots(call, plan, call.f)
    out, pullback = dual_rule(program)(c.values[1], *(c.values[s] for s in slots))

    def to_the_closure(dy: Any, dy_d: Any) -> tuple:  # the program's own rdata: slot 1's
        rs, rsd = pullback(dy, dy_d)
        return (NoRData, *rs), (NoRData, *rsd)

    c.steps.append((to_the_closure, [1] + slots, len(c.values)))
    return c.add(out)


def _bound_slots(call: _Call, plan: list, fn: Any) -> list[int]:
    """The slots of a plain program's parameters after ``_fn, _fn_t``, by a binding ``plan``
    (``protocols.bind_call``'s): each parameter's primal and tangent."""
    return bind_slots(call.composition, {**dict(enumerate(call.arg_slots)), **call.keyword_slots}, plan)


def bind_slots(c: _Composition, given: dict, plan: list) -> list[int]:
    """``_bound_slots`` for the slot pairs ``given`` by position or name, in composition ``c``."""
    slots: list[int] = []
    for kind, payload in plan:
        if kind == "arg":
            slots += list(given[payload])
        elif kind == "star":
            slots += [c.pack([given[key][0] for key in payload]), c.pack([given[key][1] for key in payload])]
        elif kind == "starstar":  # a dict and its tangent, built by second order's dict rules
            mappings = c.call(_MKDICT, []), c.call(_MKDICT, [])
            for name, key in payload.items():
                name_slot = c.add(_constant(name))
                for mapping, item in zip(mappings, given[key]):
                    c.call(_SETITEM, [mapping, name_slot, item])
            slots += mappings
        else:  # a default value: a constant
            slots += [c.add(_constant(payload)), c.add(_constant(_zero_tangent_of(payload)))]
    return slots


def _constant_result(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """A plain program's runtime helpers (globals, zero tangents): their results are constants."""
    value = f4[0](*(a[0] for a in args), **{k: v[0] for k, v in kwargs.items()})
    return _constant(value), lambda dy, dy_d: ((NoRData,) * (len(args) + len(kwargs) + 1),) * 2


def _shared_cells_rule(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``share_cells(fn, cells)`` in a plain program: a function defined in the function under
    ``yb.grad`` that writes a variable captured from outside it (the plain program shares the
    very cells only then: ``plain_forward._closure``), which second order does not follow."""
    fn, cells = args[0][0], args[1][0]
    raise restructure(f"a nested function ({fn.__name__}) writing (nonlocal) {', '.join(sorted(cells))}, "
                      "captured from outside the differentiated function",
                      "pass the variable to the function under yb.grad as an argument, and return its new value")


def _register_rules() -> None:
    from . import exceptions, forward_runtime, runtime
    from .closure_cells import share_cells

    jvp_rule.second_order_kind = "special"  # type: ignore[attr-defined]
    _register((jvp_call,), jvp_rule)
    # (with_user_globals: a nested function capturing nothing, given the user's globals; caught: a
    # handler of the plain program ran, whose try statement second order follows; the check
    # re-raises yuebing's own errors)
    _register((forward_runtime.zero_tangent_of, runtime.with_user_globals, exceptions.caught), _constant_result)
    # (what reads outside state: one fdata and tangent per object for the pass, third_order_outside.py;
    # read_only: a module's array, mod.W or np.ma.masked)
    _register((runtime.global_value, forward_runtime.global_tangent, forward_runtime.cell_tangent, runtime.read_only),
              outside_result)
    _register((share_cells,), _shared_cells_rule)


_register_rules()


def _maps_followed(f: Any) -> bool:
    """Whether ``f``'s cotangent map calls ``f`` but is followed (``rules/numpy_coverage``)."""
    lazy.load_imported()
    try:
        return f in THIRD_ORDER_MAPS_FOLLOWED
    except TypeError:
        return False
