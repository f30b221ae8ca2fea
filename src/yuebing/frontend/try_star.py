"""``try``/``except*`` rewritten into a plain ``try``/``except BaseException`` (PEP 654, as
CPython 3.11+ runs it), which ``transform/try_statements.py`` differentiates like any ``try``.

    try:                                    _yb_pending = None
        BODY                                try:                      # only with a finally block
    except* ValueError as e:                    try:
        HANDLER                                     BODY
    else:                                       except BaseException as _yb_caught:
        ELSE                                        _yb_group = _yb_star_start(_yb_caught)
    finally:                                        _yb_match = _yb_star_match(_yb_group, ValueError)
        FINALLY                                     if _yb_match is not None:
                                                        try:
                                                            e = _yb_match
                                                            HANDLER
                                                        except BaseException as _yb_raised:
                                                            _yb_star_raised(_yb_group, _yb_raised)
                                                        e = None; del e
                                                    _yb_pending = _yb_star_result(_yb_group)
                                                else:
                                                    ELSE
                                                if _yb_pending is not None:
                                                    raise _yb_pending
                                            finally:
                                                FINALLY

The helpers (``ir/primitives.py``) do what CPython's ``CHECK_EG_MATCH`` and
``_PyExc_PrepReraiseStar`` do: each clause splits what is left of the group (a naked exception is
wrapped in a group when a clause matches it, and left as it is otherwise); what the handlers raise
is collected, and at the end the unhandled rest and the subgroups re-raised by a bare ``raise``
are projected back onto the original group's structure, combined with newly raised exceptions in
a new group (a naked exception comes back as the one exception left). A bare ``raise`` in a handler
becomes ``raise _yb_star_reraise(_yb_group, _yb_match)``, which marks the subgroup as re-raised.
The result is raised after the handler, as CPython raises it outside any handler. One difference
remains: inside a handler, ``sys.exception()`` is the whole exception caught, not the subgroup.
"""
from __future__ import annotations

import ast
import copy

from .runtime_names import helper_call, located, walk_own_scope


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(name, ast.Store() if store else ast.Load())


def _assign(name: str, value: ast.expr) -> ast.Assign:
    return ast.Assign([_name(name, True)], value)


class _BareRaises(ast.NodeTransformer):
    """``raise`` -> ``raise _yb_star_reraise(group, match)`` in a handler's body, outside nested
    handlers (where a bare raise re-raises their own exception) and nested scopes."""

    def __init__(self, group: str, match: str) -> None:
        self.group, self.match = group, match

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        if node.exc is not None:
            return node
        marked = helper_call("star_reraise", _name(self.group), _name(self.match))
        return ast.copy_location(ast.Raise(marked, None), node)

    def visit_ExceptHandler(self, node: ast.AST) -> ast.AST:
        return node

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_ExceptHandler


class _TryStarToTry(ast.NodeTransformer):
    def __init__(self) -> None:
        self.count = 0

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # nested: rewritten when it is differentiated itself

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_TryStar(self, node: ast.AST) -> list:
        node = self.generic_visit(node)  # inner ones first: their bare raises are then no longer bare
        self.count += 1
        names = {k: f"_yb_{k}{self.count}" for k in ("pending", "caught", "group", "match", "raised")}
        handling = [_assign(names["group"], helper_call("star_start", _name(names["caught"])))]
        for handler in node.handlers:
            handling += self._clause(handler, names)
        handling.append(_assign(names["pending"], helper_call("star_result", _name(names["group"]))))
        caught = ast.ExceptHandler(_name("BaseException"), names["caught"], handling)
        inner = ast.Try(node.body, [caught], node.orelse, [])
        reraise = ast.If(ast.Compare(_name(names["pending"]), [ast.IsNot()], [ast.Constant(None)]),
                     [ast.Raise(_name(names["pending"]), None)], [])
        statements = [inner, reraise]
        if node.finalbody:
            statements = [ast.Try(statements, [], [], node.finalbody)]
        out = [_assign(names["pending"], ast.Constant(None)), *statements]
        return [ast.fix_missing_locations(ast.copy_location(s, node)) for s in located(out, node)]

    def _clause(self, handler: ast.ExceptHandler, names: dict) -> list:
        group, match = names["group"], names["match"]
        body = [_BareRaises(group, match).visit(s) for s in handler.body]
        if handler.name is not None:
            body = [_assign(handler.name, _name(match)), *body]
        raised = ast.ExceptHandler(_name("BaseException"), names["raised"],
                                   [ast.Expr(helper_call("star_raised", _name(group), _name(names["raised"])))])
        run = [ast.Try(body, [raised], [], [])]
        if handler.name is not None:  # as CPython does: the name is unbound after the handler
            run += [_assign(handler.name, ast.Constant(None)), ast.Delete([ast.Name(handler.name, ast.Del())])]
        found = _assign(match, helper_call("star_match", _name(group), handler.type))
        taken = ast.If(ast.Compare(_name(match), [ast.IsNot()], [ast.Constant(None)]), run, [])
        return located([found, taken], handler)


def desugar_try_star(node: ast.AST) -> ast.AST:
    """``node`` with the ``try``/``except*`` statements of its own body rewritten (a copy when any is)."""
    if not hasattr(ast, "TryStar") or not any(isinstance(n, ast.TryStar) for n in walk_own_scope(node)):
        return node
    return ast.fix_missing_locations(_TryStarToTry().generic_visit(copy.deepcopy(node)))
