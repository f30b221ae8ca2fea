"""``setattr(obj, "name", value)`` as a statement, rewritten to the assignment ``obj.name = value``
it is, before the normaliser sees it: a write to a module's global (``setattr(mod, "G", x)``) then
goes where ``mod.G = x`` goes -- ``global G`` of that module (``global_writes.py``) -- and one to an
object where the attribute assignment goes.

Only where the two are the same: the builtin ``setattr`` (no variable of the function, its
globals or closure named so), a constant name that is an identifier and not private (``o.__x``
would be name-mangled in a class body, ``setattr`` is not), and an owner whose evaluation has no
effect and which the value cannot rebind (a name, a dotted path of names, ``sys.modules[__name__]``:
an assignment evaluates the value before its target, a call the owner first).
"""
from __future__ import annotations

import ast
import copy


def has_setattr_statements(node: ast.AST) -> bool:
    """Whether ``node`` holds a statement ``setattr(...)`` that may be rewritten."""
    return any(_rewritable(n) for n in ast.walk(node))


def setattr_as_assignments(node: ast.FunctionDef | ast.Lambda, shadowed: frozenset) -> ast.AST:
    """``node`` (a copy if anything changes) with each statement ``setattr(owner, "name", value)``
    written ``owner.name = value`` where that is the same (module docstring)."""
    if "setattr" in shadowed or _binds_setattr(node) or not has_setattr_statements(node):
        return node
    node = copy.deepcopy(node)
    _Rewrite().visit(node)
    return ast.fix_missing_locations(node)


class _Rewrite(ast.NodeTransformer):
    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if not _rewritable(node):
            return node
        owner, name, value = node.value.args
        target = ast.Attribute(owner, name.value, ast.Store())
        return ast.copy_location(ast.Assign([ast.copy_location(target, owner)], value), node)


def _rewritable(node: ast.AST) -> bool:
    if not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call)):
        return False
    call = node.value
    if not (isinstance(call.func, ast.Name) and call.func.id == "setattr" and len(call.args) == 3 and not call.keywords):
        return False
    owner, name, value = call.args
    return isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier() \
        and not name.value.startswith("__") and _plain_owner(owner) \
        and not any(isinstance(n, (ast.NamedExpr, ast.Starred)) for n in ast.walk(value))


def _plain_owner(owner: ast.expr) -> bool:
    """A name, a dotted path of names, or ``sys.modules[__name__]``."""
    if isinstance(owner, ast.Subscript):
        return isinstance(owner.slice, ast.Name) and owner.slice.id == "__name__" and _plain_owner(owner.value)
    while isinstance(owner, ast.Attribute):
        owner = owner.value
    return isinstance(owner, ast.Name)


def _binds_setattr(node: ast.AST) -> bool:
    """Whether the function binds a variable ``setattr`` (an argument, an assignment, an import)."""
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and n.id == "setattr" and not isinstance(n.ctx, ast.Load):
            return True
        if isinstance(n, ast.arg) and n.arg == "setattr":
            return True
        if isinstance(n, ast.alias) and (n.asname or n.name) == "setattr":
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n.name == "setattr":
            return True
    return False
