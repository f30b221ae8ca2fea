"""Stage 1b, part of ``generator_expressions.py``: a lambda or comprehension around a generator
expression kept for later becomes a nested function, as CPython compiles it.

A generator expression made in a lambda or comprehension and consumed later reads that scope's
variables when its items are made: a comprehension's variable has one cell per run of the
comprehension, so every generator made in ``[(v * t for v in xs) for t in ts]`` sees the last
``t``; a walrus inside binds the lambda's variable. The hoisted generator function
(``generator_expressions.py``) is defined in a function, so it can only see such a variable late
if the scope that binds it is a function too. This module rewrites that scope into one, placed
before the statement, the way CPython runs it::

    gens = [(v * t for v in xs) for t in ts]      def _yb_listcomp(_yb_source):
                                                      _yb_items = []
                                                      for t in _yb_source:
                                                          _yb_items.append((v * t for v in xs))
                                                      return _yb_items
                                                  gens = _yb_listcomp(ts)

    f = lambda t, k=2 * x: (v * t for v in xs)    def _yb_lambda_defaults(_yb_default0):
                                                      def _yb_lambda(t, k=_yb_default0):
                                                          return (v * t for v in xs)
                                                      return _yb_lambda
                                                  f = _yb_lambda_defaults(2 * x)

The first iterable (evaluated where the comprehension stands) and default values computed from
variables (evaluated where the lambda stands) are passed as arguments at the same place, in the
same order. A walrus in a comprehension binds the enclosing function's variable: the new
function declares it ``nonlocal`` (``global`` when the function does). The generator expressions
inside are then hoisted in the new function, reading its variables through cells.
``comprehension_statements`` also writes the bodies of ``async_comprehensions.py``'s functions
and of the hoisted generator functions.
"""
from __future__ import annotations

import ast
import copy
from typing import Callable

from .generator_sites import free_in, stored_names
from .runtime_names import located, walk_own_scope

__all__ = ["SOURCE", "comprehension_function", "comprehension_statements", "declared", "lambda_function",
           "needs_own_scope", "walrus_targets", "without_first_iterable"]

SOURCE = "_yb_source"  # the parameter taking the first iterable
ITEMS = "_yb_items"
KEY = "_yb_key"
DEFAULT = "_yb_default"
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def needs_own_scope(scope: ast.expr, parents: dict, hoisted: Callable[[ast.GeneratorExp], bool],
                    at_once: Callable[[ast.GeneratorExp], bool]) -> bool:
    """Whether the lambda or comprehension ``scope`` holds a generator expression that will be
    hoisted and either holds a walrus or reads a variable of ``scope`` (or of a lambda or
    comprehension inside it) without being consumed where it is made."""
    for g in ast.walk(scope):
        if g is scope or not isinstance(g, ast.GeneratorExp) or not hoisted(g):
            continue
        if any(isinstance(n, ast.NamedExpr) for n in ast.walk(g)):
            return True
        if not at_once(g) and free_in(without_first_iterable(g)) & _bound_around(g, scope, parents):
            return True
    return False


def without_first_iterable(node: ast.GeneratorExp) -> ast.GeneratorExp:
    """``node`` with its first iterable (evaluated where the expression stands) left out."""
    shallow = copy.copy(node)
    first = copy.copy(node.generators[0])
    first.iter = ast.Constant(None)
    shallow.generators = [first, *node.generators[1:]]
    return shallow


def _bound_around(node: ast.AST, scope: ast.expr, parents: dict) -> set:
    """Names bound by the lambdas and comprehensions from ``node``'s parent up to ``scope``."""
    names: set = set()
    while node is not scope:
        node = parents[id(node)]
        if isinstance(node, ast.Lambda):
            names |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)} | walrus_targets(node.body)
        elif isinstance(node, _COMPREHENSIONS):
            names |= set().union(*(stored_names(g.target) for g in node.generators))
    return names


def walrus_targets(node: ast.AST) -> set:
    """Names a walrus in ``node`` binds in the scope around it (not those of nested lambdas)."""
    found, stack = set(), [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.NamedExpr):
            found.add(n.target.id)
        if not isinstance(n, ast.Lambda) or n is node:
            stack.extend(ast.iter_child_nodes(n))
    return found


def declared(function: ast.AST, kind: type) -> set:
    """Names ``function``'s own body declares ``global`` (``kind=ast.Global``) or ``nonlocal``."""
    return {name for n in walk_own_scope(function) if isinstance(n, kind) for name in n.names}


def comprehension_function(node: ast.ListComp | ast.SetComp | ast.DictComp, name: str, nonlocals: list,
                           globals_: list) -> tuple[ast.FunctionDef, ast.Call]:
    """``def name(_yb_source): ...`` building what ``node`` builds with loops, and its call
    ``name(first iterable)``."""
    declarations = [kind(sorted(names)) for kind, names in ((ast.Nonlocal, nonlocals), (ast.Global, globals_)) if names]
    arguments = ast.arguments([], [ast.arg(SOURCE)], None, [], [], None, [])
    body = [*declarations, *comprehension_statements(node, ITEMS, SOURCE, KEY)]
    function = located([ast.FunctionDef(name, arguments, body, [], None)], node)[0]
    return function, ast.copy_location(ast.Call(ast.Name(name, ast.Load()), [node.generators[0].iter], []), node)


def comprehension_statements(node: ast.expr, result: str, source: str, key: str) -> list:
    """The body of a function of ``source`` (the first iterable) doing what the comprehension
    ``node`` does, as CPython compiles it: loops (``async for`` where it has them) building
    ``result`` and returning it, or, for a generator expression, yielding its items. A dict
    comprehension's key is evaluated before its value, into ``key``."""
    items = ast.Name(result, ast.Load())
    if isinstance(node, ast.DictComp):
        body: list = [ast.Assign([ast.Name(key, ast.Store())], node.key),
                      ast.Assign([ast.Subscript(items, ast.Name(key, ast.Load()), ast.Store())], node.value)]
    elif isinstance(node, ast.GeneratorExp):
        body = [ast.Expr(ast.Yield(node.elt))]
    else:
        method = "append" if isinstance(node, ast.ListComp) else "add"
        body = [ast.Expr(ast.Call(ast.Attribute(items, method, ast.Load()), [node.elt], []))]
    for k in reversed(range(len(node.generators))):
        g = node.generators[k]
        for condition in reversed(g.ifs):
            body = [ast.If(condition, body, [])]
        iterable = g.iter if k else ast.Name(source, ast.Load())
        body = [(ast.AsyncFor if g.is_async else ast.For)(g.target, iterable, body, [])]
    if isinstance(node, ast.GeneratorExp):
        return body
    empty = {ast.ListComp: ast.List([], ast.Load()), ast.DictComp: ast.Dict([], []),  # ({*()}: a set display)
             ast.SetComp: ast.Set([ast.Starred(ast.Tuple([], ast.Load()), ast.Load())])}[type(node)]
    return [ast.Assign([ast.Name(result, ast.Store())], empty), *body, ast.Return(items)]


def lambda_function(node: ast.Lambda, name: str, factory: str) -> tuple[ast.FunctionDef, ast.expr]:
    """``def name(params): return body`` and what stands for the lambda: ``name``, or, when a
    default value is computed, ``factory(default values...)`` with ``factory`` defining the
    function with those values as its defaults."""
    args = node.args
    computed = [d for d in [*args.defaults, *args.kw_defaults] if d is not None and not isinstance(d, ast.Constant)]
    function = ast.FunctionDef(name, args, [ast.Return(node.body)], [], None)
    if not computed:
        return located([function], node)[0], ast.copy_location(ast.Name(name, ast.Load()), node)
    parameters = {id(d): f"{DEFAULT}{k}" for k, d in enumerate(computed)}
    args.defaults = [_parameter(d, parameters) for d in args.defaults]
    args.kw_defaults = [d if d is None else _parameter(d, parameters) for d in args.kw_defaults]
    arguments = ast.arguments([], [ast.arg(p) for p in parameters.values()], None, [], [], None, [])
    outer = ast.FunctionDef(factory, arguments,
                            [function, ast.Return(ast.Name(name, ast.Load()))], [], None)
    return located([outer], node)[0], ast.copy_location(ast.Call(ast.Name(factory, ast.Load()), computed, []), node)


def _parameter(default: ast.expr, parameters: dict) -> ast.expr:
    return ast.Name(parameters[id(default)], ast.Load()) if id(default) in parameters else default

