"""Second order over the transforms a function calls: ``yb.hessian``/``yb.hvp`` (and so
``yb.jvp``/``yb.jacobian`` over ``yb.grad``) of a function that calls ``yb.jvp``, ``yb.linearize``,
``yb.vjp`` and its pullback, or ``yb.jacobian`` (third derivatives of the inner function).

* ``yb.jvp(f, primals, tangents)`` is the plain forward program of ``f``
  (``transform/plain_forward.py``) on ``(primal, tangent)`` pairs: its second-order rule is the
  rule of one ``jvp_call`` (``transform/third_order.jvp_rule``), the primals and tangents unpacked
  from their tuples; ``has_aux``'s pair ``((value, aux), (value_t, aux_t))`` handed on as
  ``(value, value_t, aux)``. A closure made in the differentiated code is *opened*
  (``implicit_stationary._user_call``): its captured variables are parameters of its plain program
  read through their cells, so their outer derivatives follow (perturbations apart: the inner
  tangent is the arguments' only).
* ``yb.vjp``, ``yb.linearize`` and ``yb.jacobian`` are differentiated as their Python definitions
  (``rules/_nested_definitions.py``), written with ``yb.grad`` of a pairing and ``yb.jvp``, whose
  second-order rules are the third-order ones (``api/nested.gradient_rule``, ``jvp`` above).

Through ``yb.vjp``, ``yb.linearize`` and ``yb.jacobian`` the inner function is an argument of a
pairing: a Python function capturing variables of the differentiated code is opened where the
pairing calls it (``api/nested._opened_function_call``).
``yb.hessian`` and ``yb.hvp`` called inside are fourth derivatives: refused by name.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..rules.second_order import _register as _register_second_order
from ..rules.util import zero_fdata
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from ..transform import batched_second_order as batched
from ..transform import batched_second_order_rules as batched_rules
from ..transform.forward_runtime import NestedDifferentiationError
from ..transform.lifting import _python_rule, _zero_tangent_of
from ..transform.plain_forward import jvp_call
from ..rules import outside_state
from ..transform.third_order_outside import pass_scope
from ..transform.second_order import CellTangent
from ..transform.third_order import _Composition, _constant, _function, jvp_rule
from .implicit_stationary import _user_call

_JVP_CALL = _function(jvp_call)


def captures_derivatives(fdata: Any) -> bool:
    """Whether a gradient function's fdata (its function's closure boxes, when that function was
    made in differentiated code) holds anything that can carry a derivative."""
    if fdata is NoFData or fdata is NoTangent:  # (NoTangent: the empty field of an object's tangent)
        return False
    if not isinstance(fdata, Tangent):
        return True
    for box in fdata.fields.values():
        content = box.fields.get("cell_contents", NoTangent) if isinstance(box, MutableTangent) else box
        if content is not NoTangent and content is not NoFData:
            return True
    return False


def captured_tangents(tangent: Any) -> bool:
    """Whether a function's second-order tangent carries tangents of captured variables (a
    closure made in the differentiated code; a global closure's are constant zeros)."""
    return isinstance(tangent, Tangent) and any(
        isinstance(v, CellTangent) and v.value is not NoTangent for v in tangent.fields.values())


def check_jvp_call(primals: Any, tangents: Any, mode: str) -> None:
    if type(primals) is not tuple or type(tangents) is not tuple:
        raise NestedDifferentiationError(
            f"{mode} over yb.jvp takes primals and tangents as tuples; write jvp(f, (x,), (dx,))")


def elements(packed: tuple) -> list[tuple]:
    """The 4-tuples of the elements of a tuple's 4-tuple (its fdata and tangents are tuples of the
    elements', or nothing)."""
    values, fdata, tangent, fdata_t = packed
    parts = []
    for i, v in enumerate(values):
        parts.append((v, fdata[i] if isinstance(fdata, tuple) else zero_fdata(v),
                      tangent[i] if isinstance(tangent, tuple) else _zero_tangent_of(v),
                      fdata_t[i] if isinstance(fdata_t, tuple) else zero_fdata(v)))
    return parts


def packed_rdata(parts: tuple) -> Any:
    """The rdata of a tuple from its elements' (nothing when none has any)."""
    return NoRData if all(r is NoRData for r in parts) else tuple(parts)


def jvp_second_order(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
    """Second-order rule of ``yb.jvp(f, primals, tangents)``: the rule of ``jvp_call(f, NoTangent,
    p1, t1, ...)``, whose value is the pair ``(f(*primals), J tangents)``."""
    fn4, primals4, tangents4 = args[:3]
    has_aux = args[3][0] if len(args) > 3 else kwargs["has_aux"][0] if "has_aux" in kwargs else False
    check_jvp_call(primals4[0], tangents4[0], "second order")
    ps, ts = elements(primals4), elements(tangents4)
    if len(ps) != len(ts):
        raise TypeError(f"yb.jvp: {len(ps)} primals but {len(ts)} tangents")
    interleaved = [part for p, t in zip(ps, ts) for part in (p, t)]
    # (the outside state f's plain program reaches, and its tangents, are its own; the outside
    # objects themselves carry the outer pass's parts: a module dict it wrote x into)
    with pass_scope(outside_state.current()):
        if captures_derivatives(fn4[1]) or captured_tangents(fn4[2]):
            out, pullback = _opened_jvp(fn4, interleaved)
        else:
            out, pullback = jvp_rule(_JVP_CALL, (fn4, _constant(NoTangent), *interleaved), {})
    n_rest = len(args) - 3 + len(kwargs)
    if has_aux:
        out, pullback = _aux_triple(out, pullback)

    partial = isinstance(fn4[0], functools.partial)  # (its stored numbers' rdata is its own)

    def unpacked(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = pullback(dy, dy_d)  # jvp_call, f, f's tangent, then p1, t1, p2, t2, ...
        return tuple((NoRData, r[1] if partial else NoRData, packed_rdata(r[3::2]), packed_rdata(r[4::2]))
                     + (NoRData,) * n_rest for r in (rs, rsd))

    return out, unpacked


def closure_refusal(name: str) -> Callable[[Any, str], Exception]:
    """The error for what third order through ``name`` cannot follow in a function's captured
    variables (``implicit_stationary._user_call``'s ``refuse``)."""
    def refuse(fun: Any, what: str) -> Exception:
        return NestedDifferentiationError(
            f"second order over {name}: yuebing takes third derivatives of {getattr(fun, '__name__', fun)} with respect "
            f"to its arguments and the variables it captures, not through {what}; pass them to it as arguments")
    return refuse


def _opened_jvp(fn4: tuple, interleaved: list) -> tuple[tuple, Callable]:
    """``jvp_call(f, p1, t1, ...)`` for a closure ``f`` capturing variables of the differentiated
    code: the second order of its plain program opened (the captured variables as parameters, read
    through their cells: ``implicit_stationary._user_call``), so their outer tangents and
    cotangents follow. Its pullback answers as ``jvp_rule``'s (``f``'s tangent's rdata empty)."""
    c = _Composition([fn4, *interleaved])
    slot = _user_call(c, 0, [(1 + 2 * k, 2 + 2 * k) for k in range(len(interleaved) // 2)], {},
                      closure_refusal("yb.jvp"))

    def pullback(dy: Any, dy_d: Any) -> tuple:
        rs, rsd = c.pull({slot: [dy, dy_d]})  # (the composition, f, p1, t1, ...)
        return tuple(r[:2] + (NoRData,) + r[2:] for r in (rs, rsd))

    return c.values[slot], pullback


def _aux_triple(out: tuple, pullback: Callable) -> tuple[tuple, Callable]:
    """``jvp_call``'s pair ``((value, aux), (value_t, aux_t))`` of a ``has_aux`` function as
    ``yb.jvp``'s ``(value, value_t, aux)``: the same objects (array cotangents reach them through
    the same fdata), and the rdata of the triple handed back as the pair's."""
    def part(whole: Any, i: int, j: int, none: Any) -> Any:
        inner = whole[i] if isinstance(whole, tuple) else none
        return inner[j] if isinstance(inner, tuple) else none

    def triple(whole: Any, none: Any) -> Any:
        parts = (part(whole, 0, 0, none), part(whole, 1, 0, none), part(whole, 0, 1, none))
        return none if none is not NoTangent and all(p is none for p in parts) else parts

    values = (out[0][0][0], out[0][1][0], out[0][0][1])
    triple_out = (values, triple(out[1], NoFData), triple(out[2], NoTangent), triple(out[3], NoFData))

    def pair_rdata(dy: Any) -> Any:
        if not isinstance(dy, tuple):
            return NoRData
        return (dy[0], dy[2]), (dy[1], NoRData)

    return triple_out, lambda dy, dy_d: pullback(pair_rdata(dy), pair_rdata(dy_d))


def defined_second_order(definition: Any, name: str) -> Callable:
    """Second-order rule of a transform written as a Python ``definition`` (``yb.vjp``,
    ``yb.linearize``): its function may capture variables of the differentiated code."""
    run = _python_rule(definition)

    def rule(f4: tuple, args: tuple, kwargs: dict) -> tuple[tuple, Callable]:
        if any(v[0] for v in kwargs.values()):
            raise NestedDifferentiationError(
                f"second order over {name} with {', '.join(kwargs)}= is not supported yet")
        out, pullback = run(f4, args, {})
        return out, lambda dy, dy_d: tuple(r + (NoRData,) * len(kwargs) for r in pullback(dy, dy_d))

    return rule


def refuse_fourth_order(name: str) -> Callable:
    def refuse(f4: tuple, args: tuple, kwargs: dict) -> Any:
        raise NestedDifferentiationError(
            f"fourth derivatives: second order (yb.hessian/yb.hvp, or yb.jvp/yb.jacobian over yb.grad) of a "
            f"function that calls {name} is not supported; take the outer derivative with yb.grad or yb.jvp "
            f"(a gradient of {name}'s result works), or call yb.grad inside instead")
    return refuse


def _one_direction_per_pass(f: tuple, args: tuple, kwargs: dict) -> Any:
    raise batched.Unbatched("third derivatives run one direction per pass")


def register(public: Any, rule: Callable) -> None:
    """``public``'s second-order rule; a batched Hessian pass reaching it is dropped before it
    runs (its columns are then computed one pass each, as through ``yb.grad``)."""
    _register_second_order((public,), rule)
    batched_rules._SPECIAL[public] = _one_direction_per_pass


__all__ = ["captured_tangents", "captures_derivatives", "check_jvp_call", "defined_second_order", "jvp_second_order", "register", "refuse_fourth_order"]
