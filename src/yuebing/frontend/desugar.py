"""Stage 1b: rewrite constructs that have a plain equivalent, before the fence sees them.

``match`` statements, ``try``/``except*`` and ``async`` code are rewritten first, into plain
constructs (``syntax_rewrites.py``).

Generator functions become list builders: each ``yield v`` statement appends ``v`` to a list,
``yield from it`` extends it, and the function returns the list. Under differentiation a generator
is therefore evaluated eagerly, as comprehensions are; the values its consumer sees (``sum``,
``for``, ``list``, ``zip``) are the same, in the same order. A generator a list cannot stand for
(it uses ``yield``'s value, returns a value, yields inside a ``while`` loop, or may be left
suspended by ``next``) is made a state machine first (``generators.py``), and runs lazily. A yield
inside a ``while`` loop of a list builder (none is left by now) checks the list's length and stops
the generator with an error past ``EAGER_ITEMS_LIMIT`` items, rather than hang.

The rewrite works on a copy: the parsed tree is shared with other functions of the file.
"""
from __future__ import annotations

import ast
import copy
import linecache

from ..ir.primitives import EAGER_ITEMS_LIMIT
from .generators import state_machines
from .runtime_names import bind_helpers, own_nodes
from .syntax_rewrites import rewrite_syntax
from .parsing import parse as parse_source

_YIELDED = "_yb_yielded"  # the list a rewritten generator builds (not a name users write)


def desugar(node: ast.FunctionDef | ast.Lambda, filename: str = "<unknown>",
            outside_generators: frozenset = frozenset()) -> ast.FunctionDef | ast.Lambda:
    """``node`` with its match, except* and async code rewritten (``rewrite_syntax``) and every
    generator function in it (itself or nested) rewritten to build and return a list, where that
    is exact; ``node`` itself when there is nothing to rewrite. ``filename``: the user's file,
    named by the error of a generator that does not end; ``outside_generators``: names of
    generator functions with cleanup defined outside ``node`` that it calls (closed where
    dropped: ``generator_closing.py``)."""
    node = rewrite_syntax(node, bind=False)  # match, except*, async (syntax_rewrites.py)
    node = state_machines(node, filename, outside_generators)  # generators a list cannot stand for (generators.py)
    node = bind_helpers(node)  # (after: a generator's body moves into a nested function as text)
    if not any(_is_eager_generator(f) for f in _functions(node)):
        return node
    node = copy.deepcopy(node)
    for function in _functions(node):
        if _is_eager_generator(function):
            _to_list_builder(function, filename)
    return ast.fix_missing_locations(node)


def _functions(node: ast.AST) -> list[ast.FunctionDef]:
    return [n for n in ast.walk(node) if isinstance(n, ast.FunctionDef)]


def _is_eager_generator(function: ast.FunctionDef) -> bool:
    """A generator function whose yields are all statements and whose returns return nothing."""
    nodes = own_nodes(function.body)
    yields = [n for n in nodes if isinstance(n, (ast.Yield, ast.YieldFrom))]
    if not yields:
        return False
    statements = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    if any(id(y) not in statements for y in yields):
        return False  # a yield used as a value (x = yield v): the generator protocol, not a list
    return all(r.value is None or isinstance(r.value, ast.Constant) and r.value.value is None
               for r in nodes if isinstance(r, ast.Return))


class _ToAppends(ast.NodeTransformer):
    """``yield v`` -> ``_yb_yielded.append(v)``, ``yield from it`` -> ``.extend(it)``, ``return``
    -> ``return _yb_yielded``, in one function's own scope. A yield inside a ``while`` loop is
    followed by a check of the list's length (``_too_long``): a generator that does not end
    raises instead of running until memory runs out."""

    def __init__(self, function: ast.FunctionDef, filename: str) -> None:
        self.function, self.filename, self.whiles = function, filename, 0

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
        if isinstance(value, (ast.Yield, ast.YieldFrom)):
            method = "extend" if isinstance(value, ast.YieldFrom) else "append"
            item = value.value if value.value is not None else ast.Constant(None)
            call = ast.Call(ast.Attribute(ast.Name(_YIELDED, ast.Load()), method, ast.Load()), [item], [])
            append = ast.copy_location(ast.Expr(ast.copy_location(call, value)), node)
            return [append, _too_long(self.function, self.filename, node)] if self.whiles else append
        return self.generic_visit(node)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        return ast.copy_location(ast.Return(ast.Name(_YIELDED, ast.Load())), node)


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
    check = parse_source(f"if len({_YIELDED}) > {EAGER_ITEMS_LIMIT}:\n    raise RuntimeError({message!r})").body[0]
    for n in ast.walk(check):
        n.lineno, n.end_lineno, n.col_offset, n.end_col_offset = at.lineno, at.lineno, at.col_offset, at.col_offset
    return check


def _to_list_builder(function: ast.FunctionDef, filename: str) -> None:
    first = function.body[0]
    start = ast.copy_location(ast.Assign([ast.Name(_YIELDED, ast.Store())], ast.List([], ast.Load())), first)
    appends = _ToAppends(function, filename)
    body = [appends.visit(s) for s in function.body]
    end = ast.copy_location(ast.Return(ast.Name(_YIELDED, ast.Load())), function.body[-1])
    function.body = [start, *body, end]
