"""Stage 1b: a generator function rewritten to build and return the list of its items.

``yield v`` appends ``v`` to a list, ``yield from it`` extends it, ``return`` returns the list.
Used for generators evaluated eagerly (``desugar.py``; the copies ``generator_eagerness.py``
makes for the consumers that provably see the same items as Python's).
"""
from __future__ import annotations

import ast
import linecache

from ..ir.primitives import EAGER_ITEMS_LIMIT
from .parsing import parse as parse_source

YIELDED = "_yb_yielded"  # the list a rewritten generator builds (not a name users write)


class ItemsRewriter(ast.NodeTransformer):
    """Rewrites the yields of one function's own scope (a subclass says into what): ``yield v``
    into ``item(v)``'s statements, ``yield from it`` into ``delegated(it)``'s. A yield inside a
    ``while`` loop is followed by a check of the list's length (``_too_long``): a generator that
    does not end raises instead of running until memory runs out."""

    def __init__(self, function: ast.FunctionDef, filename: str) -> None:
        self.function, self.filename, self.whiles = function, filename, 0

    def item(self, value: ast.expr, at: ast.stmt) -> list:
        raise NotImplementedError

    def delegated(self, iterable: ast.expr, at: ast.stmt) -> list:
        raise NotImplementedError

    def rewritten(self) -> list:
        """The function's body with its yields rewritten."""
        body = []
        for statement in self.function.body:
            made = self.visit(statement)
            body += made if isinstance(made, list) else [made]
        return body

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        return node  # a nested function: rewritten on its own (if it is a generator)

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]

    def visit_While(self, node: ast.While) -> ast.AST:
        self.whiles += 1
        try:
            return self.generic_visit(node)
        finally:
            self.whiles -= 1

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        value = node.value
        if isinstance(value, ast.YieldFrom):
            made = self.delegated(value.value, node)
        elif isinstance(value, ast.Yield):
            made = self.item(value.value if value.value is not None else ast.Constant(None), node)
        else:
            return self.generic_visit(node)
        return [*made, _too_long(self.function, self.filename, node)] if self.whiles else made


class _ToAppends(ItemsRewriter):
    """``yield v`` -> ``_yb_yielded.append(v)``, ``yield from it`` -> ``.extend(it)``, ``return``
    -> ``return _yb_yielded``."""

    def item(self, value: ast.expr, at: ast.stmt) -> list:
        return [self._call("append", value, at)]

    def delegated(self, iterable: ast.expr, at: ast.stmt) -> list:
        return [self._call("extend", iterable, at)]

    @staticmethod
    def _call(method: str, argument: ast.expr, at: ast.stmt) -> ast.stmt:
        call = ast.Call(ast.Attribute(ast.Name(YIELDED, ast.Load()), method, ast.Load()), [argument], [])
        return ast.copy_location(ast.Expr(ast.copy_location(call, argument)), at)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        return ast.copy_location(ast.Return(ast.Name(YIELDED, ast.Load())), node)


def _too_long(function: ast.FunctionDef, filename: str, at: ast.stmt) -> ast.stmt:
    """``if len(_yb_yielded) > EAGER_ITEMS_LIMIT: raise RuntimeError(...)`` naming the generator
    and the user's line of the yield."""
    code = linecache.getline(filename, at.lineno).strip()
    message = (
        f"yuebing stopped the generator {function.name}() after {EAGER_ITEMS_LIMIT} items: under "
        "differentiation it is evaluated eagerly into a list, and it did not end.\n"
        f'  File "{filename}", line {at.lineno}\n    {code}\n'
        f"What to do: make the loop around this yield end (for example `for k in range(n):` instead of "
        f"`while True:`).")
    check = parse_source(f"if len({YIELDED}) > {EAGER_ITEMS_LIMIT}:\n    raise RuntimeError({message!r})").body[0]
    for n in ast.walk(check):
        n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = at.lineno, at.lineno, at.col_offset, at.col_offset
    return check


def to_list_builder(function: ast.FunctionDef, filename: str) -> None:
    """``function`` (a generator function a list can stand for) rewritten in place to build and
    return the list of its items: a list comprehension when its body is only ``for``s and ``if``s
    around one ``yield`` (the fast path of loops: a rewritten generator expression is one), an
    ``append`` per ``yield`` otherwise."""
    comprehension = comprehension_form(function.body)
    if comprehension is not None:
        function.body = [ast.copy_location(ast.Return(comprehension), function.body[0])]
        return
    first = function.body[0]
    start = ast.copy_location(ast.Assign([ast.Name(YIELDED, ast.Store())], ast.List([], ast.Load())), first)
    body = _ToAppends(function, filename).rewritten()
    end = ast.copy_location(ast.Return(ast.Name(YIELDED, ast.Load())), function.body[-1])
    function.body = [start, *body, end]


def comprehension_form(body: list) -> ast.ListComp | None:
    """``[v for t in it if c]`` for a body ``for t in it: if c: yield v`` (any depth of ``for``s and
    ``if``s, no ``else``), None for any other body."""
    generators: list = []
    statements = body
    while len(statements) == 1:
        s = statements[0]
        if isinstance(s, ast.For) and not s.orelse:
            generators.append(ast.comprehension(s.target, s.iter, [], 0))
        elif isinstance(s, ast.If) and not s.orelse and generators:
            generators[-1].ifs.append(s.test)
        elif isinstance(s, ast.Expr) and isinstance(s.value, ast.Yield) and s.value.value is not None and generators:
            return ast.copy_location(ast.ListComp(s.value.value, generators), s)
        else:
            return None
        statements = s.body
    return None
