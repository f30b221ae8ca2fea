"""Stage 1b: generator functions that cannot be evaluated eagerly become state machines.

A generator function is rewritten here (instead of into a list builder, ``desugar.py``) when it
uses ``yield``'s value (``v = yield x``, ``send``), returns a value (so ``r = yield from g()``),
yields inside a ``while`` loop (it may never end), or when the function being differentiated calls
``next``/``.send`` (it may be left suspended). The rewrite is what C# and regenerator do:

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
                                   return Generator(resume, 'g', '  File ..., line 1')

The function's variables become attributes of a ``Frame``; each yield ends a numbered block and
the next one starts where it resumes; ifs and loops that contain a yield are flattened into
blocks with explicit jumps (the others stay as written); a ``for`` containing a yield steps
through ``delegate(iterable)``, as ``yield from`` does. The result is ordinary code: attribute
reads and writes and function calls, which every mode differentiates already
(``ir/generators.py`` has the runtime). A yield inside ``try``/``with``, or inside a larger
expression than ``x = yield v``, is refused by name.

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

__all__ = ["consumed_lazily", "needs_state_machine", "to_state_machine", "state_machines"]

_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _own_scope(function: ast.FunctionDef) -> list[ast.AST]:
    """The nodes of a function's body, not those of nested functions, lambdas or classes."""
    found, stack = [], list(function.body)
    while stack:
        child = stack.pop()
        found.append(child)
        if not isinstance(child, _NESTED):
            stack.extend(ast.iter_child_nodes(child))
    return found


def _yields(nodes) -> list:
    return [n for n in nodes if isinstance(n, (ast.Yield, ast.YieldFrom))]


def _contains_yield(node: ast.AST) -> bool:
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, _NESTED) or n is node:
            stack.extend(ast.iter_child_nodes(n))
    return False


def consumed_lazily(node: ast.AST) -> bool:
    """Whether the code calls ``next``, ``.send`` or ``islice``: a generator it makes may be
    left suspended, so it must not run to its end."""
    for n in ast.walk(node):
        if isinstance(n, ast.Call):
            f = n.func
            if isinstance(f, ast.Name) and f.id in ("next", "islice") or isinstance(f, ast.Attribute) and f.attr in ("send", "islice"):
                return True
    return False


def needs_state_machine(function: ast.FunctionDef, suspended: bool) -> bool:
    """A generator function that a list cannot stand for: see the module's docstring."""
    nodes = _own_scope(function)
    yields = _yields(nodes)
    if not yields:
        return False
    if suspended:
        return True
    statements = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    if any(id(y) not in statements for y in yields):
        return True  # a yield used as a value
    if any(isinstance(r, ast.Return) and r.value is not None
           and not (isinstance(r.value, ast.Constant) and r.value.value is None) for r in nodes):
        return True
    return any(isinstance(w, ast.While) and _contains_yield(w) for w in nodes)


def _stored_names(function: ast.FunctionDef) -> list[str]:
    """The generator's local variables, in order of appearance: parameters, then every name it
    binds (not inside comprehensions, nested functions or classes; not ``global``/``nonlocal``
    ones; not ``except ... as`` names and imports, which live in ``resume`` itself)."""
    args = function.args
    names = [a.arg for a in [*args.posonlyargs, *args.args, *([args.vararg] if args.vararg else []),
                             *args.kwonlyargs, *([args.kwarg] if args.kwarg else [])]]
    declared = set()
    comprehension_targets = set()
    nodes = _own_scope(function)
    for n in nodes:
        if isinstance(n, (ast.Global, ast.Nonlocal)):
            declared.update(n.names)
        elif isinstance(n, ast.comprehension):
            comprehension_targets.update(id(t) for t in ast.walk(n.target))
    for n in nodes:
        name = None
        if isinstance(n, ast.Name) and isinstance(n.ctx, (ast.Store, ast.Del)) and id(n) not in comprehension_targets:
            name = n.id
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            name = n.name
        if name is not None and name not in declared and name not in names:
            names.append(name)
    return names


class _ToFrame(ast.NodeTransformer):
    """Reads and writes of the generator's variables -> attributes of the frame (also inside
    nested functions, lambdas and comprehensions, where they are not shadowed)."""

    def __init__(self, frame: str, variables: set) -> None:
        self.frame, self.variables = frame, variables

    def visit_Name(self, node: ast.Name) -> ast.AST:
        if node.id in self.variables:
            return ast.copy_location(ast.Attribute(ast.Name(self.frame, ast.Load()), node.id, node.ctx), node)
        return node

    def _shadowed(self, node: ast.AST, own: set) -> ast.AST:
        inner = _ToFrame(self.frame, self.variables - own)
        for field, value in ast.iter_fields(node):
            if isinstance(value, list):
                setattr(node, field, [inner.visit(v) if isinstance(v, ast.AST) else v for v in value])
            elif isinstance(value, ast.AST):
                setattr(node, field, inner.visit(value))
        return node

    def visit_Lambda(self, node: ast.Lambda) -> ast.AST:
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        own = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)}
        node.body = _ToFrame(self.frame, self.variables - own).visit(node.body)
        return node

    def visit_FunctionDef(self, node: ast.FunctionDef) -> ast.AST:
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        node.decorator_list = [self.visit(d) for d in node.decorator_list]
        own = {a.arg for a in ast.walk(node.args) if isinstance(a, ast.arg)} | set(_stored_names(node))
        inner = _ToFrame(self.frame, self.variables - own)
        node.body = [inner.visit(s) for s in node.body]
        return node

    def _comprehension(self, node: ast.AST) -> ast.AST:
        own = {t.id for g in node.generators for t in ast.walk(g.target) if isinstance(t, ast.Name)}
        return self._shadowed(node, own)

    visit_ListComp = visit_SetComp = visit_GeneratorExp = visit_DictComp = _comprehension


class _StateMachine:
    """Compiles a generator's body (already on the frame) into numbered blocks."""

    def __init__(self, function: ast.FunctionDef, filename: str, names: dict, variables: set) -> None:
        self.function, self.filename, self.n, self.variables = function, filename, names, variables
        self.blocks: list[list] = []
        self.loops: list[tuple[int, int]] = []  # (continue target, break target) of flattened loops
        self.delegates = 0

    def iterator(self) -> str:
        """A frame attribute for the iterator a ``yield from`` or ``for`` steps through."""
        self.delegates += 1
        return f"{self.n['frame']}.{_fresh(f'iterator{self.delegates}', self.variables)}"

    def new(self) -> int:
        self.blocks.append([])
        return len(self.blocks) - 1

    def parse(self, text: str, at: ast.AST) -> list:
        statements = ast.parse(text).body
        for s in statements:
            for n in ast.walk(s):
                n.lineno = n.end_lineno = getattr(at, "lineno", 1)
                n.col_offset = n.end_col_offset = getattr(at, "col_offset", 0)
        return statements

    def jump(self, target: int, at: ast.AST) -> list:
        return self.parse(f"{self.n['frame']}.{self.n['state']} = {target}", at)

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
            value = ast.unparse(s.value) if s.value is not None else "None"
            out += self.jump(-1, s) + self.parse(f"return False, {value}", s)
            return None
        if isinstance(s, (ast.Break, ast.Continue)) and self.loops:
            target = self.loops[-1][1 if isinstance(s, ast.Break) else 0]
            out += self.jump(target, s)
            return None
        if not _contains_yield(s):
            out.append(_Jumps(self).visit(s))
            if isinstance(s, (ast.FunctionDef, ast.ClassDef)) and s.name in self.variables:
                out += self.parse(f"{self.n['frame']}.{s.name} = {s.name}", s)  # a variable of the generator
            return block
        if isinstance(s, ast.Expr) and isinstance(s.value, ast.Yield):
            return self.yield_(s.value, None, block, s)
        if isinstance(s, ast.Assign) and isinstance(s.value, ast.Yield) and not _contains_yield_in(s.targets):
            return self.yield_(s.value, s.targets, block, s)
        if isinstance(s, (ast.Expr, ast.Assign)) and isinstance(s.value, ast.YieldFrom) \
                and not (isinstance(s, ast.Assign) and _contains_yield_in(s.targets)):
            return self.yield_from(s.value, getattr(s, "targets", None), block, s)
        if isinstance(s, ast.If):
            return self.if_(s, block)
        if isinstance(s, ast.While):
            return self.while_(s, block)
        if isinstance(s, ast.For):
            return self.for_(s, block)
        if isinstance(s, (ast.Try, ast.With)) or type(s).__name__ == "TryStar":
            raise self.refuse("a yield inside a try or with statement of a generator",
                              "move the yield out of the try/with block (compute the value inside, yield it after)", s)
        raise self.refuse("a yield inside a larger expression in a generator",
                          "assign the yield on its own first (`v = yield x`), then use v", s)

    def yield_(self, node: ast.Yield, targets: list | None, block: int, at: ast.stmt) -> int:
        value = ast.unparse(node.value) if node.value is not None else "None"
        after = self.new()
        self.blocks[block] += self.jump(after, at) + self.parse(f"return True, {value}", at)
        if targets is not None:
            self.blocks[after] += [ast.copy_location(ast.Assign(targets, ast.Name(self.n["sent"], ast.Load())), at)]
        return after

    def yield_from(self, node: ast.YieldFrom, targets: list | None, block: int, at: ast.stmt) -> int:
        """``yield from it``: step through ``delegate(it)``, passing on what is sent, until it
        returns; its value is the value of the expression."""
        sub = self.iterator()
        loop, after = self.new(), self.new()
        self.blocks[block] += self.parse(f"{sub} = {self.n['delegate']}({ast.unparse(node.value)})\n"
                                         f"{self.n['sent']} = None", at) + self.jump(loop, at)
        more, value = self.n["more"], self.n["value"]
        self.blocks[loop] += self.parse(f"{more}, {value} = {sub}.step({self.n['sent']})\n"
                                        f"if {more}:\n    return True, {value}", at) + self.jump(after, at)
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
        self.loops.append((head, after))
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
        if isinstance(s.test, ast.Constant) and s.test.value is True:
            self.blocks[head] += self.jump(body, s)
        else:
            self.blocks[head].append(ast.copy_location(ast.If(s.test, self.jump(body, s), self.jump(otherwise, s)), s))
        return after

    def for_(self, s: ast.For, block: int) -> int:
        sub = self.iterator()
        head, body, after = self.new(), self.new(), self.new()
        self.blocks[block] += self.parse(f"{sub} = {self.n['delegate']}({ast.unparse(s.iter)})", s) + self.jump(head, s)
        otherwise = self._loop(s, head, body, after)
        more, value = self.n["more"], self.n["value"]
        step = self.parse(f"{more}, {value} = {sub}.step(None)", s)
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


def _fresh(base: str, taken: set) -> str:
    name = base
    while name in taken:
        name = "_" + name
    taken.add(name)
    return name


def to_state_machine(function: ast.FunctionDef, filename: str) -> None:
    """Rewrite the generator function ``function`` in place (see the module's docstring)."""
    taken = {n.id for n in ast.walk(function) if isinstance(n, ast.Name)} | {
        a.arg for a in ast.walk(function) if isinstance(a, ast.arg)}
    variables = _stored_names(function)
    taken |= set(variables)
    names = {k: _fresh(k, taken) for k in ("frame", "resume", "sent", "state", "more", "value",
                                           "Frame", "Generator", "delegate")}
    body = [_ToFrame(names["frame"], set(variables)).visit(s) for s in copy.deepcopy(function.body)]
    machine = _StateMachine(function, filename, names, set(variables))
    end = machine.compile(body, machine.new())
    if end is not None:
        machine.blocks[end] += machine.jump(-1, function) + machine.parse("return False, None", function)
    function.body = _rewritten(function, filename, machine, [a for a in variables if _is_parameter(function, a)])


def _is_parameter(function: ast.FunctionDef, name: str) -> bool:
    return any(a.arg == name for a in ast.walk(function.args) if isinstance(a, ast.arg))


def _rewritten(function: ast.FunctionDef, filename: str, machine: _StateMachine, parameters: list) -> list:
    """The new body: the frame, ``resume`` dispatching on the frame's state, the generator."""
    n = machine.n
    frame, state = n["frame"], n["state"]
    where = f'  File "{filename}", line {function.lineno}\n    {linecache.getline(filename, function.lineno).strip()}\n'
    imported = ", ".join(k if n[k] == k else f"{k} as {n[k]}" for k in ("Frame", "Generator", "delegate"))
    head = (f"from yuebing.ir.generators import {imported}\n{frame} = {n['Frame']}()\n"
            + "".join(f"{frame}.{p} = {p}\n" for p in parameters) + f"{frame}.{state} = 0\n")
    dispatch = machine.parse(f"def {n['resume']}({n['sent']}):\n    while True:\n        {state} = {frame}.{state}", function)[0]
    chain: list = machine.parse("return False, None", function)
    for number in range(len(machine.blocks) - 1, -1, -1):
        test = machine.parse(f"{state} == {number}", function)[0].value
        chain = [ast.copy_location(ast.If(test, machine.blocks[number] or [ast.Pass()], chain), function)]
    dispatch.body[0].body += chain
    made = machine.parse(f"return {n['Generator']}({n['resume']}, {function.name!r}, {where!r})", function)
    docstring = function.body[:1] if ast.get_docstring(function, clean=False) is not None else []
    result = [*docstring, *machine.parse(head, function), dispatch, *made]
    for s in result:
        _locate_missing(s, function)
    return result


def _locate_missing(statement: ast.AST, at: ast.AST) -> None:
    """Give nodes made by the rewrite the generator's own line (for errors and line maps)."""
    for node in ast.walk(statement):
        if "lineno" in node._attributes and getattr(node, "lineno", None) is None:
            node.lineno, node.end_lineno = at.lineno, at.lineno
            node.col_offset, node.end_col_offset = at.col_offset, at.col_offset


def state_machines(node: ast.FunctionDef | ast.Lambda, filename: str) -> ast.FunctionDef | ast.Lambda:
    """``node`` with every generator function in it (itself or nested) that needs one rewritten
    as a state machine (a copy when anything changed)."""
    suspended = consumed_lazily(node)
    if not any(needs_state_machine(f, suspended) for f in ast.walk(node) if isinstance(f, ast.FunctionDef)):
        return node
    node = copy.deepcopy(node)
    functions = [f for f in ast.walk(node) if isinstance(f, ast.FunctionDef)]
    for function in reversed(functions):  # inner ones first: an outer rewrite copies their text
        if needs_state_machine(function, suspended):
            to_state_machine(function, filename)
    return ast.fix_missing_locations(node)
