"""Stage 1b: what a generator's consumer does between its items, read from the call site.

``generator_eagerness.py`` decides whether a call ``g(...)`` of a generator function may be
evaluated eagerly; this module reads the syntax around the call for it:

* ``drained``: the call is the one argument of ``list``/``tuple``/``sorted`` or of ``str.join``
  (no keywords), is unpacked by a star (``f(*g())``), or is what a generator evaluated eagerly
  yields from: every item is taken before any other code runs, so a list is Python's generator
  whatever its body does;
* ``folding``: the call is the one argument of ``sum``/``max``/``min``/``set``/``frozenset``/
  ``dict`` or of ``np.fromiter`` (without ``count``): every item is taken at once, but the
  consumer may run a user's ``__add__``, ``__gt__``, ``__hash__`` or ``__float__`` between
  them, so its loop is written out (``generator_folds.py``);
* ``quiet_reads``: the consumer is ``any``/``all`` of the call, a ``for`` loop over it (or over
  ``enumerate`` of it), or a comprehension iterating over it, and the code that runs between
  items (the loop's body, the comprehension's element and filters) is *quiet*: it binds only
  local names (none the generator reads), calls only builtins, ``math`` and NumPy functions known
  to change nothing and methods of data that only read it, and does not yield. Such code changes
  nothing the generator reads, provided the values it handles are plain data: the names it
  reads are returned, for a check at run time (``ir.primitives.plain_data``) next to the
  generator's own arguments. A name it reads must be bound where the call is (a parameter, a
  variable of an enclosing scope, a target of an enclosing comprehension, or one assigned by a
  statement that always runs before the loop), or be assigned by the quiet code itself (its
  values then come from plain ones); otherwise the site is not quiet.
"""
from __future__ import annotations

import ast
import builtins

from .generator_effects import pure_call, trusted
from .list_builders import YIELDED
from .runtime_names import own_nodes

__all__ = ["drained", "folding", "free_in", "free_names", "loop_consumer", "parent_map", "quiet_reads", "stored_names"]

_GATHERING = frozenset({"list", "tuple", "sorted"})  # (sorted sorts the list it made of them)
_FOLDING = frozenset({"sum", "max", "min", "set", "frozenset", "dict"})
_STOPPING = frozenset({"any", "all"})
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
#: statements quiet code may hold (with quiet expressions in them)
_QUIET_STATEMENTS = (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Expr, ast.If, ast.For, ast.While,
                     ast.Break, ast.Continue, ast.Pass, ast.Return, ast.Raise, ast.Assert, ast.Delete)
_BUILTIN_NAMES = frozenset(dir(builtins))


def parent_map(node: ast.AST) -> dict:
    return {id(child): parent for parent in ast.walk(node) for child in ast.iter_child_nodes(parent)}


def drained(call: ast.expr, parents: dict, eager: frozenset = frozenset()) -> bool:
    """Whether ``call``'s items are all taken before any other code runs: the one argument of
    ``list``/``tuple``/``sorted``/``str.join``, unpacked by a star (``f(*g())``, ``[*g()]``; not
    into a set display, which hashes each as it comes), or what a generator function evaluated
    eagerly (one of ``eager``, or a list builder already) yields from."""
    consumer = parents.get(id(call))
    if isinstance(consumer, ast.Starred):
        return isinstance(parents.get(id(consumer)), (ast.Call, ast.List, ast.Tuple))
    if isinstance(consumer, ast.YieldFrom):
        return isinstance(parents.get(id(consumer)), ast.Expr) and _enclosing_function(consumer, parents) in eager
    if not (isinstance(consumer, ast.Call) and consumer.args == [call] and not consumer.keywords):
        return False
    f = consumer.func
    if isinstance(f, ast.Name):
        return trusted(f, _GATHERING)
    if isinstance(f, ast.Attribute) and f.attr == "extend" and isinstance(f.value, ast.Name):
        return f.value.id == YIELDED  # (``yield from`` in a list builder)
    return isinstance(f, ast.Attribute) and f.attr == "join" and isinstance(f.value, ast.Constant) \
        and isinstance(f.value.value, str)


def folding(call: ast.expr, parents: dict) -> str | None:
    """The consumer that takes ``call``'s items at once but may run a user's code between them
    (``sum``, ``max``, ``min``, ``set``, ``frozenset``, ``dict`` of it, or ``np.fromiter`` of it:
    ``"fromiter"``), when ``call`` is its one argument: ``generator_folds.py`` writes its loop out."""
    consumer = parents.get(id(call))
    if _numpy_fromiter(consumer, call):
        return "fromiter"
    if isinstance(consumer, ast.Call) and consumer.args == [call] and not consumer.keywords \
            and trusted(consumer.func, _FOLDING):
        return consumer.func.id
    return None


def _numpy_fromiter(consumer: ast.AST, call: ast.expr) -> bool:
    """``np.fromiter(call, dtype)`` without ``count`` (which may stop early), the dtype a name."""
    if not (isinstance(consumer, ast.Call) and isinstance(consumer.func, ast.Attribute)
            and consumer.func.attr == "fromiter" and trusted(consumer.func.value, ("np", "numpy"))
            and consumer.args[:1] == [call]):
        return False
    dtypes = consumer.args[1:] + [k.value for k in consumer.keywords if k.arg == "dtype"]
    return len(dtypes) <= 1 and all(k.arg == "dtype" for k in consumer.keywords) \
        and all(isinstance(d, (ast.Name, ast.Attribute, ast.Constant)) for d in dtypes)


def _enclosing_function(node: ast.AST, parents: dict) -> str | None:
    while node is not None and not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
        node = parents.get(id(node))
    return node.name if isinstance(node, ast.FunctionDef) else None


def quiet_reads(call: ast.Call, parents: dict, generator_reads: set, stepping: dict | None = None) -> tuple | None:
    """The names the consumer of ``call`` reads between items, when it is quiet (see the module's
    docstring), as two tuples: those that must be plain data, and those it updates in place
    (``s += v``), which must be immutable; None when it is not quiet. ``generator_reads``: the variables the generator reads
    from enclosing scopes (quiet code may not rebind them); ``stepping``: for the eager calls of
    rewritten generator expressions, what a generator call given as their first iterable must
    check (``any(v > 1 for v in g(x))``: ``generator_eagerness._Plan._record_stepping``)."""
    consumer = parents.get(id(call))
    if stepping and id(consumer) in stepping and _source_argument(consumer) is call:
        return stepping[id(consumer)], ()
    if isinstance(consumer, ast.Call) and consumer.args == [call] and not consumer.keywords \
            and trusted(consumer.func, _STOPPING):
        return (), ()
    source = call
    if _enumerated(consumer, call):
        source, consumer = consumer, parents.get(id(consumer))
    if isinstance(consumer, ast.For) and consumer.iter is source:
        return _loop_reads(consumer, parents, generator_reads)
    if isinstance(consumer, ast.comprehension) and consumer.iter is source:
        return _comprehension_reads(consumer, parents, generator_reads)
    return None


def _source_argument(call: ast.Call) -> ast.expr | None:
    """The first iterable handed to a rewritten generator expression's call (after the names
    its eager copy checks and its lazy self, ``_yb_eager_...((reads), lazy, source)``)."""
    name = call.func.id if isinstance(call.func, ast.Name) else ""
    at = 2 if name.startswith("_yb_eager_") else 1 if name.startswith("_yb_fromiter_") else 0  # (its dtype first)
    return call.args[at] if len(call.args) > at else None


def loop_consumer(call: ast.Call, parents: dict) -> bool:
    """Whether ``call`` is stepped by a ``for`` statement (directly or through ``enumerate``)."""
    consumer = parents.get(id(call))
    if _enumerated(consumer, call):
        consumer, call = parents.get(id(consumer)), consumer
    return isinstance(consumer, ast.For) and consumer.iter is call


def _enumerated(consumer: ast.AST, call: ast.Call) -> bool:
    return isinstance(consumer, ast.Call) and trusted(consumer.func, "enumerate") \
        and consumer.args == [call] and not consumer.keywords


def _loop_reads(loop: ast.For, parents: dict, generator_reads: set) -> tuple | None:
    if not _plain_target(loop.target) or not all(_quiet(s) for s in loop.body):
        return None
    targets = stored_names(loop.target)
    assigned = set().union(*(stored_names(s) for s in loop.body)) if loop.body else set()
    if assigned & generator_reads:
        return None  # the body rebinds a variable the generator reads as it runs
    updated = _updated_in_place(loop.body)
    if updated is None:
        return None
    reads = _bound_reads((_loads(loop.body) | updated) - targets, assigned, loop, parents)  # (``s += v`` reads s)
    if reads is None:
        return None
    return tuple(r for r in reads if r not in updated), tuple(r for r in reads if r in updated)


def _updated_in_place(body: list) -> set | None:
    """The names ``body`` updates with ``+=`` and the like, which writes in place into a list or
    an array: each must hold an immutable value (a number, checked at run time when it is bound
    before the loop), so they must be assigned nothing else in ``body`` than the result of an
    operation (a new value); None when one is (``t = arr; t += v`` would write ``arr``)."""
    nodes = [n for s in body for n in own_nodes([s])]
    updated = {n.target.id for n in nodes if isinstance(n, ast.AugAssign)}
    for n in nodes:
        if isinstance(n, (ast.Assign, ast.AnnAssign, ast.For)) and not isinstance(getattr(n, "value", None),
                                                                                   (ast.BinOp, ast.UnaryOp, ast.Constant)):
            targets = n.targets if isinstance(n, ast.Assign) else [n.target]
            if set().union(*(stored_names(t) for t in targets)) & updated:
                return None
    return updated


def _comprehension_reads(generator: ast.comprehension, parents: dict, generator_reads: set) -> tuple | None:
    node = parents.get(id(generator))
    if not isinstance(node, _COMPREHENSIONS) or isinstance(node, ast.GeneratorExp) and not drained(node, parents):
        return None
    k = node.generators.index(generator)
    later = node.generators[k:]
    region = [*(getattr(node, f) for f in ("elt", "key", "value") if hasattr(node, f)),
              *(c for g in later for c in g.ifs), *(g.iter for g in later[1:])]
    if not all(_plain_target(g.target) for g in later) or not all(_quiet_expression(e) for e in region):
        return None
    targets = set().union(*(stored_names(g.target) for g in later))
    reads = _bound_reads(_loads(region) - targets, set(), node, parents)
    return None if reads is None else (reads, ())


def _bound_reads(reads: set, assigned: set, at: ast.AST, parents: dict) -> tuple | None:
    """``reads`` (minus builtins), when each is bound at ``at`` or assigned by the quiet code."""
    bound, local, elsewhere = _bound_at(at, parents)
    if local is None:
        return None
    checked = []
    for name in sorted(reads):
        if name in _BUILTIN_NAMES and name not in local:
            continue
        if name in bound or name not in local:  # (not a local: a variable of an enclosing scope or a global)
            checked.append(name)
        elif name not in assigned or name in elsewhere:
            return None  # a local that may be unbound here, or hold a value from before: not checkable
    return tuple(checked)


def _bound_at(at: ast.AST, parents: dict) -> tuple[set, set | None, set]:
    """The names surely bound where ``at`` runs, the locals of its function (None when ``at`` is
    not in a function: a class body) and those of its locals assigned outside ``at``."""
    bound: set = set()
    child, node = at, parents.get(id(at))
    while node is not None:
        if isinstance(node, _COMPREHENSIONS):
            bound |= set().union(*(stored_names(g.target) for g in node.generators))
        elif isinstance(node, ast.Lambda):
            bound |= {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(node, field, None)
            if isinstance(statements, list) and any(s is child for s in statements):
                for s in statements[:[id(s) for s in statements].index(id(child))]:
                    bound |= _surely_bound_by(s)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            break
        child, node = node, parents.get(id(node))
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return bound, None, set()
    params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
    own = own_nodes(node.body)
    inside = {id(n) for n in own_nodes([at])}
    stores = [n for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)]
    local = params | {n.id for n in stores}
    elsewhere = params | {n.id for n in stores if id(n) not in inside}
    deleted = {n.id for n in stores if isinstance(n.ctx, ast.Del)}
    return (bound | params) - deleted, local, elsewhere


def _surely_bound_by(statement: ast.stmt) -> set:
    """Names a statement binds whenever it completes."""
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
        if isinstance(statement, ast.AnnAssign) and statement.value is None:
            return set()
        targets = statement.targets if isinstance(statement, ast.Assign) else [statement.target]
        return set().union(*(stored_names(t) for t in targets))
    if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return {statement.name}
    if isinstance(statement, (ast.Import, ast.ImportFrom)):
        return {(a.asname or a.name).split(".")[0] for a in statement.names}
    return set()


def _plain_target(target: ast.expr) -> bool:
    """A name, or a tuple or list of them: a target that writes no container."""
    if isinstance(target, ast.Name):
        return True
    return isinstance(target, (ast.Tuple, ast.List)) and all(_plain_target(e) for e in target.elts)


def stored_names(node: ast.AST) -> set:
    """The names ``node`` assigns (not inside nested functions, lambdas or classes)."""
    return {n.id for n in own_nodes([node]) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}


def _quiet(statement: ast.stmt) -> bool:
    if not isinstance(statement, _QUIET_STATEMENTS):
        return False
    if isinstance(statement, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.For, ast.Delete)):
        targets = statement.targets if isinstance(statement, (ast.Assign, ast.Delete)) else [statement.target]
        if not all(_plain_target(t) for t in targets):
            return False
    for field, value in ast.iter_fields(statement):
        for child in value if isinstance(value, list) else [value]:
            if isinstance(child, ast.stmt) and not _quiet(child):
                return False
            if isinstance(child, ast.expr) and not _quiet_expression(child):
                return False
    return True


def _quiet_expression(expression: ast.expr) -> bool:
    for n in ast.walk(expression):
        if isinstance(n, (ast.Yield, ast.YieldFrom, ast.Await, ast.NamedExpr, ast.Lambda)):
            return False
        if isinstance(n, (ast.Attribute, ast.Subscript)) and not isinstance(n.ctx, ast.Load):
            return False
        if isinstance(n, ast.Call) and not (pure_call(n) or trusted(n.func, "print")):
            return False
    return True


def _loads(nodes: list) -> set:
    """Names read by ``nodes`` from their scope (not a comprehension's own targets)."""
    found: set = set()
    for node in nodes:
        found |= free_in(node)
    return found


def free_in(node: ast.AST) -> set:
    """The names the expression ``node`` reads from its scope: a comprehension's or lambda's own
    names left out."""
    if isinstance(node, _COMPREHENSIONS):
        inner: set = set()
        bound: set = set()
        for g in node.generators:
            inner |= free_in(g.iter) - bound
            bound |= stored_names(g.target)
            for c in g.ifs:
                inner |= free_in(c) - bound
        for f in ("elt", "key", "value"):
            if hasattr(node, f):
                inner |= free_in(getattr(node, f)) - bound
        return inner
    if isinstance(node, ast.Lambda):
        params = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        return free_in(node.body) - params | set().union(*(free_in(d) for d in [*node.args.defaults, *node.args.kw_defaults] if d is not None))
    if isinstance(node, ast.Name):
        return {node.id} if isinstance(node.ctx, ast.Load) else set()
    found: set = set()
    for child in ast.iter_child_nodes(node):
        found |= free_in(child)
    return found


def free_names(function: ast.FunctionDef) -> list[str]:
    """The names ``function`` reads from enclosing scopes or globals (builtins left out unless
    bound somewhere in it or shadowed: ``generator_effects.mark_shadowed_names``), sorted: the
    values its eager copy checks at run time."""
    params = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    own = own_nodes(function.body)
    local = params | {n.id for n in own if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load)} \
        | {n.name for n in own if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))}
    for n in own:
        local |= _surely_bound_by(n) if isinstance(n, (ast.Import, ast.ImportFrom)) else set()
    reads: set = set()
    for s in function.body:
        reads |= _free_in_statement(s)
    shadowed = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and not trusted(n, n.id)}
    return sorted(name for name in reads - local if name not in _BUILTIN_NAMES or name in shadowed)


def _free_in_statement(node: ast.AST) -> set:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return set(free_names(node)) | _loads([*node.args.defaults, *(d for d in node.args.kw_defaults if d), *node.decorator_list])
    if isinstance(node, ast.expr):
        return free_in(node)
    found: set = set()
    for child in ast.iter_child_nodes(node):
        found |= _free_in_statement(child)
    return found
