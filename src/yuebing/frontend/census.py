"""One walk over a function's tree recording what is in it, so that the frontend's passes can
skip themselves when the constructs they rewrite or refuse are absent.

Every pass of the frontend (``desugar.py`` and the rewrites it runs, ``fence.py``, the
normaliser's bookkeeping) used to walk the whole tree to find out whether it had work to do; a
function of plain arithmetic paid for a dozen walks. ``Census`` walks the tree once and answers
those questions: which node types occur (in the function's own scope, and anywhere below it),
which names are read and declared. A census describes one tree: a pass that returns a new tree
(the rewrites copy before they change anything) needs a new census.
"""
from __future__ import annotations

import ast

from .kept_iterators import KEPT_NAMES
from .runtime_names import HELPERS

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_YIELDS = (ast.Yield, ast.YieldFrom)


class Census:
    """What occurs in ``node`` (a ``def`` or ``lambda``).

    ``own_types``, ``own_names``, ``own_nonlocals``, ``own_globals``: node types, ``Name`` ids and
    ``nonlocal``/``global`` declarations of the function's own scope (its children, not the
    bodies of nested functions, lambdas or classes: ``runtime_names.walk_own_scope``).
    ``all_types``, ``all_names``, ``all_nonlocals``: the same over the whole tree
    (``ast.walk``), ``all_names`` holding parameter names (``ast.arg``) as well.
    ``returns``: the number of ``return`` statements anywhere in the tree. ``called_names``: the
    names called as ``name(...)`` anywhere; ``bound_names``: the names stored, deleted or taken as
    parameters anywhere (what ``generator_closing`` and ``generator_eagerness`` look up)."""

    def __init__(self, node: ast.AST) -> None:
        self.own_types: set[type] = set()
        self.own_names: set[str] = set()
        self.own_nonlocals: set[str] = set()
        self.own_globals: set[str] = set()
        self.all_types: set[type] = {type(node)}
        self.all_names: set[str] = set()
        self.all_nonlocals: set[str] = set()
        self.returns = 0
        self.caught_names: set[str] = set()  # ``except ... as name`` anywhere
        self.value_owners: set[str] = set()  # ``name.value`` read anywhere
        self.called_names: set[str] = set()
        self.bound_names: set[str] = set()
        self._walk(node)

    def _walk(self, node: ast.AST) -> None:
        # (child, in the function's own scope): one stack, no recursion
        stack = [(child, True) for child in ast.iter_child_nodes(node)]
        while stack:
            child, own = stack.pop()
            kind = type(child)
            self.all_types.add(kind)
            if own:
                self.own_types.add(kind)
            if kind is ast.Name:
                self.all_names.add(child.id)
                if own:
                    self.own_names.add(child.id)
                if type(child.ctx) is not ast.Load:
                    self.bound_names.add(child.id)
                continue  # a Name's only child is its context
            if kind is ast.arg:
                self.all_names.add(child.arg)
                self.bound_names.add(child.arg)
            elif kind is ast.Call:
                if type(child.func) is ast.Name:
                    self.called_names.add(child.func.id)
            elif kind is ast.Return:
                self.returns += 1
            elif kind is ast.ExceptHandler and child.name:
                self.caught_names.add(child.name)
            elif kind is ast.Attribute and child.attr == "value" and type(child.value) is ast.Name:
                self.value_owners.add(child.value.id)
            elif kind is ast.Nonlocal:
                self.all_nonlocals.update(child.names)
                if own:
                    self.own_nonlocals.update(child.names)
            elif kind is ast.Global and own:
                self.own_globals.update(child.names)
            inner = own and not isinstance(child, _NESTED)
            stack.extend((grandchild, inner) for grandchild in ast.iter_child_nodes(child))

    # ---------------------------------------------------------------- which passes have work

    def may_be_rewritten(self, node: ast.AST) -> bool:
        """Whether ``desugar.desugar`` can change ``node``: it rewrites ``match`` and
        ``except*`` of the own scope (``match_statements.py``, ``try_star.py``), an ``async
        def`` (``async_functions.py``), names of ``runtime_names.HELPERS`` of the own scope
        (``bind_helpers``), generator functions and generator expressions anywhere (``generators.py``,
        ``generator_expressions.py``, ``desugar.py``) and
        ``except ... as e`` clauses reading ``e.value`` (``stop_values.py``), calls of ``map``,
        ``filter``, ``zip``, ``enumerate`` (``kept_iterators.py``); when this is False,
        ``desugar(node)`` returns ``node`` itself."""
        return (isinstance(node, ast.AsyncFunctionDef)
                or ast.Match in self.own_types
                or getattr(ast, "TryStar", None) in self.own_types
                or not self.own_names.isdisjoint(HELPERS)
                or not self.all_types.isdisjoint(_YIELDS)
                or ast.GeneratorExp in self.all_types
                or not self.called_names.isdisjoint(KEPT_NAMES)
                or not self.caught_names.isdisjoint(self.value_owners))

    def may_be_refused(self, node: ast.AST) -> bool:
        """Whether ``fence.fence`` can raise on ``node``: it refuses yields no rewrite took and
        async generators, so never when there is no yield and no ``async def``."""
        return ast.AsyncFunctionDef in self.all_types or not self.all_types.isdisjoint(_YIELDS)
