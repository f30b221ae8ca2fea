"""``check_third_order``: a primitive under ``yb.grad`` inside a Hessian (third derivatives).

For a primitive ``f`` and its arguments, two functions are written (as source: third order
differentiates the function under ``yb.grad`` from its plain forward program, which takes no
``*args``):

* ``s(x1, ..., xk)``, the scalar test function of ``check_second_order`` with the differentiable
  arguments as parameters: ``<w, f(...)> + 0.1 |f(...)|^2 + sum_i <u_i, x_i after the call>``;
* ``F(x1, ..., xk) = sum_i <v_i, grad(s)(x)_i>``, a function that takes a gradient.

``check_second_order(F, *xs)`` then checks ``F``'s Hessian-vector products (third derivatives of
``f``) against central differences of ``F``'s gradient, which is reverse over reverse (second
derivatives of ``f`` only).
"""
from __future__ import annotations

import itertools
import linecache
from typing import Any, Callable

import numpy as np

from .. import tangents as T
from .second_order import check_second_order, differentiable_positions
from .targets import _project, weights

_counter = itertools.count()


class NotThirdOrderCheckable(Exception):
    """The case's differentiable arguments are not all floats and real float arrays."""


def _define(source: str, namespace: dict, name: str) -> Callable:
    filename = f"<third order check {next(_counter)}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own generated test code
    return namespace[name]


def third_order_functions(f: Callable, args: tuple, kwargs: dict | None = None, seed: int = 0) -> tuple[Callable, tuple]:
    """``(F, xs)``: the function taking a gradient and its differentiable arguments."""
    from .. import api

    at = differentiable_positions(args)
    if not 1 <= len(at) <= 4 or not all(
            isinstance(args[i], float) or isinstance(args[i], np.ndarray) and args[i].dtype == np.float64 for i in at):
        raise NotThirdOrderCheckable(f"differentiable arguments {[type(args[i]).__name__ for i in at]}")
    kwargs = dict(kwargs or {})
    rng = np.random.default_rng(seed)
    y = f(*T.structural_copy(args), **kwargs)
    after = T.structural_copy(args)
    f(*after, **kwargs)
    namespace: dict[str, Any] = {"_f": f, "_project": _project, "_w": weights(rng, y), "_grad": api.grad}
    xs = [f"x{k}" for k in range(len(at))]
    call = []
    for i, a in enumerate(args):
        if i in at:
            call.append(xs[at.index(i)])
        else:
            namespace[f"_a{i}"] = a
            call.append(f"_a{i}")
    for key, value in kwargs.items():
        namespace[f"_k_{key}"] = value
        call.append(f"{key}=_k_{key}")
    terms = [f"_project(_f({', '.join(call)}), _w)"]
    for k, i in enumerate(at):
        namespace[f"_u{k}"] = weights(rng, after[i])
        namespace[f"_v{k}"] = weights(rng, args[i])
        terms.append(f"_project(x{k}, _u{k})")
    params = ", ".join(xs)
    _define(f"def s({params}):\n    return {' + '.join(terms)}\n", namespace, "s")  # F calls it
    outer = " + ".join(f"_project(gradients[{k}], _v{k})" for k in range(len(at)))
    argnums = ", ".join(str(k) for k in range(len(at)))
    F = _define(f"def F({params}):\n    gradients = _grad(s, argnums=({argnums},))({params})\n    return {outer}\n",
                namespace, "F")
    return F, tuple(T.structural_copy(args[i]) for i in at)


def check_third_order(f: Callable, *args: Any, kwargs: dict | None = None, rtol: float = 1e-5,
                      atol: float = 1e-6, seed: int = 0) -> None:
    """Raise AssertionError unless third derivatives of ``f`` at ``args`` (through ``yb.grad``
    inside ``yb.hvp``) match central differences of reverse over reverse."""
    F, xs = third_order_functions(f, args, kwargs, seed)
    check_second_order(F, *xs, rtol=rtol, atol=atol, seed=seed + 7)


__all__ = ["NotThirdOrderCheckable", "check_third_order", "third_order_functions"]
