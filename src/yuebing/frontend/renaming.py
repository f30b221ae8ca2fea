"""Renaming a comprehension's variables (``normalise.py`` gives each comprehension fresh names, as
Python gives it a scope of its own)."""
from __future__ import annotations

import ast
import copy

from .fence import _walk_own_scope


class _Renamer(ast.NodeTransformer):
    """Renames a comprehension's variables; inside a nested lambda or def, not the names it
    binds itself (its parameters and locals: ``[lambda v, w=w: v * w for w in ws]`` renames
    the default ``w``, not the body's)."""

    def __init__(self, renames: dict[str, str]) -> None:
        self.renames = renames

    def visit_Name(self, node: ast.Name) -> ast.Name:
        if node.id in self.renames:
            return ast.copy_location(ast.Name(self.renames[node.id], node.ctx), node)
        return node

    def _nested(self, node: ast.Lambda | ast.FunctionDef, own: set) -> ast.AST:
        args = node.args
        args.defaults = [self.visit(d) for d in args.defaults]
        args.kw_defaults = [d if d is None else self.visit(d) for d in args.kw_defaults]
        own |= {a.arg for a in ast.walk(args) if isinstance(a, ast.arg)}
        inner = _Renamer({k: v for k, v in self.renames.items() if k not in own})
        if isinstance(node, ast.Lambda):
            node.body = inner.visit(node.body)
        else:
            node.decorator_list = [self.visit(d) for d in node.decorator_list]
            node.body = [inner.visit(s) for s in node.body]
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        return self._nested(node, set())

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        declared = {name for n in _walk_own_scope(node) if isinstance(n, (ast.Nonlocal, ast.Global)) for name in n.names}
        stored = {n.id for n in _walk_own_scope(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        return self._nested(node, stored - declared)


def _copy(node: ast.AST) -> ast.AST:
    return copy.deepcopy(node)
