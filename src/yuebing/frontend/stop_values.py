"""Stage 1b, part of ``generators.py``: ``StopIteration.value`` read with its derivative.

A lazy generator's ``return v`` reaches its caller as ``StopIteration(v)``; an exception carries
no derivative (it has no tangent: ``rules/objects.py`` refuses reading float data out of one).
The generator object does: it keeps the exception it raised and the value it returned
(``ir/generators.py``). So where a ``try`` body steps a generator held in a variable and its
``except ... as stop`` clause reads ``stop.value``, the read asks the generator instead:

    try:                                   try:
        r = it.send(x)                         r = it.send(x)
    except StopIteration as stop:          except StopIteration as stop:
        total = stop.value                     total = stop_value(stop, it)

``stop_value`` returns ``it``'s returned value when ``it`` raised ``stop``, else ``stop.value``
as written. The generators passed are those the try body calls ``next``/``send``/``throw`` on,
written as a name (or an attribute of one) that is a parameter or was assigned before the
``try``, so that reading it again in the clause is safe.
"""
from __future__ import annotations

import ast
import copy

from .parsing import parse as parse_source
from .runtime_names import own_nodes

__all__ = ["read_stop_values"]

_STEPS = ("send", "throw", "__next__")




def _base(node: ast.expr) -> str | None:
    """The name ``node`` is, or the name at the root of its attribute chain (``self.it``)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _stepped(body: list) -> list:
    """The generator expressions the statements ``body`` step: ``next(e)``, ``e.send(v)``, ..."""
    found = []
    for node in own_nodes(body):
        if not isinstance(node, ast.Call):
            continue
        f = node.func
        if isinstance(f, ast.Name) and f.id == "next" and node.args:
            found.append(node.args[0])
        elif isinstance(f, ast.Attribute) and f.attr in _STEPS:
            found.append(f.value)
    return found


def _bound_before(function: ast.FunctionDef, line: int) -> set:
    """The parameters of ``function`` and the names it assigns on lines before ``line``
    (never deleted): those are bound when its ``except`` clause at ``line`` runs."""
    args = function.args
    names = {a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs]}
    nodes = own_nodes(function.body)
    deleted = {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Del)}
    names |= {n.id for n in nodes if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store) and n.lineno < line}
    return names - deleted


class _ValueReads(ast.NodeTransformer):
    """``name.value`` -> ``helper(name, *generators)`` in one except clause's own scope."""

    def __init__(self, name: str, generators: list, helper: str) -> None:
        self.name, self.generators, self.helper = name, generators, helper
        self.changed = False

    def visit_Attribute(self, node: ast.Attribute) -> ast.AST:
        self.generic_visit(node)
        if node.attr == "value" and isinstance(node.ctx, ast.Load) and isinstance(node.value, ast.Name) \
                and node.value.id == self.name:
            self.changed = True
            return ast.copy_location(ast.Call(ast.Name(self.helper, ast.Load()), [node.value, *self.generators], []), node)
        return node

    def _nested(self, node: ast.AST) -> ast.AST:
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = _nested


def _rewrite_function(function: ast.FunctionDef, helper: str) -> bool:
    changed = False
    for node in own_nodes(function.body):
        if not isinstance(node, ast.Try):
            continue
        bound = _bound_before(function, node.lineno)
        stepped = [e for e in _stepped(node.body) if _base(e) in bound]
        unique = list({ast.dump(e): e for e in stepped}.values())
        if not unique:
            continue
        for handler in node.handlers:
            if handler.name is None:
                continue
            reads = _ValueReads(handler.name, [_loaded(e) for e in unique], helper)
            handler.body = [reads.visit(s) for s in handler.body]
            changed |= reads.changed
    return changed


def _loaded(node: ast.expr) -> ast.expr:
    """A copy of ``node`` to read again (its own nodes: the tree is not shared)."""
    return parse_source(ast.unparse(node), mode="eval").body


def read_stop_values(node: ast.AST, fresh) -> ast.AST:
    """``node`` (a copy when anything changed) with the ``stop.value`` reads of every function in
    it rewritten (see the module's docstring); ``fresh(base)``: an unused name for the helper."""
    if not isinstance(node, ast.FunctionDef) or not _reads_a_value(node):
        return node
    node = copy.deepcopy(node)
    helper = fresh("stop_value")
    if not any([_rewrite_function(f, helper) for f in ast.walk(node) if isinstance(f, ast.FunctionDef)]):
        return node
    at = 1 if ast.get_docstring(node, clean=False) is not None else 0
    alias = "" if helper == "stop_value" else f" as {helper}"
    node.body.insert(at, parse_source(f"from yuebing.ir.generators import stop_value{alias}").body[0])
    return ast.fix_missing_locations(node)


def _reads_a_value(node: ast.AST) -> bool:
    """Whether an ``except ... as name`` clause in ``node`` reads ``name.value`` (the cheap test)."""
    for handler in ast.walk(node):
        if isinstance(handler, ast.ExceptHandler) and handler.name:
            if any(isinstance(n, ast.Attribute) and n.attr == "value" and isinstance(n.value, ast.Name)
                   and n.value.id == handler.name for s in handler.body for n in ast.walk(s)):
                return True
    return False
