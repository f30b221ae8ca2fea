"""Comprehensions of an ``async def`` that await (``[f(v) async for v in it]``,
``[await g(v) for v in vs]``) as calls of nested ``async def`` functions, the way CPython itself
compiles a comprehension into a function of its first iterable.

    [e async for v in it if c]      ->   async def _yb_comprehension1(_yb_iterable2):
                                             _yb_result3 = []
                                             async for v in _yb_iterable2:
                                                 if c:
                                                     _yb_result3.append(e)
                                             return _yb_result3
                                         ... await _yb_comprehension1(it) ...

An async generator expression becomes a nested async generator (``yield e``) called without
``await``. The new functions go at the top of the body (a ``def`` has no side effects; the first
iterable is still evaluated where the comprehension was), and are rewritten by
``async_functions.py`` when they are called, like any nested ``async def``; their awaits then
suspend on the event loop as the enclosing coroutine's do.
"""
from __future__ import annotations

import ast
from typing import Callable

from .genexpr_scopes import comprehension_statements
from .runtime_names import located

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)


def _awaits(node: ast.AST) -> bool:
    """Whether the comprehension is async or awaits (in itself or a comprehension inside it)."""
    stack = [node]
    while stack:
        child = stack.pop()
        if isinstance(child, ast.Await) or isinstance(child, ast.comprehension) and child.is_async:
            return True
        if not isinstance(child, _NESTED):
            stack.extend(ast.iter_child_nodes(child))
    return False


class _Hoister(ast.NodeTransformer):
    def __init__(self, fresh: Callable[[str], str]) -> None:
        self.fresh = fresh
        self.functions = []

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # nested: rewritten when it is differentiated itself

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def _comprehension(self, node: ast.AST) -> ast.AST:
        if not _awaits(node):
            return node
        name, iterable, result = self.fresh("comprehension"), self.fresh("iterable"), self.fresh("result")
        body = comprehension_statements(node, result, iterable, self.fresh("key"))
        arguments = ast.arguments([], [ast.arg(iterable)], None, [], [], None, [])
        function = ast.AsyncFunctionDef(name, arguments, body, [], None)
        self.functions.append(ast.fix_missing_locations(located([function], node)[0]))
        call = ast.Call(ast.Name(name, ast.Load()), [self.visit(node.generators[0].iter)], [])
        made = call if isinstance(node, ast.GeneratorExp) else ast.Await(call)
        return ast.fix_missing_locations(ast.copy_location(made, node))

    visit_ListComp = visit_SetComp = visit_DictComp = visit_GeneratorExp = _comprehension


def hoist_async_comprehensions(body: list, fresh: Callable[[str], str]) -> list:
    """``body`` (of an ``async def``) with its awaiting comprehensions as nested async defs."""
    hoister = _Hoister(fresh)
    body = [hoister.visit(s) for s in body]
    if not hoister.functions:
        return body
    docstring = body[:1] if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) \
        and isinstance(body[0].value.value, str) else []
    return [*docstring, *hoister.functions, *body[len(docstring):]]
