"""Stage 1b: generator functions that cannot be evaluated eagerly become state machines.

A generator function is rewritten here (instead of into a list builder, ``desugar.py``) when it
uses ``yield``'s value (``v = yield x``, ``send``), returns a value (so ``r = yield from g()``),
yields inside a ``while`` loop (it may never end), is decorated ``@contextmanager`` (contextlib
steps it), yields inside ``try``/``with`` (a list would run its cleanup before its first item is
used), or when the function being differentiated calls ``next``/``.send`` (it may be left
suspended) -- and whenever a list is not provably what its consumers see
(``generator_eagerness.py``: the calls that may run eagerly get copies of their own). The
rewrite is what C# and regenerator do:

    def g(n):                  def g(n):
        k = 0                      from yuebing.ir.generators import Frame, Generator, delegate
        while True:                frame = Frame()
            v = yield n * k        frame.n = n
            k += v                 frame.state = 0

                                   def resume(sent):
                                       while True:
                                           state = frame.state
                                           if state == 0:
                                               frame.k = 0
                                               frame.state = 1
                                           elif state == 1:        # the loop's head
                                               frame.state = 2
                                           elif state == 2:
                                               frame.state = 4
                                               return (True, frame.n * frame.k)
                                           elif state == 3:        # after the loop
                                               frame.state = -1
                                               return (False, None)
                                           elif state == 4:        # resumed: yield's value
                                               frame.v = sent
                                               frame.k += frame.v
                                               frame.state = 1
                                           else:
                                               return (False, None)
                                   return Generator(resume, 'g', '  File ..., line 1', frame, 'state')

The function's variables become attributes of a ``Frame``; each yield ends a numbered block and
the next one starts where it resumes; ifs and loops that contain a yield are flattened into
blocks with explicit jumps (the others stay as written); a ``for`` containing a yield steps
through ``delegate(iterable)``, as ``yield from`` does. The result is ordinary code: attribute
reads and writes and function calls, which every mode differentiates already
(``ir/generators.py`` has the runtime). A ``try`` or ``with`` around a yield becomes a region
whose blocks route exceptions, ``throw`` and ``close`` (``generator_exceptions.py``); a yield
inside a larger expression is hoisted into frame temporaries first (``yield_hoisting.py``).
``resume`` (sketched above; it also takes ``thrown``) picks its block by halving the state
range, and jumps to blocks that only jump are followed at compile time (``_simplified``). A
generator with cleanup is closed where CPython would drop it (``generator_closing.py``).
Its own ``match`` and ``except*`` statements are rewritten first (``match_statements.py``,
``try_star.py``; the helpers they call are imported with its leading imports, since its body
moves into ``resume``); names that ``import`` statements and walruses bind live on the frame too.

Why this way: the state machine needs no derivative machinery of its own (no tape of suspended
frames, no rule per generator protocol); a ``Frame`` object rather than ``nonlocal`` cells (which
work as well for nested generators) because a generator function of module level is lowered
against its live code object, whose cell variables would not match the rewritten body's. Loops
and ifs without a yield stay as written, so the fast paths of loops still apply inside blocks.
"""
from __future__ import annotations

import ast
import copy
import linecache

from .fence import UnsupportedSyntaxError
from .generator_closing import ClosedWhereDropped, fresh as _fresh, has_cleanup as _has_cleanup
from .generator_eagerness import eager_generators
from .generator_exceptions import ExceptionBlocks, Finally, flattened
from .match_statements import desugar_match
from .runtime_names import HELPERS, own_nodes
from .stop_values import read_stop_values
from .try_star import desugar_try_star
from .yield_hoisting import Hoister, _Slot, _slots, contains_yield
from .parsing import parse as parse_source

__all__ = ["consumed_lazily", "needs_protocol", "needs_state_machine", "to_state_machine", "state_machines"]


def _yields(nodes) -> list:
    return [n for n in nodes if isinstance(n, (ast.Yield, ast.YieldFrom))]


_contains_yield = contains_yield


def consumed_lazily(node: ast.AST) -> bool:
    """Whether the code calls ``next``, ``.send`` or ``islice``: a generator it makes may be
    left suspended, so it must not run to its end."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in ("next", "islice") or isinstance(f, ast.Attribute) and f.attr in ("send", "islice"):
                return True
    return False


def needs_state_machine(function: ast.FunctionDef, suspended: bool, eager: frozenset = frozenset()) -> bool:
    """A generator function that is not to be a list builder: one that needs the generator
    protocol (``needs_protocol``) or whose consumers may stop early or run code between items,
    so that a list would not be exact (``eager``: the names of those that may be list builders,
    ``generator_eagerness.py``)."""
    if getattr(function, "asynchronous", None):  # a rewritten async def (async_functions.py)
        return True
    if not _yields(own_nodes(function.body)):
        return False
    return function.name not in eager or needs_protocol(function, suspended)


def needs_protocol(function: ast.FunctionDef, suspended: bool) -> bool:
    """A generator function that a list cannot stand for, whoever consumes it: see the module's
    docstring."""
    if getattr(function, "asynchronous", None):
        return True
    nodes = own_nodes(function.body)
    yields = _yields(nodes)
    if not yields:
        return False
    if suspended or _context_manager(function):  # (contextlib steps it with next and throw)
        return True
    if _has_cleanup(function):  # a list would run its finally blocks before its first item is used
        return True
    statements = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    if any(id(y) not in statements for y in yields):
        return True  # a yield used as a value
    if any(isinstance(r, ast.Return) and r.value is not None
           and not (isinstance(r.value, ast.Constant) and r.value.value is None) for r in nodes):
        return True
    return any(isinstance(w, ast.While) and _contains_yield(w) for w in nodes)


def _context_manager(function: ast.FunctionDef) -> bool:
    """Whether ``function`` is decorated ``@contextmanager`` (``@contextlib.contextmanager``)."""
    return any((d.id if isinstance(d, ast.Name) else d.attr if isinstance(d, ast.Attribute) else None)
               == "contextmanager" for d in function.decorator_list)


def _stored_names(function: ast.FunctionDef) -> list[str]:
    """The generator's local variables, in order of appearance: parameters, then every name it
    binds (not inside comprehensions, nested functions or classes; not ``global``/``nonlocal``
    ones; not imports, which live in ``resume`` itself)."""
    args = function.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
                             *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]]
    declared = set()
    comprehension_targets = set()
    nodes = own_nodes(function.body)
    for n in nodes:
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.comprehension):
            comprehension_targets.update(id(t) for t in ast.walk(n.target))
    for n in nodes:
        name = None
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in comprehension_targets:
            name = n.id
        elif isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            name = n.name
        elif isinstance(n, ast.ExceptHandler) and n.name:
            name = n.name  # a handler may yield: its exception lives on the frame too
        for bound in _imported(n) or [name]:
            if bound is not None and bound not in declared and bound not in names:
                names.append(bound)
    return names


def _imported(node: ast.AST) -> list[str]:
    """The names an ``import`` statement binds (``import a.b`` binds ``a``)."""
    if not isinstance(node, (ast.Import, ast.ImportFrom)):
        return []
    return [alias.asname or alias.name.split(".")[0] for alias in node.names if alias.name != "*"]


class _ToFrame(ast.NodeTransformer):
    """Reads and writes of the generator's variables -> attributes of the frame (also inside
    nested functions, lambdas and comprehensions, where they are not shadowed)."""

    def __init__(self, frame: str, variables: set, assigned: str, used: set) -> None:
        self.frame, self.variables = frame, variables
        self.assigned, self.used = assigned, used  # the walrus helper's name; "assigned" once used

    def within(self, variables: set) -> _ToFrame:
        return _ToFrame(self.frame, variables, self.assigned, self.used)

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.variables:
            return ast.copy_location(ast.Attribute(ast.Name(self.frame, ast.Load()), node.id, node.ctx), node)
        return node

    def visit_AnnAssign(self, node: ast.AnnAssign) -> ast.AST:
        """``v: T = value`` -> ``frame.v: T = value``, no longer a simple name's annotation (in a
        function, CPython evaluates neither)."""
        self.generic_visit(node)
        if not isinstance(node.target, ast.Name):
            node.simple = 0
        return node

    def visit_NamedExpr(self, node: ast.NamedExpr) -> ast.AST:
        """``(v := value)`` -> ``assigned(frame, 'v', value)`` (a walrus cannot store an attribute;
        ``match`` statements are rewritten with walruses)."""
        value = self.visit(node.value)
        if node.target.id not in self.variables:
            node.value = value
            return node
        self.used.add("assigned")
        call = ast.Call(ast.Name(self.assigned, ast.Load()),
                        [ast.Name(self.frame, ast.Load()), ast.Constant(node.target.id), value], [])
        return ast.copy_location(call, node)

    def visit_Import(self, node: ast.Import | ast.ImportFrom) -> list:
        """An import binds locals of ``resume``, gone at the next yield: copied to the frame (the
        leading imports of the generator function stay in it: ``to_state_machine``)."""
        copies = [ast.copy_location(parse_source(f"{self.frame}.{name} = {name}").body[0], node)
                  for name in _imported(node) if name in self.variables]
        return [node, *copies]

    visit_ImportFrom = visit_Import

    def visit_ExceptHandler(self, node: ast.ExceptHandler) -> ast.AST:
        """``except E as e:`` binds the local ``e`` (of ``resume``): copied to the frame first,
        and unbound when the handler is left, however it is (CPython's ``finally: e = None; del e``)."""
        self.generic_visit(node)
        if node.name in self.variables:
            copy_, *unbind = parse_source(f"{self.frame}.{node.name} = {node.name}\n"
                                          f"{self.frame}.{node.name} = None\ndel {self.frame}.{node.name}").body
            guarded = ast.Try(node.body, [], [], unbind)
            guarded.unseen_on_close = True  # (closing the generator there runs nothing the user sees)
            for n in [guarded, *(n for s in (copy_, *unbind) for n in ast.walk(s))]:
                ast.copy_location(n, node.body[0])
            node.body = [copy_, guarded]
        return node

    def _shadowed(self, node: ast.AST, own: set) -> ast.AST:
        inner = self.within(self.variables - own)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [inner.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, inner.visit(value))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        own = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        node.body = self.within(self.variables - own).visit(node.body)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        own = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)} | set(_stored_names(node))
        inner = self.within(self.variables - own)
        node.body = [t for s in node.body for t in _statements(inner.visit(s))]  # (an import becomes several)
        return node

    def _comprehension(self, node: ast.AST) -> ast.AST:
        own = {t.id for g in node.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
        return self._shadowed(node, own)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension

    visit_AsyncFunctionDef = visit_FunctionDef


class _StateMachine(ExceptionBlocks):
    """Compiles a generator's body (already on the frame) into numbered blocks."""

    def __init__(self, function: ast.FunctionDef, filename: str, names: dict, variables: set, taken: set) -> None:
        self.function, self.filename, self.n, self.variables = function, filename, names, variables
        self.taken = taken  # every name of the function: new names avoid them
        self.blocks: list[list] = []
        self.block_regions: list[int | None] = []  # per block: its region's entry (generator_exceptions.py)
        self.regions: list[int] = []  # the entries of the regions being compiled, innermost last
        self.finallys: list[Finally] = []  # the finally blocks around what is being compiled
        self.loops: list[tuple[int, int, int]] = []  # (continue target, break target, len(finallys))
        self.resumes: dict[int, int] = {}  # block a yield resumes at -> where an exception thrown there goes
        self.cleanups: dict[int, int] = {}  # block a yield inside try/with resumes at -> the yield's line
        self.closing_runs_code = 0  # the try/with regions being compiled whose code runs on close()
        self.returning: int | None = None  # the frame attributes that hold block numbers
        self.state, self.error = f"{names['frame']}.{names['state']}", f"{names['frame']}.{names['error']}"
        self.returned = f"{names['frame']}.{names['returned']}"
        self.targets: set[str] = {self.state}  # the frame attributes that hold block numbers
        self.hoister = Hoister(self.temporary, self.stable)

    def attribute(self, base: str) -> str:
        """A fresh frame attribute (``frame.iterator1``), as text."""
        return f"{self.n['frame']}.{_fresh(base, self.taken)}"

    def local(self, base: str) -> str:
        """A fresh local name of ``resume``."""
        return _fresh(base, self.taken)

    def temporary(self) -> ast.Attribute:
        target = parse_source(self.attribute("hoisted"), mode="eval").body
        target.ctx = ast.Store()
        return target

    def stable(self, node: ast.expr) -> bool:
        """Whether ``node`` may be read after a yield instead of before it: a constant, a name,
        or a frame variable (only the generator writes those, and it is suspended)."""
        return isinstance(node, (ast.Constant, ast.Name)) or (
            isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == self.n["frame"])

    def iterator(self) -> str:
        """A frame attribute for the iterator a ``yield from`` or ``for`` steps through."""
        return self.attribute("iterator")

    def new(self, region: int | None | str = "current") -> int:
        self.blocks.append([])
        self.block_regions.append(self.region() if region == "current" else region)
        return len(self.blocks) - 1

    def parse(self, text: str, at: ast.AST) -> list:
        statements = parse_source(text).body
        for s in statements:
            for n in ast.walk(s):
                n.lineno = n.end_lineno = getattr(at, "lineno", 1)
                n.col_offset = n.end_col_offset = getattr(at, "col_offset", 0)
        return statements

    def jump(self, target: int, at: ast.AST) -> list:
        return self.parse(f"{self.state} = {target}", at)

    def reraise(self, attribute: str) -> str:
        """``raise frame.x`` as code: through a local (a raise statement is kept as written by
        the normaliser, where the frame, a cell of ``resume``, has no name)."""
        return f"{self.n['exception']} = {attribute}; raise {self.n['exception']}"

    def refuse(self, what: str, advice: str, at: ast.AST) -> UnsupportedSyntaxError:
        return UnsupportedSyntaxError(what, advice, self.filename, at.lineno, self.function.name)

    def compile(self, statements: list, block: int) -> int | None:
        """Append ``statements`` to ``block``; the block where control goes on after them, or
        None when it never does (a return, break or continue was last)."""
        for s in statements:
            if block is None:
                return None  # unreachable code after a jump
            block = self.statement(s, block)
        return block

    def statement(self, s: ast.stmt, block: int) -> int | None:
        out = self.blocks[block]
        if isinstance(s, ast.Return):
            if s.value is not None and contains_yield(s.value):
                return self.hoisted(s, block)
            value = ast.unparse(s.value) if s.value is not None else "None"
            if not self.finallys:
                out += self.jump(-1, s) + self.parse(f"return False, {value}", s)
            else:
                out += self.parse(f"{self.returned} = {value}", s) + self.leave(self.return_block(), self.finallys[::-1], s)
            return None
        if isinstance(s, (ast.Break, ast.Continue)) and self.loops:
            head, exit_, depth = self.loops[-1]
            out += self.leave(exit_ if isinstance(s, ast.Break) else head, self.finallys[depth:][::-1], s)
            return None
        if not flattened(s, bool(self.finallys)):
            out.append(_Jumps(self).visit(s))
            if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and s.name in self.variables:
                out += self.parse(f"{self.n['frame']}.{s.name} = {s.name}", s)  # a variable of the generator
            return block
        if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, (ast.Yield, ast.YieldFrom)) \
                and not (isinstance(s, ast.Assign) and _contains_yield_in(s.targets)) \
                and not (s.value.value is not None and contains_yield(s.value.value)):
            targets = getattr(s, "targets", None)
            if isinstance(s.value, ast.Yield):
                return self.yield_(s.value, targets, block, s)
            return self.yield_from(s.value, targets, block, s)
        if isinstance(s, ast.If):
            return self.if_(s, self.hoisted_field(s, "test", block))
        if isinstance(s, ast.While):
            return self.while_(s, block)
        if isinstance(s, ast.For):
            return self.for_(s, self.hoisted_field(s, "iter", block))
        if isinstance(s, ast.Try):
            return self.try_(s, block)
        if isinstance(s, ast.With):
            return self.with_(s, block)
        if isinstance(s, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Raise, ast.Assert, ast.Delete)):
            return self.hoisted(s, block)
        raise self.refuse(f"a yield inside a {type(s).__name__} statement of a generator",
                          "assign the yield on its own first (`v = yield x`), then use v", s)

    def hoisted_field(self, s: ast.stmt, field: str, block: int) -> int:
        """Compute the yields in ``s.field`` first (``yield_hoisting.py``): the block after them."""
        value = getattr(s, field)
        if not contains_yield(value):
            return block
        before: list = []
        setattr(s, field, self.hoister.expression(value, before))
        return self.compile(before, block)

    def hoisted(self, s: ast.stmt, block: int) -> int | None:
        """A simple statement with a yield inside a larger expression: its yields (and what CPython
        evaluates before them) computed first, into frame attributes; then the statement."""
        before: list = []
        if isinstance(s, ast.Assert) and s.msg is not None and contains_yield(s.msg):
            message = ast.Call(ast.Name("AssertionError", ast.Load()), [s.msg], [])
            s = ast.copy_location(ast.If(ast.UnaryOp(ast.Not(), s.test), [ast.Raise(message, None)], []), s)
            return self.compile([ast.fix_missing_locations(s)], block)
        if isinstance(s, ast.Assign):  # the value first, then the targets' parts
            s.value = self.hoister.expression(s.value, before)
            if _contains_yield_in(s.targets):
                if not self.stable(s.value):
                    s.value = self.hoister._store(s.value, before, s)
                for target in s.targets:
                    if contains_yield(target):
                        self.hoister.children(target, before)
        elif isinstance(s, ast.AugAssign):  # the target's parts, then the value
            self.hoister.children(s, before, [*_slots(s.target), _Slot(s, "value")])
        elif isinstance(s, (ast.Expr, ast.AnnAssign, ast.Return)) and s.value is not None:
            s.value = self.hoister.expression(s.value, before)
            if isinstance(s, ast.Expr) and self.stable(s.value):
                s = None  # only the yield's value, unused
        else:
            self.hoister.children(s, before)
        return self.compile(before + ([s] if s is not None else []), block)

    def yield_(self, node: ast.Yield, targets: list | None, block: int, at: ast.stmt) -> int:
        value = ast.unparse(node.value) if node.value is not None else "None"
        after = self.new()
        self.blocks[block] += self.jump(after, at) + self.parse(f"return True, {value}", at)
        if self.region() is not None:
            self.resumes[after] = self.region()  # an exception thrown in at the yield goes there
        if self.closing_runs_code:
            self.cleanups[after] = at.lineno  # (closing it there runs code)
        if targets is not None:
            self.blocks[after] += [ast.copy_location(ast.Assign(targets, ast.Name(self.n["sent"], ast.Load())), at)]
        return after

    def yield_from(self, node: ast.YieldFrom, targets: list | None, block: int, at: ast.stmt) -> int:
        """``yield from it``: step through ``delegate(it)``, passing on what is sent, until it
        returns; its value is the value of the expression."""
        sub = self.iterator()
        loop, after = self.new(), self.new()
        sent, thrown = self.n["sent"], self.n["thrown"]
        self.blocks[block] += self.parse(f"{sub} = {self.n['delegate']}({ast.unparse(node.value)})\n"
                                         f"{sent} = None\n{thrown} = None", at) + self.jump(loop, at)
        more, value = self.n["more"], self.n["value"]
        self.resumes[loop] = loop  # an exception thrown in is passed on to the iterator
        if self.closing_runs_code:
            self.cleanups[loop] = at.lineno
        self.blocks[loop] += self.parse(f"{more}, {value} = {sub}.resume({sent}, {thrown})\n{thrown} = None\n"
                                        f"if {more}:\n    return True, {value}\n"
                                        f"if {more} is None:\n    raise GeneratorExit", at) + self.jump(after, at)
        if targets is not None:
            self.blocks[loop].insert(-1, ast.copy_location(ast.Assign(targets, ast.Name(value, ast.Load())), at))
        return after

    def if_(self, s: ast.If, block: int) -> int:
        then = self.new()
        otherwise = self.new() if s.orelse else None
        after = self.new()
        otherwise = after if otherwise is None else otherwise
        self.blocks[block].append(ast.copy_location(ast.If(s.test, self.jump(then, s), self.jump(otherwise, s)), s))
        for body, start in ((s.body, then), (s.orelse, otherwise)):
            if not body:
                continue
            end = self.compile(body, start)
            if end is not None:
                self.blocks[end] += self.jump(after, s)
        return after

    def _loop(self, s: ast.While | ast.For, head: int, body_start: int, after: int) -> int:
        """The body (continue -> ``head``, break -> ``after``) and the else block."""
        otherwise = self.new() if s.orelse else after
        self.loops.append((head, after, len(self.finallys)))
        end = self.compile(s.body, body_start)
        self.loops.pop()
        if end is not None:
            self.blocks[end] += self.jump(head, s)
        if s.orelse:
            end = self.compile(s.orelse, otherwise)
            if end is not None:
                self.blocks[end] += self.jump(after, s)
        return otherwise

    def while_(self, s: ast.While, block: int) -> int:
        head, body, after = self.new(), self.new(), self.new()
        self.blocks[block] += self.jump(head, s)
        otherwise = self._loop(s, head, body, after)
        test = self.hoisted_field(s, "test", head)  # evaluated at each iteration
        if isinstance(s.test, ast.Constant) and s.test.value is True:
            self.blocks[test] += self.jump(body, s)
        else:
            self.blocks[test].append(ast.copy_location(ast.If(s.test, self.jump(body, s), self.jump(otherwise, s)), s))
        return after

    def for_(self, s: ast.For, block: int) -> int:
        sub = self.iterator()
        head, body, after = self.new(), self.new(), self.new()
        self.blocks[block] += self.parse(f"{sub} = {self.n['delegate']}({ast.unparse(s.iter)})", s) + self.jump(head, s)
        otherwise = self._loop(s, head, body, after)
        more, value = self.n["more"], self.n["value"]
        step = self.parse(f"{more}, {value} = {sub}.resume(None, None)", s)
        assign = ast.copy_location(ast.Assign([s.target], ast.Name(value, ast.Load())), s)
        self.blocks[head] += step + [ast.copy_location(ast.If(
            ast.Name(more, ast.Load()), [assign, *self.jump(body, s)], self.jump(otherwise, s)), s)]
        return after


def _contains_yield_in(nodes: list) -> bool:
    return any(_contains_yield(n) for n in nodes)


class _Jumps(ast.NodeTransformer):
    """In a statement kept as written: ``return v`` ends the generator; ``break``/``continue``
    of a flattened loop around it jump (then ``continue`` the dispatch loop)."""

    def __init__(self, machine: _StateMachine) -> None:
        self.machine, self.depth = machine, 0

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef  # type: ignore[assignment]

    def _loop(self, node: ast.AST) -> ast.AST:
        self.depth += 1
        try:
            return self.generic_visit(node)
        finally:
            self.depth -= 1

    visit_For = visit_While = _loop

    def visit_Return(self, node: ast.Return) -> ast.AST:
        value = ast.unparse(node.value) if node.value is not None else "None"
        return self.machine.jump(-1, node) + self.machine.parse(f"return False, {value}", node)

    def _jump(self, node: ast.AST) -> ast.AST:
        if self.depth or not self.machine.loops:
            return node
        target = self.machine.loops[-1][1 if isinstance(node, ast.Break) else 0]
        return self.machine.jump(target, node) + self.machine.parse("continue", node)

    visit_Break = visit_Continue = _jump


def to_state_machine(function: ast.FunctionDef, filename: str) -> None:
    """Rewrite the generator function ``function`` in place (see the module's docstring)."""
    taken = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}
    imports = []  # leading imports stay in the function: resume reads them as closure variables
    while function.body and isinstance(function.body[0], (ast.Import, ast.ImportFrom)):
        imports.append(function.body.pop(0))
    imports += _helper_imports(function)
    variables = _stored_names(function)
    taken |= set(variables)
    names = {k: _fresh(k, taken) for k in ("frame", "resume", "sent", "thrown", "state", "more", "value", "error",
                                           "returned", "exception", "Frame", "Generator", "delegate", "managed",
                                           "assigned", "watch", "made")}
    used = set()  # what of ir/generators.py the body needs besides the machine's runtime ("assigned")
    on_frame = _ToFrame(names["frame"], set(variables), names["assigned"], used)
    body = [t for s in copy.deepcopy(function.body) for t in _statements(on_frame.visit(s))]
    machine = _StateMachine(function, filename, names, set(variables), taken)
    end = machine.compile(body, machine.new())
    if end is not None:
        machine.blocks[end] += machine.jump(-1, function) + machine.parse("return False, None", function)
    parameters = [a for a in variables if _is_parameter(function, a)]
    function.body = imports + _rewritten(function, filename, machine, parameters, sorted(used))


def _helper_imports(function: ast.FunctionDef) -> list:
    """The helpers that rewritten ``match``/``except*`` code calls by ``_yb_`` names, imported
    under those names with the leading imports (``runtime_names.py`` binds them in a function's
    own scope only, and the generator's body moves into ``resume``)."""
    used = sorted({n.id for n in ast.walk(function) if isinstance(n, ast.Name) and n.id in HELPERS})
    return [ast.copy_location(parse_source(f"from {HELPERS[name].__module__} import {HELPERS[name].__name__} as {name}")
                              .body[0], function) for name in used]


def _statements(visited: ast.stmt | list) -> list:
    return visited if isinstance(visited, list) else [visited]


def _is_parameter(function: ast.FunctionDef, name: str) -> bool:
    return any(a.arg == name for a in ast.walk(function.args) if isinstance(a, ast.arg))


def _rewritten(function: ast.FunctionDef, filename: str, machine: _StateMachine, parameters: list,
               helpers: list) -> list:
    """The new body: the frame, ``resume`` dispatching on the frame's state, the generator
    (``helpers``: other functions of ``ir/generators.py`` the body calls)."""
    n = machine.n
    frame, state = n["frame"], n["state"]
    where = f'  File "{filename}", line {function.lineno}\n    {linecache.getline(filename, function.lineno).strip()}\n'
    watched = ("watch",) if machine.cleanups and not getattr(function, "asynchronous", None) else ()
    imported = ", ".join(k if n[k] == k else f"{k} as {n[k]}"
                         for k in ("Frame", "Generator", "delegate", "managed", *watched, *helpers))
    head = (f"from yuebing.ir.generators import {imported}\n{frame} = {n['Frame']}({tuple(sorted(machine.variables))!r})\n"
            + "".join(f"{frame}.{p} = {p}\n" for p in parameters) + f"{frame}.{state} = 0\n")
    _simplified(machine)
    dispatch = _resume(machine)
    made = f"{n['Generator']}({n['resume']}, {function.name!r}, {where!r}, {frame}, {state!r})"
    if getattr(function, "asynchronous", None) == "generator":  # an async generator's (async_functions.py)
        head = f"from yuebing.ir.async_generators import AsyncGenerator as {n['Generator']}_async\n" + head
        made = f"{n['Generator']}_async({made})"
    made = machine.parse(_watched(machine, made), function)
    docstring = function.body[:1] if ast.get_docstring(function, clean=False) is not None else []
    result = [*docstring, *machine.parse(head, function), dispatch, *made]
    for s in result:
        _locate_missing(s, function)
    return result


def _watched(machine: _StateMachine, made: str) -> str:
    """``return made``; a generator suspended inside ``try``/``with`` at its yields of
    ``machine.cleanups`` is first watched (``ir/generators.watch``): one still suspended there,
    unclosed, when the differentiation's forward pass ends is refused (CPython would have run
    its cleanup when it was dropped, at a time the source does not show)."""
    if not machine.cleanups or getattr(machine.function, "asynchronous", None):
        return f"return {made}"
    n = machine.n
    return (f"{n['made']} = {made}\n"
            f"{n['watch']}({n['made']}, {machine.cleanups!r})\n"
            f"return {n['made']}")


def _jump_target(statement: ast.stmt, machine: _StateMachine) -> int | None:
    """The block ``statement`` jumps to, if it is a jump (``frame.state = 3``, ``frame.next = 3``)."""
    if isinstance(statement, ast.Assign) and len(statement.targets) == 1 \
            and isinstance(statement.value, ast.Constant) and type(statement.value.value) is int:
        target = statement.targets[0]
        if isinstance(target, ast.Attribute) and ast.unparse(target) in machine.targets and statement.value.value >= 0:
            return statement.value.value
    return None


def _simplified(machine: _StateMachine) -> None:
    """Fewer trips through the dispatch loop (each one is differentiated code): a jump to a block
    that only jumps goes to where that one goes, and a block ending with a jump to a short block
    of the same region gets that block's statements instead (a loop's head after its body)."""
    blocks, kept = machine.blocks, set(machine.resumes) | set(machine.resumes.values())

    def final(number: int) -> int:
        seen = set()
        while number not in seen and number not in kept and len(blocks[number]) == 1:
            seen.add(number)
            following = _jump_target(blocks[number][0], machine)
            if following is None:
                break
            number = following
        return number

    for block in blocks:
        for statement in block:
            for node in ast.walk(statement):
                if isinstance(node, ast.stmt) and _jump_target(node, machine) is not None:
                    node.value = ast.Constant(final(node.value.value))
    for number, block in enumerate(blocks):
        target = _jump_target(block[-1], machine) if block else None
        if target is not None and ast.unparse(block[-1].targets[0]) == machine.state and target != number \
                and len(blocks[target]) <= 3 and machine.block_regions[target] == machine.block_regions[number]:
            block[-1:] = copy.deepcopy(blocks[target])


def _resume(machine: _StateMachine) -> ast.FunctionDef:
    """``resume(sent, thrown=None)``: an exception thrown in goes where the suspended block's
    region sends it; then the blocks run, chosen by the frame's state, to the next yield.

    ``GeneratorExit`` leaving the generator (``close``) is not raised out of ``resume`` but
    returned as ``(None, None)``: in reverse mode the work of a call that raised a
    ``BaseException`` that is not an ``Exception`` (a finally block's) would not be kept."""
    n = machine.n
    state, exception = n["state"], n["exception"]
    resume = machine.parse(
        f"def {n['resume']}({n['sent']}, {n['thrown']}=None):\n"
        f"    if {n['thrown']} is not None:\n        try:\n            raise {n['thrown']}\n"
        f"        except BaseException as {exception}:\n            {machine.error} = {exception}\n"
        f"        {machine.state} = {_thrown_to(machine)}\n"
        f"    while True:\n        {state} = {machine.state}", machine.function)[0]
    # state -2: an exception thrown in where nothing catches it ends the generator
    ended = machine.parse(
        f"if {state} == -2:\n    {machine.state} = -1\n"
        f"    if isinstance({machine.error}, GeneratorExit):\n        return None, None\n"
        f"    {machine.reraise(machine.error)}\nreturn False, None", machine.function)
    blocks = [_in_region(machine, number) or [ast.Pass()] for number in range(len(machine.blocks))]
    loop = resume.body[-1]
    loop.body += machine.parse(f"if {state} < 0:\n    pass", machine.function)
    loop.body[-1].body = ended
    loop.body[-1].orelse = _dispatch(machine, blocks, 0, len(blocks))
    if any(region is not None for region in machine.block_regions):  # a GeneratorExit re-raised
        exited = machine.parse(f"{machine.state} = -1\nreturn None, None", machine.function)
        handler = ast.ExceptHandler(ast.Name("GeneratorExit", ast.Load()), None, exited)
        ended = ast.ExceptHandler(ast.Name("BaseException", ast.Load()), None,  # a generator that raised is done
                                  machine.parse(f"{machine.state} = -1\nraise", machine.function))
        handlers = [ast.copy_location(h, loop) for h in (handler, ended)]
        resume.body[-1] = ast.copy_location(ast.Try([loop], handlers, [], []), loop)
    return resume


def _dispatch(machine: _StateMachine, blocks: list, low: int, high: int) -> list:
    """Blocks ``low`` to ``high - 1`` chosen by the state, halving the range at each test (a
    resume costs a few comparisons, not one per block: each is differentiated code)."""
    state = machine.n["state"]
    if high - low == 1:
        return blocks[low]
    if high - low == 2:
        test = machine.parse(f"{state} == {low}", machine.function)[0].value
        return [ast.copy_location(ast.If(test, blocks[low], blocks[low + 1]), machine.function)]
    middle = (low + high) // 2
    test = machine.parse(f"{state} < {middle}", machine.function)[0].value
    return [ast.copy_location(ast.If(test, _dispatch(machine, blocks, low, middle),
                                     _dispatch(machine, blocks, middle, high)), machine.function)]


def _thrown_to(machine: _StateMachine) -> str:
    """Where ``resume`` goes with an exception thrown in (``throw``, ``close``): from the block
    the generator resumes at, the entry of its region, or -2 (raise it, ended)."""
    if not machine.resumes:
        return "-2"
    return f"{machine.resumes!r}.get({machine.state}, -2)"


def _in_region(machine: _StateMachine, number: int) -> list:
    """Block ``number``, inside ``try``/``except`` when it belongs to a region: an exception it
    raises is kept on the frame and control goes to the region's entry."""
    statements, entry = machine.blocks[number], machine.block_regions[number]
    if entry is None or all(_cannot_raise(s) for s in statements):
        return statements
    exception = machine.n["exception"]
    handler = ast.ExceptHandler(ast.Name("BaseException", ast.Load()), exception, machine.parse(
        f"{machine.error} = {exception}\n{machine.state} = {entry}", machine.function))
    return [ast.copy_location(ast.Try(statements, [ast.copy_location(handler, machine.function)], [], []), statements[0])]


def _cannot_raise(statement: ast.stmt) -> bool:
    """A jump: a constant stored in an attribute of the frame (``frame.state = 3``)."""
    return isinstance(statement, ast.Assign) and isinstance(statement.value, ast.Constant) \
        and all(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) for t in statement.targets)


def _locate_missing(statement: ast.AST, at: ast.AST) -> None:
    """Give nodes made by the rewrite the generator's own line (for errors and line maps)."""
    for node in ast.walk(statement):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            node.lineno, node.end_lineno = at.lineno, at.lineno
            node.col_offset, node.end_col_offset = at.col_offset, at.col_offset


def state_machines(node: ast.FunctionDef | ast.Lambda, filename: str,
                   outside: frozenset = frozenset(), called: dict | None = None) -> ast.FunctionDef | ast.Lambda:
    """``node`` with every generator function in it (itself or nested) that needs one rewritten
    as a state machine (a copy when anything changed); ``outside``: names it calls of generator
    functions with cleanup defined outside it (``generator_closing.cleanup_generators_called``),
    closed where dropped like its own; ``called``: definitions of generator functions of the
    module it calls, whose eager copies it may hold (``generator_eagerness.py``)."""
    taken = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
    node = read_stop_values(node, lambda base: _fresh(base, taken))  # StopIteration.value (stop_values.py)
    suspended = consumed_lazily(node)
    node, eager = eager_generators(node, lambda f: needs_protocol(f, suspended), filename, called)  # (generator_eagerness.py)
    if not outside and not any(needs_state_machine(f, suspended, eager) for f in ast.walk(node)
                               if isinstance(f, ast.FunctionDef)):
        return node
    node = copy.deepcopy(node)
    functions = [f for f in ast.walk(node) if isinstance(f, ast.FunctionDef)]
    for function in reversed(functions):  # (inner ones first: an outer one's rewrite copies them)
        if needs_state_machine(function, suspended, eager):
            function.body = desugar_try_star(desugar_match(function)).body  # its own match and except*
    functions = [f for f in ast.walk(node) if isinstance(f, ast.FunctionDef)]
    with_cleanup = {f.name for f in functions if needs_state_machine(f, suspended, eager) and _has_cleanup(f)} | outside
    if with_cleanup:  # closed where CPython drops them (generator_closing.py)
        closing = ClosedWhereDropped(with_cleanup, {n.id for n in ast.walk(node) if isinstance(n, ast.Name)},
                                     isinstance(node, ast.FunctionDef))
        node = closing.visit(node)
        if isinstance(node, ast.FunctionDef):
            at = 1 if ast.get_docstring(node, clean=False) is not None else 0
            node.body[at:at] = closing.imports()
        functions = [f for f in ast.walk(node) if isinstance(f, ast.FunctionDef)]
    for function in reversed(functions):  # inner ones first: an outer rewrite copies their text
        if needs_state_machine(function, suspended, eager):
            to_state_machine(function, filename)
    return ast.fix_missing_locations(node)

