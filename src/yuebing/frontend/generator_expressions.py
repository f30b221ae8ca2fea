"""Stage 1b: generator expressions that may not be evaluated eagerly become generator functions.

A generator expression is lowered like a list comprehension (``normalise.py``): every item is
made where the expression stands. That is Python's result when its consumer takes every item
before any other code runs -- the one argument of ``sum``/``list``/``tuple``/``sorted``/``max``/
... (``generator_sites.drained``) -- and those stay as they are (the fast path:
``sum(x[i] ** 2 for i in range(n))``). Any other one (under ``any``/``next``/``zip``, in a ``for``
loop, stored) is rewritten here into a nested generator function called where it stood:

    any(h(v) * x > 1 for v in xs)          def _yb_genexpr(_yb_source):
                                               for v in _yb_source:
                                                   yield h(v) * x > 1
                                           ... any(_yb_genexpr(xs))

so that the rules for generator functions decide (``generator_eagerness.py``): eager where that
is provably exact, a lazy state machine otherwise. As in Python, the first iterable is
evaluated where the expression stands and the rest when items are made. The function is
defined just before the statement holding the expression; it reads the function's variables
as closure variables (late binding, as Python's generator expression does), except when its
consumer takes it at once (``any(...)``, ``next(...)``) or a ``for`` loop that does not rebind
them steps it: then they are passed as arguments (equal values; no cells, which would slow the
function down). A walrus inside binds the function's variable (``nonlocal``). Variables of an
enclosing lambda or comprehension are passed as arguments too when the expression is consumed
at once; when it is kept, or holds a walrus, the outermost lambda or comprehension around it
becomes a function of its own first (``genexpr_scopes.py``), in which it is hoisted and reads
them late, as CPython's does (an awaiting comprehension is made a function of its own before,
by ``async_comprehensions.py``). A differentiated lambda holding one becomes a ``def``
returning its body, to hold the new function. One in a class body (not a method's) is defined
before the class statement and reads the function's variables as closure variables: Python's
does not see the class's names either.
"""
from __future__ import annotations

import ast
import copy

from .fence import UnsupportedSyntaxError
from .generator_effects import trusted
from .genexpr_scopes import (SOURCE, comprehension_function, comprehension_statements, declared, lambda_function,
                             needs_own_scope, walrus_targets, without_first_iterable)
from .generator_sites import drained, folding, free_in, parent_map, stored_names
from .runtime_names import located

__all__ = ["HOISTED", "SOURCE", "hoist_generator_expressions"]

#: calls that are done with the iterator they are handed when they return
_AT_ONCE = frozenset({"any", "all", "next", "sum", "min", "max", "sorted", "list", "tuple", "set", "frozenset",
                      "dict"})
_LOOPING = frozenset({"range", "zip", "enumerate", "reversed"})
HOISTED = "_yb_genexpr"  # the names of the functions made here begin so


def hoist_generator_expressions(node: ast.FunctionDef | ast.Lambda, filename: str) -> ast.FunctionDef | ast.Lambda:
    """``node`` (a copy when changed) with its generator expressions that are not drained rewritten
    into nested generator functions (see the module's docstring)."""
    if not _any_to_hoist(node):
        return node
    node = copy.deepcopy(node)
    if isinstance(node, ast.Lambda):  # a def of the same parameters returning its body (a place for the new defs)
        body = [ast.copy_location(ast.Return(node.body), node.body)]
        node = ast.copy_location(ast.FunctionDef("_yb_lambda", node.args, body, [], None), node)
    taken = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(node) if isinstance(a, ast.arg)} | {node.name}
    _Hoister(parent_map(node), taken, filename, node.name).scope(node)
    return ast.fix_missing_locations(node)


def _any_to_hoist(node: ast.AST) -> bool:
    parents = None
    for n in ast.walk(node):
        if isinstance(n, ast.GeneratorExp):
            parents = parents or parent_map(node)
            if _hoisted(n, parents):
                return True
    return False


class _Hoister:
    def __init__(self, parents: dict, taken: set, filename: str, top: str) -> None:
        self.parents, self.taken, self.filename, self.top = parents, taken, filename, top
        self.walrus_only: dict[int, set] = {}  # per function: names only a hoisted walrus binds

    def scope(self, function: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        self.walrus_only.setdefault(id(function), set())
        function.body = self.statements(function.body, function)
        names = self.walrus_only.pop(id(function)) - declared(function, ast.Nonlocal) - declared(function, ast.Global)
        names = sorted(names)  # (a name the function declares is bound where the declaration points)
        if names:  # `if False: mod = None`: mod becomes the function's variable (a cell), unbound until
            # the walrus runs, as in Python; the generator function's `nonlocal mod` then compiles
            unbound = ast.If(ast.Constant(False), [ast.Assign([ast.Name(n, ast.Store()) for n in names],
                                                              ast.Constant(None))], [])
            function.body.insert(0, ast.copy_location(unbound, function.body[0]))

    def statements(self, body: list, function: ast.AST) -> list:
        out = []
        for statement in body:
            defined: list = []
            self.statement(statement, function, defined)
            out += defined + [statement]
        return out

    def statement(self, s: ast.stmt, function: ast.AST, defined: list) -> None:
        expressions = _Expressions(self, function, s, defined)
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            s.decorator_list = [expressions.visit(d) for d in s.decorator_list]
            s.args.defaults = [expressions.visit(d) for d in s.args.defaults]
            s.args.kw_defaults = [d if d is None else expressions.visit(d) for d in s.args.kw_defaults]
            self.scope(s)
            return
        if isinstance(s, ast.ClassDef):
            s.bases = [expressions.visit(b) for b in s.bases]
            s.keywords = [expressions.visit(k) for k in s.keywords]
            s.decorator_list = [expressions.visit(d) for d in s.decorator_list]
            self.class_body(s.body, function, defined)
            return
        for field, value in ast.iter_fields(s):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                setattr(s, field, self.statements(value, function))
            elif isinstance(value, list):
                setattr(s, field, [self.part(v, function, expressions) for v in value])
            elif isinstance(value, ast.expr):
                setattr(s, field, expressions.visit(value))

    def class_body(self, body: list, function: ast.AST, defined: list) -> None:
        """A class body's own statements: their generator expressions are defined before the
        class statement, in ``function`` (a def in the body would be an attribute of the class;
        Python's generator expression there does not see the class's names either), methods are
        scopes of their own."""
        for statement in body:
            if isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef)):
                expressions = _Expressions(self, function, statement, defined, in_class=True)
                statement.decorator_list = [expressions.visit(d) for d in statement.decorator_list]
                statement.args.defaults = [expressions.visit(d) for d in statement.args.defaults]
                statement.args.kw_defaults = [d if d is None else expressions.visit(d) for d in statement.args.kw_defaults]
                self.scope(statement)
            elif isinstance(statement, ast.ClassDef):
                expressions = _Expressions(self, function, statement, defined, in_class=True)
                statement.bases = [expressions.visit(b) for b in statement.bases]
                statement.keywords = [expressions.visit(k) for k in statement.keywords]
                statement.decorator_list = [expressions.visit(d) for d in statement.decorator_list]
                self.class_body(statement.body, function, defined)
            else:
                self._class_statement(statement, function, defined)

    def _class_statement(self, s: ast.stmt, function: ast.AST, defined: list) -> None:
        expressions = _Expressions(self, function, s, defined, in_class=True)
        for field, value in ast.iter_fields(s):
            if isinstance(value, list) and value and isinstance(value[0], ast.stmt):
                self.class_body(value, function, defined)
            elif isinstance(value, list):
                for v in value:
                    if isinstance(v, ast.ExceptHandler):
                        v.type = v.type and expressions.visit(v.type)
                        self.class_body(v.body, function, defined)
                    elif isinstance(v, ast.withitem):
                        v.context_expr = expressions.visit(v.context_expr)
                setattr(s, field, [expressions.visit(v) if isinstance(v, ast.expr) else v for v in value])
            elif isinstance(value, ast.expr):
                setattr(s, field, expressions.visit(value))

    def part(self, value: ast.AST, function: ast.AST, expressions: _Expressions) -> ast.AST:
        """An item of a statement's list field: an expression, an ``except`` clause, a ``with`` item."""
        if isinstance(value, ast.expr):
            return expressions.visit(value)
        if isinstance(value, ast.ExceptHandler):
            value.type = value.type and expressions.visit(value.type)
            value.body = self.statements(value.body, function)
        elif isinstance(value, ast.withitem):
            value.context_expr = expressions.visit(value.context_expr)
        return value


class _Expressions(ast.NodeTransformer):
    """The generator expressions in one statement's own expressions."""

    def __init__(self, hoister: _Hoister, function: ast.AST, statement: ast.stmt, defined: list,
                 in_class: bool = False) -> None:
        self.hoister, self.function, self.statement, self.defined = hoister, function, statement, defined
        self.in_class = in_class  # a statement of a class body: its names are not the function's
        self.inner: list[set] = []  # names bound by the lambdas and comprehensions around the node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        if self._needs_own_scope(node):
            name = _numbered("_yb_lambda", self.hoister.taken)
            function, standing = lambda_function(node, name, _numbered("_yb_lambda_defaults", self.hoister.taken))
            return self._defined(function, standing, standing.args if isinstance(standing, ast.Call) else [])
        node.args = self.generic_visit(node.args)
        self.inner.append({a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)} | walrus_targets(node.body))
        node.body = self.visit(node.body)
        self.inner.pop()
        return node

    def _comprehension(self, node: ast.AST) -> ast.AST:
        if self._needs_own_scope(node):
            return self._comprehension_function(node)
        first = node.generators[0]
        first.iter = self.visit(first.iter)
        self.inner.append(set().union(*(stored_names(g.target) for g in node.generators)))
        for k, g in enumerate(node.generators):
            if k:
                g.iter = self.visit(g.iter)
            g.ifs = [self.visit(c) for c in g.ifs]
        for field in ("elt", "key", "value"):
            if hasattr(node, field):
                setattr(node, field, self.visit(getattr(node, field)))
        self.inner.pop()
        return node

    visit_ListComp = visit_SetComp = visit_DictComp = _comprehension

    def _needs_own_scope(self, node: ast.expr) -> bool:
        """A lambda or comprehension (the outermost in the statement) that must become a function
        of its own for a generator expression in it (``genexpr_scopes.py``)."""
        asynchronous = not isinstance(node, ast.Lambda) and _asynchronous(node)
        return not self.inner and not asynchronous and needs_own_scope(
            node, self.hoister.parents, lambda g: _hoisted(g, self.hoister.parents), self._at_once)

    def _comprehension_function(self, node: ast.expr) -> ast.expr:
        """``node`` (kept or drained) as a function of its own, called where it stood."""
        if isinstance(node, ast.GeneratorExp):
            return self.hoisted(node)  # (a generator function: its items made as they are taken)
        walrus = walrus_targets(node)
        global_ = walrus & declared(self.function, ast.Global) if not self.in_class else set()
        if walrus - global_ and not self.in_class:
            self.hoister.walrus_only[id(self.function)] |= (walrus - global_) - self._bound_names(leaving=node)
        name = _numbered({ast.ListComp: "_yb_listcomp", ast.SetComp: "_yb_setcomp"}.get(type(node), "_yb_dictcomp"),
                         self.hoister.taken)
        function, call = comprehension_function(node, name, sorted(walrus - global_), sorted(global_))
        return self._defined(function, call, call.args)

    def _defined(self, function: ast.FunctionDef, standing: ast.expr, arguments: list) -> ast.expr:
        """``standing`` (which calls or names ``function``), ``function`` defined before the
        statement, its generator expressions hoisted in it; ``arguments``, evaluated here, visited."""
        standing_arguments = [self.visit(a) for a in arguments]
        if isinstance(standing, ast.Call):
            standing.args = standing_arguments
        self.hoister.parents.update(parent_map(function))
        self.hoister.scope(function)
        self.defined.append(function)
        return standing

    def _at_once(self, node: ast.GeneratorExp) -> bool:
        consumer = self.hoister.parents.get(id(node))
        return isinstance(consumer, ast.Call) and trusted(consumer.func, _AT_ONCE) and node in consumer.args

    def visit_GeneratorExp(self, node: ast.GeneratorExp) -> ast.AST:
        if _hoisted(node, self.hoister.parents):
            return self.hoisted(node)
        return self._comprehension(node)

    def hoisted(self, node: ast.GeneratorExp) -> ast.Call:
        """``_yb_genexpr(first iterable, passed...)``, its definition added to ``self.defined``."""
        reads = free_in(without_first_iterable(node))
        enclosing = set().union(*self.inner) & reads
        consumer = self.hoister.parents.get(id(node))
        at_once = self._at_once(node)
        stepped = isinstance(consumer, ast.For) and consumer.iter is node
        if enclosing and not (at_once or stepped):
            raise UnsupportedSyntaxError(
                f"a generator expression reading {', '.join(sorted(enclosing))} of an enclosing lambda or "
                "comprehension, kept to be consumed later", "consume it where it is made (`any(...)`, a `for` "
                "loop), or write a generator function taking those values as arguments",
                self.hoister.filename, node.lineno, self.hoister.top)
        walrus = walrus_targets(node)
        if walrus and self.inner:
            raise UnsupportedSyntaxError(
                "a walrus inside a generator expression that is not consumed at once, inside a lambda or "
                "comprehension", f"assign {', '.join(sorted(walrus))} in a statement of its own",
                self.hoister.filename, node.lineno, self.hoister.top)
        if walrus and not self.in_class:
            self.hoister.walrus_only[id(self.function)] |= walrus - self._bound_names(leaving=node)
        if self.in_class:  # (a name read there may be the class's: the function reads its own as Python's does)
            passed = enclosing
        elif at_once:
            passed = reads - walrus
        elif stepped:
            passed = (reads - walrus) - stored_names(ast.Module(consumer.body + consumer.orelse, []))
        else:
            passed = enclosing
        passed = sorted(name for name in passed if name in self._bound_names() or name in enclosing)
        name = _numbered(HOISTED, self.hoister.taken)
        first = node.generators[0].iter
        looping = None if self.in_class else _looping_call(first)
        sources = first.args if looping else [first]
        global_ = walrus & declared(self.function, ast.Global)  # (a walrus binds a global name the function declares)
        function = _generator_function(name, node, passed, (sorted(walrus - global_), sorted(global_)), looping,
                                       len(sources))
        self.hoister.parents.update(parent_map(function))
        self.hoister.scope(function)  # (generator expressions inside it)
        self.defined.append(function)
        arguments = [*(self.visit(a) for a in sources), *(ast.Name(p, ast.Load()) for p in passed)]
        return ast.copy_location(ast.Call(ast.Name(name, ast.Load()), arguments, []), node)

    def _bound_names(self, leaving: ast.AST | None = None) -> set:
        """Names that are variables here (of the function or an enclosing lambda or comprehension):
        the others are globals or builtins, read by the new function as they are. ``leaving``: a
        node whose walruses do not count."""
        function = self.function
        names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)} if hasattr(function, "args") else set()
        left = {id(n.target) for n in ast.walk(leaving) if isinstance(n, ast.NamedExpr)} if leaving else set()
        for n in ast.walk(function):
            if isinstance(n, ast.Name) and not isinstance(n.ctx, ast.Load) and id(n) not in left:
                names.add(n.id)
            elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and n is not function:
                names.add(n.name)
        return names | set().union(*self.inner)


def _hoisted(node: ast.GeneratorExp, parents: dict) -> bool:
    """Whether ``node`` becomes a generator function (not a list comprehension)."""
    return not (drained(node, parents) or _asynchronous(node) or _kept_with_walrus(node, parents))


def _kept_with_walrus(node: ast.GeneratorExp, parents: dict) -> bool:
    """A generator expression holding a walrus and drained by ``sum``, ``max``...: a list
    comprehension still (its walrus binds the function's variable as Python's does; the items
    are all made before the consumer combines them)."""
    return folding(node, parents) is not None and any(isinstance(n, ast.NamedExpr) for n in ast.walk(node))


def _asynchronous(node: ast.GeneratorExp) -> bool:
    return any(g.is_async for g in node.generators) or any(isinstance(n, ast.Await) for n in ast.walk(node))


def _numbered(base: str, taken: set) -> str:
    """``base``, or ``base2``, ``base3``... not in ``taken`` (then taken): each begins with ``base``."""
    name, k = base, 1
    while name in taken:
        k += 1
        name = f"{base}{k}"
    taken.add(name)
    return name


def _looping_call(iterable: ast.expr) -> str | None:
    """``range``, ``zip``, ``enumerate`` or ``reversed`` when ``iterable`` calls that builtin with
    positional arguments: a ``for`` statement over such a call steps it live (a generator given to
    ``zip`` only as far as the shortest), while one made elsewhere and handed over is evaluated
    into a list (``rules/iteration.py``). Its arguments are passed instead, and the call written
    in the function's ``for``."""
    if isinstance(iterable, ast.Call) and trusted(iterable.func, _LOOPING) and iterable.args \
            and not iterable.keywords and not any(isinstance(a, ast.Starred) for a in iterable.args):
        return iterable.func.id
    return None


def _generator_function(name: str, node: ast.GeneratorExp, passed: list, walrus: tuple, looping: str | None = None,
                        sources: int = 1) -> ast.FunctionDef:
    """``def name(_yb_source, *passed): for ...: if ...: yield elt`` (``for ... in
    looping(_yb_source, _yb_source1, ...)`` for a looping call)."""
    parameters = [SOURCE + (str(k) if k else "") for k in range(sources)]
    body = comprehension_statements(node, "", SOURCE, "")
    if looping is not None:  # (the outermost loop steps the looping call made of the sources)
        body[0].iter = ast.Call(ast.Name(looping, ast.Load()), [ast.Name(p, ast.Load()) for p in parameters], [])
    body[:0] = [kind(names) for kind, names in zip((ast.Nonlocal, ast.Global), walrus) if names]
    arguments = ast.arguments([], [*(ast.arg(p) for p in parameters), *(ast.arg(p) for p in passed)], None, [], [], None, [])
    return located([ast.FunctionDef(name, arguments, body, [], None)], node)[0]
