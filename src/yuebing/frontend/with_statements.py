"""``with`` statements: the managers run in the forward pass only, so they must see no derivatives.

A context manager is entered and exited as written (``np.errstate``, locks, timers, files,
progress bars): its ``__enter__``/``__exit__`` are not differentiated. That is sound only if
nothing it is handed carries a derivative -- otherwise what it does with the value (store it,
return it, write it somewhere the body reads) would silently drop the derivative, as
``with contextlib.nullcontext(box) as b: y = b.v * x`` did. So the normaliser lifts every value a
header hands its manager out of the header -- the arguments of the call that makes it, the object
whose method makes it, or the manager itself when the header is not a call -- into variables
computed by the differentiated program, and checks them (``ir.primitives.with_inputs``) to hold
no float data (numbers, float arrays, containers or objects holding them). A header that reads
only constants, globals and modules (``np.errstate(all="ignore")``, ``Timer()``,
``open("log.txt")``) is left as it is.

The header is entered through ``ir.primitives.Managed``, which refuses a manager that suppresses
an exception raised in its body (``contextlib.suppress``): the body's work up to the exception
would be half recorded. ``with suppress(E):`` itself is rewritten by the caller's ``try`` lowering
when its name resolves to ``contextlib.suppress`` (``suppress_as_try``), and ``with
asyncio.Runner() as r:`` as ``r = asyncio.Runner()`` with a ``try``/``finally`` closing it
(``runner_as_try``): the runner is yuebing's event loop, whose work is differentiated; ``with nullcontext(v) as t:``
as ``t = v`` (``nullcontext_as_assignment``), so a value with a derivative may pass through it.
A manager class with Python ``__enter__``/``__exit__`` (of any module: a global, a module
attribute, a name the function binds when it runs, asked then) handed float data is entered
through its differentiated methods, as PEP 343 spells the statement out
(``python_manager_either_way``): it may keep or return them, and suppress an exception. So is a
manager made before the statement that holds float data (``with m:``, asked when it runs), and a
``@contextlib.contextmanager`` function, contextlib's own ``__enter__``/``__exit__`` stepping its
generator; a header whose later item is such a manager is split into nested statements first.
"""
from __future__ import annotations

import ast
import asyncio
import contextlib
import copy
import types
from typing import Any

from ..ir import nodes as ir
from ..ir import primitives as P
from ..ir import suppressing_managers as S
from .source import function_node


class WithLowering:
    """``stmt_With`` of ``Normaliser`` (a mixin: it uses the normaliser's ``expr``, ``call``,
    ``statement``, ``block``, ``tmp``, ``locals``, ``free`` and globals helpers)."""

    def stmt_With(self, node: ast.With, out: list) -> None:
        suppressing = self._suppress_as_try(node)
        rewritten = [suppressing] if suppressing is not None else self._runner_as_try(node)
        rewritten = rewritten if rewritten is not None else self._nullcontext_as_assignment(node)
        if rewritten is not None:
            for statement in rewritten:
                self.statement(statement, out)
            return
        split = self._split_before_managers(node)
        if split is not None:
            self.statement(split, out)
            return
        if self._python_manager_either_way(node, out):
            return
        headers = [self.current_globals(item.context_expr, out) for item in node.items]
        self._hoist_globals(headers)
        guard = self.tmp("managed")
        out.append(ir.Copy(guard, ir.Const(P.Managed), line=node.lineno))
        headers = [self._checked_header(h, guard, out) for h in headers]
        bound = [(self.tmp("with"), item.optional_vars) for item in node.items if item.optional_vars is not None]
        temps, prelude = iter(t for t, _ in bound), []
        items = ", ".join(ast.unparse(ast.withitem(h, i.optional_vars and ast.Name(next(temps))))
                          for h, i in zip(headers, node.items))
        for temp, target in bound:
            value = self.call(prelude, ir.Const(P.with_bound), [ir.Var(temp), ir.Const(ast.unparse(target))])
            self.statement(ast.copy_location(ast.Assign([target], ast.Name(value.name, ast.Load())), node), prelude)
        self.line = node.lineno
        out.append(ir.With(items, prelude + self.block(node.body), tuple(t for t, _ in bound), line=node.lineno))

    # ------------------------------------------------------------------ the header

    def _reads_variables(self, node: ast.AST) -> bool:
        """Whether ``node`` reads a variable of this function (or one it captures)."""
        return any(isinstance(n, ast.Name) and (n.id in self.locals or n.id in self.free) for n in ast.walk(node))

    def _checked_header(self, header: ast.expr, guard: str, out: list) -> ast.expr:
        """``guard(header')``: ``header`` with the values it hands its manager lifted into
        variables that ``with_inputs`` checks hold no float data."""
        lifted: list[ir.Atom] = []

        def lift(e: ast.expr) -> ast.expr:
            if not self._reads_variables(e):
                return e
            atom = self.expr(e, out)
            if not isinstance(atom, ir.Var):
                return e
            lifted.append(atom)
            return ast.Name(atom.name, ast.Load())

        maker = getattr(header, "_yb_spelled", None) \
            or (ast.unparse(header.func) if isinstance(header, ast.Call) else ast.unparse(header))
        if isinstance(header, ast.Call):
            func = header.func
            if isinstance(func, ast.Attribute):
                func = ast.Attribute(lift(func.value), func.attr, ast.Load())
            else:
                func = lift(func)
            args = [ast.Starred(lift(a.value), ast.Load()) if isinstance(a, ast.Starred) else lift(a) for a in header.args]
            keywords = [ast.keyword(k.arg, lift(k.value)) for k in header.keywords]
            header = ast.Call(func, args, keywords)
        else:
            header = lift(header)
        if lifted:
            self.call(out, ir.Const(P.with_inputs), [ir.Const(maker), *lifted], None)
        return ast.Call(ast.Name(guard, ast.Load()), [header], [])

    def _suppress_as_try(self, node: ast.With) -> ast.Try | None:
        """``with suppress(E1, E2): body`` (one item, ``suppress`` being ``contextlib.suppress``)
        as ``try: body except (E1, E2): pass``, its meaning, which the ``try`` lowering
        differentiates (the work done before the exception is kept)."""
        if len(node.items) != 1 or node.items[0].optional_vars is not None:
            return None
        header = node.items[0].context_expr
        if not (isinstance(header, ast.Call) and not header.keywords and header.args
                and not any(isinstance(a, ast.Starred) for a in header.args)
                and self._resolves_to(header.func, contextlib.suppress)):
            return None
        kinds = header.args[0] if len(header.args) == 1 else ast.Tuple(list(header.args), ast.Load())
        handler = ast.ExceptHandler(kinds, None, [ast.Pass()])
        return ast.fix_missing_locations(ast.copy_location(ast.Try(node.body, [handler], [], []), node))

    def _nullcontext_as_assignment(self, node: ast.With) -> list | None:
        """``with nullcontext(v) as t, more: body`` (``contextlib.nullcontext``) as ``t = v``
        (``v`` alone without ``as``) then ``with more: body``, its meaning: its ``__enter__``
        returns ``v`` and its ``__exit__`` does nothing, so ``v``'s derivative reaches ``t``."""
        header, target = node.items[0].context_expr, node.items[0].optional_vars
        if not (isinstance(header, ast.Call) and self._resolves_to(header.func, contextlib.nullcontext)
                and not any(isinstance(a, ast.Starred) for a in header.args)
                and all(k.arg == "enter_result" for k in header.keywords)
                and len(header.args) + len(header.keywords) <= 1):
            return None
        given = [*header.args, *(k.value for k in header.keywords)]
        value = given[0] if given else ast.Constant(None)
        entered = [ast.Assign([target], value)] if target is not None else [ast.Expr(value)] if given else []
        made = entered + [ast.With(node.items[1:], node.body)] if node.items[1:] else entered
        made = [ast.fix_missing_locations(ast.copy_location(s, node)) for s in made]
        return made + ([] if node.items[1:] else node.body)

    def _python_manager_either_way(self, node: ast.With, out: list) -> bool:
        """``with M(...) as t, more: body``, where ``M`` is a class of the function's own module
        whose ``__enter__`` and ``__exit__`` are Python code and the header reads our variables:
        the values it hands ``M`` are computed first; when one holds float data
        (``ir.primitives.holds_float_data``) the statement runs as PEP 343 spells it out
        (``_entered_as_try``), the manager's methods then differentiated calls (what it keeps
        or returns carries derivatives, an exception it suppresses is the ``try``'s); otherwise
        it is entered as any manager is, without derivatives. False (nothing emitted) when the
        header is not such a call."""
        header = node.items[0].context_expr
        if self._made_before(header):
            return self._made_before_either_way(node, out)
        if self._suppressing(header):  # its methods differentiated, whatever it is handed
            for statement in self._entered_as_try(header, node):
                self.statement(statement, out)
            return True
        if self._made_by_a_method(header):
            return self._method_made_either_way(node, out)
        if not self._may_enter_by_methods(header):
            return False
        # a name bound when the function runs (imported in it) is asked then whether it is a
        # @contextmanager function; a global was answered here
        maker = [self.expr(header.func, out)] if self._bound_when_run(header.func) else []
        names = self._handed(header, node, out)
        made = self._called(header.func, header, names)
        floats = self.tmp("floats")
        handed = [ir.Var(n.id) for n in names]
        if maker:  # (a local @contextmanager's generator read here for an except clause)
            catches = ir.Const(self._local_generator_catches(header.func))
            self.call(out, ir.Const(S.made_when_run_entered_by_methods), [maker[0], catches, *handed], floats)
        else:
            self.call(out, ir.Const(P.holds_float_data), handed, floats)
        self.locals.add(floats)
        plainly = copy.deepcopy(made)
        plainly._yb_entered_plainly = True
        items = [ast.withitem(plainly, node.items[0].optional_vars), *node.items[1:]]
        plain = ast.With(items, copy.deepcopy(node.body))  # (the body lowered twice: a copy of its own)
        choice = ast.If(ast.Name(floats, ast.Load()), self._entered_as_try(made, node), [plain])
        self.statement(ast.fix_missing_locations(ast.copy_location(choice, node)), out)
        return True

    def _handed(self, header: ast.Call, node: ast.With, out: list) -> list:
        """The values ``header`` hands its manager, computed once into variables (their names)."""
        names = []
        for atom in [self.expr(e, out) for e in [*header.args, *(k.value for k in header.keywords)]]:
            name = atom.name if isinstance(atom, ir.Var) else self.tmp("handed")
            if not isinstance(atom, ir.Var):
                out.append(ir.Copy(name, atom, line=node.lineno))
            self.locals.add(name)
            names.append(ast.Name(name, ast.Load()))
        return names

    @staticmethod
    def _called(func: ast.expr, header: ast.Call, names: list) -> ast.Call:
        """``func(...)`` of the values ``names`` in ``header``'s positions and keywords."""
        n = len(header.args)
        return ast.Call(func, names[:n], [ast.keyword(k.arg, v) for k, v in zip(header.keywords, names[n:])])

    def _made_by_a_method(self, header: ast.expr) -> bool:
        """Whether ``header`` calls a method of an object of this function (``m.session(x)``; the
        object read without calls: the plain statement reads it again)."""
        return not getattr(header, "_yb_entered_plainly", False) and isinstance(header, ast.Call) \
            and isinstance(header.func, ast.Attribute) and self._reads_variables(header.func.value) \
            and not any(isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom))
                        for n in ast.walk(header.func.value)) \
            and not any(isinstance(a, ast.Starred) for a in header.args) and all(k.arg for k in header.keywords) \
            and self.builtin_unshadowed("type") and self.builtin_unshadowed("BaseException")

    def _method_made_either_way(self, node: ast.With, out: list) -> bool:
        """``with m.session(x) as t, more: body``: when the method is Python code and ``m`` or what it
        is handed holds float data, or it is a ``@contextmanager`` method that may suppress (asked
        when it runs), the call is differentiated, ``mgr = m.session(x)``, and ``with mgr as t, more:
        body`` entered as a manager made before the statement is (``_made_before_either_way``: by its
        methods when it holds float data or may suppress); otherwise as any manager is (``m.session``
        read again)."""
        header = node.items[0].context_expr
        method = self.expr(header.func, out)
        if not isinstance(method, ir.Var):
            return False
        self.locals.add(method.name)
        names = self._handed(header, node, out)
        floats, made = self.tmp("floats"), self.tmp("made")
        self.call(out, ir.Const(S.made_by_a_python_method), [method, *(ir.Var(n.id) for n in names)], floats)
        self.locals.update((floats, made))
        plainly = self._called(copy.deepcopy(header.func), header, names)
        plainly._yb_entered_plainly = True
        plain = ast.With([ast.withitem(plainly, node.items[0].optional_vars), *node.items[1:]], copy.deepcopy(node.body))
        making = ast.Assign([ast.Name(made, ast.Store())], self._called(ast.Name(method.name, ast.Load()), header, names))
        named = ast.Name(made, ast.Load())
        named._yb_spelled = ast.unparse(header)  # (what a refusal of the plain entry names)
        entered = ast.With([ast.withitem(named, node.items[0].optional_vars), *node.items[1:]], node.body)
        choice = ast.If(ast.Name(floats, ast.Load()), [making, entered], [plain])
        self.statement(ast.fix_missing_locations(ast.copy_location(choice, node)), out)
        return True

    def _made_before(self, header: ast.expr) -> bool:
        """Whether ``header`` is a variable of this function (a manager made before the statement),
        a global (``M`` or ``mod.M``) now holding an instance of a class with Python
        ``__enter__``/``__exit__`` (``with SUPPRESSOR:``), or an attribute or item read without a
        call: asked when it runs whether to enter it through its methods."""
        if getattr(header, "_yb_entered_plainly", False) or not self.builtin_unshadowed("type") \
                or not self.builtin_unshadowed("BaseException"):
            return False
        if isinstance(header, ast.Name) and header.id in self.locals:
            return True
        if isinstance(header, ast.Name) or isinstance(header, ast.Attribute) and self._global_manager(header) is not None:
            return P.is_python_manager_class(type(self._global_manager(header)))
        # an attribute or item read without calls (``self.manager``, ``sys.modules[__name__].M``):
        # read twice (asked, then entered), which a call might not allow
        return isinstance(header, (ast.Attribute, ast.Subscript)) and not any(
            isinstance(n, (ast.Call, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)) for n in ast.walk(header))

    def _local_generator_catches(self, func: ast.expr) -> bool:
        """Whether a ``@contextmanager`` function this function defines under the name ``func``
        may swallow an exception thrown in at its ``yield`` (``S.generator_catches``), read from
        the function as written (the lowered tree holds the generator as a state machine)."""
        if not isinstance(func, ast.Name):
            return False
        name = self.user_names.get(func.id, func.id)  # type: ignore[attr-defined]
        written, _ = function_node(self.fn)  # type: ignore[attr-defined]
        return any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == name and n.decorator_list
                   and S.generator_catches(n) for n in ast.walk(written))

    def _made_before_either_way(self, node: ast.With, out: list) -> bool:
        """``with m as t, more: body`` where ``m`` was made before: when its class has Python
        ``__enter__``/``__exit__`` and it holds float data (``manager_holding_floats``, asked when it
        runs), entered as PEP 343 spells it out (``_entered_as_try``); otherwise as any manager is."""
        header = node.items[0].context_expr
        floats = self.tmp("floats")  # (or an __exit__ that may suppress: ir/suppressing_managers.py)
        self.call(out, ir.Const(S.manager_entered_by_methods), [self.expr(header, out)], floats)
        self.locals.add(floats)
        plainly = copy.deepcopy(header)
        plainly._yb_entered_plainly = True
        plain = ast.With([ast.withitem(plainly, node.items[0].optional_vars), *node.items[1:]], copy.deepcopy(node.body))
        choice = ast.If(ast.Name(floats, ast.Load()), self._entered_as_try(header, node), [plain])
        self.statement(ast.fix_missing_locations(ast.copy_location(choice, node)), out)
        return True

    def _entered_as_try(self, header: ast.expr, node: ast.With) -> list:
        """``node`` with its first item's manager ``header`` entered as PEP 343 spells it out::

            _mgr = M(...)
            _exit = type(_mgr).__exit__
            _value = type(_mgr).__enter__(_mgr)
            _ok = True
            try:
                try:
                    t = _value
                    with more: body
                except BaseException as _err:
                    _ok = False
                    if not _exit(_mgr, type(_err), _err, _err.__traceback__):
                        raise
            finally:
                if _ok:
                    _exit(_mgr, None, None, None)
        """
        target = node.items[0].optional_vars
        mgr, exit_, value, ok, err = (self.tmp(hint) for hint in ("mgr", "exit", "entered", "ok", "err"))
        text = (f"{mgr} = _HEADER\n{exit_} = type({mgr}).__exit__\n{value} = type({mgr}).__enter__({mgr})\n"
                f"{ok} = True\ntry:\n    try:\n        pass\n    except BaseException as {err}:\n"
                f"        {ok} = False\n        if not {exit_}({mgr}, type({err}), {err}, {err}.__traceback__):\n"
                f"            raise\nfinally:\n    if {ok}:\n        {exit_}({mgr}, None, None, None)\n")
        made = ast.parse(text).body
        for part in (n for s in made for n in ast.walk(s)):  # (all at the with statement's line)
            if hasattr(part, "lineno"):
                part.lineno = part.end_lineno = node.lineno
                part.col_offset, part.end_col_offset = node.col_offset, node.col_offset
        made[0].value = header
        bound = [ast.Assign([target], ast.Name(value, ast.Load()))] if target is not None else []
        more = [ast.With(node.items[1:], node.body)] if node.items[1:] else []
        new = [ast.fix_missing_locations(ast.copy_location(s, node)) for s in bound + more]
        made[-1].body[0].body = new + ([] if more else node.body)
        return made

    def _may_enter_by_methods(self, header: ast.expr) -> bool:
        """Whether ``header`` calls a manager ``_python_manager_either_way`` may enter through its
        differentiated methods (a class of the module, a ``@contextmanager`` function)."""
        return not getattr(header, "_yb_entered_plainly", False) and isinstance(header, ast.Call) \
            and self._reads_variables(header) \
            and (self._own_manager_class(header.func) or self._bound_when_run(header.func)) \
            and not any(isinstance(a, ast.Starred) for a in header.args) and all(k.arg for k in header.keywords) \
            and self.builtin_unshadowed("type") and self.builtin_unshadowed("BaseException")

    def _split_before_managers(self, node: ast.With) -> ast.With | None:
        """``with a, b: body`` as ``with a: with b: body`` (the same statement) when a later item
        may be entered through its methods, so that its own statement can be."""
        if len(node.items) < 2 or not any(self._may_enter_by_methods(i.context_expr) or self._suppressing(i.context_expr)
                                          or self._made_before(i.context_expr) or self._made_by_a_method(i.context_expr)
                                          for i in node.items[1:]):
            return None
        inner = ast.copy_location(ast.With(node.items[1:], node.body), node)
        return ast.fix_missing_locations(ast.copy_location(ast.With(node.items[:1], [inner]), node))

    def _suppressing(self, header: ast.expr) -> bool:
        """Whether ``header`` calls (through this function's globals) a manager class or
        ``@contextmanager`` function that may suppress an exception (``ir/suppressing_managers.py``):
        then entered as PEP 343 spells it out, so that the ``try`` keeps the block's work."""
        return not getattr(header, "_yb_entered_plainly", False) and isinstance(header, ast.Call) \
            and not any(isinstance(a, ast.Starred) for a in header.args) and all(k.arg for k in header.keywords) \
            and self.builtin_unshadowed("type") and self.builtin_unshadowed("BaseException") \
            and S.may_suppress(self._global_manager(header.func))

    def _bound_when_run(self, func: ast.expr) -> bool:
        """Whether ``func`` is a name of this function's own (a manager imported in it)."""
        return isinstance(func, ast.Name) and func.id in self.locals

    def _own_manager_class(self, func: ast.expr) -> bool:
        """Whether ``func`` names (through this function's globals: ``M`` or ``mod.M``) a
        ``@contextmanager`` function or a class whose ``__enter__`` and ``__exit__`` are Python
        functions."""
        found = self._global_manager(func)
        return P.is_generator_manager(found) or P.is_python_manager_class(found)

    def _global_manager(self, func: ast.expr) -> Any:
        """What ``func`` (``M`` or ``mod.M``) names through this function's globals, or None."""
        path = []
        while isinstance(func, ast.Attribute):
            path.append(func.attr)
            func = func.value
        if not isinstance(func, ast.Name) or func.id in self.locals or func.id in self.free:
            return None
        found = self.module_globals.get(func.id)  # type: ignore[attr-defined]
        for attr in reversed(path):
            if not isinstance(found, types.ModuleType):
                return None
            found = getattr(found, attr, None)
        return found

    def _runner_as_try(self, node: ast.With) -> list | None:
        """``with asyncio.Runner(...) as r: body`` (one item) as ``r = asyncio.Runner(...)`` and
        ``try: body finally: r.close()``, its meaning (``__enter__`` only makes the loop, which
        ``run`` makes too): the runner is yuebing's (``ir/event_loop.py``), and its ``close``
        runs the tasks left to their ends, which must be differentiated, not run plainly."""
        if len(node.items) != 1:
            return None
        header, target = node.items[0].context_expr, node.items[0].optional_vars
        if not (isinstance(header, ast.Call) and self._resolves_to(header.func, asyncio.Runner)):
            return None
        if target is None:
            target = ast.Name(self.tmp("runner"), ast.Store())
        if not isinstance(target, ast.Name):
            return None
        closing = ast.Expr(ast.Call(ast.Attribute(ast.Name(target.id, ast.Load()), "close", ast.Load()), [], []))
        made = ast.Assign([target], header)
        return [ast.fix_missing_locations(ast.copy_location(s, node))
                for s in (made, ast.Try(node.body, [], [], [closing]))]

    def _resolves_to(self, node: ast.expr, target: Any) -> bool:
        """Whether ``node`` (``suppress`` or ``contextlib.suppress``) names ``target`` through this
        function's globals (a local or captured name of that spelling does not)."""
        path = []
        while isinstance(node, ast.Attribute):
            path.append(node.attr)
            node = node.value
        if not isinstance(node, ast.Name) or node.id in self.locals or node.id in self.free:
            return False
        value = self.module_globals.get(node.id)  # type: ignore[attr-defined]
        for attr in reversed(path):
            value = getattr(value, attr, None)
        return value is target


__all__ = ["WithLowering"]
