"""Nested functions in the normaliser (part of ``normalise.Normaliser``): which variables a
nested ``def``/``lambda`` captures, which cells it shares with us, and which captured variables
have more than one value in a closure's life (reassigned, bound in a loop, a comprehension's
variable): those are kept in cells too, so a closure sees their current value (late binding).

Captured variables are found by Python's own scoping (the nested definition compiled inside a
stand-in for the enclosing function), so a nested function's local that shares a name with one
of ours is not captured. Variables captured from further out are shared as the very cells
(``ir.MakeClosure.shared``): ``nonlocal`` writes at any depth, and reads after them, see one
variable. Default values computed from our variables, and comprehensions run more than once
per call whose lambdas capture their variables, are made by small functions of their own (a
factory taking the defaults as arguments; a function per comprehension run, for fresh cells).
The variables a class statement's methods read are kept in cells too (``local_classes.py``).
"""
from __future__ import annotations

import ast
import copy
import types

from ..ir import nodes as ir
from .genexpr_scopes import walrus_targets
from .local_classes import MISSING as _MISSING
from .local_classes import LocalClassLowering
from .parsing import parse as parse_source


class ClosureLowering(LocalClassLowering):
    """The closure helpers of ``Normaliser`` (a mixin: it uses the normaliser's ``locals``,
    ``free``, ``cell_backed`` and ``opaque``); class statements are ``local_classes.py``'s."""

    def _captured(self, node: ast.FunctionDef | ast.Lambda) -> tuple[str, ...]:
        """Names of this function's locals (and cells) a nested function reads or writes.

        Python's own scoping decides: the nested definition is compiled inside a stand-in for
        this function that binds every candidate name, and its code's free variables are the
        captured ones. (A nested function's own local that happens to share a name with one of
        ours is not captured; a name only a deeper function uses is.)"""
        used = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
        used |= {name for n in ast.walk(node) if isinstance(n, ast.Nonlocal) for name in n.names}
        candidates = sorted(n for n in used if n in self.locals or n in self.free)
        if not candidates:
            return ()
        return tuple(sorted(_free_variables(node, candidates)))

    def _decorators_as_calls(self, node: ast.FunctionDef | ast.AsyncFunctionDef, out: list) -> bool:
        """A decorated nested function, lowered as Python runs it: the decorator expressions
        first (top to bottom), the undecorated definition next, then each decorator called on
        the function, innermost first::

            @timed                            _decorator1 = retry(3)
            @retry(3)             becomes     def g(v): ...
            def g(v): ...                     g = timed(_decorator1(g))

        The calls are ordinary calls of the differentiated code, so every mode follows the
        decorator into what it returns: a wrapper's closure holds the function, whose own
        closure holds our variables with their derivatives (a decorator applied as plain Python
        would hand the modes an object whose free variables are not ours: a silent zero).
        False (nothing emitted) when no derivative can pass through a decorator: ``node`` has
        none, or captures none of our variables and its decorators read none (a module-level
        decorator of a function capturing nothing is applied as Python applies it: what it
        returns, an ``lru_cache`` wrapper of a helper, holds only constants)."""
        ours = self.locals | set(self.free) | self.written_globals
        users = [d for d in node.decorator_list if not _rebinding_globals(d)]
        reads_ours = any(isinstance(n, ast.Name) and n.id in ours for d in users for n in ast.walk(d))
        if not users or not (reads_ours or self._captured(node)):
            return False
        decorators: list[ast.expr] = []
        for decorator in users:
            if isinstance(decorator, ast.Name) and decorator.id != node.name:
                decorators.append(decorator)  # (reading a name has no effect: read when applied)
                continue
            name = self.tmp("decorator")
            self.statement(_located(ast.Assign([ast.Name(name, ast.Store())], decorator), decorator), out)
            decorators.append(ast.Name(name, ast.Load()))
        bare = copy.copy(node)
        bare.decorator_list = []
        self.statement(bare, out)
        value: ast.expr = ast.Name(node.name, ast.Load())
        for decorator in reversed(decorators):
            value = ast.Call(decorator, [value], [])
        self.statement(_located(ast.Assign([ast.Name(node.name, ast.Store())], value), node), out)
        return True

    def _defaults_through_a_factory(self, node: ast.FunctionDef | ast.Lambda, name: str, out: list) -> bool:
        """Define ``node`` (named ``name``) through a factory when default values read our
        variables, so that the defaults carry their derivatives: ``def g(v, k=2 * x)`` becomes

            def _factory1(_default2):
                def g(v, k=MISSING):
                    if k.__class__ is str and k == MISSING: k = _default2
                    ...
                return g
            g = _factory1(2 * x)

        The default is computed when the definition runs, as in Python, and each definition
        (in a loop, a comprehension) gets its own, captured from its own call of the factory:
        an argument, whose derivative every mode follows. Decorators are applied to what the
        factory returns (``g = deco(_factory1(2 * x))``: the decorator is evaluated first, the
        defaults next, as in Python). False (nothing emitted) when no default reads our
        variables."""
        ours = self.locals | set(self.free) | self.written_globals  # (written globals: global_get)

        def reads_ours(default: ast.expr | None) -> bool:
            return default is not None and any(isinstance(n, ast.Name) and n.id in ours for n in ast.walk(default))
        args = node.args
        if not any(map(reads_ours, [*args.defaults, *args.kw_defaults])):
            return False
        inner = copy.deepcopy(node)
        decorators = getattr(inner, "decorator_list", [])
        inner.decorator_list = []
        positional = [*inner.args.posonlyargs, *inner.args.args][len(inner.args.posonlyargs) + len(inner.args.args)
                                                                 - len(inner.args.defaults):]
        params, values, checks = [], [], []
        for defaults, owners in ((inner.args.defaults, positional), (inner.args.kw_defaults, inner.args.kwonlyargs)):
            for i, (default, owner) in enumerate(zip(defaults, owners)):
                if not reads_ours(default):
                    continue
                params.append(self.tmp("default"))
                values.append(default)
                defaults[i] = ast.Constant(_MISSING)
                checks += parse_source(f"if {owner.arg}.__class__ is str and {owner.arg} == {_MISSING!r}:\n"
                                    f"    {owner.arg} = {params[-1]}").body
        if isinstance(inner, ast.Lambda):
            inner = _function_def("_lambda", inner.args, [*checks, ast.Return(inner.body)])
        else:
            docstring = inner.body[:1] if ast.get_docstring(inner, clean=False) is not None else []
            inner.body = [*docstring, *checks, *inner.body[len(docstring):]]
        factory = _function_def(self.tmp(f"{name.lstrip('_')}_defaults"), ast.arguments([], [ast.arg(p) for p in params], None, [], [], None, []),
                                [inner, ast.Return(ast.Name(inner.name, ast.Load()))])
        value: ast.expr = ast.Call(ast.Name(factory.name, ast.Load()), values, [])
        for decorator in reversed(decorators):
            value = ast.Call(decorator, [value], [])
        made = ast.Assign([ast.Name(name, ast.Store())], value)
        for statement in (factory, made):
            self.statement(_located(statement, node), out)
        return True

    def _comprehension_as_function(self, node: ast.expr, target: str, out: list) -> ir.Atom | None:
        """A comprehension that runs more than once per call (in a loop, in another
        comprehension) whose lambdas capture its variables, made by a function of its own, as
        Python makes it: each run gets fresh cells (``_comprehension_cells`` then keeps them in
        that function's cells). The first iterable is evaluated here, as in Python, and passed
        in; what a ``:=`` inside binds stays our variable (``nonlocal``, or ``global`` when we
        declare it so). None when that is not needed."""
        if not self.repeats:
            return None
        variables = {n.id for g in node.generators for n in ast.walk(g.target) if isinstance(n, ast.Name)}
        read = {n.id for lam in ast.walk(node) if isinstance(lam, ast.Lambda) for n in ast.walk(lam.body)
                if isinstance(n, ast.Name)}
        if not variables & read:
            return None
        result, maker, iterable = target or self.tmp("c"), self.tmp("comprehension"), self.tmp("it")
        inner = copy.deepcopy(node)
        first, inner.generators[0].iter = inner.generators[0].iter, ast.Name(iterable, ast.Load())
        walrus = walrus_targets(inner)
        declarations = [kind(sorted(names)) for kind, names in ((ast.Global, walrus & self.declared_globals),
                                                              (ast.Nonlocal, walrus - self.declared_globals)) if names]
        made = _function_def(maker, ast.arguments([], [ast.arg(iterable)], None, [], [], None, []),
                             [*declarations, ast.Return(inner)])
        # (the new function writes them: kept in cells, as a nested function's nonlocal writes are)
        written = walrus - self.declared_globals
        self.comprehension_walruses = sorted({*getattr(self, "comprehension_walruses", ()), *written})
        self.statement(_located(made, node), out)
        call = ast.Assign([ast.Name(result, ast.Store())], ast.Call(ast.Name(maker, ast.Load()), [first], []))
        self.statement(_located(call, node), out)
        return ir.Var(result)

    def _shared_cells(self, captured: tuple, out: list) -> tuple[str, ...]:
        """Variables of *our* enclosing function that a nested function captures: it gets their
        cells themselves (``MakeClosure.shared``), so that a write through ``nonlocal`` at any
        depth, and every read after it, see one variable. The generated code only needs the
        name bound somewhere for the nested definition to compile with it as a free variable."""
        shared = tuple(name for name in captured if name in self.free and name not in self.locals)
        for name in shared:
            self.opaque(out, f"if False: {name} = None  # makes {name} a cell the closure below shares")
        return shared

    def _reassigned_captures(self, body: list) -> list[str]:
        """Captured variables that are not yet kept in a cell but have more than one value in
        the closure's life (bound twice, in a loop, or after the closure is made): ``normalise`` lowers the function
        again with them cell-backed, as if a nested function wrote them with ``nonlocal``, so
        a closure reads the cell's current value and its derivative (Python's late binding)."""
        sites: dict = {name: [(self.fn.__code__.co_firstlineno, False)] for name in self.params()}
        _assignment_sites(body, False, sites)  # a parameter is bound once already, by the call
        names = set()
        for closure in _closures(body, []):
            for name in closure.free_vars:
                if name in self.cell_backed or name in closure.shared:
                    continue  # shared through its cell: every value is seen
                bound = sites.get(name, [])
                # bound twice, in a loop, or only after the closure is made (a sibling ``def``
                # defined later, which Python's closure reads when it is called)
                if len(bound) > 1 or any(in_loop or line > closure.line for line, in_loop in bound):
                    names.add(name)
        # what a local class's methods read: its rules find the variable's box by its cell
        names |= {n for n in (*getattr(self, "class_captures", ()), *getattr(self, "comprehension_walruses", ()))
                  if n in self.locals and n not in self.cell_backed}
        return sorted(names)

    def _comprehension_cells(self, node: ast.expr, renamed: list[str]) -> None:
        """Keep in cells the variables of the comprehension ``node`` (already renamed) that a
        lambda inside it captures: each lambda reads the variable's current value, the last
        one once the comprehension is done, as in Python. Python gives each run of a
        comprehension fresh cells, our function has one: a comprehension that runs more than
        once per call (in a loop, or in another comprehension) is refused."""
        captured = {name for lam in ast.walk(node) if isinstance(lam, ast.Lambda) for name in self._captured(lam)}
        captured &= set(renamed)
        if not captured:
            return
        if self.repeats:
            name = self.user_names.get(min(captured), min(captured))
            raise self.error(
                f"a nested function capturing {name!r}, the variable of a comprehension that runs more "
                "than once per call (inside a loop or another comprehension)",
                f"pass {name!r} to the nested function as an argument where it is called", node)
        self.cell_backed = sorted({*self.cell_backed, *captured})


def _rebinding_globals(decorator: ast.expr) -> bool:
    """``@_user_globals(_G)``, which generated code puts under a nested function's decorators
    (``rebound_before_decorators``): differentiating generated code again (third order's plain
    programs), the definition is rebound without it (``_with_user_globals`` after the ``def``)."""
    return isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Name) \
        and decorator.func.id == "_user_globals"


def _located(statement: ast.stmt, node: ast.AST) -> ast.stmt:
    """``statement`` (made by us) at the user's ``node``, for errors and the line maps."""
    for n in ast.walk(statement):
        n.lineno, n.end_lineno = node.lineno, getattr(node, "end_lineno", node.lineno)
        n.col_offset, n.end_col_offset = node.col_offset, getattr(node, "end_col_offset", node.col_offset)
    return statement


def _function_def(name: str, args: ast.arguments, body: list) -> ast.FunctionDef:
    return ast.FunctionDef(name=name, args=args, body=body, decorator_list=[], returns=None, type_comment=None)


def rebound_before_decorators(node: ast.FunctionDef) -> ast.FunctionDef:
    """``node`` with ``@_user_globals(_G)`` under its decorators, if it has any: the generated
    code rebinds a nested function to the user's globals after defining it, which would be too
    late for a decorated one (``@contextlib.contextmanager`` keeps the function in its helper's
    closure, and the helper belongs to contextlib). The name is the generated module's."""
    if not node.decorator_list:
        return node
    rebind = ast.Call(ast.Name("_user_globals", ast.Load()), [ast.Name("_G", ast.Load())], [])
    node = copy.copy(node)
    node.decorator_list = [*node.decorator_list, ast.copy_location(rebind, node.decorator_list[-1])]
    return ast.fix_missing_locations(node)


def _free_variables(node: ast.FunctionDef | ast.Lambda, outer_names: list[str]) -> tuple[str, ...]:
    """The free variables of the nested function ``node`` defined where ``outer_names`` are
    local variables (compiled, not run)."""
    inner = copy.deepcopy(node)
    if isinstance(inner, ast.Lambda):
        inner = ast.Assign([ast.Name("_yb_nested", ast.Store())], inner)
    else:
        inner.decorator_list = []  # run where the function is defined: not captured
    binds = ast.Assign([ast.Name(n, ast.Store()) for n in outer_names], ast.Constant(None))
    scope = ast.FunctionDef("_yb_scope", ast.arguments([], [], None, [], [], None, []), [binds, inner], [])
    module = ast.fix_missing_locations(ast.Module([scope], []))
    code = compile(module, "<yuebing scope>", "exec")
    scope_code = next(c for c in code.co_consts if isinstance(c, types.CodeType))
    nested = next(c for c in scope_code.co_consts if isinstance(c, types.CodeType))
    return nested.co_freevars


def _assignment_sites(body: list, in_loop: bool, sites: dict) -> None:
    """``name -> [(line, inside_a_loop)]`` for every statement that binds a name."""
    for s in body:
        if isinstance(s, list):  # a run not flattened yet (flat_body._Seq: a loop with break)
            _assignment_sites(s, in_loop, sites)
            continue
        names: tuple = ()
        if isinstance(s, ir.Call) and s.target:
            names = (s.target,)
        elif isinstance(s, (ir.Copy, ir.MakeClosure)):
            names = (s.target,)
        elif isinstance(s, ir.Opaque):
            names = s.defines
        for name in names:
            sites.setdefault(name, []).append((s.line, in_loop))
        if isinstance(s, ir.If):
            _assignment_sites(s.body, in_loop, sites)
            _assignment_sites(s.orelse, in_loop, sites)
        elif isinstance(s, ir.While):
            _assignment_sites(s.test_body, True, sites)
            _assignment_sites(s.body, True, sites)
        elif isinstance(s, ir.ForRange):
            sites.setdefault(s.var, []).append((s.line, True))
            _assignment_sites(s.body, True, sites)
        elif isinstance(s, ir.With):
            _assignment_sites(s.body, in_loop, sites)
        elif isinstance(s, ir.Try):
            for h in s.handlers:
                if h.name is not None:
                    sites.setdefault(h.name, []).append((h.line, in_loop))
            for block in ir.child_blocks(s):
                _assignment_sites(block, in_loop, sites)


def _closures(body: list, found: list) -> list:
    for s in body:
        if isinstance(s, list):  # a run not flattened yet (flat_body._Seq)
            _closures(s, found)
        elif isinstance(s, ir.MakeClosure):
            found.append(s)
        for block in ir.child_blocks(s):
            _closures(block, found)
    return found
