"""``yb.vjp`` and ``yb.linearize`` called inside differentiated code, written as ordinary Python
that every mode differentiates like user code (so it lives outside the machinery that the
transforms refuse to follow, ``transform/protocols._MACHINERY``).

A pullback is the gradient of a pairing: ``vjp(f, a, b)[1](ct) == grad(pairing2, argnums=(1,
2))(f, a, b, ct)`` with ``pairing2(f, a, b, ct) = <f(a, b), ct>``; a linearized function is
``yb.jvp`` at the saved point. Differentiating them is then differentiating ``yb.grad`` and
``yb.jvp``, which each mode knows (``api/nested.py``, ``api/composition.py``). The gradient and
``jvp`` functions are the public API's: ``api/composition.py`` and ``api/composed_transforms.py``
set ``JVP`` and ``GRAD`` when yuebing is imported (rules never import the API).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..tangents import NoTangent

#: filled in by ``api/composition.py``: ``yb.jvp``
JVP: Any = None
#: filled in by ``api/composed_transforms.py``: ``yb.grad``
GRAD: Any = None


def inner(y: Any, c: Any) -> Any:
    """``<y, c>``: the real inner product of an output and its cotangent (floats, float arrays,
    and tuples or lists of them)."""
    if isinstance(y, (tuple, list)):
        total = 0.0
        for a, b in zip(y, c):
            total = total + inner(a, b)
        return total
    return np.sum(y * c)


# the pairing for one, two and three arguments written out (the common calls' plain programs stay
# simple); more arguments take the pairing of a star parameter, which third order follows too.
# Each primal is its own argument of the gradient, so an array passed twice is separated, as
# yb.vjp separates it (a tuple of primals would share its tangent: the total derivative in each)


def pairing1(f: Callable, a: Any, cotangent: Any) -> Any:
    return inner(f(a), cotangent)


def pairing2(f: Callable, a: Any, b: Any, cotangent: Any) -> Any:
    return inner(f(a, b), cotangent)


def pairing3(f: Callable, a: Any, b: Any, c: Any, cotangent: Any) -> Any:
    return inner(f(a, b, c), cotangent)


def pairing_of_many(f: Callable, *arguments: Any) -> Any:
    """The pairing of any number of arguments (the cotangent last)."""
    return inner(f(*arguments[:-1]), arguments[-1])


#: the gradients of these are pullbacks of yb.vjp (api/nested.py names their arguments so)
PAIRINGS = (pairing1, pairing2, pairing3, pairing_of_many)


def _carries_floats(v: Any) -> bool:
    """Whether argument ``v`` of the pulled-back function may carry a derivative: not an int, a
    bool, None, a string or an int array (their cotangent is ``NoTangent``, as ``yb.vjp``'s)."""
    if isinstance(v, np.ndarray):
        return v.dtype.kind in "fc"
    return not isinstance(v, (int, str, bytes, type(None), np.integer, np.bool_))


def pullback(f: Callable, primals: tuple, cotangent: Any) -> tuple:
    """The pullback of ``cotangent`` at ``primals``: the gradient of the pairing in the primals
    that carry floats (``NoTangent`` for the others). (The pairings are chosen by branches, not
    read from a global list: a batched Hessian pass that reached an outside container could not
    be dropped.)"""
    n = len(primals)
    nums = tuple(i + 1 for i in range(n) if _carries_floats(primals[i]))
    if not nums:
        return (NoTangent,) * n
    if n == 1:
        pulled = GRAD(pairing1, argnums=nums)(f, primals[0], cotangent)
    elif n == 2:
        pulled = GRAD(pairing2, argnums=nums)(f, primals[0], primals[1], cotangent)
    elif n == 3:
        pulled = GRAD(pairing3, argnums=nums)(f, primals[0], primals[1], primals[2], cotangent)
    else:
        pulled = GRAD(pairing_of_many, argnums=nums)(f, *primals, cotangent)
    out = [NoTangent] * n
    for k in range(len(nums)):
        out[nums[k] - 1] = pulled[k]
    return tuple(out)


def vjp_definition(f: Callable, *primals: Any) -> tuple:
    """``yb.vjp(f, *primals)``: the value, and the pullback as a gradient of the pairing."""
    return f(*primals), functools.partial(pullback, f, primals)


def linearized(f: Callable, primals: tuple, *tangents: Any) -> Any:
    """The linearized function of ``yb.linearize``: the JVP at the saved point."""
    return JVP(f, primals, tangents)[1]


def linearize_definition(f: Callable, *primals: Any) -> tuple:
    """``yb.linearize(f, *primals)``: the value and the linearized function."""
    return f(*primals), functools.partial(linearized, f, primals)


# ``yb.jacobian``, ``yb.hessian`` and ``yb.hvp`` inside differentiated code (api/composed_transforms.py):
# written with the pullback and ``yb.grad``, which every mode differentiates.


def jacobian_definition(f: Callable, argnums: Any, *args: Any) -> Any:
    """``yb.jacobian(f, argnums)(*args)`` for a float or float-array output: row ``k`` is the
    pullback of the ``k``-th unit cotangent (shaped ``output.shape + input.shape``)."""
    y = f(*args)
    nums = argnums if type(argnums) is tuple else (argnums,)
    size = np.size(y)
    pulled = []  # (not a list of lists per argnum: second order loses appends to [[]]'s inner lists)
    for k in range(size):
        unit = np.zeros(size)
        unit[k] = 1.0
        cotangent = unit.reshape(np.shape(y)) if np.ndim(y) else 1.0
        pulled.append(pullback(f, args, cotangent))
    jacobians = [np.reshape(np.array([row[n] for row in pulled]), np.shape(y) + np.shape(args[n])) for n in nums]
    return tuple(jacobians) if type(argnums) is tuple else jacobians[0]


def hessian_definition(f: Callable, argnums: Any, *args: Any) -> Any:
    """``yb.hessian(f, argnums)(*args)`` for one argnum: the Jacobian of the gradient."""
    return jacobian_definition(GRAD(f, argnums=argnums), argnums, *args)


def hvp_definition(f: Callable, primals: tuple, tangents: tuple) -> tuple:
    """``yb.hvp(f, primals, tangents)``: the value, the gradient, and the gradient of the pairing
    of the gradient with the tangents."""
    gradient = GRAD(f, argnums=tuple(range(len(primals))))
    return f(*primals), gradient(*primals), pullback(gradient, tuple(primals), tuple(tangents))
