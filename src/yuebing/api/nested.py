"""Differentiating through functions yuebing made: ``yb.grad``/``yb.value_and_grad`` called inside
the function being differentiated (forward over reverse, reverse over reverse, third order).

Transforms never import the public API; they dispatch a call of a gradient function to the
handler this module puts in ``transform.protocols.GRADIENT_CALLS`` (one per mode) when yuebing is
imported, and the making of a gradient function (``yb.grad(g)`` in differentiated code) has
rules registered here like any primitive's.
"""
from __future__ import annotations

import functools
import types
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from ..rules import _nested_definitions as definitions
from ..rules.core import CoDual, Dual, primal, register_frule, register_rrule
from ..rules.second_order import _register as _register_second_order
from ..rules.util import accumulate, is_differentiable, zero_fdata
from ..tangents import NoFData, NoRData, NoTangent, Tangent, join
from ..transform import protocols
from ..transform.forward_runtime import NestedDifferentiationError, zero_tangent_of
from ..transform.lifting import _fresh_output, _output_cotangents
from ..rules import outside_state
from ..transform.second_order import call_rrule2
from ..transform.plain_forward import TANGENT_KEYWORD, jvp_call
from ..transform.third_order import FOLLOWED_CALLS, _Composition, _constant, _function, _zero_tangent_of
from ..transform import plain_cached_calls, plain_generators, plain_keys, plain_objects, plain_partials, plain_sets  # noqa: F401 - hooks
from ..transform import third_order_partials  # noqa: F401 - hook of third order: partials made outside
from ..transform import third_order_masked  # noqa: F401 - hook of third order: numpy.ma methods
from ..transform import third_order_library  # noqa: F401 - hook of third order: scipy.sparse methods, library operators
from ..transform.third_order_outside import pass_scope
from .common import normalise_argnums, scalar_seed, split_aux
from .gradient_objects import as_argument_tangent, as_value_tangent, holds_objects
from .composed_second_order import captured_tangents, captures_derivatives, closure_refusal
from .implicit_stationary import _user_call
from .nested_cell_writes import captured_state, keep_writes
from .reverse import grad, seed_output, value_and_grad
from .second_order import _check_scalar, _join, _pull_unit, _value_grad_hvp, separated_arguments

_grad, _value_and_grad = grad, value_and_grad

#: a forward-over-reverse pass inside another pass reads an outside object along the outer
#: pass's tangent of it (``outside_state.enter``)
OUTER_TANGENTS = {"tangent": "tangent"}


# --------------------------------------------------------------------------------------------
# yb.grad inside forward-mode code
# --------------------------------------------------------------------------------------------


def gradient_frule(f: Any, *args: Any, **kwargs: Any) -> Any:
    """Forward rule of a function made by ``yb.grad``/``yb.value_and_grad``: the gradient and its
    tangent by one forward-over-reverse pass. The perturbations cannot be confused: the inner
    reverse pass differentiates with respect to its own arguments, and the outer tangent arrives
    as the tangents of those arguments and of the values the function captured. Keywords are
    bound to positions (``composition.bound_positionally``); a ``has_aux`` function's aux and its
    tangent are the pass's output's."""
    spec = f.primal.__yuebing_gradient__
    nums, single = normalise_argnums(spec.argnums, len(args), "grad")
    keywords: dict = {}
    if kwargs and not positional_parameters(spec.f):  # (*args, **kwargs, keyword-only: passed as keywords)
        keywords = {k: _keyword_dual(v) for k, v in kwargs.items()}
    else:
        args, _ = bound_positionally(spec.f, args, kwargs, lambda v: Dual(v, NoTangent), "forward mode over yb.grad")
    # arguments sharing an array are differentiated slot by slot, as by yb.grad itself
    # (copies: an argument may share memory with a value the function captured, a pullback
    # called on a captured array, and each has its own tangent)
    primals = tuple(a.primal if callable(a.primal) else T.structural_copy(a.primal) for a in args)
    xs, fdata_of = separated_arguments(primals, "grad")
    fdata, fdata_t = fdata_of(xs), fdata_of(xs)
    duals = [(x, fd, a.tangent if a.tangent is not NoTangent else zero_tangent_of(x), ft)
             for x, a, fd, ft in zip(xs, args, fdata, fdata_t)]
    g = spec.f
    # the inner pass's outside state is its own, but for the outer tangents of what it reads (a
    # module dict the outer pass wrote x into carries x's tangent)
    scope = outside_state.enter(link=(outside_state.current(), OUTER_TANGENTS))
    try:
        out, pullback = call_rrule2((g, NoFData, _dual_tangent(g, f.tangent), NoFData), *duals, **keywords)
    finally:
        outside_state.leave(scope, lambda: pullback(NoRData, NoRData))  # (a refusal: what it wrote put back first)
    written = captured_state(g)
    if spec.has_aux:
        value, value_tangent, aux, aux_tangent, (rs, rsd) = _pull_aux(out, pullback, g)
    else:
        value, value_tangent = T.structural_copy((out[0], out[2]))  # the reverse pass undoes how they were built
        rs, rsd = _pull_unit(out, pullback, g, "grad")
    keep_writes(g, written, "forward mode over yb.grad")
    grads = tuple(_join(fdata[i], rs[1 + i], xs[i]) for i in nums)
    tangents = tuple(_join(fdata_t[i], rsd[1 + i], xs[i]) for i in nums)
    gradient, tangent = (grads[0], tangents[0]) if single else (grads, tangents)
    tangent = as_value_tangent(tangent, gradient)  # (an object's: api/gradient_objects.py)
    value_tangent = 0.0 if value_tangent is NoTangent else value_tangent
    if spec.with_value and spec.has_aux:
        return Dual(((value, aux), gradient), ((value_tangent, aux_tangent), tangent))
    if spec.with_value:
        return Dual((value, gradient), (value_tangent, tangent))
    if spec.has_aux:
        return Dual((gradient, aux), (tangent, aux_tangent))
    return Dual(gradient, tangent)


def _keyword_dual(v: Any) -> tuple:
    """A keyword argument's 4-tuple for the inner pass: a copy, its own zero fdata, its outer
    tangent (not differentiated by the inner gradient, but carrying the outer derivative)."""
    x = v.primal if callable(v.primal) else T.structural_copy(v.primal)
    tangent = zero_tangent_of(x) if v.tangent is NoTangent else v.tangent
    return (x, zero_fdata(x), tangent, zero_fdata(x))


def _pull_aux(out: tuple, pullback: Callable, g: Any) -> tuple:
    """A ``has_aux`` function's output ``(value, aux)``: the value, the aux (copies: the reverse
    pass undoes how they were built) with their tangents, and the dual pullback's answer to
    cotangent ``(1, 0)`` with tangent 0."""
    value, aux = split_aux(out[0], "grad", g)
    tangent = out[2] if out[2] is not NoTangent else (NoTangent, NoTangent)
    value, value_tangent, aux, aux_tangent = T.structural_copy((value, tangent[0], aux, tangent[1]))
    aux_tangent = zero_tangent_of(aux) if aux_tangent is NoTangent else aux_tangent
    _check_scalar(value, g, "grad")
    cotangent = (scalar_seed(value, g, "grad"), T.zero_tangent(aux))
    return value, value_tangent, aux, aux_tangent, pullback(seed_output(CoDual(out[0], out[1]), cotangent), NoRData)


def _grad_frule(f: Any, argnums: Any = 0, has_aux: Any = False) -> Any:
    """``yb.grad(f)`` inside forward-mode code: the gradient function, whose tangent is ``f``'s
    (the tangents of the values ``f`` captured)."""
    return Dual(grad(primal(f), primal(argnums), primal(has_aux)), getattr(f, "tangent", NoTangent))


def _value_and_grad_frule(f: Any, argnums: Any = 0, has_aux: Any = False) -> Any:

    return Dual(value_and_grad(primal(f), primal(argnums), primal(has_aux)), getattr(f, "tangent", NoTangent))


# yb.grad and yb.value_and_grad called inside forward-mode code (jvp of a function that takes a
# gradient, jacobian(grad(f), mode="fwd")): forward-over-reverse
register_frule(_grad, _grad_frule)
register_frule(_value_and_grad, _value_and_grad_frule)


# yb.grad and yb.value_and_grad inside reverse-mode code (the gradient of a function that takes a
# gradient, jacobian(grad(f), mode="rev")): reverse-over-reverse, whose pullback is a
# Hessian-vector product. The gradient function's cotangent ybar goes back to its arguments as
# H ybar (H is symmetric), plus vbar * gradient for value_and_grad's value.


def _gradient_function(make: Callable, f: Any, argnums: Any, has_aux: Any) -> tuple:
    """``yb.grad(g)`` called in differentiated code: the gradient function. ``g``'s fdata goes
    with it, so calling it can refuse what it cannot differentiate (captured variables)."""
    fdata = f.fdata if isinstance(f, CoDual) else NoFData
    # its rdata is g's (the numbers a partial stored, gradient_rrule)
    return CoDual(make(primal(f), primal(argnums), primal(has_aux)), fdata), lambda dy: (NoRData, dy, NoRData, NoRData)


def _grad_rrule(f: Any, argnums: Any = 0, has_aux: Any = False) -> tuple:
    return _gradient_function(_grad, f, argnums, has_aux)


def _value_and_grad_rrule(f: Any, argnums: Any = 0, has_aux: Any = False) -> tuple:
    return _gradient_function(_value_and_grad, f, argnums, has_aux)


def check_gradient_call(spec: Any, xs: tuple, captures: bool, mode: str, nums: tuple = ()) -> None:
    """What a Hessian through a call of a ``yb.grad``/``yb.value_and_grad`` function supports
    (``mode``): gradients with respect to floats, float arrays and tuples, lists and dicts of
    them (an object's gradient is a tangent object, whose fields second order does not read);
    any other arguments, objects included; no callable but a Python function passed to it carrying
    variables of the differentiated code (``captures``: a pullback's pairing takes the function it
    pulls back; a Python function is opened where it is called, ``_opened_function_call``)."""
    if captures:
        raise NestedDifferentiationError(
            f"{mode}: yuebing cannot differentiate a bound method, or a functools.partial of a function capturing "
            "variables carrying derivatives, passed to a gradient function or yb.vjp, with respect to what it "
            "captures from the differentiated code; wrap a bound method in a Python function (lambda u: "
            "obj.method(u)), and pass a function's captured variables to it as arguments (functools.partial(f, a))")
    for i in nums:
        if not _plain_structure(xs[i]):
            raise NestedDifferentiationError(_argument_refusal(spec.f, xs, i, mode))


def _plain_structure(x: Any) -> bool:
    """A float, a float array, or a tuple, list or dict of them (at any depth; ints allowed), or
    an object of a user class holding them (its gradient a tangent object: gradient_objects.py)."""
    stack, seen = [x], set()
    while stack:
        v = stack.pop()
        if isinstance(v, (float, int, np.number)) or isinstance(v, np.ndarray) and v.dtype.kind in "fiub":
            continue
        if plain_objects.is_user_object(v) and hasattr(v, "__dict__") and id(v) not in seen:
            seen.add(id(v))
            stack.extend(value for value in vars(v).values() if T.zero_tangent(value) is not NoTangent)
            continue
        if not isinstance(v, (tuple, list)) and type(v) is not dict:  # (a namedtuple too)
            return False
        if id(v) not in seen:
            seen.add(id(v))
            stack.extend(v.values() if type(v) is dict else v)
    return True


def _argument_refusal(g: Any, xs: tuple, i: int, mode: str) -> str:
    """Why third order refuses argument ``i``, named as the user wrote it: a pullback of
    ``yb.vjp`` is the gradient of a pairing (``rules/_nested_definitions.py``), whose arguments
    are the function, its arguments and the cotangent."""
    kind = type(xs[i]).__qualname__
    if g in definitions.PAIRINGS:
        return (f"{mode} (the pullback of yb.vjp) takes floats, float arrays and tuples, lists, dicts and objects "
                f"(with a __dict__) of them as arguments of yb.vjp's function; argument {i - 1} (a {kind}) is or holds "
                "something else. Pass arrays, or build the object inside the function")
    return (f"{mode} takes gradients with respect to floats, float arrays and tuples, lists, dicts and objects "
            f"(with a __dict__) of them; argument {i} (a {kind}) is or holds something else. Leave it out of argnums "
            "(any object may be passed), or pass its arrays")


register_rrule(_grad, _grad_rrule)
register_rrule(_value_and_grad, _value_and_grad_rrule)




# --------------------------------------------------------------------------------------------
# yb.grad inside second-order code: third derivatives (gradient_rule), by second order of the
# plain forward program (transform/third_order.py)
# --------------------------------------------------------------------------------------------


def gradient_maker_rule(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """``yb.grad(g)`` (or ``value_and_grad``) called inside the function being differentiated:
    the gradient function, carrying ``g``'s fdata and tangent (the values ``g`` captured)."""
    make = grad if f4[0] is grad else value_and_grad
    g = args[0]
    made = make(g[0], *(a[0] for a in args[1:]), **{k: v[0] for k, v in kwargs.items()})
    rest = (NoRData,) * (len(args) + len(kwargs) - 1)
    # its rdata is g's (a partial's stored numbers, gradient_rule)
    return (made, g[1], g[2], g[3]), lambda dy, dy_d: ((NoRData, dy, *rest), (NoRData, dy_d, *rest))


def gradient_rule(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """Second-order rule of a call of a gradient function ``grad(g)(*xs, **kw)``: third derivatives of
    ``g`` in its arguments, its keywords and the variables it captures (``f4``'s boxes and tangent)."""
    spec = f4[0].__yuebing_gradient__
    mode = "yb.hvp/yb.hessian over yb.grad"
    nums, single = normalise_argnums(spec.argnums, len(args), "grad")
    keywords: dict = {}
    if kwargs and not positional_parameters(spec.f):  # (*args, **kwargs, keyword-only: passed as keywords,
        keywords, kwargs = dict(kwargs), {}           # whose rdata then follow the positional ones, as called)
    args, order = bound_positionally(spec.f, args, kwargs, _constant, mode)
    # the gradient's function, and a Python function passed to it (the pullback's pairing takes the
    # function it pulls back), may capture variables of the differentiated code: their plain programs
    # are opened (_psi_pullback, _opened_function_call), a partial's stored values followed
    # (third_order_partials.py); another callable carrying them is refused
    captures = any(_unfollowed_captures(a) for a in args + tuple(keywords.values()))
    check_gradient_call(spec, tuple(a[0] for a in args), captures, mode, nums)
    g4 = (spec.f, f4[1], f4[2], f4[3])  # the function and its captured values' derivatives
    out, pullback = _gradient_call(g4, args, nums, single, spec.with_value, spec.has_aux, keywords)
    if not kwargs:
        return out, pullback

    def ordered(dy: Any, dy_d: Any) -> tuple:
        rdatas, rdata_ts = pullback(dy, dy_d)
        return rdatas[:1] + order(rdatas[1:]), rdata_ts[:1] + order(rdata_ts[1:])

    return out, ordered


def _gradient_call(g4: Any, args: tuple, nums: tuple, single: bool, with_value: bool, has_aux: bool = False,
                   keywords: dict | None = None) -> tuple[tuple, Callable]:
    """``grad(g, argnums=nums, has_aux=has_aux)(*args, **keywords)`` on 4-tuples (``g4``: ``g``'s,
    or ``g`` alone, a constant): the value and its tangent by one forward-over-reverse pass of
    ``g``; the dual pullback by one forward-over-reverse pass of ``g``'s plain forward program
    (third derivatives of ``g``; an aux's cotangent seeds that program's output beside the
    value's). The keywords are not differentiated by the inner gradient (argnums count positions)
    but carry the outer derivative, as the variables ``g`` captures do: both reach the pass as
    tangents, never as directions of the inner gradient, so the two cannot be confused."""
    g4 = g4 if isinstance(g4, tuple) else _function(g4)
    g, keywords = g4[0], keywords or {}
    outer = outside_state.current()  # (the pass around: the dual pullback runs after it has closed)
    # the arguments not differentiated are copied: they may share memory with the others (a
    # pullback's cotangent holding its argument), which the inner gradient need not separate
    xs = tuple(a[0] if i in nums or callable(a[0]) else T.structural_copy(a[0]) for i, a in enumerate(args))
    # a function passed in is a constant of the pass, but for the variables it captures (their
    # tangents its direction, its boxes its own 4-tuple's: ``opened``)
    opened = {k: a for k, a in enumerate(args) if isinstance(a[0], types.FunctionType) and _carries_captured(a)}
    directions = tuple(a[2] if k in opened else NoTangent if isinstance(x, types.FunctionType)
                       else _zero_tangent_of(x) if a[2] is NoTangent else _stored_tangents(x, a[2])
                       for k, (x, a) in enumerate(zip(xs, args)))
    named = {k: _copied(a) for k, a in keywords.items()}
    if has_aux or named or opened or _carries_captured(g4):
        value, value_t, aux, aux_t, grads, products = _value_pass(g4, xs, directions, named, has_aux, opened)
    else:
        with outside_state.followed(OUTER_TANGENTS):  # (a pass of its own, along the outer tangents)
            value, grads, products = _value_grad_hvp(g, xs, directions, "grad")
        value_t = _value_tangent(grads, directions) if with_value else NoTangent
    gradient = grads[nums[0]] if single else tuple(grads[i] for i in nums)
    gradient_t = products[nums[0]] if single else tuple(products[i] for i in nums)
    gradient_t = as_value_tangent(gradient_t, gradient)  # (an object's: api/gradient_objects.py)
    if with_value and has_aux:
        out = _fresh_output(Dual(((value, aux), gradient), ((value_t, aux_t), gradient_t)))
    elif with_value:
        out = _fresh_output(Dual((value, gradient), (value_t, gradient_t)))
    elif has_aux:
        out = _fresh_output(Dual((gradient, aux), (gradient_t, aux_t)))
    else:
        out = _fresh_output(Dual(gradient, gradient_t))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        bar, bar_d = _output_cotangents(out, dy, dy_d)
        value_bar, value_bar_d = (bar[0], bar_d[0]) if with_value else (0.0, 0.0)
        grad_bar, grad_bar_d = (bar[1], bar_d[1]) if with_value else (bar, bar_d)
        aux_bars = None
        if has_aux and with_value:
            aux_bars = (_part(value_bar, 1), _part(value_bar_d, 1))
            value_bar, value_bar_d = _part(value_bar, 0), _part(value_bar_d, 0)
        elif has_aux:
            aux_bars = (_part(bar, 1), _part(bar_d, 1))
            grad_bar, grad_bar_d = _part(bar, 0), _part(bar_d, 0)
        # u, a direction of g's forward program, is at the argument's level; its tangent, at the
        # level of u as a value (an object's: api/gradient_objects.py)
        grad_bar = as_argument_tangent(grad_bar, gradient)
        if single:
            grad_bar, grad_bar_d = (grad_bar,), (grad_bar_d,)
        us = [_constant(_zero_tangent_of(x)) for x in xs]
        for i, u, u_d in zip(nums, grad_bar, grad_bar_d):
            u = _zero_tangent_of(xs[i]) if u is NoTangent else u
            us[i] = (u, zero_fdata(u), _zero_tangent_of(u) if u_d is NoTangent else u_d, zero_fdata(u))
        rs, rsd, g_rs = _psi_pullback(g4, xs, directions, us, _scalar(value_bar), _scalar(value_bar_d), aux_bars,
                                      named, opened, outer)
        g_r, g_r_d = g_rs if isinstance(g, functools.partial) else (NoRData, NoRData)  # (a closure's: in its boxes)
        rdatas, rdata_ts = [g_r], [g_r_d]
        for a, r, r_d in zip(args + tuple(keywords.values()), rs, rsd):
            if r is NoTangent or isinstance(a[0], types.FunctionType):
                rdatas.append(NoRData)
                rdata_ts.append(NoRData)
            elif is_differentiable(a[0]):
                rdatas.append(accumulate(CoDual(a[0], a[1]), r))
                rdata_ts.append(accumulate(CoDual(a[0], a[3]), r_d))
            else:
                rdatas.append(deliver(CoDual(a[0], a[1]), r))
                rdata_ts.append(deliver(CoDual(a[0], a[3]), r_d))
        return tuple(rdatas), tuple(rdata_ts)

    return out, pullback


def _scalar(value: Any) -> float:
    return 0.0 if value is NoTangent or value is NoRData else float(value)


def _value_tangent(grads: tuple, directions: tuple) -> float:
    """The value's tangent: the gradient's pairing with the directions."""
    return float(sum(T.dot(u, d) if holds_objects(u) else np.sum(u * d)
                     for u, d in zip(grads, directions) if u is not NoTangent and d is not NoTangent))


def _part(cotangent: Any, k: int) -> Any:
    """Part ``k`` of a pair's cotangent (nothing when the pair has none)."""
    return NoTangent if cotangent is NoTangent or cotangent is NoRData else cotangent[k]


def _copied(a: tuple) -> tuple:
    """A keyword argument's value (a copy: the inner gradient must not write the outer one) and
    its outer tangent."""
    x = a[0] if callable(a[0]) else T.structural_copy(a[0])
    return x, NoTangent if callable(x) else _zero_tangent_of(x) if a[2] is NoTangent else a[2]


def _unfollowed_captures(a: tuple) -> bool:
    """Whether ``a`` (a 4-tuple) is a callable carrying variables of the differentiated code that
    third order does not follow: not a Python function (opened), nor a partial whose function
    carries none (its stored values are followed: ``transform/third_order_partials.py``); a
    method bound to an object holding floats."""
    x = a[0]
    if not callable(x) or isinstance(x, types.FunctionType):
        return False
    if isinstance(x, functools.partial):
        return _carries_captured((x.func, *map(_function_part, a[1:])))
    if isinstance(x, types.MethodType) and _zero_tangent_of(x.__self__) is not NoTangent:
        return True  # (its owner's tangent is no direction of the pass: an internal TypeError before)
    return _carries_captured(a)


def _stored_tangents(x: Any, tangent: Any) -> Any:
    """A direction of the pass: a partial's tangent without its function's (a function carrying
    no derivatives here, ``_unfollowed_captures``, whose second-order tangent is no direction)."""
    if isinstance(x, functools.partial) and isinstance(tangent, Tangent) and "func" in tangent.fields:
        return Tangent(functools.partial, {k: v for k, v in tangent.fields.items() if k != "func"})
    return tangent


def _function_part(part: Any) -> Any:
    """The ``func`` field of a partial's fdata or tangent."""
    return part.fields.get("func", NoFData) if isinstance(part, Tangent) else NoFData


def _carries_captured(g4: tuple) -> bool:
    """Whether the gradient's function captures variables carrying derivatives (fdata boxes or
    tangent cells): a closure made inside the differentiated code."""
    return captures_derivatives(g4[1]) or captured_tangents(g4[2])


def _value_pass(g4: tuple, xs: tuple, directions: tuple, keywords: dict, has_aux: bool, opened: dict) -> tuple:
    """``(value, its tangent, aux, its tangent, gradients, hvps)`` of ``g`` (returning ``(value,
    aux)`` with ``has_aux``; aux None without) at copies of ``xs`` along ``directions``, the
    ``keywords`` (``name: (value, tangent)``) and captured variables along their outer tangents:
    one forward-over-reverse pass, as forward mode over ``yb.grad`` runs it (``gradient_frule``).
    The captured variables' cotangents (and those of a function passed in, ``opened``) land in
    fresh boxes: the gradient is the arguments'."""
    primals = tuple(x if callable(x) else T.structural_copy(x) for x in xs)
    copies, fdata_of = separated_arguments(primals, "grad")
    fdata, fdata_t = list(fdata_of(copies)), list(fdata_of(copies))
    for k, a in opened.items():
        if isinstance(a[1], Tangent):
            fdata[k], fdata_t[k] = T.scale(a[1], 0.0), T.scale(a[1], 0.0)
    duals = [(x, fd, zero_tangent_of(x) if d is NoTangent and not callable(x) else d, ft)
             for x, d, fd, ft in zip(copies, directions, fdata, fdata_t)]
    named = {k: (v, zero_fdata(v), d, zero_fdata(v)) for k, (v, d) in keywords.items()}
    g, boxes = g4[0], g4[1]
    g_fd, g_fdt = (_zeroed_fdata(boxes), _zeroed_fdata(boxes)) if isinstance(boxes, Tangent) else (NoFData, NoFData)
    scope = outside_state.enter(link=(outside_state.current(), OUTER_TANGENTS))
    try:
        out, pullback = call_rrule2((g, g_fd, g4[2], g_fdt), *duals, **named)
    finally:
        outside_state.leave(scope, lambda: pullback(NoRData, NoRData))  # (a refusal: what it wrote put back first)
    written = captured_state(g)
    if has_aux:
        value, value_t, aux, aux_t, (rs, rsd) = _pull_aux(out, pullback, g)
    else:
        value, value_t, aux, aux_t = T.structural_copy(out[0]), out[2], None, None
        rs, rsd = _pull_unit(out, pullback, g, "grad")
    keep_writes(g, written, "yb.hvp/yb.hessian over yb.grad (third order)")
    grads = tuple(_join(fd, r, x) for fd, r, x in zip(fdata, rs[1:], copies))
    products = tuple(_join(fd, r, x) for fd, r, x in zip(fdata_t, rsd[1:], copies))
    value_t = 0.0 if value_t is NoTangent else value_t
    return value, value_t, aux, aux_t, grads, products


def _psi_pullback(g4: tuple, xs: tuple, directions: tuple, us: list, value_bar: float, value_bar_d: float,
                  aux_bars: tuple | None = None, keywords: dict | None = None,
                  opened: dict | None = None, outer: dict | None = None) -> tuple[list, list, tuple]:
    """Gradient of ``psi(x, u) = value_bar g(x) + D g(x)[u]`` in ``x`` (the arguments, then the
    ``keywords``' values, whose ``u`` is zero) and its tangent along ``(directions, u's
    tangents)``, by second order of ``g``'s plain forward program: opened for a closure
    (``implicit_stationary._user_call``), so the cotangents of its captured variables and their
    tangents go into its boxes. With ``aux_bars`` (the aux's cotangent and its tangent) ``g``
    returns ``(value, aux)`` and ``psi`` has the term ``<aux_bar, aux(x)>`` too. A function
    passed in capturing variables (``opened``: its 4-tuple) keeps its boxes, into which its plain
    program, opened where it is called (``_opened_function_call``), sends their cotangents. Last,
    ``g``'s own rdata and its tangent (a partial's stored numbers'). The outside objects the
    plain program reads are ``outer``'s (the memo of the pass around the call): their outer
    fdata, tangent and fdata tangent, as a closure's boxes."""
    g, opened = g4[0], opened or {}
    inputs: list = [g4]
    for k, (x, d, u) in enumerate(zip(xs, directions, us)):
        inputs += [opened[k] if k in opened else (x, zero_fdata(x), d, zero_fdata(x)), u]
    for x, d in (keywords or {}).values():
        inputs += [(x, zero_fdata(x), d, zero_fdata(x)), _constant(_zero_tangent_of(x))]
    c = _Composition(inputs)
    positional = [(1 + 2 * k, 2 + 2 * k) for k in range(len(xs))]
    named = {name: (1 + 2 * (len(xs) + k), 2 + 2 * (len(xs) + k)) for k, name in enumerate(keywords or {})}
    with pass_scope(outer):  # (the outside state the plain program reaches: its own, but for the outer parts)
        slot = _psi_call(c, g4, positional, named)
    out, pullback = c.values[slot], lambda dy, dy_d: c.pull({slot: [dy, dy_d]})
    if aux_bars is not None:
        rs, rsd = pullback(*_aux_pair_seeds(out, g, value_bar, value_bar_d, aux_bars))
        return _argument_cotangents(c, rs, rsd)
    _check_scalar(out[0][0], g, "grad")
    seeds, seeds_d = [value_bar, 1.0], [value_bar_d, 0.0]
    for k in range(2):
        if isinstance(out[0][k], np.ndarray):  # a 0-d array: its cotangent goes into its fdata
            out[1][k][...] += seeds[k]
            out[3][k][...] += seeds_d[k]
            seeds[k] = seeds_d[k] = NoRData
    rs, rsd = pullback(tuple(seeds), tuple(seeds_d))
    return _argument_cotangents(c, rs, rsd)


def _psi_call(c: _Composition, g4: tuple, positional: list, named: dict) -> int:
    """The slot of ``g``'s plain program's result, called in ``c`` on the arguments' slots."""
    if _carries_captured(g4):
        return _user_call(c, 0, positional, named, closure_refusal("yb.grad"))
    # jvp_call(g, NoTangent, x1, u1, ..., k=v, _t_k=0): g's plain program, its captured values constants
    slots = [0, c.add(_constant(NoTangent))] + [s for pair in positional for s in pair]
    keyword_slots = {}
    for name, (value, direction) in named.items():
        keyword_slots[name], keyword_slots[TANGENT_KEYWORD + name] = value, direction
    return c.call(_function(jvp_call), slots, keyword_slots)


def _argument_cotangents(c: _Composition, rs: tuple, rsd: tuple) -> tuple[list, list, tuple]:
    """The cotangents (and their tangents) of the arguments' slots ``1, 3, 5...`` of ``c``'s
    inputs (``pull`` puts its own rdata first), and the rdata pair of the function's, slot 0."""
    grads, grads_t = [], []
    for slot in range(1, c.n_inputs, 2):
        x4 = c.values[slot]
        grads.append(join(x4[1], rs[1 + slot]))
        grads_t.append(join(x4[3], rsd[1 + slot]))
    return grads, grads_t, (rs[1], rsd[1])


def _aux_pair_seeds(out: tuple, g: Any, value_bar: float, value_bar_d: float, aux_bars: tuple) -> tuple:
    """Seeds of the plain program's output ``((value, aux), (value_t, aux_t))``: cotangent
    ``((value_bar, aux_bar), (1, 0))`` with tangent ``((value_bar_d, aux_bar_d), (0, 0))`` (array
    parts into the output's fdata)."""
    (y, y_t), fdata, fdata_t = out[0], out[1], out[3]
    value, aux = split_aux(y, "grad", g)
    _check_scalar(value, g, "grad")
    zero = T.zero_tangent(aux)
    aux_bar, aux_bar_d = (zero if a is NoTangent or a is NoRData else a for a in aux_bars)

    def seed(fd: Any, k: int, cotangent: Any) -> Any:
        return seed_output(CoDual((y, y_t)[k], fd[k] if isinstance(fd, tuple) else NoFData), cotangent)

    return ((seed(fdata, 0, (_shaped(value, value_bar), aux_bar)), seed(fdata, 1, (_shaped(value, 1.0), zero))),
            (seed(fdata_t, 0, (_shaped(value, value_bar_d), aux_bar_d)), seed(fdata_t, 1, (_shaped(value, 0.0), zero))))


from .composition import _dual_tangent, _zeroed_fdata  # noqa: E402 - partials' tangents and fdata
from .composition import _shaped, bound_positionally, deliver, gradient_rrule, positional_parameters  # noqa: E402 - reverse over yb.grad, and yb.vjp/jvp in every mode

_register_second_order((_grad, _value_and_grad), gradient_maker_rule)
protocols.GRADIENT_CALLS.update(reverse=gradient_rrule, forward=gradient_frule, second=gradient_rule,
                                gradient_call=_gradient_call)


def _opened_function_call(call: Any) -> int | None:
    """A call, in a plain program under third order, of a Python function passed in that captures
    variables of the differentiated code (the pulled-back function of ``yb.vjp``, ``yb.linearize``
    and ``yb.jacobian``, reaching their pairings): its plain program opened, as the gradient's own
    function's is (``_psi_pullback``), so their derivatives follow. (``third_order.FOLLOWED_CALLS``.)"""
    f4 = call.composition.values[call.function_slot]
    if not (isinstance(call.f, types.FunctionType) and call.f.__closure__ and _carries_captured(f4)):
        return None
    return _user_call(call.composition, call.function_slot, list(call.arg_slots), dict(call.keyword_slots),
                      closure_refusal("the function of yb.vjp, yb.linearize or yb.jacobian"))


FOLLOWED_CALLS.append(_opened_function_call)
