"""Stage 1b: where a generator function may run eagerly (as a list builder): the one place that
decides it.

A generator evaluated eagerly makes every item before its consumer sees the first
(``list_builders.py``); the lazy one, a state machine (``generators.py``), makes each item when
the consumer asks for it, as Python does, and is 10 to 20 times slower under differentiation. A
call of a generator function defined in the differentiated function is evaluated eagerly only
where that is provably Python's result:

(a) *drained*: the call is the one argument of ``sum``/``list``/``tuple``/``sorted``/``set``/
    ``frozenset``/``max``/``min``/``dict`` or ``str.join`` (``generator_sites.drained``). Every item
    is taken before any other code runs, so whatever the body does (appends, writes, prints),
    it happens in the same order. When every use of the function is such a call, the function
    itself becomes the list builder; otherwise such calls go to a copy of it,
    ``_yb_drained_<name>``.

(b) *pure, reaching plain data, consumed quietly*: the body is pure by syntax
    (``generator_effects.may_have_effects``: it writes only its own variables and calls only
    builtins, ``math``, NumPy functions known to change nothing and reading methods), the call's
    consumer cannot change anything between items (``any``/``all`` of it, or a ``for`` loop or
    comprehension over it whose code is quiet: ``generator_sites.quiet_reads``), and, checked at
    run time when the call is made, every value the body and the consumer's code can reach --
    the arguments, the variables read from enclosing scopes and globals, the names the
    consumer's code reads -- is plain data (``ir.primitives.plain_data``: numbers, strings,
    NumPy arrays, lists/tuples/dicts of them; no user objects, whose ``.sum()`` or ``__add__``
    may write, no generators or iterators, which may be lazy ones with effects). Then nothing
    that runs between two items writes what the body reads, and the body writes nothing anyone
    reads: the items are the same whenever they are made, and making more than the consumer takes
    (it stops early) shows nowhere. Such calls go to ``_yb_eager_<name>((reads, updated), <name>, *args)``, which
    runs the lazy generator instead (passed as ``_yb_lazy``) when the run-time check fails, and also when an item raises:
    Python's consumer sees the items before it first (``next(1 / v for v in [1.0, 0.0])`` is 1.0),
    and the lazy generator, started afresh, shows it that (the eager attempt changed nothing).

Everything else -- a call whose generator escapes (stored, passed on, ``next``, ``zip``), a
loop whose body writes or calls a helper, an impure body, a decorated function, a call in a
function that calls ``next``/``send``/``islice`` -- runs lazily: the function itself is the state
machine. A generator function lowered on its own (the differentiated function itself, or one it
calls) cannot see its callers, so it runs lazily; but a caller that calls a generator function
of its module by name gets the eager copies of it (``called_generator_definitions``), for the calls
above.
"""
from __future__ import annotations

import ast
import copy
import inspect
import types
from typing import Callable

from .census import Census
from .generator_effects import may_have_effects
from .generator_expressions import HOISTED, SOURCE
from .generator_folds import fold_copy, fold_name
from .generator_sites import drained, folding, free_names, loop_consumer, parent_map, quiet_reads
from .list_builders import to_list_builder
from .parsing import parse as parse_source
from .source import function_node

__all__ = ["eager_generators", "called_generator_definitions"]

EAGER, DRAINED = "_yb_eager_", "_yb_drained_"
_READS, _LAZY = "_yb_reads", "_yb_lazy"
_CHECK, _IMMUTABLE = "_yb_plain_data", "_yb_immutable_data"


def eager_generators(node: ast.FunctionDef | ast.Lambda, needs_protocol: Callable, filename: str,
                     outside: dict | None = None) -> tuple[ast.FunctionDef | ast.Lambda, frozenset]:
    """``node`` (a copy when changed) with the calls of its generator functions that may run
    eagerly sent to eager copies (see the module's docstring), and the names of the generator
    functions that are list builders themselves (every use drained). ``needs_protocol(f)``:
    whether ``f`` needs the generator protocol whatever its consumer (``generators.py``);
    ``outside``: the definitions of generator functions of the module that ``node`` calls by
    name (``called_generator_definitions``): their eager copies are defined at the top of ``node``."""
    names = [f.name for f in _generator_functions(node)]
    outside = {name: f for name, f in (outside or {}).items() if name not in names and not needs_protocol(f)}
    if not names and not outside:
        return node, frozenset()
    node = copy.deepcopy(node)
    candidates = [f for f in reversed(_generator_functions(node))  # inner ones first: an outer copy copies their copies
                  if names.count(f.name) == 1 and f is not node and not needs_protocol(f)]
    candidates.sort(key=lambda f: not f.name.startswith(HOISTED))  # (stable) what a generator expression steps: after it
    eager: frozenset = frozenset()
    while True:  # (until no more: a generator only yielded from by eager ones is drained too)
        more = eager | {f.name for f in candidates if _Plan(node, f, eager=eager).every_use_drained()}
        if more == eager:
            break
        eager = more
    stepping: dict = {}  # id of an eager call of a rewritten generator expression -> what a generator it steps must check
    for function in candidates:
        if function.name not in eager:
            _Plan(node, function, eager=eager, stepping=stepping).apply(filename)
    if isinstance(node, ast.FunctionDef):
        for name, function in sorted(outside.items()):
            _Plan(node, function, outside=True, eager=eager, stepping=stepping).apply(filename)
    return node, eager


def called_generator_definitions(fn: types.FunctionType, node: ast.FunctionDef | ast.Lambda,
                                 census: Census | None = None) -> dict:
    """The generator functions ``node`` (``fn``'s definition, ``census`` its census if taken)
    calls by a name of its module whose eager copies can stand in ``node``: defined by a plain
    ``def`` (no decorator, no closure, constant defaults) in the same module, reading no name
    ``node`` binds (the copy is defined in ``node``) nor any beginning with an underscore (those
    are renamed in ``node``)."""
    census = census or Census(node)
    code = fn.__code__
    local = set(code.co_varnames) | set(code.co_cellvars) | set(code.co_freevars)
    bound = census.bound_names
    found = {}
    for name in sorted(census.called_names - local - bound):
        value = fn.__globals__.get(name)
        if type(value) is not types.FunctionType or value.__globals__ is not fn.__globals__ \
                or value.__closure__ or not value.__code__.co_flags & inspect.CO_GENERATOR:
            continue
        definition = _definition(value)
        if definition is None or definition.name != name or definition.decorator_list \
                or not all(isinstance(d, ast.Constant) for d in [*definition.args.defaults,
                                                                  *filter(None, definition.args.kw_defaults)]):
            continue
        reads = set(free_names(definition))
        if reads & bound or any(r.startswith("_") for r in reads):
            continue
        found[name] = definition
    return found


_DEFINITIONS: dict = {}  # code object -> its definition (None: no source)


def _definition(function: types.FunctionType) -> ast.FunctionDef | None:
    code = function.__code__
    if code not in _DEFINITIONS:
        try:
            node = function_node(function)[0]
        except Exception:  # noqa: BLE001 - no source: no copy (it runs lazily)
            node = None
        _DEFINITIONS[code] = node if isinstance(node, ast.FunctionDef) else None
    return _DEFINITIONS[code]


def _generator_functions(node: ast.AST) -> list[ast.FunctionDef]:
    return [f for f in ast.walk(node) if isinstance(f, ast.FunctionDef) and _yields(f)]


def _yields(function: ast.FunctionDef) -> bool:
    stack = list(function.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if not isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(n))
    return False


class _Plan:
    """The uses of one generator function and where each may run eagerly."""

    def __init__(self, node: ast.AST, function: ast.FunctionDef, outside: bool = False,
                 eager: frozenset = frozenset(), stepping: dict | None = None) -> None:
        self.node, self.function, self.name, self.outside, self.eager = node, function, function.name, outside, eager
        self.stepping = {} if stepping is None else stepping
        self.parents = parent_map(node)
        uses = [n for n in ast.walk(node) if isinstance(n, ast.Name) and n.id == self.name]
        rebound = any(not isinstance(u.ctx, ast.Load) for u in uses) or any(
            isinstance(a, ast.arg) and a.arg == self.name for a in ast.walk(node))
        self.calls = [] if rebound else [self.parents[id(u)] for u in uses if self._called(u)]
        self.escapes = rebound or len(self.calls) < len(uses)

    def _called(self, use: ast.Name) -> bool:
        call = self.parents.get(id(use))
        return isinstance(call, ast.Call) and call.func is use

    def every_use_drained(self) -> bool:
        return bool(self.calls) and not self.escapes and all(drained(c, self.parents, self.eager) for c in self.calls)

    def apply(self, filename: str) -> bool:
        """Send the calls that may run eagerly to copies (made here); whether there were any."""
        if self.function.decorator_list or not self.calls:
            return False
        drained_calls = [c for c in self.calls if drained(c, self.parents, self.eager)]
        folded = [(c, kind) for c in self.calls if (kind := folding(c, self.parents))]
        quiet: list = []
        pure = not may_have_effects(self.function, raising=False)
        reads_of_generator = set(free_names(self.function))
        if pure:
            for call in self.calls:
                if call not in drained_calls and all(call is not c for c, _ in folded):
                    reads = quiet_reads(call, self.parents, reads_of_generator, self.stepping)
                    if reads is not None:
                        quiet.append((call, reads))
            if self.name.startswith(HOISTED):
                self._record_stepping(drained_calls, quiet, reads_of_generator)
        copies = self._folds(folded, filename, reads_of_generator if pure else None)
        if drained_calls:
            copies.append(self._drained_copy(filename))
            for call in drained_calls:
                call.func = ast.copy_location(ast.Name(DRAINED + self.name, ast.Load()), call.func)
        if quiet:
            copies.append(self._eager_copy(filename))
            for call, reads in quiet:
                call.func = ast.copy_location(ast.Name(EAGER + self.name, ast.Load()), call.func)
                read = ast.Tuple([ast.Tuple([ast.Name(r, ast.Load()) for r in part], ast.Load()) for part in reads],
                                 ast.Load())
                call.args[:0] = [ast.copy_location(read, call), ast.copy_location(ast.Name(self.name, ast.Load()), call)]
        self._insert_after_definition(copies)
        if copies and not self.outside and not self._used(besides=[self.function]):
            self._remove_definition()  # every call went to the drained copy
        return bool(copies)

    def _folds(self, folded: list, filename: str, pure_reads: set | None) -> list:
        """The copies writing out the loops of the consumers of ``folded`` (``generator_folds.py``),
        each consumer call sent to its copy: ``sum(g(a))`` -> ``_yb_sum_g(a)``; ``pure_reads``:
        what a pure body reads (its copies build the items first when that is plain data)."""
        made: dict = {}
        for call, kind in folded:
            consumer = self.parents[id(call)]
            name = fold_name(kind, self.name)
            if name not in made:
                check = None if pure_reads is None else [*_parameters(self.function), *sorted(pure_reads)]
                spelt = consumer.func.value.id if kind == "fromiter" else ""
                made[name] = fold_copy(self.function, kind, name, filename, check, spelt)
            dtype = [*consumer.args[1:], *(k.value for k in consumer.keywords if k.arg == "dtype")]
            consumer.func = ast.copy_location(ast.Name(name, ast.Load()), consumer.func)
            consumer.args, consumer.keywords = [*dtype, *call.args], call.keywords
            if pure_reads is not None and self.name.startswith(HOISTED):  # (a generator it steps: as when drained)
                self.stepping[id(consumer)] = tuple(sorted(pure_reads | set(_passed(self.function))))
        return list(made.values())

    def _record_stepping(self, drained_calls: list, quiet: list, reads_of_generator: set) -> None:
        """For a rewritten generator expression (pure, stepping its first iterable in one ``for``
        loop) called eagerly: a generator call as that iterable may run eagerly too, checking
        what this one reads and what its consumer reads (unless that is a loop, which may rebind
        what the inner generator reads). What it reads includes the variables passed to it
        (``_yb_genexpr(source, w)``: ``w``, by the same name where it is called)."""
        reads_of_generator = reads_of_generator | set(_passed(self.function))
        for call in drained_calls:
            self.stepping[id(call)] = tuple(sorted(reads_of_generator))
        for call, (reads, updated) in quiet:
            if not loop_consumer(call, self.parents):
                self.stepping[id(call)] = tuple(sorted(reads_of_generator | set(reads) | set(updated)))

    def _used(self, besides: list) -> bool:
        """Whether the function's name is read outside the definitions ``besides`` (the eager
        copy holds a lazy generator of its own)."""
        skipped = {id(n) for b in besides for n in ast.walk(b)}
        return any(isinstance(n, ast.Name) and n.id == self.name and id(n) not in skipped for n in ast.walk(self.node))

    def _remove_definition(self) -> None:
        holder = self.parents[id(self.function)]
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(holder, field, None)
            if isinstance(statements, list) and any(s is self.function for s in statements):
                statements.remove(self.function)
                if not statements:
                    statements.append(ast.copy_location(ast.Pass(), self.function))
                return

    def _drained_copy(self, filename: str) -> ast.FunctionDef:
        made = copy.deepcopy(self.function)
        made.name = DRAINED + self.name
        to_list_builder(made, filename)
        return made

    def _eager_copy(self, filename: str) -> ast.FunctionDef:
        """``def _yb_eager_g(_yb_reads, _yb_lazy, <g's parameters>)``: g's list builder, guarded,
        falling back on the lazy generator g, passed as an argument (third order refuses a
        nested function capturing one)."""
        made = copy.deepcopy(self.function)
        made.name = EAGER + self.name
        to_list_builder(made, filename)
        made.args.posonlyargs[:0] = [ast.arg(_READS), ast.arg(_LAZY)]
        values = ", ".join([f"{_READS}[0]", *_parameters(self.function), *free_names(self.function)])
        lazily = f"{_LAZY}({_forwarded(self.function)})"
        head = parse_source(
            f"from yuebing.ir.primitives import immutable_data as {_IMMUTABLE}, plain_data as {_CHECK}\n"
            f"if not ({_CHECK}({values}) and {_IMMUTABLE}({_READS}[1])):\n    return {lazily}\n"  # a user object, an iterator: lazily
            f"try:\n    pass\nexcept Exception:\n    return {lazily}\n"  # an item raised: lazily, from the start
        ).body
        for n in ast.walk(ast.Module(head, [])):
            if "lineno" in n._attributes:
                ast.copy_location(n, self.function)
        head[2].body = made.body
        made.body = head
        return made

    def _insert_after_definition(self, copies: list) -> None:
        if self.outside:  # at the top of the function (after its docstring)
            at = 1 if ast.get_docstring(self.node, clean=False) is not None else 0
            self.node.body[at:at] = copies
            return
        holder = self.parents[id(self.function)]
        for field in ("body", "orelse", "finalbody"):
            statements = getattr(holder, field, None)
            if isinstance(statements, list) and any(s is self.function for s in statements):
                at = [id(s) for s in statements].index(id(self.function)) + 1
                statements[at:at] = copies
                return
        raise AssertionError(f"no statement list holds {self.name}")


def _passed(function: ast.FunctionDef) -> list[str]:
    """The parameters of a rewritten generator expression other than its sources (the variables
    passed to it)."""
    return [p for p in _parameters(function) if not p.startswith(SOURCE)]


def _parameters(function: ast.FunctionDef) -> list[str]:
    a = function.args
    return [p.arg for p in [*a.posonlyargs, *a.args, *([a.vararg] if a.vararg else []), *a.kwonlyargs,
                            *([a.kwarg] if a.kwarg else [])]]


def _forwarded(function: ast.FunctionDef) -> str:
    """The arguments that call ``function`` again with the parameters' values."""
    a = function.args
    parts = [p.arg for p in [*a.posonlyargs, *a.args]]
    parts += [f"*{a.vararg.arg}"] if a.vararg else []
    parts += [f"{p.arg}={p.arg}" for p in a.kwonlyargs]
    parts += [f"**{a.kwarg.arg}"] if a.kwarg else []
    return ", ".join(parts)
