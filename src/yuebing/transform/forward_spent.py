"""Forward array blocks computing into the memory of values they are done with.

A forward array block (``forward_blocks.ForwardArrayBlock``) holds each value and tangent in a
local of its own (SSA style) and deletes it after its last read. NumPy reuses the memory of a
temporary inside one expression (``a * b + c`` adds into the product), but never of a value a
variable holds, so every step of a block took a fresh array: for large arrays the C allocator
maps new memory and hands it back on each call, and the page faults cost several times the
arithmetic (``turing_broadcast_benchmark``'s JVP: 913 faults per call on 100 000-element
arrays, the function 554).

Here a step whose operand dies at it (``_b2 = _b1 - mu`` with ``_b1`` read no more, or
``_b5_t = -0.5 * _b4_t``) computes into that operand's memory when, at run time, it is a large
writable float64 array that owns its memory, that nothing but the block's local refers to
(a reference count, as ``buffers.spent_product`` checks) and that keeps the result's shape; any
other case computes as before. The values are the same to the bit (the same ufunc loops).
Small arrays take the plain expression after one inline size test, so small cases pay nothing.
"""
from __future__ import annotations

import ast
import operator
import sys
from typing import Any

import numpy as np

from . import buffers

#: elements from which a spent operand's memory is reused (below it allocation is cheap)
MIN_SPENT_SIZE = buffers.MIN_SIZE

_F64 = np.dtype(np.float64)
_SCALARS = frozenset({float, int, np.float64})
#: the reference count of an array held by nothing but the caller's local, seen from a helper
#: reading it as its parameter (getrefcount's own argument included)
_ONLY_CALLER = sys.getrefcount(object()) + 2

_OPERATOR_UFUNCS = {operator.add: "_np.add", operator.sub: "_np.subtract", operator.mul: "_np.multiply",
                    operator.truediv: "_np.true_divide"}
_AST_UFUNCS = {ast.Add: "_np.add", ast.Sub: "_np.subtract", ast.Mult: "_np.multiply", ast.Div: "_np.true_divide"}


def _spent(a: np.ndarray, other: Any) -> bool:
    """Whether ``a`` (a large array) may take a result of ``ufunc(a, other)``: float64, owning
    writable C-ordered memory nobody else refers to, and ``other`` a number or a float64 array
    of its shape."""
    return a.dtype is _F64 and a.base is None and a.flags.c_contiguous and a.flags.writeable \
        and (type(other) in _SCALARS or type(other) is np.ndarray and other.dtype is _F64 and other.shape == a.shape) \
        and sys.getrefcount(a) <= _ONLY_CALLER + 1 + (buffers._LENT.get(id(a)) is a)  # (+1: _spent's parameter)


def spent_first(ufunc: np.ufunc, a: np.ndarray, b: Any) -> Any:
    """``ufunc(a, b)``, in ``a``'s memory when the block is done with ``a`` (``_spent``)."""
    return ufunc(a, b, out=a) if _spent(a, b) else ufunc(a, b)


def spent_second(ufunc: np.ufunc, a: Any, b: np.ndarray) -> Any:
    """``ufunc(a, b)``, in ``b``'s memory when the block is done with ``b`` (``_spent``)."""
    return ufunc(a, b, out=b) if _spent(b, a) else ufunc(a, b)


def spent_unary(ufunc: np.ufunc, a: np.ndarray) -> Any:
    """``ufunc(a)``, in ``a``'s memory when the block is done with ``a`` (``_spent``)."""
    return ufunc(a, out=a) if _spent(a, 0.0) else ufunc(a)


def _guarded(name: str, spent_call: str, plain: str) -> str:
    """The expression taking ``spent_call`` for a large array ``name``, ``plain`` otherwise."""
    return f"({spent_call} if type({name}) is _ND and {name}.size >= _MIN_SPENT else {plain})"


def spent_primal(kind: str, func: Any, operands: list[str], plain: str, fname: str, spent: set[str]) -> str:
    """The expression of a block's step ``plain`` (``kind``, ``func`` of ``operands``; ``fname``
    the function's local) computed into an operand in ``spent`` where one is."""
    if kind == "binary" and func in _OPERATOR_UFUNCS:
        a, b = operands
        ufunc = _OPERATOR_UFUNCS[func]
        if a in spent:
            return _guarded(a, f"_spent_first({ufunc}, {a}, {b})", plain)
        if b in spent:
            return _guarded(b, f"_spent_second({ufunc}, {a}, {b})", plain)
    elif kind == "neg" and operands[0] in spent:
        return _guarded(operands[0], f"_spent_unary(_np.negative, {operands[0]})", plain)
    elif kind == "unary" and operands[0] in spent and isinstance(func, np.ufunc) and func.nin == 1 \
            and func.nout == 1:
        return _guarded(operands[0], f"_spent_unary({fname}, {operands[0]})", plain)
    return plain


def spent_tangent(expression: str, spent: set[str]) -> str:
    """A tangent's ``expression`` (``ta * b``, ``-0.5 * ta``, ``-ta``...) whose outermost
    operation computes into an operand named in ``spent`` where one is; inner operations are
    temporaries NumPy reuses itself."""
    tree = ast.parse(expression, mode="eval").body
    if isinstance(tree, ast.BinOp) and type(tree.op) in _AST_UFUNCS:
        ufunc = _AST_UFUNCS[type(tree.op)]
        a, b = ast.unparse(tree.left), ast.unparse(tree.right)
        if isinstance(tree.left, ast.Name) and a in spent:
            return _guarded(a, f"_spent_first({ufunc}, {a}, {b})", expression)
        if isinstance(tree.right, ast.Name) and b in spent:
            return _guarded(b, f"_spent_second({ufunc}, {a}, {b})", expression)
    if isinstance(tree, ast.UnaryOp) and isinstance(tree.op, ast.USub) and isinstance(tree.operand, ast.Name) \
            and tree.operand.id in spent:
        name = tree.operand.id
        return _guarded(name, f"_spent_unary(_np.negative, {name})", expression)
    return expression


NAMESPACE = {"_spent_first": spent_first, "_spent_second": spent_second, "_spent_unary": spent_unary,
             "_MIN_SPENT": MIN_SPENT_SIZE}
