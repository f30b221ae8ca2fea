"""Stage 1b, part of ``generators.py``: a lazy generator with cleanup closed where CPython drops it.

CPython closes a generator (runs its ``finally`` blocks and ``with`` exits) when the last
reference to it goes. A state machine (``generators.py``) is an ordinary object kept alive by
the differentiation's own records, so it is closed explicitly, at the places in the source where
CPython drops it. Only generators of functions with a yield inside ``try``/``with`` ("with
cleanup") are concerned; a call making one is recognised by the function's name (one defined
in the function, or one of its module or closure: ``cleanup_generators_called``):

* ``next(g(...))``: ``next_closed(g(...))``, closed right after;
* ``for v in g(...)`` (or over ``zip``/``enumerate``/``islice`` of it): ``try: for ... finally:
  generator.close()``;
* a statement whose comprehension iterates over ``g(...)``: the generator is made first and
  closed when the statement is done; one made in a comprehension nested in another (or in a
  later ``for`` clause) is kept in a list as it is made, ``kept_in(made, g(s))``, and each is
  closed when the statement is done (in CPython, when the inner comprehension is dropped);
* a name assigned ``it = g(...)`` that never lets the generator escape (only stepped with
  ``next``/``send``/``throw``/``close`` or iterated over; not passed on, stored, returned or
  captured), or a list or tuple of them (``gens = [g(a), g(b)]``, ``[g(a) for a in s]``,
  ``gens.append(g(c))``; its items only stepped, ``next(gens[k])``, and ``len(gens)``): each
  assignment goes through ``held(owned, "it", value)``, which closes the generator the name
  held before (a list's from its last item to its first, as CPython frees a list), ``del it``
  through ``held(owned, "it", None)``, and the function's body is wrapped in ``try ...
  finally: close_held(owned, names)`` (CPython closes what its locals hold when the frame goes,
  in the order the names are first bound). A name that lets it escape is left alone: CPython
  closes the generator when the last holder drops it, which the source does not show.

Any generator with cleanup is also watched (``ir/generators.watch``): one still suspended where
closing it runs code, never closed, when the pass ends (it escaped, or was made by a call not
recognised here, such as a method's) is refused by name (``rules/outside_state.leave``).
"""
from __future__ import annotations

import ast
import inspect
import types

from .census import Census
from .generator_effects import trusted
from .generator_expressions import HOISTED
from .generator_folds import folds_an_expression
from .parsing import parse as parse_source
from .runtime_names import own_nodes
from .source import function_node
from .yield_hoisting import contains_yield

__all__ = ["ClosedWhereDropped", "cleanup_generators_called", "fresh", "has_cleanup"]

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)
_STEPS = ("send", "throw", "close", "__next__")
_WRAPPERS = ("zip", "enumerate", "islice")


def fresh(base: str, taken: set) -> str:
    """``base``, or ``base`` with underscores in front, not in ``taken`` (then taken)."""
    name = base
    while name in taken:
        name = "_" + name
    taken.add(name)
    return name


def has_cleanup(function: ast.FunctionDef) -> bool:
    """Whether a yield of ``function`` is inside a ``try`` or ``with``: closing it runs code."""
    blocks = (ast.Try, ast.With, *([ast.TryStar] if hasattr(ast, "TryStar") else []))
    return any(isinstance(n, blocks) and contains_yield(n) for n in own_nodes(function.body))


def cleanup_generators_called(fn: types.FunctionType, node: ast.AST, census: Census | None = None) -> frozenset:
    """The names ``node`` (``fn``'s definition, ``census`` its census if taken) calls that hold,
    in ``fn``'s globals or closure, a generator function with cleanup (defined outside ``fn``: its
    calls are closed where dropped as those of one defined inside are)."""
    census = census or Census(node)
    code = fn.__code__
    local = set(code.co_varnames) | set(code.co_cellvars)
    cells = dict(zip(code.co_freevars, fn.__closure__ or ()))
    found = set()
    for name in census.called_names - local:
        try:
            value = cells[name].cell_contents if name in cells else fn.__globals__.get(name)
        except ValueError:  # (an empty cell)
            continue
        if type(value) is types.FunctionType and _generator_with_cleanup(value.__code__, value):
            found.add(name)
    return frozenset(found)


_CLEANUP: dict = {}  # code object -> whether its generator function has cleanup


def _generator_with_cleanup(code: types.CodeType, function: types.FunctionType) -> bool:
    if not code.co_flags & inspect.CO_GENERATOR:
        return False
    if code not in _CLEANUP:
        try:
            _CLEANUP[code] = has_cleanup(function_node(function)[0])
        except Exception:  # noqa: BLE001 - no source: not closed here (refused if dropped unclosed)
            _CLEANUP[code] = False
    return _CLEANUP[code]




class ClosedWhereDropped(ast.NodeTransformer):
    """The rewrite of the module's docstring, for the generator functions named ``generators``
    (``helpers``: the runtime functions used, by their local names, imported by the caller)."""

    def __init__(self, generators: set, taken: set, in_def: bool) -> None:
        self.generators, self.taken, self.in_def = generators, taken, in_def
        self.helpers: dict = {}

    def helper(self, name: str) -> str:
        if name not in self.helpers:
            self.helpers[name] = fresh(name, self.taken)
        return self.helpers[name]

    def imports(self) -> list:
        """The import of the helpers used (into the body of the outermost function)."""
        if not self.helpers:
            return []
        names = ", ".join(k if k == v else f"{k} as {v}" for k, v in self.helpers.items())
        return parse_source(f"from yuebing.ir.generators import {names}").body

    def _made(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in self.generators

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        self.generic_visit(node)
        if self.in_def:
            _HeldNames(self, node).rewrite()
        return node

    def visit_Call(self, node: ast.Call) -> ast.AST:
        self.generic_visit(node)
        if self.in_def and isinstance(node.func, ast.Name) and node.func.id == "next" and node.args \
                and self._made(node.args[0]):
            return ast.copy_location(ast.Call(ast.Name(self.helper("next_closed"), ast.Load()), node.args,
                                              node.keywords), node)
        return node

    def _iterated(self, owner: ast.AST) -> list:
        """Where ``owner.iter`` is, or directly holds, a call making such a generator."""
        if self._made(owner.iter):
            return [(owner, "iter")]
        if isinstance(owner.iter, ast.Call):  # zip(a, g(...)), enumerate(g(...)), islice(g(...), 3)
            return [(owner.iter.args, k) for k, a in enumerate(owner.iter.args) if self._made(a)]
        return []

    def visit_For(self, node: ast.For) -> ast.AST:
        self.generic_visit(node)
        return self._closed(node, self._iterated(node), [])

    def _simple(self, node: ast.stmt) -> ast.AST:
        """A statement whose comprehensions iterate over such generators: those of the outermost
        ones' first iterables are made first, the others kept as they are made; all are closed
        when the statement is done (comprehensions are evaluated at once, eagerly)."""
        self.generic_visit(node)
        slots, inner = [], []
        for comprehension in _outermost_comprehensions(node):  # (the first iterable is made outside it)
            slots += self._iterated(comprehension.generators[0])
            inner += [c for generator in comprehension.generators[1:] for c in self._iterated(generator)]
            for nested in _nested_comprehensions(comprehension):
                inner += [c for generator in nested.generators for c in self._iterated(generator)]
                inner += self._folded_sources(nested)
            inner += self._folded_sources(comprehension)
        slots += self._folded_sources(node, outermost=True)
        return self._closed(node, slots, inner if self.in_def else [])

    def _folded_sources(self, node: ast.AST, outermost: bool = False) -> list:
        """The generators made as the sources of a generator expression drained by ``sum``,
        ``max``... (``generator_folds.py``: a call of its copy, which steps them at once), in
        ``node``'s own expressions (``outermost``: not inside its comprehensions)."""
        found, stack = [], list(ast.iter_child_nodes(node))
        while stack:
            n = stack.pop()
            if isinstance(n, _NESTED) or outermost and isinstance(n, _COMPREHENSIONS) \
                    or not outermost and isinstance(n, _COMPREHENSIONS) and n is not node:
                continue
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and folds_an_expression(n.func.id):
                found += [(n.args, k) for k, a in enumerate(n.args) if self._made(a)]
            elif _expression_taken_at_once(n):
                found += [(n.args[0].args, k) for k, a in enumerate(n.args[0].args) if self._made(a)]
            stack.extend(ast.iter_child_nodes(n))
        return found

    visit_Expr = visit_Assign = visit_AugAssign = visit_AnnAssign = visit_Return = _simple

    def _closed(self, node: ast.stmt, slots: list, inner: list) -> ast.AST:
        if not slots and not inner:
            return node
        made, closes = [], []
        for owner, key in slots:
            name = fresh("generator", self.taken)
            made.append(ast.copy_location(ast.Assign([ast.Name(name, ast.Store())], _get(owner, key)), node))
            closes.append(ast.copy_location(ast.Expr(ast.Call(
                ast.Attribute(ast.Name(name, ast.Load()), "close", ast.Load()), [], [])), node))
            _set(owner, key, ast.Name(name, ast.Load()))
        if inner:
            kept = fresh("made", self.taken)
            made.append(ast.copy_location(ast.Assign([ast.Name(kept, ast.Store())], ast.List([], ast.Load())), node))
            closes.append(ast.copy_location(ast.Expr(ast.Call(
                ast.Name(self.helper("close_made"), ast.Load()), [ast.Name(kept, ast.Load())], [])), node))
            for owner, key in inner:
                _set(owner, key, ast.Call(ast.Name(self.helper("kept_in"), ast.Load()),
                                          [ast.Name(kept, ast.Load()), _get(owner, key)], []))
        return [*made, ast.copy_location(ast.Try([node], [], [], closes), node)]


def _expression_taken_at_once(node: ast.AST) -> bool:
    """``any(_yb_genexpr(...))``, ``next(...)``, ``sum(...)`` of a rewritten generator expression
    (``generator_expressions.py``): done with it when the consumer returns, as a comprehension is."""
    if not (isinstance(node, ast.Call) and trusted(node.func, _AT_ONCE) and node.args and isinstance(node.args[0], ast.Call) and isinstance(node.args[0].func, ast.Name)):
        return False
    name = node.args[0].func.id
    return name.startswith(HOISTED) or name.startswith("_yb_eager_" + HOISTED)


def _get(owner: object, key: object) -> ast.expr:
    return owner[key] if isinstance(owner, list) else getattr(owner, key)


def _set(owner: object, key: object, value: ast.expr) -> None:
    if isinstance(owner, list):
        owner[key] = value
    else:
        setattr(owner, key, value)


#: consumers done with the iterator they are handed when they return
_AT_ONCE = frozenset({"any", "all", "next", "sum", "min", "max", "sorted", "list", "tuple", "set", "frozenset", "dict"})


def _outermost_comprehensions(statement: ast.stmt) -> list:
    """The comprehensions of ``statement`` not inside another one, a lambda or a nested function
    (what those iterate over may depend on their variables)."""
    found, stack = [], [statement]
    while stack:
        node = stack.pop()
        if isinstance(node, _COMPREHENSIONS):
            found.append(node)
            continue
        stack.extend(c for c in ast.iter_child_nodes(node) if not isinstance(c, _NESTED))
    return found


def _nested_comprehensions(comprehension: ast.AST) -> list:
    """The comprehensions inside ``comprehension`` (not inside lambdas or functions)."""
    return [n for n in own_nodes(list(ast.iter_child_nodes(comprehension))) if isinstance(n, _COMPREHENSIONS)]


class _HeldNames:
    """The names of one function that hold a generator with cleanup and never let it escape
    (the last part of the module's docstring)."""

    def __init__(self, closing: ClosedWhereDropped, function: ast.FunctionDef) -> None:
        self.closing, self.function = closing, function
        self.nodes = own_nodes(function.body)
        self.parents = {id(c): n for n in self.nodes for c in ast.iter_child_nodes(n)}

    def names(self) -> set:
        if any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in self.nodes):
            return set()  # a generator function: what its frame holds goes when it is closed
        assigned = {t.id for n in self.nodes if isinstance(n, ast.Assign) and self._holding(n.value)
                    for t in n.targets if isinstance(t, ast.Name)}
        appended = {n.func.value.id for n in self.nodes if self._appended(n)}
        self.lists = appended | {t.id for n in self.nodes if isinstance(n, ast.Assign)
                                 and isinstance(n.value, (ast.List, ast.Tuple, ast.ListComp))
                                 or isinstance(n, ast.Assign) and _called_on(n.value, ("list", "tuple"))
                                 for t in n.targets if isinstance(t, ast.Name)}
        return {name for name in assigned | appended if self._kept_in(name)}

    def _holding(self, value: ast.expr) -> bool:
        """A call making such a generator, or a list or tuple of them (a display, possibly empty,
        or a comprehension whose element is one, or ``list``/``tuple`` of one of those)."""
        if isinstance(value, (ast.List, ast.Tuple)):
            return all(self.closing._made(e) for e in value.elts)
        if isinstance(value, (ast.ListComp, ast.GeneratorExp)):
            return self.closing._made(value.elt)
        if _called_on(value, ("list", "tuple")):  # tuple([g(a) for a in s])
            return not value.keywords and self._holding(value.args[0])
        return self.closing._made(value)

    def _appended(self, node: ast.AST) -> bool:
        """``name.append(g(...))``."""
        return isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "append" \
            and isinstance(node.func.value, ast.Name) and len(node.args) == 1 and not node.keywords \
            and self.closing._made(node.args[0]) and isinstance(self.parents.get(id(node)), ast.Expr)

    def _kept_in(self, name: str) -> bool:
        """Whether every use of ``name`` in the function keeps the generator in it."""
        declared = {d for n in self.nodes if isinstance(n, (ast.Global, ast.Nonlocal)) for d in n.names}
        if name in declared or _read_in_nested(self.function, name):
            return False
        for n in self.nodes:
            if isinstance(n, ast.Name) and n.id == name:
                ok = self._used_inside(n) if isinstance(n.ctx, ast.Load) else self._bound_plainly(n)
                if not ok:
                    return False
        return True

    def _used_inside(self, name: ast.Name) -> bool:
        """A use that keeps what ``name`` holds: stepping it, or, for a list of generators,
        stepping an item (``next(gens[k])``), ``len(gens)``, ``gens.append(g(...))`` (a loop
        over the list would hand its generators to the loop's variable)."""
        parent = self.parents.get(id(name))
        if name.id not in self.lists:
            return self._stepped(name)
        if isinstance(parent, ast.Compare):
            return self._stepped(name)  # (gens is None)
        if isinstance(parent, ast.Subscript) and parent.value is name:
            return self._stepped(parent)
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
            return parent.args == [name]
        return isinstance(parent, ast.Attribute) and self._appended(self.parents.get(id(parent)))

    def _bound_plainly(self, name: ast.Name) -> bool:
        parent = self.parents.get(id(name))
        return isinstance(parent, ast.Delete) or isinstance(parent, ast.Assign) and parent.targets == [name]

    def _stepped(self, name: ast.expr) -> bool:
        """``next(it)``, ``it.send(v)``..., ``for v in it`` (or in ``zip(a, it)``), ``it is None``."""
        parent = self.parents.get(id(name))
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "next":
            return parent.args[:1] == [name]
        if isinstance(parent, ast.Attribute) and parent.attr in _STEPS:
            return isinstance(self.parents.get(id(parent)), ast.Call)
        if isinstance(parent, (ast.For, ast.comprehension)):
            return parent.iter is name
        if isinstance(parent, ast.Call) and name in parent.args and _called(parent) in _WRAPPERS:
            return isinstance(self.parents.get(id(parent)), (ast.For, ast.comprehension))
        if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id.endswith("stop_value"):
            return True  # the read of StopIteration.value (stop_values.py)
        return isinstance(parent, ast.Compare) and all(isinstance(o, (ast.Is, ast.IsNot)) for o in parent.ops)

    def rewrite(self) -> None:
        names = self.names()
        if not names:
            return
        owned = fresh("owned", self.closing.taken)
        held = self.closing.helper("held")
        for n in self.nodes:  # (each a single-target assignment: _bound_plainly)
            if isinstance(n, ast.Assign) and isinstance(n.targets[0], ast.Name) and n.targets[0].id in names:
                n.value = ast.Call(ast.Name(held, ast.Load()), [ast.Name(owned, ast.Load()),
                                                                ast.Constant(n.targets[0].id), n.value], [])
        _release_deleted(self.function, names, owned, held)
        docstring = self.function.body[:1] if ast.get_docstring(self.function, clean=False) is not None else []
        body = self.function.body[len(docstring):]
        start = parse_source(f"{owned} = {{}}").body
        close = parse_source(f"{self.closing.helper('close_held')}({owned}, {_first_bound(self.nodes, names)!r})").body
        wrapped = ast.Try(body, [], [], close)
        self.function.body = [*docstring, *start, wrapped]
        for s in self.function.body:
            ast.copy_location(s, body[0] if body else self.function)


def _first_bound(nodes: list, names: set) -> tuple:
    """``names`` in the order they are first bound in the source: the order in which CPython
    clears a frame's locals."""
    stores = [n for n in nodes if isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Store)]
    stores.sort(key=lambda n: (getattr(n, "lineno", 0), getattr(n, "col_offset", 0)))
    return tuple(dict.fromkeys(n.id for n in stores))


def _release_deleted(function: ast.FunctionDef, names: set, owned: str, held: str) -> None:
    """``del it`` -> ``held(owned, "it", None); del it`` (the generator dropped is closed)."""
    inside = [n for n in own_nodes(function.body) if isinstance(n, (ast.stmt, ast.ExceptHandler)) and not isinstance(n, _NESTED)]
    blocks = [function.body] + [getattr(n, field) for n in inside for field in ("body", "orelse", "finalbody")
                                if isinstance(getattr(n, field, None), list)]
    for block in blocks:
        for k in range(len(block) - 1, -1, -1):
            s = block[k]
            if isinstance(s, ast.Delete):
                gone = [t.id for t in s.targets if isinstance(t, ast.Name) and t.id in names]
                block[k:k] = [ast.copy_location(parse_source(f"{held}({owned}, {g!r}, None)").body[0], s) for g in gone]


def _called_on(value: ast.expr, names: tuple) -> bool:
    """``list(...)``/``tuple(...)``: a call of one of ``names`` with one argument."""
    return isinstance(value, ast.Call) and _called(value) in names and len(value.args) == 1


def _called(call: ast.Call) -> str | None:
    f = call.func
    return f.id if isinstance(f, ast.Name) else f.attr if isinstance(f, ast.Attribute) else None


def _read_in_nested(function: ast.FunctionDef, name: str) -> bool:
    """Whether a function, lambda or class inside ``function`` may capture ``name`` (mentions it
    without binding it as a local of its own)."""
    for inner in (n for n in own_nodes(function.body) if isinstance(n, _NESTED)):
        names = [n for n in ast.walk(inner) if isinstance(n, ast.Name) and n.id == name]
        own = {n.id for n in own_nodes(getattr(inner, "body", [])) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
        shared = any(isinstance(n, ast.Nonlocal) and name in n.names for n in ast.walk(inner))
        if names and (name not in own or shared or isinstance(inner, (ast.Lambda, ast.ClassDef))):
            return True
    return False
