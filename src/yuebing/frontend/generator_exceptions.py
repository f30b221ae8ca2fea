"""Stage 1b, part of ``generators.py``: ``try`` and ``with`` around a yield in a state machine.

A ``try`` statement whose body is split into several blocks by a yield cannot stay a ``try``:
``resume`` returns at each yield. Its blocks form a *region* instead (regenerator's approach):
``resume`` runs each block of a region inside ``try: ... except BaseException`` and, on an
exception, stores it on the frame and jumps to the region's entry:

* the entry of a ``try`` with ``except`` clauses is a block that tests the clauses in order
  (``isinstance``), binds the name and jumps to the handler's first block, or raises again;
* the entry of a ``try`` with ``finally`` keeps the exception as *pending* and jumps to the
  finally block, whose end raises it again (or, when none is pending, jumps to where the try was
  left for: the statement after it, a loop's head or exit, or the generator's return).

A ``return``, ``break`` or ``continue`` leaving a ``try`` with ``finally`` goes through the
finally blocks it crosses, innermost first (each one's ``next`` is the one outside it). So that
this needs no jumps out of statements kept as written, inside a finally region a statement
containing a return, break or continue is flattened into blocks like one containing a yield.

``with m as v: body`` is compiled as PEP 343 spells it, a try with an except and a finally
around ``body`` calling the manager's ``__exit__`` (looked up before ``__enter__``).

``throw``/``close`` (``ir/generators.py``) raise at the yield where the generator is suspended:
the rewritten ``resume`` takes the exception, stores it and jumps to the entry of the region of
the block that resumes (a table from state to entry), or ends the generator and raises it.
"""
from __future__ import annotations

import ast
import builtins
from dataclasses import dataclass

from .parsing import parse as parse_source
from .runtime_names import PREFIX
from .yield_hoisting import contains_yield

__all__ = ["ExceptionBlocks", "escapes"]

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_LOOPS = (ast.For, ast.While, ast.AsyncFor)


@dataclass
class Finally:
    """A ``try``'s finally block being compiled: its first block and the frame attributes of the
    exception pending through it and of the block it goes on to."""

    block: int
    pending: str
    next: str


def escapes(statement: ast.stmt) -> bool:
    """Whether ``statement`` holds a ``return``, or a ``break``/``continue`` of a loop outside it."""
    stack = [(statement, False)]
    while stack:
        node, in_loop = stack.pop()
        if isinstance(node, ast.Return) or isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
            return True
        for child in ast.iter_child_nodes(node):
            if not isinstance(child, _NESTED):
                inner = in_loop or (isinstance(node, _LOOPS) and child in node.body)
                stack.append((child, inner))
    return False


class _BareRaise(ast.NodeTransformer):
    """In an except clause's body: ``raise`` re-raises the clause's exception, kept on the frame
    (``resume`` is not inside an ``except`` when the body runs)."""

    def __init__(self, reraise: str) -> None:
        self.reraise = reraise

    def visit_Raise(self, node: ast.Raise) -> ast.AST:
        if node.exc is None:
            return [ast.copy_location(s, node) for s in parse_source(self.reraise).body]
        return node

    def visit_ExceptHandler(self, node: ast.AST) -> ast.AST:
        return node  # its own bare raise re-raises its own exception

    visit_FunctionDef = visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_ExceptHandler


#: exceptions that are not ``GeneratorExit`` nor a base of it: a handler of only these does not
#: run when a generator suspended in its ``try`` is closed
_NOT_EXIT = frozenset(name for name, value in vars(builtins).items()
                      if isinstance(value, type) and issubclass(value, Exception))


def may_catch_generator_exit(handler: ast.ExceptHandler) -> bool:
    """Whether ``handler`` may run when ``GeneratorExit`` is thrown in (``close``): a bare
    ``except:``, or a type that is not a builtin subclass of ``Exception`` (an ``except*``
    rewritten by ``try_star.py``: the types its clauses match)."""
    if handler.type is None:
        return True
    types = [handler.type]
    if (handler.name or "").startswith(PREFIX):  # try_star.py's except BaseException as _yb_caught
        types = [c.args[1] for c in ast.walk(handler) if isinstance(c, ast.Call) and isinstance(c.func, ast.Name)
                 and c.func.id == PREFIX + "star_match" and len(c.args) == 2]
    names = [t for e in types for t in (e.elts if isinstance(e, ast.Tuple) else [e])]
    return not all(isinstance(t, ast.Name) and t.id in _NOT_EXIT for t in names)


class ExceptionBlocks:
    """``try_`` and ``with_`` of ``_StateMachine`` (a mixin: it uses the machine's ``new``,
    ``jump``, ``parse``, ``compile``, ``attribute``, ``regions``, ``finallys`` and names ``n``)."""

    def region(self) -> int | None:
        return self.regions[-1] if self.regions else None

    def leave(self, target: int, crossed: list, at: ast.AST) -> list:
        """Statements jumping to block ``target`` through the finally blocks ``crossed``
        (innermost first), none with an exception pending."""
        out = []
        for k, fin in enumerate(crossed):
            following = crossed[k + 1].block if k + 1 < len(crossed) else target
            out += self.parse(f"{fin.pending} = None\n{fin.next} = {following}", at)
        return out + self.jump(crossed[0].block if crossed else target, at)

    def return_block(self) -> int:
        """The block a ``return`` crossing finally blocks ends in: it returns the value kept."""
        if self.returning is None:
            self.returning = self.new(region=None)
            self.blocks[self.returning] += self.jump(-1, self.function) + self.parse(
                f"return False, {self.returned}", self.function)
        return self.returning

    def try_(self, s: ast.Try, block: int) -> int:
        outer = self.region()
        after = self.new(region=outer)
        fin = None
        unseen = getattr(s, "unseen_on_close", False)  # an except clause's unbinding of its name
        if s.finalbody:
            fin = Finally(self.new(region=outer), self.attribute("pending"), self.attribute("next"))
            self.targets.add(fin.next)  # it holds a block number (``_simplified`` follows jumps)
            raised = self.new(region=outer)  # the region's entry: keep the exception, run finally
            self.blocks[raised] += self.parse(f"{fin.pending} = {self.error}", s) + self.jump(fin.block, s)
            self.regions.append(raised)
            self.finallys.append(fin)
            self.closing_runs_code += 1 - unseen
        catches_exit = any(may_catch_generator_exit(h) for h in s.handlers)
        if s.handlers:
            catch = self.new()
            self.regions.append(catch)
            self.closing_runs_code += catches_exit
        start = self.new()
        self.blocks[block] += self.jump(start, s)
        end = self.compile(s.body, start)
        if s.handlers:
            self.regions.pop()
            self.closing_runs_code -= catches_exit
        if end is not None and s.orelse:  # not covered by the except clauses
            otherwise = self.new()
            self.blocks[end] += self.jump(otherwise, s)
            end = self.compile(s.orelse, otherwise)
        if end is not None:
            self.blocks[end] += self.leave(after, [fin] if fin else [], s)
        if s.handlers:
            self.except_clauses(s, catch, fin, after)
        if fin is not None:
            self.regions.pop()
            self.finallys.pop()
            self.closing_runs_code -= 1 - unseen
            end = self.compile(s.finalbody, fin.block)
            if end is not None:
                self.blocks[end] += self.parse(f"if {fin.pending} is not None:\n    {self.reraise(fin.pending)}\n"
                                               f"{self.state} = {fin.next}", s)
        return after

    def except_clauses(self, s: ast.Try, catch: int, fin: Finally | None, after: int) -> None:
        """The ``catch`` block tests the clauses in order; each clause's body is compiled."""
        caught = self.attribute("caught")
        chain = self.parse(self.reraise(self.error), s)
        bodies = []
        for handler in s.handlers:
            start = self.new()
            bodies.append((handler, start))
        for handler, start in reversed(bodies):
            bind = f"{caught} = {self.error}\n" + (f"{handler.name} = {self.error}\n" if handler.name else "")
            taken = self.parse(bind, handler) + self.jump(start, handler)
            if handler.type is None:
                chain = taken
                continue
            test = self.parse(f"isinstance({self.error}, {ast.unparse(handler.type)})", handler)[0].value
            chain = [ast.copy_location(ast.If(test, taken, chain), handler)]
        self.blocks[catch] += chain
        for handler, start in bodies:
            body = [_BareRaise(self.reraise(caught)).visit(statement) for statement in handler.body]
            body = [s for item in body for s in (item if isinstance(item, list) else [item])]
            end = self.compile(body, start)
            if end is not None:
                self.blocks[end] += self.leave(after, [fin] if fin else [], handler)

    def with_(self, s: ast.With, block: int) -> int | None:
        """``with`` as PEP 343 spells it (several items: nested)."""
        if len(s.items) > 1:
            inner = ast.copy_location(ast.With(s.items[1:], s.body, None), s)
            s = ast.copy_location(ast.With(s.items[:1], [inner], None), s)
        item = s.items[0]
        manager, exit_, entered = self.attribute("manager"), self.attribute("exit"), self.attribute("entered")
        error = self.local("error")
        header = self.parse(f"{manager} = None", item.context_expr)
        header[0].value = self._managed(item)
        header += self.parse(f"{exit_} = type({manager}).__exit__", s)
        enter = self.parse(f"type({manager}).__enter__({manager})", s)[0].value
        if item.optional_vars is not None:
            header.append(ast.copy_location(ast.Assign([item.optional_vars], enter), s))
        else:
            header.append(ast.copy_location(ast.Expr(enter), s))
        header += self.parse(f"{entered} = True", s)
        handler = ast.ExceptHandler(ast.Name("BaseException", ast.Load()), error, self.parse(
            f"{entered} = False\nif not {exit_}({manager}, type({error}), {error}, {error}.__traceback__):\n"
            "    raise", s))
        final = self.parse(f"if {entered}:\n    {exit_}({manager}, None, None, None)", s)
        protected = ast.copy_location(ast.Try(s.body, [ast.copy_location(handler, s)], [], final), s)
        return self.compile(header + [protected], block)


    def _managed(self, item: ast.withitem) -> ast.Call:
        """``managed(target, make, *args)`` for the header ``make(*args)`` (or ``managed(target,
        None, value)``): made, entered and exited without derivatives when nothing handed to it
        holds floats (``ir/generators.py``), in Python's order of evaluation."""
        expr = item.context_expr
        written = ast.unparse(item.optional_vars) if item.optional_vars is not None else ""
        target = ast.Constant(written.replace(f"{self.n['frame']}.", ""))  # (as the user wrote it)
        helper = ast.Name(self.n["managed"], ast.Load())
        if isinstance(expr, ast.Call):
            return ast.copy_location(ast.Call(helper, [target, expr.func, *expr.args], expr.keywords), expr)
        return ast.copy_location(ast.Call(helper, [target, ast.Constant(None), expr], []), expr)


def flattened(statement: ast.stmt, in_finally: bool) -> bool:
    """Whether the state machine compiles ``statement`` into blocks rather than keep it."""
    return contains_yield(statement) or in_finally and escapes(statement)
