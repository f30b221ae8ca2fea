"""Stage 1b: rewrite constructs that have a plain equivalent, before the fence sees them.

``match`` statements, ``try``/``except*`` and ``async`` code are rewritten first, into plain
constructs (``syntax_rewrites.py``).

Generator expressions that are not drained at once become nested generator functions
(``generator_expressions.py``). Generator functions become list builders (``list_builders.py``)
where that is provably exact, and state machines (``generators.py``), which run lazily, everywhere
else: ``generator_eagerness.py`` decides, and gives the calls that may run eagerly copies of
their own (a generator drained by ``sum``, or pure, consumed quietly and reaching plain data).

The rewrite works on a copy: the parsed tree is shared with other functions of the file.
"""
from __future__ import annotations

import ast
import copy

from .generator_effects import mark_shadowed_names
from .generator_expressions import hoist_generator_expressions
from .generators import state_machines
from .kept_iterators import keep_iterators
from .list_builders import to_list_builder
from .runtime_names import bind_helpers, own_nodes
from .syntax_rewrites import rewrite_syntax


def desugar(node: ast.FunctionDef | ast.Lambda, filename: str = "<unknown>",
            outside_generators: frozenset = frozenset(), called: dict | None = None,
            shadowed: frozenset = frozenset()) -> ast.FunctionDef | ast.Lambda:
    """``node`` with its match, except* and async code rewritten (``rewrite_syntax``) and every
    generator function in it (itself or nested) rewritten to build and return a list, where that
    is exact; ``node`` itself when there is nothing to rewrite. ``filename``: the user's file,
    named by the error of a generator that does not end; ``outside_generators``: names of
    generator functions with cleanup defined outside ``node`` that it calls (closed where
    dropped: ``generator_closing.py``); ``called``: definitions of generator functions of the module
    it calls (``generator_eagerness.called_generator_definitions``); ``shadowed``: the builtin and
    module names its globals or closure bind to something else
    (``generator_effects.shadowed_builtins``), not trusted to be what they spell."""
    node = rewrite_syntax(node, bind=False)  # match, except*, async (syntax_rewrites.py)
    node = keep_iterators(node, shadowed)  # map(...) kept in a variable: lazy (kept_iterators.py)
    node = _marked(node, shadowed, called)  # (a user's abs or len: generator_effects.py)
    node = hoist_generator_expressions(node, filename)  # those not drained at once (generator_expressions.py)
    node = state_machines(node, filename, outside_generators, called)  # generators a list cannot stand for (generators.py)
    node = bind_helpers(node)  # (after: a generator's body moves into a nested function as text)
    if not any(_is_eager_generator(f) for f in _functions(node)):
        return node
    node = copy.deepcopy(node)
    for function in _functions(node):
        if _is_eager_generator(function):
            to_list_builder(function, filename)
    return ast.fix_missing_locations(node)


def _marked(node: ast.FunctionDef | ast.Lambda, shadowed: frozenset, called: dict | None):
    """A copy of ``node`` (and of ``called``'s definitions, in place) with the reads of names that
    are not the builtins they spell marked (``generator_effects.mark_shadowed_names``), when
    generators' eagerness may depend on them."""
    if not any(isinstance(n, (ast.Yield, ast.YieldFrom, ast.GeneratorExp)) for n in ast.walk(node)):
        return node
    node = copy.deepcopy(node)
    mark_shadowed_names(node, shadowed)
    for name, definition in (called or {}).items():
        called[name] = copy.deepcopy(definition)
        mark_shadowed_names(called[name], shadowed)
    return node


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
