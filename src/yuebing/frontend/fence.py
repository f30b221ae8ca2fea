"""Stage 2: reject syntax yuebing cannot differentiate, early, with the user's file and line.

Every rejected construct has an entry in ``UNSUPPORTED`` saying what to do instead. Nested
function and class bodies are not fenced here: they are fenced when (and if) they are called.
"""
from __future__ import annotations

import ast
import linecache

UNSUPPORTED: dict[type, tuple[str, str]] = {
    # generator functions become lists (desugar.py) or state machines (generators.py): a yield
    # left is one no function of ours holds
    ast.Yield: ("a yield outside a generator function yuebing rewrites (in a lambda)", "write a generator function with def"),
    ast.YieldFrom: ("a yield outside a generator function yuebing rewrites (in a lambda)", "write a generator function with def"),
}


class UnsupportedSyntaxError(TypeError):
    """A construct in a differentiated function that yuebing does not support."""

    def __init__(self, what: str, advice: str, filename: str, line: int, function: str) -> None:
        code = linecache.getline(filename, line).strip()
        super().__init__(
            f"yuebing cannot differentiate {what} (in {function}).\n"
            f'  File "{filename}", line {line}\n    {code}\n'
            f"What to do: {advice}."
        )
        self.filename, self.lineno = filename, line


def _walk_all(node: ast.AST):
    """Every node below ``node``, nested functions included (they are transformed when called,
    and their errors are best reported now, against the user's file)."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if not isinstance(child, ast.ClassDef):
            stack.extend(ast.iter_child_nodes(child))


def _walk_own_scope(node: ast.AST):
    """Nodes of a function body, not descending into nested functions, lambdas or classes."""
    stack = list(ast.iter_child_nodes(node))
    while stack:
        child = stack.pop()
        yield child
        if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(child))


def fence(node: ast.FunctionDef | ast.Lambda, filename: str, function: str) -> None:
    """Raise ``UnsupportedSyntaxError`` for the first unsupported construct in ``node``."""
    found = []
    # the yields of nested async generators, rewritten (async_functions.py) when they are called
    rewritten = {id(n) for f in _walk_all(node) if isinstance(f, ast.AsyncFunctionDef) for n in _walk_own_scope(f)}
    for child in _walk_all(node):
        entry = UNSUPPORTED.get(type(child)) if id(child) not in rewritten else None
        if entry is not None:
            found.append((child.lineno, entry))
    if found:
        line, (what, advice) = min(found, key=lambda item: item[0])
        raise UnsupportedSyntaxError(what, advice, filename, line, function)
