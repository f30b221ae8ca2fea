"""Names that desugared code (``match_statements.py``, ``try_star.py``, ``async_functions.py``)
uses for the functions it calls, and the pass that binds them.

A rewrite writes ``_yb_len(x)``, ``_yb_star_match(...)``: valid Python, so the rewritten code can be
compiled and run as is (the tests run it against plain Python with ``HELPERS`` as globals).
Before lowering, ``bind_helpers`` replaces each such name by the function itself (an
``ast.Constant``), so a user's own ``len`` or ``list`` variable cannot shadow it and the user's
module needs no new globals. Only the function's own scope is rewritten, so these names never reach
the source of a nested function, which runs as plain Python.
"""
from __future__ import annotations

import ast
import copy

from ..ir import primitives as P
from ..ir.lazy_iterators import kept_iterator

PREFIX = "_yb_"

HELPERS: dict[str, object] = {
    PREFIX + f.__name__: f for f in (
        len, list, isinstance, getattr, hasattr, type,
        P.match_sequence, P.match_mapping, P.match_args, P.match_unique,
        P.star_start, P.star_match, P.star_reraise, P.star_raised, P.star_result,
        P.plain_data, kept_iterator,
    )
}


def helper(name: str) -> ast.Name:
    """The name standing for helper ``name`` (a builtin's or an ``ir/primitives.py`` function's)."""
    if PREFIX + name not in HELPERS:
        raise KeyError(name)
    return ast.Name(PREFIX + name, ast.Load())


def helper_call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(helper(name), list(args), [])


def walk_own_scope(node: ast.AST):
    """Nodes of a function body, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(child))


def own_nodes(nodes: list) -> list:
    """``nodes`` and the nodes below them, not those inside nested functions, lambdas or classes
    (the nested definitions themselves are included)."""
    found, stack = [], list(nodes)
    while stack:
        node = stack.pop()
        found.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return found


def located(statements: list, at: ast.AST) -> list:
    """``statements`` with every new node placed at ``at``'s line (the user's nodes keep theirs)."""
    for s in statements:
        for n in ast.walk(s):
            if "lineno" in n._attributes and not hasattr(n, "lineno"):
                ast.copy_location(n, at)
    return statements


class _Bind(ast.NodeTransformer):
    def visit_Name(self, node: ast.Name) -> ast.AST:
        if isinstance(node.ctx, ast.Load) and node.id in HELPERS:
            return ast.copy_location(ast.Constant(HELPERS[node.id]), node)
        return node

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # nested: holds no helper names (each rewrite keeps to its own scope)

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef


def bind_helpers(node: ast.AST) -> ast.AST:
    """``node`` with its helper names replaced by the functions (a copy when there are any)."""
    if not any(isinstance(n, ast.Name) and n.id in HELPERS for n in walk_own_scope(node)):
        return node
    return _Bind().generic_visit(copy.deepcopy(node))
