"""Stage 1b: whether a generator function's body may do something visible outside it.

A generator evaluated eagerly (``desugar.py``: a list builder) runs every item before its
consumer sees the first. That is exact only when the items are all it makes: a consumer that
stops early (``break``, ``next``, ``zip`` with a shorter iterable, ``islice``, ``any``, ``in``)
would otherwise see the side effects of items Python never computes (an ``append`` to an outer
list, a write to an array, attribute, global or ``nonlocal``, a ``print``, a random draw, an
exception raised past the items taken). A generator whose body may have such effects therefore
runs lazily, as a state machine (``generators.py``), which does no more work than Python.

The check reads the syntax, conservatively: a generator is pure when it writes only its own
variables and calls only builtins, ``math``/``cmath`` and NumPy functions known to change
nothing (no ``np.random``, no ``out=``), and methods of data known to read it (``.sum()``,
``.reshape()``, ``.items()``). Anything else it calls (a helper, another generator, a method
like ``.append``) counts as a side effect. Syntax is half of the proof that a generator may run
eagerly: names like ``.sum()`` or an operator are pure only for plain data, which
``generator_eagerness.py`` checks at run time, next to what its consumer does.
"""
from __future__ import annotations

import ast
import builtins

import numpy as np

__all__ = ["may_have_effects", "pure_call"]

#: builtins that change nothing given numbers, strings, arrays and containers of them
_PURE_BUILTINS = frozenset({
    "abs", "len", "float", "int", "bool", "complex", "round", "range", "enumerate", "zip", "reversed",
    "sorted", "min", "max", "sum", "any", "all", "isinstance", "divmod", "pow", "tuple", "list", "dict",
    "set", "frozenset", "str", "repr", "hash", "ord", "chr", "slice", "type"})
#: builtin exception classes (``raise ValueError(...)`` makes one and changes nothing else)
_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                        if isinstance(value, type) and issubclass(value, BaseException))
#: NumPy functions (``np.name``) that are not ufuncs and change nothing without ``out=``
_PURE_NUMPY = frozenset({
    "array", "asarray", "zeros", "ones", "zeros_like", "ones_like", "full", "full_like", "empty",
    "empty_like", "eye", "identity", "arange", "linspace", "dot", "vdot", "inner", "outer", "matmul",
    "einsum", "sum", "prod", "mean", "std", "var", "cumsum", "cumprod", "diff", "trace", "where",
    "clip", "stack", "vstack", "hstack", "concatenate", "reshape", "transpose", "ravel", "tile",
    "repeat", "diag", "amax", "amin", "max", "min", "abs", "round", "shape", "size", "ndim",
    "linalg.norm", "linalg.solve", "linalg.inv", "linalg.det"})
_NUMPY_NAMES = ("np", "numpy")
_MATH_NAMES = ("math", "cmath")
#: methods of data (arrays, containers, strings) that only read it
_PURE_METHODS = frozenset({
    "sum", "mean", "prod", "dot", "copy", "reshape", "transpose", "ravel", "flatten", "astype", "conj",
    "conjugate", "item", "tolist", "max", "min", "keys", "values", "items"})
#: keywords by which a pure function writes into an argument
_WRITING_KEYWORDS = ("out",)


def may_have_effects(function: ast.FunctionDef, raising: bool = True) -> bool:
    """Whether the body of the generator function ``function`` (nested code included) may do
    anything visible outside it besides making its items: see the module's docstring.
    ``raising``: whether a ``raise`` or ``assert`` counts (not for a copy that, when an item
    raises, starts again lazily: ``generator_eagerness.py``)."""
    for node in ast.walk(ast.Module(body=function.body, type_ignores=[])):
        if isinstance(node, (ast.Global, ast.Nonlocal, ast.Await)):
            return True
        if raising and isinstance(node, (ast.Raise, ast.Assert)):
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            return True
        if isinstance(node, ast.Call) and not pure_call(node):
            return True
    return False


def pure_call(call: ast.Call) -> bool:
    if any(k.arg in _WRITING_KEYWORDS or k.arg is None for k in call.keywords):
        return False
    chain = _dotted(call.func)
    if chain is None:  # a method of data (``xs.append(v)``, ``a[k].sum()``)
        return isinstance(call.func, ast.Attribute) and call.func.attr in _PURE_METHODS
    if len(chain) == 1:
        return chain[0] in _PURE_BUILTINS or chain[0] in _EXCEPTIONS
    if chain[0] in _MATH_NAMES and len(chain) == 2:
        return True
    if chain[0] in _NUMPY_NAMES:
        name = ".".join(chain[1:])
        return name in _PURE_NUMPY or isinstance(getattr(np, name, None), np.ufunc)
    return chain[-1] in _PURE_METHODS and len(chain) == 2  # ``xs.sum()`` of a variable xs


def _dotted(node: ast.expr) -> tuple | None:
    """``("np", "linalg", "norm")`` for ``np.linalg.norm``, or None when it is not a dotted name."""
    names = []
    while isinstance(node, ast.Attribute):
        names.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    return (node.id, *reversed(names))
