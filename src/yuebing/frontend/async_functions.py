"""``async def`` bodies rewritten into generator functions that yuebing's event loop
(``ir/event_loop.py``) steps: under differentiation coroutines interleave at their awaits as under
``asyncio.run``.

* An ``async def`` becomes a ``def`` marked ``asynchronous``, which the lazy-generator rewrite
  (``generators.py``) turns into a resumable state machine: calling it runs nothing and gives a
  ``Generator`` (a coroutine), as calling an ``async def`` gives a coroutine object. Its
  ``return v`` stays: the value ends the coroutine, for ``yield from``, a task or ``asyncio.run``.
* ``await e`` becomes ``(yield from _yb_await(e))``: ``await_target`` gives a coroutine itself, a
  future's ``waiting`` (which yields the future to the task until it is done), or a user's
  ``__await__``; anything else is refused by name. What the coroutine yields reaches its task,
  which parks it (on a future) or runs it again after the others (a bare ``yield``).
* An async generator's ``yield v`` becomes ``yield _yb_AsyncYield(v)``, telling its values apart
  from the loop's requests; the state machine is wrapped in an ``AsyncGenerator``
  (``ir/async_generators.py``: ``__anext__``, ``asend``, ``athrow``, ``aclose``).
* ``async with m as v: BODY`` becomes ``v = await type(m).__aenter__(m)``, then ``BODY`` in a
  ``try`` whose handler calls ``__aexit__`` with the exception (re-raising it unless that returns
  true) and whose ``else`` calls it with ``None``s (PEP 343's expansion); a body that may
  ``return``, ``break`` or ``continue`` gets a ``finally`` block for that call instead.
* ``async for v in it: BODY else: ELSE`` becomes a ``while`` loop over
  ``await type(i).__anext__(i)`` (``i = type(it).__aiter__(it)``) that ends at
  ``StopAsyncIteration``.
* A comprehension that awaits becomes a call of a nested ``async def`` (``async_comprehensions.py``).

The functions the rewritten code calls are imported at the top of its body (not bound as objects,
``runtime_names.py``): the lazy-generator rewrite keeps leading imports in the function, where its
nested ``resume`` reads them.
"""
from __future__ import annotations

import ast
import copy

from .async_comprehensions import hoist_async_comprehensions
from .runtime_names import HELPERS, located, walk_own_scope


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(name, ast.Store() if store else ast.Load())


def _assign(target: ast.expr | str, value: ast.expr) -> ast.Assign:
    return ast.Assign([_name(target, True) if isinstance(target, str) else target], value)


#: the event loop's functions the rewritten code calls, imported by it (a name bound to a function
#: object would not survive the lazy-generator rewrite, which works on the code's text)
_IMPORTED = {"await_target": ("yuebing.ir.event_loop", "_yb_await"), "type": ("builtins", "_yb_typeof"),
             "AsyncYield": ("yuebing.ir.async_generators", "_yb_AsyncYield")}


def _imported_call(name: str, *args: ast.expr) -> ast.Call:
    return ast.Call(_name(_IMPORTED[name][1]), list(args), [])


def _imports(names: list) -> list:
    return [ast.ImportFrom(_IMPORTED[n][0], [ast.alias(n, _IMPORTED[n][1])], 0) for n in names]


def _imported_helpers(body: list) -> list:
    """Imports of the helpers the match and except* rewrites wrote into ``body`` (renamed): bound
    as objects (``runtime_names.bind_helpers``) they would end up in the nested ``resume`` of the
    lazy-generator rewrite, which is compiled as plain Python."""
    used = set()
    for statement in body:
        for n in walk_own_scope(ast.Module([statement], [])):
            if isinstance(n, ast.Name) and n.id in HELPERS:
                used.add(n.id)
                n.id = "_yb_imported" + n.id
    return [ast.ImportFrom(HELPERS[name].__module__, [ast.alias(HELPERS[name].__name__, "_yb_imported" + name)], 0)
            for name in sorted(used)]


def _awaited(value: ast.expr) -> ast.expr:
    return ast.YieldFrom(_imported_call("await_target", value))


def _method(obj: str, method: str, *args: ast.expr) -> ast.expr:
    """``type(obj).method(obj, *args)``, as Python calls the protocol's methods."""
    return ast.Call(ast.Attribute(_imported_call("type", _name(obj)), method, ast.Load()), [_name(obj), *args], [])


def jumps_out(body: list) -> bool:
    """Whether ``body`` returns, or breaks or continues a loop around it."""
    stack = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Return, ast.Break, ast.Continue)):
            return True
        if isinstance(node, (ast.For, ast.AsyncFor, ast.While)):
            stack.extend(node.orelse)  # a loop's own body may break and continue
            stack.extend(n for s in node.body for n in ast.walk(s) if isinstance(n, ast.Return))
            continue
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))
    return False


class _AsyncToSync(ast.NodeTransformer):
    def __init__(self, generator: bool = False) -> None:
        self.count = 0
        self.generator = generator  # an async generator: its yields give values to its consumer

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"_yb_{hint}{self.count}"

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # nested: rewritten when it is differentiated itself

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return ast.copy_location(_awaited(self.visit(node.value)), node)

    def visit_Yield(self, node: ast.Yield) -> ast.AST:
        value = self.visit(node.value) if node.value is not None else ast.Constant(None)
        return ast.copy_location(ast.Yield(_imported_call("AsyncYield", value)), node)

    def visit_AsyncWith(self, node: ast.AsyncWith) -> ast.AST:
        jumping = jumps_out(node.body)
        node = self.generic_visit(node)
        body = node.body
        for item in reversed(node.items):
            body = self._with_item(item, body, jumping)
        return [ast.fix_missing_locations(ast.copy_location(s, node)) for s in located(body, node)]

    def _with_item(self, item: ast.withitem, body: list, jumping: bool) -> list:
        """PEP 343's expansion; with a ``finally`` (and a flag) only when ``body`` may leave by a
        ``return``, ``break`` or ``continue``, which must call ``__aexit__`` too."""
        manager, error, exit_ = self.fresh("manager"), self.fresh("error"), self.fresh("exit")
        entered = _awaited(_method(manager, "__aenter__"))
        enter = _assign(item.optional_vars, entered) if item.optional_vars is not None else ast.Expr(entered)
        exit_call = lambda *args: _awaited(ast.Call(_name(exit_), [_name(manager), *args], []))  # noqa: E731
        failed = exit_call(_imported_call("type", _name(error)), _name(error),
                           ast.Attribute(_name(error), "__traceback__", ast.Load()))
        reraise = ast.If(ast.UnaryOp(ast.Not(), failed), [ast.Raise(None, None)], [])
        done = ast.Expr(exit_call(ast.Constant(None), ast.Constant(None), ast.Constant(None)))
        start = [_assign(manager, item.context_expr),
                 _assign(exit_, ast.Attribute(_imported_call("type", _name(manager)), "__aexit__", ast.Load())), enter]
        if not jumping:
            return [*start, ast.Try(body, [ast.ExceptHandler(_name("BaseException"), error, [reraise])], [done], [])]
        clean = self.fresh("clean")  # no exception reached __aexit__: the finally block calls it
        handler = ast.ExceptHandler(_name("BaseException"), error, [_assign(clean, ast.Constant(False)), reraise])
        finish = ast.If(_name(clean), [done], [])
        return [*start, _assign(clean, ast.Constant(True)), ast.Try(body, [handler], [], [finish])]

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        node = self.generic_visit(node)
        source = self.fresh("source")
        out = [_assign(source, node.iter), *self._protocol(node, source)]
        return [ast.fix_missing_locations(ast.copy_location(s, node)) for s in located(out, node)]

    def _protocol(self, node: ast.AsyncFor, source: str) -> list:
        iterator = self.fresh("iterator")
        more, step = self.fresh("more"), self.fresh("step")
        stop = ast.ExceptHandler(_name("StopAsyncIteration"), None, [_assign(more, ast.Constant(False))])
        advance = ast.Try([_assign(step, _awaited(_method(iterator, "__anext__")))], [stop], [], [])
        run = ast.If(_name(more), [_assign(node.target, _name(step)), *node.body], [])
        loop = ast.While(_name(more), [advance, run], node.orelse)
        return [_assign(iterator, _method(source, "__aiter__")), _assign(more, ast.Constant(True)), loop]


def is_async_generator(node: ast.AST) -> bool:
    return isinstance(node, ast.AsyncFunctionDef) and any(
        isinstance(n, (ast.Yield, ast.YieldFrom)) for n in walk_own_scope(node))


def desugar_async(node: ast.AST) -> ast.AST:
    """An ``async def`` as a generator ``def`` marked ``asynchronous``, which the lazy-generator
    rewrite makes a resumable state machine (its calls give a coroutine, or an async generator);
    any other node as it is."""
    if not isinstance(node, ast.AsyncFunctionDef):
        return node
    generator = is_async_generator(node)
    rewriter = _AsyncToSync(generator)
    body = hoist_async_comprehensions(copy.deepcopy(node.body), rewriter.fresh)
    body = [rewriter.visit(s) for s in body]
    body = [s for part in body for s in (part if isinstance(part, list) else [part])]
    body = located(_imports(["await_target", "type", "AsyncYield"] if generator else ["await_target", "type"]), node) + body
    body = located(_imported_helpers(body), node) + body
    fields = {f: getattr(node, f) for f in node._fields if f != "body"}
    function = ast.FunctionDef(body=body, **fields)
    function.asynchronous = "generator" if generator else "coroutine"  # (generators.py reads it)
    return ast.fix_missing_locations(ast.copy_location(function, node))
