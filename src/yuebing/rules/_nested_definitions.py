"""``yb.vjp`` and ``yb.linearize`` called inside differentiated code, written as ordinary Python
that every mode differentiates like user code (so it lives outside the machinery that the
transforms refuse to follow, ``transform/protocols._MACHINERY``).

A pullback is the gradient of a pairing: ``vjp(f, *p)[1](ct) == grad(pairing, argnums=1)(f, p,
ct)`` with ``pairing(f, p, ct) = <f(*p), ct>``; a linearized function is ``yb.jvp`` at the saved
point. Differentiating them is then differentiating ``yb.grad`` and ``yb.jvp``, which each mode
knows (``api/nested.py``, ``api/composition.py``). The gradient and ``jvp`` functions are the
public API's: ``api/composition.py`` sets ``PULLBACK`` and ``JVP`` when yuebing is imported
(rules never import the API).
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

#: filled in by ``api/composition.py``: ``grad(pairing, argnums=1)`` and ``yb.jvp``
PULLBACK: Any = None
JVP: Any = None


def inner(y: Any, c: Any) -> Any:
    """``<y, c>``: the real inner product of an output and its cotangent (floats, float arrays,
    and tuples or lists of them)."""
    if type(y) is tuple or type(y) is list:
        total = 0.0
        for a, b in zip(y, c):
            total = total + inner(a, b)
        return total
    return np.sum(y * c)


def pairing(f: Callable, primals: tuple, cotangent: Any) -> Any:
    """``<f(*primals), cotangent>``: its gradient in ``primals`` is the pullback of ``cotangent``."""
    return inner(f(*primals), cotangent)


def vjp_definition(f: Callable, *primals: Any) -> tuple:
    """``yb.vjp(f, *primals)``: the value, and the pullback as a gradient of the pairing."""
    return f(*primals), functools.partial(PULLBACK, f, primals)


def linearized(f: Callable, primals: tuple, *tangents: Any) -> Any:
    """The linearized function of ``yb.linearize``: the JVP at the saved point."""
    return JVP(f, primals, tangents)[1]


def linearize_definition(f: Callable, *primals: Any) -> tuple:
    """``yb.linearize(f, *primals)``: the value and the linearized function."""
    return f(*primals), functools.partial(linearized, f, primals)
