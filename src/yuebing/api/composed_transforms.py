"""``yb.jacobian``, ``yb.hessian`` and ``yb.hvp`` called inside a differentiated function (issue 16
item 5: transforms nest in either order).

Each is differentiated as its Python definition (``rules/_nested_definitions.py``): a Jacobian's
rows are pullbacks of unit cotangents (gradients of pairings), a Hessian is the Jacobian of
``yb.grad(f)``, a Hessian-vector product the gradient of the pairing of the gradient with the
tangents. Differentiating those is differentiating ``yb.grad``, which reverse and forward mode
know (``api/nested.py``): ``yb.grad`` over ``yb.jacobian`` (a Jacobian penalty), ``yb.jvp`` over
it, ``yb.jacobian`` of ``yb.jacobian``, ``yb.grad`` over ``yb.hessian`` and ``yb.hvp`` (third
derivatives, by reverse over reverse over reverse).

``yb.jacobian(f)`` and ``yb.hessian(f)`` made inside the function carry ``f``'s derivative data
(a closure's captured variables), as ``np.vectorize`` objects do; one made outside carries its
own structural tangent, whose field ``f`` holds it. Refused with ``NestedDifferentiationError``:
``has_aux``, keyword arguments of the call, a Hessian with several argnums, and second order over
these (a Hessian of a function calling them: use ``yb.grad`` over ``yb.grad`` instead).
"""
from __future__ import annotations

import types
from typing import Any, Callable

from ..rules import _nested_definitions as definitions
from ..rules.core import CoDual, Dual, primal, register_frule, register_rrule
from ..rules.second_order import _register as _register_second_order
from ..tangents import MutableTangent, NoFData, NoRData, NoTangent, Tangent
from ..transform.forward_runtime import NestedDifferentiationError, call_frule
from ..transform.runtime import call_rrule
from ..transform.lifting import _python_rule
from ..transform.third_order import _constant
from .composed_second_order import refuse_fourth_order, register as register_second_order
from .composition import _defined
from .jacobians import Jacobian, jacobian
from .reverse import grad
from .second_order import Hessian, hessian, hvp


def _function_part(data: Any) -> Any:
    """The derivative data of the wrapped ``f`` in an object's: the object's own when the
    maker's rule made it (``f``'s), else its structural tangent's field ``f``."""
    if isinstance(data, (Tangent, MutableTangent)) and getattr(data, "primal_type", None) in (Jacobian, Hessian):
        return data.fields.get("f", NoFData if isinstance(data, MutableTangent) else NoTangent)
    return data


def _called_object(r: Any) -> Any:
    """The rdata of an object from what a call of it gave back (the rdata of its bound
    ``__call__``, whose ``__self__`` it is)."""
    if isinstance(r, Tangent) and r.primal_type is types.MethodType:
        return r.fields.get("__self__", NoRData)
    return r


def _maker_rules(public: Callable) -> None:
    """``yb.jacobian(f, ...)`` / ``yb.hessian(f, ...)`` in differentiated code: the object,
    carrying ``f``'s fdata (reverse), tangent (forward) or both (second order)."""

    def reverse(f: CoDual, *args: Any, **kwargs: Any) -> tuple:
        made = public(f.primal, *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
        # the object's rdata is f's (a partial's stored numbers), as its fdata is
        rest = (NoRData,) * (len(args) + len(kwargs))
        return CoDual(made, f.fdata), lambda dy: (NoRData, _called_object(dy), *rest)

    def forward(f: Dual, *args: Any, **kwargs: Any) -> Dual:
        made = public(f.primal, *(primal(a) for a in args), **{k: primal(v) for k, v in kwargs.items()})
        return Dual(made, f.tangent)

    def second(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        made = public(args[0][0], *(a[0] for a in args[1:]), **{k: v[0] for k, v in kwargs.items()})
        rest = (NoRData,) * (len(args) + len(kwargs) - 1)
        return (made, args[0][1], args[0][2], args[0][3]), \
            lambda dy, dy_d: ((NoRData, _called_object(dy), *rest), (NoRData, _called_object(dy_d), *rest))

    register_rrule(public, reverse)
    register_frule(public, forward)
    _register_second_order((public,), second)


def _check(obj: Any, kwargs: dict, name: str) -> None:
    if kwargs or getattr(obj, "has_aux", False):
        raise NestedDifferentiationError(
            f"differentiating a function that calls a {name} function with has_aux or keyword arguments is not "
            "supported yet; pass keyword arguments positionally (or bind them with functools.partial)")
    if getattr(obj, "holomorphic", False):  # the definitions below take real Jacobians only
        raise NestedDifferentiationError(
            f"differentiating a function that calls a {name} function with holomorphic=True is not supported "
            "yet; split the complex arguments into real and imaginary parts")
    if name == "yb.hessian" and isinstance(obj.argnums, (tuple, list)):
        raise NestedDifferentiationError(
            "differentiating a function that calls a yb.hessian function of several argnums is not supported "
            "yet; take the Hessian of one argument at a time")


def _call_rules(cls: type, definition: Callable, name: str) -> None:
    """A call of a ``cls`` object: ``definition(f, argnums, *args)`` differentiated as user code."""

    def reverse(obj: CoDual, *args: CoDual, **kwargs: Any) -> tuple:
        _check(obj.primal, kwargs, name)
        f = CoDual(obj.primal.f, _function_part(obj.fdata))
        out, pullback = call_rrule(CoDual(definition, NoFData), f, CoDual(obj.primal.argnums, NoFData), *args)
        own = f.fdata is obj.fdata  # (made by the maker's rule: its rdata is f's)

        def call_pullback(dy: Any) -> tuple:
            rs = pullback(dy)
            return (NoRData, rs[1] if own else NoRData) + tuple(rs[3:])

        return out, call_pullback

    def forward(obj: Dual, *args: Dual, **kwargs: Any) -> Dual:
        _check(obj.primal, kwargs, name)
        f = Dual(obj.primal.f, _function_part(obj.tangent))
        return call_frule(Dual(definition, NoTangent), f, Dual(obj.primal.argnums, NoTangent), *args)

    register_rrule(cls.__call__, reverse)
    register_frule(cls.__call__, forward)
    register_second_order(cls.__call__, _second_order_call(definition, name) if cls is Jacobian
                          else refuse_fourth_order(name))


def _second_order_call(definition: Callable, name: str) -> Callable:
    """Second order of a call of a ``yb.jacobian`` object: its definition's (third derivatives of
    its function, through ``yb.grad`` of the pairing)."""
    run = _python_rule(definition)

    def second(f4: tuple, args: tuple, kwargs: dict) -> tuple:
        obj4, args = args[0], args[1:]
        _check(obj4[0], kwargs, name)
        f = (obj4[0].f,) + tuple(_function_part(part) for part in obj4[1:])
        out, pullback = run(f4, (f, _constant(obj4[0].argnums)) + tuple(args), {})
        own = f[1] is obj4[1]  # (made by the maker's rule: its rdata is f's)
        return out, lambda dy, dy_d: tuple((NoRData, r[1] if own else NoRData, *r[3:]) for r in pullback(dy, dy_d))

    return second


def _register() -> None:
    definitions.GRAD = grad
    _maker_rules(jacobian)
    _maker_rules(hessian)
    _call_rules(Jacobian, definitions.jacobian_definition, "yb.jacobian")
    _call_rules(Hessian, definitions.hessian_definition, "yb.hessian")
    reverse, forward = _defined(definitions.hvp_definition, "yb.hvp")
    register_rrule(hvp, reverse)
    register_frule(hvp, forward)
    register_second_order(hvp, refuse_fourth_order("yb.hvp"))


_register()
