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
like ``.append``) counts as a side effect. A name is trusted to be the builtin or module it
spells only when it is one for the differentiated function: a global, closure variable or local
of that name holding anything else (``def abs(v): LOG.append(v)`` in the user's module, ``len =
my_len``) marks its reads ``shadowed`` (``mark_shadowed_names``), and a marked name is a call
like any helper's, and no consumer ``generator_sites.py`` knows. Syntax is half of the proof that a generator may run
eagerly: names like ``.sum()`` or an operator are pure only for plain data, which
``generator_eagerness.py`` checks at run time, next to what its consumer does.
"""
from __future__ import annotations

import ast
import builtins
import cmath
import math
import types

import numpy as np

__all__ = ["may_have_effects", "pure_call", "shadowed_builtins", "mark_shadowed_names", "trusted"]

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


#: the modules pure calls may be spelt through (``np.sin``, ``math.exp``)
_MODULES = {"np": np, "numpy": np, "math": math, "cmath": cmath}
_SHADOWED = "shadowed"  # the attribute marking a name read that is not the builtin or module it spells


def _expected(name: str) -> object:
    return _MODULES[name] if name in _MODULES else getattr(builtins, name)


def _trustable(name: str) -> bool:
    return name in _MODULES or hasattr(builtins, name)


def shadowed_builtins(fn: types.FunctionType) -> frozenset:
    """The builtin and module names (``abs``, ``len``, ``sum``, ``np``) that ``fn``'s globals or
    closure bind to something else."""
    found = {name for name, value in fn.__globals__.items() if _trustable(name) and value is not _expected(name)}
    for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
        try:
            if _trustable(name) and cell.cell_contents is not _expected(name):
                found.add(name)
        except ValueError:  # an empty cell
            found.add(name)
    return frozenset(found)


def mark_shadowed_names(node: ast.AST, shadowed: frozenset) -> None:
    """Mark (in place) the reads in ``node`` of names that are not the builtin or module they
    spell: ``shadowed`` (``shadowed_builtins``) and those ``node`` binds anywhere (a parameter,
    an assignment, a ``def``, an import of anything else)."""
    bound = set(shadowed)
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) or isinstance(n, ast.arg):
            bound.add(n.id if isinstance(n, ast.Name) else n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            for alias in n.names:
                name = alias.asname or alias.name.partition(".")[0]
                if not (isinstance(n, ast.Import) and name in _MODULES and alias.name == _MODULES[name].__name__):
                    bound.add(name)
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id in bound and _trustable(n.id):
            setattr(n, _SHADOWED, True)


def trusted(name: ast.expr, spelt: str | tuple | frozenset) -> bool:
    """Whether ``name`` is a read of one of the builtins or modules ``spelt`` (a name or a set of
    them) that means it (not marked by ``mark_shadowed_names``)."""
    names = (spelt,) if isinstance(spelt, str) else spelt
    return isinstance(name, ast.Name) and name.id in names and not getattr(name, _SHADOWED, False)


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
    if chain[0] in _MODULES or len(chain) == 1:
        if not trusted(_root(call.func), chain[0]):
            return False  # (a user's abs, len or np)
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


def _root(node: ast.expr) -> ast.expr:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node
