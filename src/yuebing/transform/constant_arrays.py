"""New constant arrays inside elementwise arithmetic: ``np.exp(-d ** 2) + s * np.eye(n)``.

Python evaluates ``np.eye(n)`` after the exponential, so the normal form puts its call between
the two runs of elementwise statements, and the array blocks of every mode (reverse
``array_blocks``, forward ``forward_blocks``, second order ``dual_blocks``) split there: the first
block hands its value on with a zero-filled fdata (a fresh tangent in forward mode) that the
second accumulates into, one array more to hold and two passes more over it.

A new array of an order or a shape (``np.eye``, ``np.identity``, ``np.zeros``, ``np.ones`` of one
variable or int) depends on nothing the run before it computes and does nothing else, so it is moved to the
front of that run (``hoist_new_arrays``), and the two runs become one block that takes the array
as an input. Every mode moves them before it looks for blocks of any kind, float blocks too:
reverse mode looks once per pass, and a move between its searches made the two passes find
different blocks (fuzzer seed 32012). Where the array is a temporary of the normal form that
nothing but that block reads, nothing can write into it or hold it, so it needs no fdata at all:
the statement is marked ``constant_array`` and reverse mode's inline template gives it
``NoFData``, and the statements of the run are marked as reading it as a constant
(``constant_inputs``): every mode's block then spends no derivative work on it (no cotangent; a
tangent known to be zero, not read).
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..ir import nodes as ir
from .float_blocks import names_read

_NEW_OF_ORDER = frozenset({np.eye, np.identity, np.zeros, np.ones})
_TEMPORARY = re.compile(r"_t\d+")


def is_new_constant_array(s: object, integers: set, resolve: Callable) -> bool:
    """Whether ``s`` is ``t = np.eye(n)`` (``identity``, ``zeros``, ``ones``) of a variable or an
    int: a new float64 array, or a TypeError."""
    if not isinstance(s, ir.Call) or not s.target or s.kwargs or s.star_args is not None \
            or s.star_kwargs is not None or len(s.args) != 1:
        return False
    a = s.args[0]  # a variable (an int at run time, or the call raises: a new array or nothing)
    if not (isinstance(a, ir.Var) or isinstance(a, ir.Const) and type(a.value) is int):
        return False
    func = s.func.value if isinstance(s.func, ir.Const) else resolve(s.func)
    try:
        return func in _NEW_OF_ORDER
    except TypeError:  # an unhashable callable
        return False


def hoist_new_arrays(body: list, fits: Callable[[Any], bool], integers: set, resolve: Callable) -> None:
    """Move each new constant array that stands between two runs of statements that ``fits``
    to the front of the first run (``body`` is reordered in place), and mark it
    ``constant_array`` where it is a temporary only the joined run reads."""
    k = 1
    while k < len(body) - 1:
        s = body[k]
        if fits(body[k - 1]) and fits(body[k + 1]) and is_new_constant_array(s, integers, resolve):
            start = k
            while start > 0 and fits(body[start - 1]):
                start -= 1
            if _movable(s, body[start:k]):
                body[start + 1:k + 1] = body[start:k]
                body[start] = s
                _mark_constant(s, body, start + 1, fits)
        k += 1


def _movable(s: ir.Call, before: list) -> bool:
    """Whether ``s`` may run ahead of the statements ``before``: none of them reads or assigns
    its target, or assigns its argument."""
    assigned = {t.target for t in before if isinstance(t, ir.Call)}
    argument = s.args[0].name if isinstance(s.args[0], ir.Var) else None
    return s.target not in assigned and argument not in assigned and s.target not in names_read(before, set())


def _mark_constant(s: ir.Call, body: list, start: int, fits: Callable[[Any], bool]) -> None:
    stop = start
    while stop < len(body) and fits(body[stop]):
        stop += 1
    run = {id(t) for t in body[start:stop]}
    others = [t for t in body if t is not s and id(t) not in run]
    if _TEMPORARY.fullmatch(s.target) and s.target not in names_read(others, set()) \
            and not any(isinstance(t, ir.Call) and t.target == s.target for t in others):
        s.constant_array = True  # type: ignore[attr-defined]
        for t in body[start:stop]:  # what the blocks made of the run read as constants
            t.constant_inputs = constant_inputs([t]) | {s.target}


def constant_inputs(stmts: list) -> frozenset:
    """The marked new constant arrays that the statements of a block read."""
    return frozenset().union(*(getattr(t, "constant_inputs", ()) for t in stmts))
