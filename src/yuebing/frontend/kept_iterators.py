"""Stage 1b: ``map``, ``filter``, ``zip`` and ``enumerate`` calls whose iterator is kept, run lazily.

Under differentiation these builtins take every item when they are called, as one rule over the
whole list (``rules/iteration.py``), unless their laziness can be seen from their arguments (an
iterator given, a function that may change data). That is exact only when the items are all
taken before any other code runs. An iterator that is kept (``m = map(f, xs)``, returned,
passed to a function, walked by a ``for`` loop whose body runs between items) may see its lists
change before it reaches an item: CPython's iterator then reads the new item, and the eager list
would hold the old one -- a silently wrong value and derivative.

So every such call is rewritten to ``_yb_kept_iterator(map, f, xs)`` (``ir/lazy_iterators.py``),
which makes CPython's lazy iterator when ``map`` is the builtin (it is decided when the call runs:
a user's own ``map`` is called as it is), except where the items are provably taken at once:

* the call is a positional argument of a consumer that takes every item before it returns and
  runs no code of the user's in between (``sum``, ``list``, ``tuple``, ``sorted``, ``min``, ``max``,
  ``set``, ``frozenset``, ``dict``, ``any``, ``all``, ``math.fsum``, ``math.prod``,
  ``np.fromiter``, and the methods ``extend``, ``update`` and ``join``), named by a builtin or
  module name the function does not rebind;
* the call is unpacked by a star into a call's arguments or a display (``f(*zip(a, b))``; such an
  unpacked iterator is listed first, ``f(*list(zip(a, b)))``, since ``a`` and ``b`` may be lazy);
* the call is an argument of a ``zip`` or ``enumerate`` call that is itself taken at once;
* the call is the ``zip``/``enumerate`` a ``for`` statement or comprehension walks directly: the
  loop lowering already follows its lists live (``loops.py``); its own arguments are kept. (The
  first iterable of a generator expression is made where the expression is, and walked when it
  is consumed: kept, unless the expression itself is taken at once, ``sum(a * b for a, b in zip(...))``.)

A ``key=`` function of ``sorted``/``min``/``max`` runs between items too, but every consumer,
lazy iterator or not, lists the items before it calls the key (``rules/iteration.py``).
"""
from __future__ import annotations

import ast
import copy

from .runtime_names import helper, walk_own_scope

__all__ = ["keep_iterators", "KEPT_NAMES"]

#: the builtins whose iterators are made eagerly unless kept
KEPT_NAMES = frozenset({"map", "filter", "zip", "enumerate"})
_TAKING_NAMES = frozenset({"sum", "list", "tuple", "sorted", "min", "max", "set", "frozenset", "dict", "any", "all"})
_TAKING_FUNCTIONS = frozenset({("math", "fsum"), ("math", "prod"), ("np", "fromiter"), ("numpy", "fromiter")})
_TAKING_METHODS = frozenset({"extend", "update", "join"})
_WALKED_LIVE = frozenset({"zip", "enumerate"})  # (loops.py, directly in a for statement)


def keep_iterators(node: ast.FunctionDef | ast.Lambda, rebound: frozenset) -> ast.FunctionDef | ast.Lambda:
    """``node`` with the kept ``map``/``filter``/``zip``/``enumerate`` calls of its own scope
    rewritten to ``_yb_kept_iterator(name, ...)``, and iterators unpacked by a star listed first
    (a copy; ``node`` itself when there are none). ``rebound``: the names the function's
    globals, closure or own code bind to something else."""
    nodes = list(walk_own_scope(node))
    if not any(_iterator_call(n) or _unpacked_iterator(n) for n in nodes):
        return node
    rebound = rebound | _bound_names(node)
    node = copy.deepcopy(node)
    parents = {id(child): parent for parent in _own_scope_and_self(node) for child in ast.iter_child_nodes(parent)}
    nodes = list(walk_own_scope(node))
    kept = [c for c in nodes if _iterator_call(c) and _kept(c, parents, rebound)]
    for star in nodes:
        if _unpacked_iterator(star):  # f(*zip(a, b)) of lazy a and b: listed with their derivatives first
            star.value = ast.copy_location(ast.Call(helper("list"), [star.value], []), star.value)
    for call in kept:
        call.args.insert(0, call.func)
        call.func = ast.copy_location(helper("kept_iterator"), call.func)
    return ast.fix_missing_locations(node)


#: calls whose value may be a lazy iterator (``ir/lazy_iterators.py``, ``ir/lazy_itertools.py``)
_ITERATOR_NAMES = KEPT_NAMES | {"reversed", "iter", "chain", "accumulate", "pairwise", "starmap", "zip_longest",
                                "islice", "compress", "takewhile", "dropwhile", "filterfalse", "groupby",
                                "from_iterable"}


def _unpacked_iterator(node: ast.AST) -> bool:
    """``*it`` of a call that makes an iterator, in a call or a display: the runtimes split a
    star's tangent into its items for tuples, lists and arrays, and list others first
    (``transform/runtime._listed_star``)."""
    if not (isinstance(node, ast.Starred) and isinstance(node.value, ast.Call)):
        return False
    function = node.value.func
    name = function.id if isinstance(function, ast.Name) else function.attr if isinstance(function, ast.Attribute) else None
    return name in _ITERATOR_NAMES


def _bound_names(node: ast.AST) -> frozenset:
    """The names ``node`` binds anywhere (a parameter, a store, a ``def``, an import): not
    trusted to be the builtins or modules they spell."""
    bound = set()
    for n in ast.walk(node):
        if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load):
            bound.add(n.id)
        elif isinstance(n, ast.arg):
            bound.add(n.arg)
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            bound.add(n.name)
        elif isinstance(n, (ast.Import, ast.ImportFrom)):
            bound.update((a.asname or a.name).partition(".")[0] for a in n.names)
    return frozenset(bound)


def _own_scope_and_self(node: ast.AST) -> list:
    return [node, *walk_own_scope(node)]


def _iterator_call(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in KEPT_NAMES


def _kept(call: ast.Call, parents: dict, rebound: frozenset) -> bool:
    """Whether ``call``'s iterator is kept: not walked live by the ``for`` statement it heads,
    nor taken whole at once."""
    parent = parents.get(id(call))
    if isinstance(parent, (ast.For, ast.comprehension)) and parent.iter is call:
        expression = parents.get(id(parent))
        if isinstance(expression, ast.GeneratorExp) and expression.generators[0] is parent \
                and not _taken_at_once(expression, parents, rebound):
            return True  # made where the generator expression is, walked when it is consumed
        return not (call.func.id in _WALKED_LIVE and call.func.id not in rebound)
    return not _taken_at_once(call, parents, rebound)


def _taken_at_once(call: ast.expr, parents: dict, rebound: frozenset) -> bool:
    """Whether every item of ``call``'s iterator (or generator expression's) is taken before any
    other code of the user's runs."""
    parent = parents.get(id(call))
    if isinstance(parent, ast.Starred):
        return isinstance(parents.get(id(parent)), (ast.Call, ast.List, ast.Tuple, ast.Set))
    if not (isinstance(parent, ast.Call) and any(a is call for a in parent.args)):
        return False
    if _iterator_call(parent):
        return parent.func.id in _WALKED_LIVE and _taken_at_once(parent, parents, rebound)
    return _takes_every_item(parent.func, rebound)


def _takes_every_item(function: ast.expr, rebound: frozenset) -> bool:
    if isinstance(function, ast.Name):
        return function.id in _TAKING_NAMES and function.id not in rebound
    if not isinstance(function, ast.Attribute):
        return False
    owner = function.value
    if isinstance(owner, ast.Name) and (owner.id, function.attr) in _TAKING_FUNCTIONS:
        return owner.id not in rebound
    return function.attr in _TAKING_METHODS
