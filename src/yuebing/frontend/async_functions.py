"""``async def`` bodies rewritten into synchronous ones: under differentiation async code runs
*sequentially*, in the order it is written.

* Calling an ``async def`` runs its body at the call, once, and gives a ``Finished`` holding the
  result (``ir/primitives.py``): ``return v`` becomes ``return _yb_Finished(v)``; an exception the
  body raises is kept in it (the body runs in ``try``/``except Exception``) and raised by the
  ``await``, where Python raises it. Computing at the call, rather than at the first ``await``,
  keeps the arguments as they were passed and runs each coroutine's side effects exactly once
  even when it is never awaited or is handed to ``asyncio.gather``/``create_task``, which start
  it at once in Python too.
* ``await e`` becomes ``_yb_awaited(e).value``: ``awaited`` checks that ``e`` is a ``Finished``
  (anything else -- a real future, a socket read -- is refused by name) and raises the exception
  it holds; the value then carries its derivative like any attribute. (A coroutine awaited twice,
  a ``RuntimeError`` in Python, is not refused.)
* ``async with m as v: BODY`` becomes ``v = await type(m).__aenter__(m)``, then ``BODY`` in a
  ``try`` whose handler calls ``__aexit__`` with the exception (re-raising it unless that returns
  true) and whose ``else`` calls it with ``None``s (PEP 343's expansion); a body that may
  ``return``, ``break`` or ``continue`` gets a ``finally`` block for that call instead.
* ``async for v in it: BODY else: ELSE`` becomes a ``while`` loop over
  ``await type(i).__anext__(i)`` (``i = type(it).__aiter__(it)``) that ends at
  ``StopAsyncIteration``.

* An async generator whose yields are statements runs at its call too, to its end, eagerly as
  sync generators are (``desugar.py``): ``yield v`` appends to a list, and the call gives an
  ``AsyncItems`` of the values (and of the exception that ended it, if one did); ``async for``
  over one is a ``for`` over the values, raising that exception at their end.

* An async comprehension (``[f(v) async for v in it]``) takes every value of ``it`` first
  (``async_list``: an async generator's values, or ``__anext__``'s until ``StopAsyncIteration``),
  then runs as a plain comprehension over them.

Async generators that use ``yield``'s value (``asend``) are not rewritten: the fence refuses them. ``asyncio.run``, ``gather``, ``sleep``... have rules (``rules/asyncio_rules.py``).
"""
from __future__ import annotations

import ast
import copy

from .runtime_names import helper, helper_call, located, walk_own_scope


def _name(name: str, store: bool = False) -> ast.Name:
    return ast.Name(name, ast.Store() if store else ast.Load())


def _assign(target: ast.expr | str, value: ast.expr) -> ast.Assign:
    return ast.Assign([_name(target, True) if isinstance(target, str) else target], value)


def _awaited(value: ast.expr) -> ast.expr:
    return ast.Attribute(helper_call("awaited", value), "value", ast.Load())


def _method(obj: str, method: str, *args: ast.expr) -> ast.expr:
    """``type(obj).method(obj, *args)``, as Python calls the protocol's methods."""
    return ast.Call(ast.Attribute(helper_call("type", _name(obj)), method, ast.Load()), [_name(obj), *args], [])


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
    def __init__(self, items: str | None = None) -> None:
        self.count = 0
        self.items = items  # an async generator's list of yielded values (None: a coroutine)

    def fresh(self, hint: str) -> str:
        self.count += 1
        return f"_yb_{hint}{self.count}"

    def visit_FunctionDef(self, node: ast.AST) -> ast.AST:
        return node  # nested: rewritten when it is differentiated itself

    visit_AsyncFunctionDef = visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_comprehension(self, node: ast.comprehension) -> ast.AST:
        node = self.generic_visit(node)
        if node.is_async:  # every value first (async_list), then a plain comprehension over them
            node.iter, node.is_async = helper_call("async_list", node.iter), 0
        return node

    def visit_Await(self, node: ast.Await) -> ast.AST:
        return ast.copy_location(_awaited(self.visit(node.value)), node)

    def visit_Return(self, node: ast.Return) -> ast.AST:
        if self.items is not None:  # (an async generator returns no value)
            return ast.copy_location(ast.Return(helper_call("AsyncItems", _name(self.items))), node)
        value = self.visit(node.value) if node.value is not None else ast.Constant(None)
        return ast.copy_location(ast.Return(helper_call("Finished", value)), node)

    def visit_Expr(self, node: ast.Expr) -> ast.AST:
        if self.items is not None and isinstance(node.value, ast.Yield):
            value = self.visit(node.value.value) if node.value.value is not None else ast.Constant(None)
            append = ast.Call(ast.Attribute(_name(self.items), "append", ast.Load()), [value], [])
            return ast.copy_location(ast.Expr(append), node)
        return self.generic_visit(node)

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
        failed = exit_call(helper_call("type", _name(error)), _name(error),
                           ast.Attribute(_name(error), "__traceback__", ast.Load()))
        reraise = ast.If(ast.UnaryOp(ast.Not(), failed), [ast.Raise(None, None)], [])
        done = ast.Expr(exit_call(ast.Constant(None), ast.Constant(None), ast.Constant(None)))
        start = [_assign(manager, item.context_expr),
                 _assign(exit_, ast.Attribute(helper_call("type", _name(manager)), "__aexit__", ast.Load())), enter]
        if not jumping:
            return [*start, ast.Try(body, [ast.ExceptHandler(_name("BaseException"), error, [reraise])], [done], [])]
        clean = self.fresh("clean")  # no exception reached __aexit__: the finally block calls it
        handler = ast.ExceptHandler(_name("BaseException"), error, [_assign(clean, ast.Constant(False)), reraise])
        finish = ast.If(_name(clean), [done], [])
        return [*start, _assign(clean, ast.Constant(True)), ast.Try(body, [handler], [], [finish])]

    def visit_AsyncFor(self, node: ast.AsyncFor) -> ast.AST:
        node = self.generic_visit(node)
        source = self.fresh("source")
        # an async generator's values (computed at its call): a for loop over them, then the
        # exception that ended it; anything else: the __aiter__/__anext__ protocol
        end = ast.Expr(helper_call("items_end", _name(source)))
        listed = ast.For(node.target, ast.Attribute(_name(source), "items", ast.Load()), node.body,
                         [end, *node.orelse])
        protocol = self._protocol(copy.deepcopy(node), source)
        choice = ast.If(helper_call("isinstance", _name(source), helper("AsyncItems")), [listed], protocol)
        out = [_assign(source, node.iter), choice]
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


def eager_async_generator(node: ast.AsyncFunctionDef) -> bool:
    """An async generator whose yields are all statements (not ``x = yield v``: ``asend``)."""
    nodes = list(walk_own_scope(node))
    statements = {id(n.value) for n in nodes if isinstance(n, ast.Expr)}
    return all(id(n) in statements for n in nodes if isinstance(n, ast.Yield))


def desugar_async(node: ast.AST) -> ast.AST:
    """An ``async def`` as a ``def`` whose calls return a ``Finished`` (an async generator whose
    yields are statements: an ``AsyncItems`` of every value it yields); any other node as it is."""
    if not isinstance(node, ast.AsyncFunctionDef):
        return node
    generator = is_async_generator(node)
    if generator and not eager_async_generator(node):
        return node  # refused by the fence
    rewriter = _AsyncToSync("_yb_yielded_items" if generator else None)
    body = [rewriter.visit(copy.deepcopy(s)) for s in node.body]
    body = [s for part in body for s in (part if isinstance(part, list) else [part])]
    failure = rewriter.fresh("failure")
    # an exception of the body is kept in the result, raised by the await (an async generator's:
    # by the async for that reaches it), where Python raises it
    if generator:
        done = helper_call("AsyncItems", _name(rewriter.items))
        kept = helper_call("AsyncItems", _name(rewriter.items), _name(failure))
    else:
        done = helper_call("Finished", ast.Constant(None))
        kept = helper_call("Finished", ast.Constant(None), _name(failure))
    body.append(ast.Return(done))
    guarded = ast.Try(body, [ast.ExceptHandler(_name("Exception"), failure, [ast.Return(kept)])], [], [])
    start = [_assign(rewriter.items, ast.List([], ast.Load()))] if generator else []
    fields = {f: getattr(node, f) for f in node._fields if f != "body"}
    function = ast.FunctionDef(body=located([*start, guarded], node.body[-1]), **fields)
    return ast.fix_missing_locations(ast.copy_location(function, node))
